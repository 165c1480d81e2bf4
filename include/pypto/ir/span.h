// Source locations. Every IR node carries a Span pointing at the DSL text it came from;
// diagnostics render it as `--> file:line:col` plus the source line and a caret.
#pragma once
#include <atomic>
#include <cstddef>
#include <iosfwd>
#include <string>

namespace pypto::ir {

// An immutable string shared by reference count. Every rebuilt IR node copies its Span, so a
// Span's file name and source line are shared handles: copying one costs an increment, not
// an allocation, and all the nodes of one source line point at one text. It reads like a
// `const std::string&` (implicit conversion, ==, <<, +):
//   SharedText f = "prog.py";   SharedText g = f;   // g shares f's text
//   std::string where = f + ":" + std::to_string(3);  // "prog.py:3"
class SharedText {
 public:
  SharedText() noexcept = default;
  SharedText(const std::string& s) : rep_(s.empty() ? nullptr : new Rep{{1}, s}) {}
  SharedText(std::string&& s) : rep_(s.empty() ? nullptr : new Rep{{1}, std::move(s)}) {}
  SharedText(const char* s) : SharedText(std::string(s ? s : "")) {}
  SharedText(const SharedText& o) noexcept : rep_(o.rep_) { acquire(); }
  SharedText(SharedText&& o) noexcept : rep_(o.rep_) { o.rep_ = nullptr; }
  SharedText& operator=(const SharedText& o) noexcept {
    if (rep_ != o.rep_) {
      o.acquire();
      release();
      rep_ = o.rep_;
    }
    return *this;
  }
  SharedText& operator=(SharedText&& o) noexcept {
    if (this != &o) {
      release();
      rep_ = o.rep_;
      o.rep_ = nullptr;
    }
    return *this;
  }
  ~SharedText() { release(); }

  const std::string& str() const noexcept { return rep_ ? rep_->text : empty_text(); }
  operator const std::string&() const noexcept { return str(); }
  bool empty() const noexcept { return rep_ == nullptr || rep_->text.empty(); }
  size_t size() const noexcept { return str().size(); }
  const char* c_str() const noexcept { return str().c_str(); }
  std::string substr(size_t pos, size_t n = std::string::npos) const { return str().substr(pos, n); }
  size_t find_last_of(const char* chars) const { return str().find_last_of(chars); }
  // True when both hold the very same text object (not merely equal text).
  bool same_as(const SharedText& o) const noexcept { return rep_ == o.rep_; }

 private:
  struct Rep {
    std::atomic<long> refs;
    std::string text;
  };
  static const std::string& empty_text() noexcept;
  void acquire() const noexcept {
    if (rep_) rep_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  void release() noexcept {
    if (rep_ && rep_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete rep_;
    rep_ = nullptr;
  }
  Rep* rep_ = nullptr;
};

inline bool operator==(const SharedText& a, const SharedText& b) { return a.same_as(b) || a.str() == b.str(); }
inline bool operator!=(const SharedText& a, const SharedText& b) { return !(a == b); }
inline bool operator==(const SharedText& a, const std::string& b) { return a.str() == b; }
inline bool operator!=(const SharedText& a, const std::string& b) { return a.str() != b; }
inline bool operator==(const SharedText& a, const char* b) { return a.str() == b; }
inline bool operator!=(const SharedText& a, const char* b) { return a.str() != b; }
inline std::string operator+(const SharedText& a, const std::string& b) { return a.str() + b; }
inline std::string operator+(const SharedText& a, const char* b) { return a.str() + b; }
inline std::string operator+(const std::string& a, const SharedText& b) { return a + b.str(); }
inline std::string operator+(const char* a, const SharedText& b) { return a + b.str(); }
std::ostream& operator<<(std::ostream& os, const SharedText& t);

// The file name of a DSL source path, without its directories: what generated code, task graphs
// and messages print as a site (`prog.py:12`). Only '/' separates directories, as for Python's
// os.path.basename on POSIX (a '\\' is part of a Linux file name).
//   source_file_name("/home/me/prog.py") == "prog.py"
std::string source_file_name(const std::string& path);

struct Span {
  SharedText file;    // path of the DSL source ("" when unknown)
  int line = 0;       // 1-based; 0 = unknown
  int col = 0;        // 1-based column of the first character
  int end_line = 0;   // 1-based, inclusive
  int end_col = 0;    // 1-based, exclusive
  SharedText source_line;  // the text of `line`, kept so errors can show it without the file

  bool known() const { return line > 0; }
  static Span unknown() { return Span{}; }
};

}  // namespace pypto::ir
