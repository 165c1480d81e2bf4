// The location suffix the IR verifiers (ir_property.cpp, verify_well_formed.cpp) append to what
// a message names: one spelling for both.
#pragma once
#include <string>

#include "pypto/ir/span.h"

namespace pypto::transforms {

// " at file:line:col", or "" for an unknown span:
//   "for loop" + AtLocation(span)  ==  "for loop at prog.py:12:5"
inline std::string AtLocation(const ir::Span& s) {
  if (!s.known()) return "";
  return " at " + (s.file.empty() ? std::string("<unknown>") : s.file.str()) + ":" + std::to_string(s.line) + ":" +
         std::to_string(s.col);
}

}  // namespace pypto::transforms
