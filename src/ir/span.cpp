// SharedText (span.h): the out-of-line pieces of the shared span strings.
#include "pypto/ir/span.h"

#include <ostream>

namespace pypto::ir {

const std::string& SharedText::empty_text() noexcept {
  static const std::string empty;
  return empty;
}

std::ostream& operator<<(std::ostream& os, const SharedText& t) { return os << t.str(); }

std::string source_file_name(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

}  // namespace pypto::ir
