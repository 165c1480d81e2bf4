// The C++ emitter base (include/pypto/codegen/cpp_writer.h) shared by the orchestration, HOST and
// CPU kernel code generators: lines, blocks, else branches, blank lines, indentation width.
#include <gtest/gtest.h>

#include <sstream>

#include "pypto/codegen/cpp_writer.h"

namespace {

using pypto::codegen::common::CppWriter;

// A writer that counts its block hooks (the orchestration emitter keeps name scopes with them).
class Writer : public CppWriter {
 public:
  Writer(std::ostream* out, int indent, int width) { write_to(out, indent, width); }
  int opened = 0, closed = 0;

 private:
  void on_open_block() override { ++opened; }
  void on_close_block() override { ++closed; }
};

TEST(CppWriter, BlocksElseAndBlankLinesAtFourSpaces) {
  std::ostringstream out;
  Writer w(&out, 0, 4);
  w.line("int f(int x)" " {");
  w.reopen_block();
  w.blank();   // none right after `{`
  w.open_block("if (x > 0)");
  w.line("return 1;");
  w.close_block("} else {");
  w.reopen_block();
  w.line("return 0;");
  w.close_block();
  w.close_block();
  EXPECT_EQ(out.str(),
            "int f(int x) {\n"
            "    if (x > 0) {\n"
            "        return 1;\n"
            "    } else {\n"
            "        return 0;\n"
            "    }\n"
            "}\n");
  EXPECT_EQ(w.opened, 3);
  EXPECT_EQ(w.closed, 3);
}

TEST(CppWriter, TheKernelFilesIndentTwoSpacesALevel) {
  std::ostringstream out;
  Writer w(&out, 0, 2);
  w.line("#include <vector>");
  w.blank();
  w.open_block("extern \"C\" void k()");
  w.open_block("for (int64_t i = 0; i < 4; i += 1)");
  w.line("g(i);");
  w.close_block();
  w.close_block();
  EXPECT_EQ(out.str(),
            "#include <vector>\n"
            "\n"
            "extern \"C\" void k() {\n"
            "  for (int64_t i = 0; i < 4; i += 1) {\n"
            "    g(i);\n"
            "  }\n"
            "}\n");
  EXPECT_TRUE(w.block_just_opened() == false);
}

TEST(CppWriter, StartsAtTheGivenLevel) {
  std::ostringstream out;
  Writer w(&out, 1, 4);
  w.open_block("");
  w.line("x();");
  w.close_block();
  EXPECT_EQ(out.str(), "    {\n        x();\n    }\n");
}

}  // namespace
