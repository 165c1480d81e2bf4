// const_integer.cpp — ConstIntegerValue (const_integer.h).
#include "pypto/ir/const_integer.h"

#include <limits>

#include "pypto/ir/type.h"

namespace pypto::ir {

namespace {

DataType dtype_of(const Expr& e) {
  auto* s = e.type ? e.type->as<ScalarType>() : nullptr;
  return s ? s->dtype : DataType::INDEX;
}

// `v` reduced to the integer dtype `d` as the generated code holds it (two's complement).
int64_t wrap_to(DataType d, uint64_t v) {
  const int bits = bit_width(d);
  if (bits >= 64) return static_cast<int64_t>(v);
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  if (is_signed(d) && (v >> (bits - 1)) != 0) v |= ~mask;  // sign-extend
  return static_cast<int64_t>(v);
}

// `x // y` or `x % y` of a signed dtype with Python's meaning (floor), as pto2_floordiv and
// pto2_mod compute it; nullopt where they fail the run (a zero divisor; MIN // -1, which does
// not fit) and for unsigned dtypes (their operands' values here are the wrapped bit patterns).
std::optional<int64_t> floor_div_mod(DataType d, BinaryOp op, std::optional<int64_t> x, std::optional<int64_t> y) {
  if (!x || !y || !is_signed(d)) return std::nullopt;
  // the operands as the dtype holds them: a UINT32 4294967295 is -1 in an INT32 `%` (found by
  // tests/python/typed_scalar_fuzz.py: `pl.cast(1, pl.INT32) % pl.cast(-1, pl.UINT32)` folded to 1)
  const int64_t a = wrap_to(d, static_cast<uint64_t>(*x)), b = wrap_to(d, static_cast<uint64_t>(*y));
  if (b == 0) return std::nullopt;
  if (a == std::numeric_limits<int64_t>::min() && b == -1) return std::nullopt;
  int64_t q = a / b, m = a % b;
  if (m != 0 && (m < 0) != (b < 0)) {  // C++ truncates toward zero; Python floors
    --q;
    m += b;
  }
  const int64_t r = op == BinaryOp::FloorDiv ? q : m;
  return wrap_to(d, static_cast<uint64_t>(r)) == r ? std::optional<int64_t>(r) : std::nullopt;   // MIN // -1 of a narrower type
}

// `x << n` / `x >> n` in the dtype `d` with Python's meaning, as pto2_shl / pto2_shr compute it:
// nullopt for a negative count (the run fails); a count of the width or more shifts everything
// out (>> of a negative signed value leaves -1). `n_signed`: the count's dtype is signed.
std::optional<int64_t> shift(DataType d, BinaryOp op, std::optional<int64_t> x, std::optional<int64_t> n, bool n_signed) {
  if (!x || !n || (n_signed && *n < 0)) return std::nullopt;
  const uint64_t count = static_cast<uint64_t>(*n);
  const int64_t a = wrap_to(d, static_cast<uint64_t>(*x));
  const int bits = bit_width(d);
  if (op == BinaryOp::Shl) return count >= 64 ? 0 : wrap_to(d, static_cast<uint64_t>(a) << count);
  if (is_signed(d)) return a >> (count >= 63 ? 63 : count);   // arithmetic: the sign fills
  const uint64_t pattern = bits >= 64 ? static_cast<uint64_t>(a) : static_cast<uint64_t>(a) & ((uint64_t{1} << bits) - 1);
  return count >= 64 ? 0 : wrap_to(d, pattern >> count);
}

std::optional<int64_t> value(const ExprPtr& e, bool& wide) {
  const DataType d = dtype_of(*e);
  if (!is_integer(d)) return std::nullopt;
  auto note = [&](__int128 v) {
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) wide = true;
  };
  if (auto* c = e->as<ConstInt>()) {
    note(c->value);
    return c->value;
  }
  if (auto* c = e->as<Cast>()) {
    auto v = value(c->value, wide);
    return v ? std::optional<int64_t>(wrap_to(d, static_cast<uint64_t>(*v))) : std::nullopt;
  }
  if (auto* u = e->as<UnaryExpr>()) {
    if (u->op == UnaryOp::BitNot) {
      auto v = value(u->a, wide);
      if (!v) return std::nullopt;
      note(~static_cast<__int128>(*v));
      return wrap_to(d, ~static_cast<uint64_t>(*v));
    }
    auto v = u->op == UnaryOp::Neg ? value(u->a, wide) : std::nullopt;
    if (!v) return std::nullopt;
    note(-static_cast<__int128>(*v));
    return wrap_to(d, uint64_t{0} - static_cast<uint64_t>(*v));
  }
  auto* b = e->as<BinaryExpr>();
  if (!b) return std::nullopt;
  if (b->op == BinaryOp::FloorDiv || b->op == BinaryOp::Mod) return floor_div_mod(d, b->op, value(b->a, wide), value(b->b, wide));
  if (b->op == BinaryOp::Shl || b->op == BinaryOp::Shr) {
    auto r = shift(d, b->op, value(b->a, wide), value(b->b, wide), is_signed(dtype_of(*b->b)));
    if (r) note(*r);
    return r;
  }
  if (b->op == BinaryOp::BitAnd || b->op == BinaryOp::BitOr || b->op == BinaryOp::BitXor) {
    auto x = value(b->a, wide), y = value(b->b, wide);
    if (!x || !y) return std::nullopt;
    // the operands as the result dtype holds them (sign- or zero-extended), then the bits
    const uint64_t ux = static_cast<uint64_t>(wrap_to(d, static_cast<uint64_t>(*x)));
    const uint64_t uy = static_cast<uint64_t>(wrap_to(d, static_cast<uint64_t>(*y)));
    const int64_t r = wrap_to(d, b->op == BinaryOp::BitAnd ? ux & uy : b->op == BinaryOp::BitOr ? ux | uy : ux ^ uy);
    note(r);
    return r;
  }
  if (b->op == BinaryOp::Min || b->op == BinaryOp::Max) {   // compared in the result dtype, as generated code does
    auto x = value(b->a, wide), y = value(b->b, wide);
    if (!x || !y) return std::nullopt;
    const int64_t vx = wrap_to(d, static_cast<uint64_t>(*x)), vy = wrap_to(d, static_cast<uint64_t>(*y));
    const bool y_below = is_signed(d) ? vy < vx : static_cast<uint64_t>(vy) < static_cast<uint64_t>(vx);
    const bool y_above = is_signed(d) ? vy > vx : static_cast<uint64_t>(vy) > static_cast<uint64_t>(vx);
    return (b->op == BinaryOp::Min ? y_below : y_above) ? vy : vx;   // Python's: a unless b is below (above) it
  }
  if (b->op != BinaryOp::Add && b->op != BinaryOp::Sub && b->op != BinaryOp::Mul) return std::nullopt;
  auto x = value(b->a, wide), y = value(b->b, wide);
  if (!x || !y) return std::nullopt;
  const __int128 wx = *x, wy = *y;
  note(b->op == BinaryOp::Add ? wx + wy : b->op == BinaryOp::Sub ? wx - wy : wx * wy);
  const uint64_t ux = static_cast<uint64_t>(*x), uy = static_cast<uint64_t>(*y);
  return wrap_to(d, b->op == BinaryOp::Add ? ux + uy : b->op == BinaryOp::Sub ? ux - uy : ux * uy);
}

}  // namespace

std::optional<int64_t> ConstIntegerValue(const ExprPtr& e, bool* wide) {
  bool w = false;
  auto v = value(e, w);
  if (wide) *wide = w;
  return v;
}

}  // namespace pypto::ir
