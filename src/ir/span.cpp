// SharedText (span.h): the out-of-line pieces of the shared span strings.
#include "pypto/ir/span.h"

#include <ostream>

namespace pypto::ir {

const std::string& SharedText::empty_text() noexcept {
  static const std::string empty;
  return empty;
}

std::ostream& operator<<(std::ostream& os, const SharedText& t) { return os << t.str(); }

}  // namespace pypto::ir
