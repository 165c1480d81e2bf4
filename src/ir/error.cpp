// Rendering of user errors: `error: <msg> --> file:line:col`, the source line with a caret
// underline, then `help: <help>`.
#include "pypto/ir/error.h"

#include <algorithm>
#include <string>

namespace pypto::ir {
namespace {

// What goes before the caret: a space per character (UTF-8 code point) before `col`, but a tab
// where the line has one, so the caret sits under the column whatever the terminal's tab width.
std::string caret_indent(const std::string& line, int col) {
  std::string out;
  int chars = 0;
  for (size_t i = 0; i < line.size() && chars < col - 1; ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: the same character
    out += c == '\t' ? '\t' : ' ';
    ++chars;
  }
  out.append(static_cast<size_t>(col - 1 - chars), ' ');
  return out;
}

// The number of characters (UTF-8 code points) in `line`.
int char_count(const std::string& line) {
  int n = 0;
  for (unsigned char c : line) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::string UserError::render(const std::string& message, const Span& span, const std::string& help) {
  std::ostringstream os;
  os << "error: " << message;
  if (span.known()) {
    os << " --> " << (span.file.empty() ? "<unknown>" : span.file) << ":" << span.line << ":" << span.col;
    std::string line_no = std::to_string(span.line);
    std::string pad(line_no.size(), ' ');
    if (!span.source_line.empty()) {
      os << "\n" << pad << " |";
      os << "\n" << line_no << " | " << span.source_line;
      int col = std::max(span.col, 1);
      int width = 1;
      // Underline col..end_col when the span ends on the same line; else to the line's end.
      if (span.end_line == span.line && span.end_col > col) {
        width = span.end_col - col;
      } else if (span.end_line > span.line) {
        width = std::max(1, char_count(span.source_line) - col + 1);
      }
      os << "\n" << pad << " | " << caret_indent(span.source_line, col) << std::string(static_cast<size_t>(width), '^');
    }
  }
  if (!help.empty()) os << "\nhelp: " << help;
  return os.str();
}

}  // namespace pypto::ir
