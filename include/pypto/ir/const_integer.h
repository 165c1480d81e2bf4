// const_integer.h — the value of an integer expression built from literals alone.
#pragma once

#include <cstdint>
#include <optional>

#include "pypto/ir/expr.h"

namespace pypto::ir {

/// The value of an integer expression of literals (+, -, *, unary minus, integer casts), wrapped
/// to its dtype as the generated code computes it (two's complement, -fwrapv); nullopt for
/// anything else (a variable, a division: it may fail at run time). `*wide`, when given, is set
/// if a literal or an exact intermediate value is outside int32.
///
///     ConstIntegerValue(parse("4 + 1"))   // 5: an array index the op checks at compile time
std::optional<int64_t> ConstIntegerValue(const ExprPtr& e, bool* wide = nullptr);

/// `a op b` on two INDEX literals as the frontend folds them (Python's meaning: exact +, -, *,
/// floor division and modulo), or nullopt when the result is outside int64, the divisor is 0,
/// or `op` is another operator (the expression then stays as written).
///
///     FoldIndexLiterals(BinaryOp::FloorDiv, -7, 2)   // -4
std::optional<int64_t> FoldIndexLiterals(BinaryOp op, int64_t a, int64_t b);

/// The ConstInt `a op b` is folded to when both are INDEX ConstInts (FoldIndexLiterals), else
/// nullptr. `BinaryExpr(4, *, 2)` -> `ConstInt(8)`.
ExprPtr FoldedIndexBinary(BinaryOp op, const ExprPtr& a, const ExprPtr& b, const Span& span);

}  // namespace pypto::ir
