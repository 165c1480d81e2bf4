// The C++ emitter base of the orchestration, HOST and CPU kernel code generators: lines,
// indentation and blocks. A generator derives from CppWriter, points it at a stream
// (write_to(&out, 1) — 4 spaces a level; the kernel files use write_to(&out, 0, 2)), and gets
//
//   open_block("for (int64_t i = 0; i < 4; i += 1)");   // "for (...) {" ("{" for ""), one level deeper
//   line("Arg params_t0;");                               // indented
//   blank();                                              // an empty line (none right after `{`)
//   close_block();                                        // "}"  (or close_block("} else {") + reopen())
//
// on_open_block / on_close_block let a generator keep its C++ name scopes in step with the
// blocks (the orchestration emitter declares names per block and prints `(void)x;` for unused
// ones before the closing brace).
#pragma once
#include <ostream>
#include <streambuf>
#include <string>
#include <utility>

namespace pypto::codegen::common {

// An output stream that appends to one std::string and hands it over without a copy
// (std::ostringstream::str() copies, and its buffer and the copy are fresh pages each: at
// 100,000 tasks the orchestration is 40 MB).
//   StringStream os;  os.reserve(1 << 20);  os << "int x;\n";  std::string text = os.take();
class StringStream : public std::ostream {
 public:
  StringStream() : std::ostream(&buf_) {}
  void reserve(size_t bytes) { buf_.text.reserve(bytes); }
  const std::string& text() const { return buf_.text; }
  // The text written so far (moved out; the stream is empty afterwards).
  std::string take() { return std::move(buf_.text); }

 private:
  struct Buf : std::streambuf {
    std::string text;
    int_type overflow(int_type c) override {
      if (!traits_type::eq_int_type(c, traits_type::eof())) text.push_back(traits_type::to_char_type(c));
      return traits_type::not_eof(c);
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
      text.append(s, static_cast<size_t>(n));
      return n;
    }
  };
  Buf buf_;
};

class CppWriter {
 public:
  virtual ~CppWriter() = default;
  // `text` at the current indentation ("" = an empty line).
  void line(const std::string& text);
  // An empty line, except at the start of the output or right after an opening `{`.
  void blank();
  void open_block(const std::string& header);
  // Leaves the innermost block (on_close_block first) and prints `footer`.
  void close_block(const std::string& footer = "}");
  // After close_block("} else {"): the else branch's block (on_open_block, one level deeper).
  void reopen_block();
  // `header {` and one level deeper without on_open_block: for a generator that opened the
  // block's name scope itself (the orchestration emitter declares a loop's variable in it).
  void enter_block(const std::string& header);
  // The last line written opened a block (or nothing was written yet).
  bool block_just_opened() const { return at_block_start_; }

 protected:
  // Where lines go from now on, the indentation level they start at and the spaces per level.
  void write_to(std::ostream* out, int indent, int indent_width = 4);
  virtual void on_open_block() {}
  virtual void on_close_block() {}
  int indent_ = 0;

 private:
  std::ostream* out_ = nullptr;
  int indent_width_ = 4;
  bool at_block_start_ = true;
};

}  // namespace pypto::codegen::common
