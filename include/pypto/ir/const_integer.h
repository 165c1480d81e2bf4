// const_integer.h — the value of an integer expression built from literals alone.
#pragma once

#include <cstdint>
#include <optional>

#include "pypto/ir/expr.h"

namespace pypto::ir {

/// The value of an integer expression of literals (+, -, *, unary minus, integer casts, min,
/// max, & | ^ << >> ~, and on signed dtypes // and % with Python's floor), as the generated code computes it (wrapped to
/// its dtype, -fwrapv); nullopt for anything else: a variable, a division the run would refuse
/// (by zero, MIN // -1). `*wide`, when given, is set if a literal or an exact intermediate value
/// of +, -, * or unary minus is outside int32.
///
///     ConstIntegerValue(parse("4 + 1"))   // 5: an array index the op checks at compile time
std::optional<int64_t> ConstIntegerValue(const ExprPtr& e, bool* wide = nullptr);

}  // namespace pypto::ir
