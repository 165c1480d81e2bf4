// ProvablyNonNegative decides when the L2 generator may print `//` and `%` as C++'s `/` and `%`
// (the same as Python's floor forms only for operands >= 0). Each case here is one the typed
// scalar fuzzer (tests/python/typed_scalar_fuzz.py) found printed wrong, or its safe neighbour.
#include <gtest/gtest.h>

#include <unordered_set>

#include "pypto/ir/expr.h"
#include "pypto/ir/type.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {
namespace {

using namespace ir;

ExprPtr Lit(int64_t v, DataType d = DataType::INDEX) { return ConstInt::make(v, d); }
ExprPtr CastTo(ExprPtr e, DataType d) { return Cast::make(std::move(e), d); }
ExprPtr Bin(BinaryOp op, ExprPtr a, ExprPtr b) { return BinaryExpr::make(op, std::move(a), std::move(b)); }

class ProvablyNonNegativeTest : public ::testing::Test {
 protected:
  VarPtr i = Var::make("i", ScalarType::make(DataType::INDEX));   // a loop index from 0
  VarPtr n = Var::make("n", ScalarType::make(DataType::INT64));   // a parameter: any sign
  std::unordered_set<const Var*> vars{i.get()};
  bool P(const ExprPtr& e) const { return ProvablyNonNegative(e, vars); }
};

TEST_F(ProvablyNonNegativeTest, IndicesAndTheirArithmetic) {
  EXPECT_TRUE(P(i));
  EXPECT_FALSE(P(n));
  EXPECT_TRUE(P(Bin(BinaryOp::Add, Bin(BinaryOp::Mul, i, Lit(16)), Lit(3))));
  EXPECT_FALSE(P(Bin(BinaryOp::Sub, i, Lit(1))));
  EXPECT_TRUE(P(Bin(BinaryOp::FloorDiv, i, Lit(4))));
  EXPECT_FALSE(P(Bin(BinaryOp::Shl, i, Lit(1))));
}

TEST_F(ProvablyNonNegativeTest, ANarrowingCastOfAPositiveLiteralMayBeNegative) {
  EXPECT_FALSE(P(CastTo(Lit(65535), DataType::INT8)));       // -1
  EXPECT_TRUE(P(CastTo(Lit(100), DataType::INT8)));
  EXPECT_FALSE(P(CastTo(i, DataType::INT32)));                // an index above 2^31 wraps
  EXPECT_FALSE(P(CastTo(CastTo(i, DataType::INT32), DataType::INT64)));   // widening does not undo it
  EXPECT_TRUE(P(CastTo(i, DataType::UINT64)));
}

TEST_F(ProvablyNonNegativeTest, UnsignedValuesAreNonNegativeOnlyInTypesThatHoldThem) {
  ExprPtr u8 = CastTo(n, DataType::UINT8);
  EXPECT_TRUE(P(u8));
  EXPECT_TRUE(ProvablyNonNegativeAs(u8, DataType::INT16, vars));
  EXPECT_FALSE(ProvablyNonNegativeAs(u8, DataType::INT8, vars));   // 200 is -56 as an INT8
  // INT8 with UINT8 computes in INT8: the UINT8 operand proves nothing there
  EXPECT_FALSE(P(Bin(BinaryOp::FloorDiv, u8, Lit(3, DataType::INT8))));
}

TEST_F(ProvablyNonNegativeTest, NarrowSumsWrap) {
  ExprPtr hundred = Lit(100, DataType::INT8);
  EXPECT_FALSE(P(Bin(BinaryOp::Add, CastTo(i, DataType::INT8), hundred)));   // 100 + 100 is -56
  EXPECT_TRUE(P(Bin(BinaryOp::Min, hundred, hundred)));
}

}  // namespace
}  // namespace pypto::transforms
