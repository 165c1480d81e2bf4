// Rendering of user errors: `error: <msg> --> file:line:col`, the source line with a caret
// underline, then `help: <help>`.
#include "pypto/ir/error.h"

#include <algorithm>
#include <string>

namespace pypto::ir {

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
        width = std::max(1, static_cast<int>(span.source_line.size()) - col + 1);
      }
      os << "\n" << pad << " | " << std::string(static_cast<size_t>(col - 1), ' ') << std::string(static_cast<size_t>(width), '^');
    }
  }
  if (!help.empty()) os << "\nhelp: " << help;
  return os.str();
}

}  // namespace pypto::ir
