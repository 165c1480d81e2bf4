// Printer tests: types, scalar expressions (precedence, literals), op spellings.
#include "printer_test_util.h"

namespace pypto::ir::ptest {
namespace {

TEST(PrintType, ScalarTensorTileTupleArray) {
  EXPECT_EQ(python_print(scalar(DataType::INDEX)), "pl.Scalar[pl.INDEX]");
  EXPECT_EQ(python_print(scalar(DataType::TASK_ID)), "pl.Scalar[pl.TASK_ID]");
  EXPECT_EQ(python_print(tensor({16, 16})), "pl.Tensor[[16, 16], pl.FP32]");
  auto m = var("M", scalar(DataType::INDEX));
  EXPECT_EQ(python_print(TypePtr(TensorType::make({m, I(8)}, DataType::FP16, Layout::DN))),
            "pl.Tensor[[M, 8], pl.FP16, pl.Layout.DN]");
  EXPECT_EQ(python_print(tile({16, 32}, DataType::BF16)), "pl.Tile[[16, 32], pl.BF16]");
  EXPECT_EQ(python_print(tile({16, 16}, DataType::FP32, MemorySpace::Left)),
            "pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Left]");
  EXPECT_EQ(python_print(TypePtr(TupleType::make({tensor({4}), scalar(DataType::TASK_ID)}))),
            "tuple[pl.Tensor[[4], pl.FP32], pl.Scalar[pl.TASK_ID]]");
  EXPECT_EQ(python_print(TypePtr(ArrayType::make(4, DataType::TASK_ID))), "pl.Array[4, pl.TASK_ID]");
}

TEST(PrintExpr, Literals) {
  EXPECT_EQ(python_print(I(42)), "42");
  EXPECT_EQ(python_print(I(-3)), "-3");
  EXPECT_EQ(python_print(ExprPtr(ConstFloat::make(1.0))), "1.0");
  EXPECT_EQ(python_print(ExprPtr(ConstFloat::make(0.1))), "0.1");
  EXPECT_EQ(python_print(ExprPtr(ConstFloat::make(-2.5))), "-2.5");
  EXPECT_EQ(python_print(ExprPtr(ConstFloat::make(1e-30))), "1e-30");
  EXPECT_EQ(python_print(ExprPtr(ConstFloat::make(3e20))), "3e+20");
  EXPECT_EQ(python_print(ExprPtr(ConstFloat::make(100.0))), "100.0");
  EXPECT_EQ(python_print(ExprPtr(ConstFloat::make(123.456))), "123.456");
  EXPECT_EQ(python_print(ExprPtr(ConstFloat::make(0.001))), "0.001");
  EXPECT_EQ(python_print(ExprPtr(ConstFloat::make(1.5e-5))), "1.5e-05");
  EXPECT_EQ(python_print(ExprPtr(ConstFloat::make(1e15))), "1000000000000000.0");
  EXPECT_EQ(python_print(ExprPtr(ConstFloat::make(1e16))), "1e+16");
  EXPECT_EQ(python_print(ExprPtr(ConstFloat::make(0.30000000000000004))), "0.30000000000000004");
  EXPECT_EQ(python_print(ExprPtr(ConstBool::make(true))), "True");
  EXPECT_EQ(python_print(ExprPtr(ConstBool::make(false))), "False");
}

TEST(PrintExpr, MinimalParentheses) {
  auto a = var("a", scalar(DataType::INDEX));
  auto b = var("b", scalar(DataType::INDEX));
  auto c = var("c", scalar(DataType::INDEX));
  EXPECT_EQ(python_print(bin(BinaryOp::Add, bin(BinaryOp::Mul, a, b), c)), "a * b + c");
  EXPECT_EQ(python_print(bin(BinaryOp::Mul, bin(BinaryOp::Add, a, b), c)), "(a + b) * c");
  EXPECT_EQ(python_print(bin(BinaryOp::Sub, bin(BinaryOp::Sub, a, b), c)), "a - b - c");
  EXPECT_EQ(python_print(bin(BinaryOp::Sub, a, bin(BinaryOp::Sub, b, c))), "a - (b - c)");
  EXPECT_EQ(python_print(bin(BinaryOp::FloorDiv, a, bin(BinaryOp::Mul, b, c))), "a // (b * c)");
  EXPECT_EQ(python_print(bin(BinaryOp::Mod, bin(BinaryOp::FloorDiv, a, b), c)), "a // b % c");
  // (phase * 4 + branch) * 16
  EXPECT_EQ(python_print(bin(BinaryOp::Mul, bin(BinaryOp::Add, bin(BinaryOp::Mul, a, I(4)), b), I(16))),
            "(a * 4 + b) * 16");
  EXPECT_EQ(python_print(bin(BinaryOp::Lt, bin(BinaryOp::Add, a, I(1)), c)), "a + 1 < c");
  // Comparisons chain in Python: a nested comparison needs parentheses on either side.
  EXPECT_EQ(python_print(bin(BinaryOp::Eq, bin(BinaryOp::Lt, a, b), ConstBool::make(true))), "(a < b) == True");
  auto p = bin(BinaryOp::Lt, a, b), q = bin(BinaryOp::Gt, b, c), r = bin(BinaryOp::Ne, a, c);
  EXPECT_EQ(python_print(bin(BinaryOp::And, p, q)), "a < b and b > c");
  EXPECT_EQ(python_print(bin(BinaryOp::Or, bin(BinaryOp::And, p, q), r)), "a < b and b > c or a != c");
  EXPECT_EQ(python_print(bin(BinaryOp::And, bin(BinaryOp::Or, p, q), r)), "(a < b or b > c) and a != c");
  // `and`/`or` flatten in Python's AST, so a nested one of the same kind keeps its parentheses.
  EXPECT_EQ(python_print(bin(BinaryOp::And, bin(BinaryOp::And, p, q), r)), "(a < b and b > c) and a != c");
  EXPECT_EQ(python_print(ExprPtr(UnaryExpr::make(UnaryOp::Not, bin(BinaryOp::And, p, q)))), "not (a < b and b > c)");
  EXPECT_EQ(python_print(ExprPtr(UnaryExpr::make(UnaryOp::Neg, bin(BinaryOp::Add, a, b)))), "-(a + b)");
  EXPECT_EQ(python_print(bin(BinaryOp::Mul, ExprPtr(UnaryExpr::make(UnaryOp::Neg, a)), b)), "-a * b");
  EXPECT_EQ(python_print(bin(BinaryOp::Sub, a, I(-1))), "a - -1");
}

TEST(PrintExpr, BitwiseOperatorsTakePythonsPrecedence) {
  auto a = var("a", scalar(DataType::INDEX));
  auto b = var("b", scalar(DataType::INDEX));
  auto c = var("c", scalar(DataType::INDEX));
  // Python: | below ^ below & below << >> below + -; all above the comparisons
  EXPECT_EQ(python_print(bin(BinaryOp::BitOr, bin(BinaryOp::BitAnd, a, b), c)), "a & b | c");
  EXPECT_EQ(python_print(bin(BinaryOp::BitAnd, bin(BinaryOp::BitOr, a, b), c)), "(a | b) & c");
  EXPECT_EQ(python_print(bin(BinaryOp::BitXor, a, bin(BinaryOp::BitOr, b, c))), "a ^ (b | c)");
  EXPECT_EQ(python_print(bin(BinaryOp::Shl, bin(BinaryOp::Add, a, b), I(2))), "a + b << 2");
  EXPECT_EQ(python_print(bin(BinaryOp::Add, a, bin(BinaryOp::Shl, b, I(2)))), "a + (b << 2)");
  EXPECT_EQ(python_print(bin(BinaryOp::Shr, bin(BinaryOp::Shr, a, b), c)), "a >> b >> c");
  EXPECT_EQ(python_print(bin(BinaryOp::Shr, a, bin(BinaryOp::Shr, b, c))), "a >> (b >> c)");
  EXPECT_EQ(python_print(bin(BinaryOp::Eq, bin(BinaryOp::BitAnd, a, I(1)), I(0))), "a & 1 == 0");
  EXPECT_EQ(python_print(ExprPtr(UnaryExpr::make(UnaryOp::BitNot, bin(BinaryOp::BitAnd, a, b)))), "~(a & b)");
  EXPECT_EQ(python_print(bin(BinaryOp::BitAnd, ExprPtr(UnaryExpr::make(UnaryOp::BitNot, a)), b)), "~a & b");
}

TEST(PrintExpr, MinMaxCastDiv) {
  auto a = var("a", scalar(DataType::INDEX));
  auto b = var("b", scalar(DataType::INDEX));
  EXPECT_EQ(python_print(bin(BinaryOp::Min, a, bin(BinaryOp::Max, b, I(2)))), "min(a, max(b, 2))");
  EXPECT_EQ(python_print(bin(BinaryOp::Mul, bin(BinaryOp::Min, a, b), I(2))), "min(a, b) * 2");
  EXPECT_EQ(python_print(ExprPtr(Cast::make(a, DataType::INT64))), "pl.cast(a, pl.INT64)");
  EXPECT_EQ(python_print(bin(BinaryOp::Div, a, b)), "a / b");
}

TEST(PrintExpr, OpSpellings) {
  auto t = var("t", tensor({16, 16}));
  auto x = var("x", tile({16, 16}));
  auto y = var("y", tile({16, 16}));
  auto i = var("i", scalar(DataType::INDEX));
  EXPECT_EQ(python_print(ExprPtr(op("tile.load", {t, ints({0, 0}), ints({16, 16})}))), "pl.load(t, [0, 0], [16, 16])");
  EXPECT_EQ(python_print(ExprPtr(op("tile.load", {t, ints({0, 0}), ints({16, 16})}, {{"target_memory", std::string("Left")}}))),
            "pl.load(t, [0, 0], [16, 16], target_memory=pl.MemorySpace.Left)");
  EXPECT_EQ(python_print(ExprPtr(op("tile.add", {x, y}))), "pl.add(x, y)");
  EXPECT_EQ(python_print(ExprPtr(op("tile.mul", {x, ConstFloat::make(2.0)}))), "pl.mul(x, 2.0)");
  EXPECT_EQ(python_print(ExprPtr(op("tile.store", {op("tile.exp", {x}), ints({0, 0}), t}))),
            "pl.store(pl.exp(x), [0, 0], t)");
  EXPECT_EQ(python_print(ExprPtr(op("tile.move", {x}, {{"target_memory", std::string("Mat")}}))),
            "pl.move(x, target_memory=pl.MemorySpace.Mat)");
  EXPECT_EQ(python_print(ExprPtr(op("tile.cast", {x}, {{"dtype", std::string("FP16")}}))), "pl.cast(x, pl.FP16)");
  EXPECT_EQ(python_print(ExprPtr(op("tile.full", {ints({16, 16}), ConstFloat::make(0.0)}, {{"dtype", std::string("FP32")}}))),
            "pl.tile.full([16, 16], pl.FP32, 0.0)");
  EXPECT_EQ(python_print(ExprPtr(op("tile.get_block_idx", {}))), "pl.tile.get_block_idx()");
  EXPECT_EQ(python_print(ExprPtr(op("tile.get_block_num", {}))), "pl.tile.get_block_num()");
  EXPECT_EQ(python_print(ExprPtr(op("tensor.create", {ints({16, 16})}, {{"dtype", std::string("FP32")}}))),
            "pl.create_tensor([16, 16], dtype=pl.FP32)");
  EXPECT_EQ(python_print(ExprPtr(op("tensor.create", {ints({64})},
                                    {{"dtype", std::string("FP32")}, {"manual_dep", true}}))),
            "pl.create_tensor([64], dtype=pl.FP32, manual_dep=True)");
  EXPECT_EQ(python_print(ExprPtr(op("tensor.read", {t, MakeTuple::make({i, I(0)})}))), "t[i, 0]");
  EXPECT_EQ(python_print(ExprPtr(op("tensor.slice", {t, ints({8, 16}), MakeTuple::make({i, I(0)})}))),
            "pl.tensor.slice(t, [8, 16], [i, 0])");
  EXPECT_EQ(python_print(ExprPtr(op("tensor.transpose", {t, I(0), I(1)}))), "pl.tensor.transpose(t, 0, 1)");
  EXPECT_EQ(python_print(ExprPtr(op("tensor.dim", {t, I(1)}))), "pl.tensor.dim(t, 1)");
  EXPECT_EQ(python_print(ExprPtr(op("system.task_invalid", {}))), "pl.system.task_invalid()");
  auto tid = var("tid", task_id());
  EXPECT_EQ(python_print(ExprPtr(op("system.task_dummy", {},
                                    {{"manual_dep_edges", std::vector<ExprPtr>{tid}}, {"dummy_task", true}}))),
            "pl.system.task_dummy(deps=[tid])");
  auto arr = op("array.create", {}, {{"size", int64_t(4)}, {"dtype", std::string("TASK_ID")}});
  EXPECT_EQ(python_print(ExprPtr(arr)), "pl.array.create(4, pl.TASK_ID)");
  auto tids = var("tids", arr->type);
  EXPECT_EQ(python_print(ExprPtr(op("array.get_element", {tids, i}))), "tids[i]");
  EXPECT_EQ(python_print(ExprPtr(op("array.update_element", {tids, I(1), tid}))),
            "pl.array.update_element(tids, 1, tid)");
}

TEST(PrintExpr, FunctionCallsAndTuples) {
  auto a = var("a", tensor({16}));
  auto b = var("b", tensor({16}));
  auto call = Call::make_func("kernel", {a, b}, tensor({16}), {ArgDirection::NoDep, ArgDirection::Unset});
  EXPECT_EQ(python_print(ExprPtr(call)), "self.kernel(pl.no_dep(a), b)");
  auto pair = var("pair", TupleType::make({tensor({16}), tensor({16})}));
  EXPECT_EQ(python_print(ExprPtr(TupleGetItem::make(pair, 1))), "pair[1]");
}

}  // namespace
}  // namespace pypto::ir::ptest
