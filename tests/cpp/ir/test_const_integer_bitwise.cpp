// ConstIntegerValue of & | ^ << >> ~ on literals: Python's meaning wrapped to the result dtype, as
// the generated code's pto2_shl / pto2_shr compute it; a negative count is not a constant (the run fails).
#include <gtest/gtest.h>

#include "pypto/ir/const_integer.h"
#include "pypto/ir/error.h"
#include "pypto/ir/expr.h"
#include "pypto/ir/type.h"

namespace pypto::ir {
namespace {

ExprPtr Lit(int64_t v, DataType d = DataType::INDEX) { return ConstInt::make(v, d); }
ExprPtr Bin(BinaryOp op, ExprPtr a, ExprPtr b) { return BinaryExpr::make(op, std::move(a), std::move(b)); }
std::optional<int64_t> Val(const ExprPtr& e) { return ConstIntegerValue(e); }

TEST(ConstIntegerBitwise, AndOrXorNot) {
  EXPECT_EQ(Val(Bin(BinaryOp::BitAnd, Lit(12), Lit(10))), 8);
  EXPECT_EQ(Val(Bin(BinaryOp::BitOr, Lit(12), Lit(3))), 15);
  EXPECT_EQ(Val(Bin(BinaryOp::BitXor, Lit(-1), Lit(5))), -6);
  EXPECT_EQ(Val(UnaryExpr::make(UnaryOp::BitNot, Lit(0))), -1);
  EXPECT_EQ(Val(UnaryExpr::make(UnaryOp::BitNot, Lit(200, DataType::UINT8))), 55);   // in the dtype
  // mixed widths: the INT32 operand is sign-extended to INDEX first (Python's values)
  EXPECT_EQ(Val(Bin(BinaryOp::BitAnd, Lit(-1, DataType::INT32), Lit(0x1FFFFFFFF))), 0x1FFFFFFFF);
}

TEST(ConstIntegerBitwise, ShiftsWrapAndSaturate) {
  EXPECT_EQ(Val(Bin(BinaryOp::Shl, Lit(1), Lit(4))), 16);
  EXPECT_EQ(Val(Bin(BinaryOp::Shl, Lit(1), Lit(63))), std::numeric_limits<int64_t>::min());   // wraps
  EXPECT_EQ(Val(Bin(BinaryOp::Shl, Lit(3), Lit(64))), 0);
  EXPECT_EQ(Val(Bin(BinaryOp::Shl, Lit(3), Lit(1000))), 0);
  EXPECT_EQ(Val(Bin(BinaryOp::Shr, Lit(-8), Lit(1))), -4);      // arithmetic
  EXPECT_EQ(Val(Bin(BinaryOp::Shr, Lit(-8), Lit(1000))), -1);   // the sign fills
  EXPECT_EQ(Val(Bin(BinaryOp::Shr, Lit(8), Lit(1000))), 0);
  const auto u8 = DataType::UINT8;
  EXPECT_EQ(Val(Bin(BinaryOp::Shl, Lit(200, u8), Lit(1, u8))), 144);   // UINT8: 400 wraps
  EXPECT_EQ(Val(Bin(BinaryOp::Shr, Lit(200, u8), Lit(3, u8))), 25);
  EXPECT_EQ(Val(Bin(BinaryOp::Shl, Lit(1, DataType::INT32), Lit(31, DataType::INT32))),
            std::numeric_limits<int32_t>::min());
}

TEST(ConstIntegerBitwise, NegativeCountIsNotAConstant) {
  EXPECT_FALSE(Val(Bin(BinaryOp::Shl, Lit(1), Lit(-1))).has_value());
  EXPECT_FALSE(Val(Bin(BinaryOp::Shr, Lit(1), Lit(-3))).has_value());
}

TEST(ConstIntegerBitwise, FloatAndBoolOperandsAreRefused) {
  auto f = ConstFloat::make(1.5);
  EXPECT_THROW(Bin(BinaryOp::BitAnd, Lit(1), f), UserError);
  EXPECT_THROW(Bin(BinaryOp::Shl, ConstBool::make(true), Lit(1)), UserError);
  EXPECT_THROW(UnaryExpr::make(UnaryOp::BitNot, ConstBool::make(true)), UserError);
}

// min / max compare in the result dtype (a shape `[min(N, 16), 8]`; g++ warned about the constant
// overflow of `2147483648 * max(-8, 4294967297)` when it was not folded: found by the fuzzer).
TEST(ConstIntegerBitwise, MinMaxInTheResultDtype) {
  EXPECT_EQ(Val(Bin(BinaryOp::Min, Lit(20), Lit(16))), 16);
  EXPECT_EQ(Val(Bin(BinaryOp::Max, Lit(-8), Lit(4294967297))), 4294967297);
  EXPECT_EQ(Val(Bin(BinaryOp::Mul, Lit(2147483648), Bin(BinaryOp::Max, Lit(-8), Lit(4294967297)))),
            static_cast<int64_t>(static_cast<uint64_t>(2147483648) * 4294967297ULL));   // wraps
  // INT8 with UINT8: the result is INT8, so the UINT8 250 is -6 there
  EXPECT_EQ(Val(Bin(BinaryOp::Max, Lit(5, DataType::INT8), Lit(250, DataType::UINT8))), 5);
  EXPECT_EQ(Val(Bin(BinaryOp::Min, Lit(5, DataType::INT8), Lit(250, DataType::UINT8))), -6);
  // UINT64 above INT64_MAX compares as unsigned
  EXPECT_EQ(Val(Bin(BinaryOp::Max, Lit(-1, DataType::UINT64), Lit(3, DataType::UINT64))), -1);   // 2^64 - 1
  EXPECT_FALSE(Val(Bin(BinaryOp::Min, Lit(1), ConstFloat::make(0.5))).has_value());
}

// // and % divide the operands as the result dtype holds them (INT32 with UINT32 is INT32).
TEST(ConstIntegerBitwise, FloorDivisionInTheResultDtype) {
  EXPECT_EQ(Val(Bin(BinaryOp::Mod, Lit(1, DataType::INT32), Lit(4294967295, DataType::UINT32))), 0);    // 1 % -1
  EXPECT_EQ(Val(Bin(BinaryOp::FloorDiv, Lit(7, DataType::INT32), Lit(4294967294, DataType::UINT32))), -4);   // 7 // -2
  EXPECT_EQ(Val(Bin(BinaryOp::Mod, Lit(1, DataType::INT32), Lit(4294967296, DataType::INT64))), 1);   // INT64
  EXPECT_FALSE(Val(Bin(BinaryOp::Mod, Lit(5, DataType::INT32), Lit(0, DataType::UINT32))).has_value());   // by zero
}

}  // namespace
}  // namespace pypto::ir
