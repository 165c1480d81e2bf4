// Source locations. Every IR node carries a Span pointing at the DSL text it came from;
// diagnostics render it as `--> file:line:col` plus the source line and a caret.
#pragma once
#include <string>

namespace pypto::ir {

struct Span {
  std::string file;   // path of the DSL source ("" when unknown)
  int line = 0;       // 1-based; 0 = unknown
  int col = 0;        // 1-based column of the first character
  int end_line = 0;   // 1-based, inclusive
  int end_col = 0;    // 1-based, exclusive
  std::string source_line;  // the text of `line`, kept so errors can show it without the file

  bool known() const { return line > 0; }
  static Span unknown() { return Span{}; }
};

}  // namespace pypto::ir
