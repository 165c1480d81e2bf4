// CppWriter (cpp_writer.h).
#include "pypto/codegen/cpp_writer.h"

#include <algorithm>
#include <string>

#include "pypto/ir/error.h"

namespace pypto::codegen::common {

void CppWriter::write_to(std::ostream* out, int indent, int indent_width) {
  out_ = out;
  indent_ = indent;
  indent_width_ = indent_width;
}

void CppWriter::line(const std::string& text) {
  PYPTO_CHECK(out_, "CppWriter: no output stream");
  if (!text.empty()) {
    // Indentation written from a constant run of spaces: no string per line (170,000 lines
    // at 10,000 tasks).
    static const std::string kSpaces(256, ' ');
    for (size_t n = static_cast<size_t>(indent_width_ * indent_); n > 0;) {
      const size_t k = std::min(n, kSpaces.size());
      out_->write(kSpaces.data(), static_cast<std::streamsize>(k));
      n -= k;
    }
    out_->write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  out_->put('\n');
  at_block_start_ = !text.empty() && text.back() == '{';
}

void CppWriter::blank() {
  PYPTO_CHECK(out_, "CppWriter: no output stream");
  if (!at_block_start_) *out_ << "\n";
  at_block_start_ = true;
}

void CppWriter::open_block(const std::string& header) {
  line(header.empty() ? "{" : header + " {");
  reopen_block();
}

void CppWriter::enter_block(const std::string& header) {
  line(header + " {");
  ++indent_;
}

void CppWriter::reopen_block() {
  ++indent_;
  on_open_block();
}

void CppWriter::close_block(const std::string& footer) {
  on_close_block();
  --indent_;
  line(footer);
}

}  // namespace pypto::codegen::common
