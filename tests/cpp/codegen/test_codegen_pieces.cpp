// Orchestration codegen pieces: C++ block names, the op registry, simultaneous yields,
// Python-semantics integer expressions, unused locals, and user errors.
#include <sstream>

#include <algorithm>

#include "../transforms/orch_test_util.h"
#include "pypto/codegen/cpp_scopes.h"
#include "pypto/codegen/orchestration.h"
#include "pypto/transforms/pass.h"

using namespace pypto::orch_test;
using namespace pypto::codegen;
using pypto::codegen::orchestration::CppScopes;
using pypto::transforms::PassOptions;
using pypto::transforms::RunDefaultPipeline;

namespace {

std::string gen(const ProgramPtr& p, const std::string& fn = "orch") {
  return GenerateOrchestration(RunDefaultPipeline(p, PassOptions{}), fn).code;
}

bool has(const std::string& code, const std::string& needle) { return code.find(needle) != std::string::npos; }

// orch(x, o: Out) with scalar carries swapped every iteration:
//   for i, (a, b) in pl.range(4, init_values=(1, 2)): o = k(x, o, a, b); pl.yield_(b, a)
ProgramPtr swap_program() {
  auto k = kernel("k", 1, 1, true, FunctionType::InCore, MemorySpace::Vec, {DataType::INDEX, DataType::INDEX});
  auto x = V("x", T16()), o = V("o", T16());
  auto i = V("i", S(DataType::INDEX));
  auto a = IterArg::make("a", S(DataType::INDEX), I(1));
  auto b = IterArg::make("b", S(DataType::INDEX), I(2));
  auto call = EvalStmt::make(Call::make_func("k", {x, o, a, b}, T16()));
  auto loop = ForStmt::make(i, I(0), I(4), I(1), {a, b}, SeqStmts::make({call, YieldStmt::make({b, a})}),
                            {V("a_out", S(DataType::INDEX)), V("b_out", S(DataType::INDEX))});
  auto orch = Function::make("orch", FunctionType::Orchestration, {x, o}, {ParamDirection::In, ParamDirection::Out}, {},
                             SeqStmts::make({loop, ReturnStmt::make({})}));
  return Program::make("P", {k, orch});
}

}  // namespace

TEST(CodegenPieces, CppScopesAvoidShadowingAndReuseSiblings) {
  CppScopes s;
  s.push();
  EXPECT_EQ(s.declare("c"), "c");
  EXPECT_EQ(s.declare("c"), "c_1");
  EXPECT_EQ(s.declare("for"), "for_1");           // C++ keyword
  EXPECT_EQ(s.declare("orch_args"), "orch_args_1");
  s.push();
  EXPECT_EQ(s.declare("c"), "c_2");               // no shadowing of the enclosing block
  EXPECT_EQ(s.declare("t"), "t");
  EXPECT_EQ(s.pop(), (std::vector<std::string>{"c_2", "t"}));   // never used -> (void)
  s.push();
  EXPECT_EQ(s.declare("t"), "t");                 // a sibling block may reuse a name
  s.use("t");
  EXPECT_EQ(s.pop(), std::vector<std::string>{});
}

// Each declare of a base starts above the suffixes its block chain already took: 50,000 copies
// of one name (a pl.unroll of a slice) take linear time, not 50,000^2 / 2 lookups (a 100,000-way
// unroll hung the code generator), and the names stay the smallest free ones.
TEST(CodegenPieces, CppScopesManyCopiesOfOneNameAreLinear) {
  CppScopes s;
  s.push();
  s.declare_exact("c_3", true);                   // a user's own c_3 is skipped, not reused
  for (int k = 0; k < 50000; ++k) {
    const std::string want = k == 0 ? "c" : "c_" + std::to_string(k < 3 ? k : k + 1);
    ASSERT_EQ(s.declare("c"), want);
  }
  s.push();
  EXPECT_EQ(s.declare("c"), "c_50001");           // inner block: still no shadowing
  s.pop();
  s.push();
  EXPECT_EQ(s.declare("d"), "d");
  EXPECT_EQ(s.declare("d"), "d_1");
  s.pop();
  s.push();
  EXPECT_EQ(s.declare("d"), "d");                 // a sibling block starts again from the bare name
}

TEST(CodegenPieces, RegistryHasTheTensorOps) {
  const std::vector<std::string> ops = OrchestrationOpNames();
  auto has_op = [&](const std::string& op) { return std::find(ops.begin(), ops.end(), op) != ops.end(); };
  for (const char* op : {"tensor.create", "tensor.read", "tensor.slice", "tensor.transpose", "tensor.dim",
                         "tensor.assemble"}) {
    EXPECT_TRUE(has_op(op)) << op;
  }
  EXPECT_FALSE(has_op("tile.add"));
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
}

TEST(CodegenPieces, SimultaneousYieldUsesTemporaries) {
  std::string code = gen(swap_program());
  EXPECT_TRUE(has(code, "int64_t a = 1;")) << code;
  EXPECT_TRUE(has(code, "int64_t b = 2;")) << code;
  EXPECT_TRUE(has(code, "int64_t a_next = b;")) << code;
  EXPECT_TRUE(has(code, "int64_t b_next = a;")) << code;
  EXPECT_TRUE(has(code, "a = a_next;")) << code;
  EXPECT_TRUE(has(code, "b = b_next;")) << code;
}

TEST(CodegenPieces, FloorDivAndModKeepPythonSemantics) {
  // orch(x, o: Out, n: Scalar[INT64]): o = k(x, o, n // 4, n % 4, i // 2) in a loop from 0
  auto k = kernel("k", 1, 1, true, FunctionType::InCore, MemorySpace::Vec,
                  {DataType::INT64, DataType::INT64, DataType::INDEX});
  auto x = V("x", T16()), o = V("o", T16()), n = V("n", S(DataType::INT64));
  auto i = V("i", S(DataType::INDEX));
  auto call = EvalStmt::make(Call::make_func(
      "k",
      {x, o, BinaryExpr::make(BinaryOp::FloorDiv, n, I(4)), BinaryExpr::make(BinaryOp::Mod, n, I(4)),
       BinaryExpr::make(BinaryOp::FloorDiv, i, I(2))},
      T16()));
  auto loop = ForStmt::make(i, I(0), I(8), I(1), {}, call, {});
  auto orch = Function::make("orch", FunctionType::Orchestration, {x, o, n},
                             {ParamDirection::In, ParamDirection::Out, ParamDirection::In}, {},
                             SeqStmts::make({loop, ReturnStmt::make({})}));
  std::string code = gen(Program::make("P", {k, orch}));
  EXPECT_TRUE(has(code, "pto2_floordiv<int64_t>(n, 4, ")) << code;   // n may be negative
  EXPECT_TRUE(has(code, "pto2_mod<int64_t>(n, 4, ")) << code;
  EXPECT_TRUE(has(code, "add_scalar((uint64_t)(i / 2))")) << code;                         // i >= 0: plain
}

TEST(CodegenPieces, UnusedLocalsAreVoided) {
  // n = tensor.dim(x, 0) never read; an unused scalar param too.
  auto k = kernel("k", 1, 1, true);
  auto x = V("x", T16()), o = V("o", T16()), unused = V("unused", S(DataType::FP32));
  auto n = V("n", S(DataType::INDEX));
  auto orch = Function::make(
      "orch", FunctionType::Orchestration, {x, o, unused}, {ParamDirection::In, ParamDirection::Out, ParamDirection::In},
      {}, SeqStmts::make({AssignStmt::make(n, Call::make_op("tensor.dim", {x, I(0)})),
                          EvalStmt::make(Call::make_func("k", {x, o}, T16())), ReturnStmt::make({})}));
  std::string code = gen(Program::make("P", {k, orch}));
  EXPECT_TRUE(has(code, "int64_t n = 16;")) << code;
  EXPECT_TRUE(has(code, "(void)n;")) << code;
  EXPECT_TRUE(has(code, "(void)unused;")) << code;
}

TEST(CodegenPieces, NonKernelCalleeIsUserError) {
  auto helper = Function::make("helper", FunctionType::Inline, {V("z", T16())}, {ParamDirection::In}, {}, ReturnStmt::make({}));
  auto x = V("x", T16());
  auto orch = Function::make("orch", FunctionType::Orchestration, {x}, {ParamDirection::In}, {},
                             SeqStmts::make({EvalStmt::make(Call::make_func("helper", {x}, TupleType::unit())),
                                             ReturnStmt::make({})}));
  ExpectUserError([&] { gen(Program::make("P", {helper, orch})); }, "calls 'helper', an Inline function, which cannot be submitted as a task");
}

TEST(CodegenPieces, UndeclaredDynamicSymbolIsUserError) {
  auto M = V("M", S(DataType::INDEX));
  auto k = kernel("k", 1, 1, true);
  auto x = V("x", T16()), o = V("o", T16());
  auto t = V("t", TensorType::make({M, I(16)}, DataType::FP32));
  auto orch = Function::make(
      "orch", FunctionType::Orchestration, {x, o}, {ParamDirection::In, ParamDirection::Out}, {},
      SeqStmts::make({AssignStmt::make(t, Call::make_op("tensor.create", {MakeTuple::make({M, I(16)})},
                                                        Attrs{{"dtype", std::string("FP32")}})),
                      ReturnStmt::make({})}));
  ExpectUserError([&] { gen(Program::make("P", {k, orch}, {M})); }, "dynamic dimension 'M'");
}

TEST(CodegenPieces, DynamicTensorDimIsTheDimSymbol) {
  // IR built directly: n = tensor.dim(x, 0) with x: [M, 16]. FoldTensorDims rewrites it to
  // n = M (what the parser writes for pl.tensor.dim), so n names the symbol the prologue reads
  // from x's argument descriptor; no `int64_t n` copy of it.
  auto M = V("M", S(DataType::INDEX));
  auto k = kernel("k", 1, 1, true);
  auto w = V("w", T16()), x = V("x", TensorType::make({M, I(16)}, DataType::FP32)), o = V("o", T16());
  auto n = V("n", S(DataType::INDEX));
  auto i = V("i", S(DataType::INDEX));
  auto loop = ForStmt::make(i, I(0), n, I(16), {}, EvalStmt::make(Call::make_func("k", {w, o}, T16())), {});
  auto orch = Function::make(
      "orch", FunctionType::Orchestration, {w, x, o}, {ParamDirection::In, ParamDirection::In, ParamDirection::Out}, {},
      SeqStmts::make({AssignStmt::make(n, Call::make_op("tensor.dim", {x, I(0)})), loop, ReturnStmt::make({})}));
  std::string code = gen(Program::make("P", {k, orch}, {M}));
  EXPECT_TRUE(has(code, "int64_t M = (int64_t)orch_args.tensor(1).ref().shapes[0];")) << code;
  EXPECT_TRUE(has(code, "i < M;")) << code;
  EXPECT_FALSE(has(code, "int64_t n =")) << code;
}

TEST(CodegenPieces, TensorDimOfARunTimeExtentReadsTheTensor) {
  // v = tensor.slice(x, [m, 16], [0, 0]); n = tensor.dim(v, 0): `m` is no dim symbol a tensor
  // parameter declares, so FoldTensorDims leaves it and the generator reads v's run-time extent
  // (the slice may be clamped below m).
  auto k = kernel("k", 1, 1, true, FunctionType::InCore, MemorySpace::Vec, {DataType::INDEX});
  auto x = V("x", T16()), o = V("o", T16()), m = V("m", S(DataType::INDEX));
  auto v = V("v", TensorType::make({m, I(16)}, DataType::FP32));
  auto n = V("n", S(DataType::INDEX));
  auto slice = Call::make_op("tensor.slice", {x, MakeTuple::make({m, I(16)}), ilist({0, 0})});
  auto orch = Function::make(
      "orch", FunctionType::Orchestration, {x, o, m}, {ParamDirection::In, ParamDirection::Out, ParamDirection::In}, {},
      SeqStmts::make({AssignStmt::make(v, slice), AssignStmt::make(n, Call::make_op("tensor.dim", {v, I(0)})),
                      EvalStmt::make(Call::make_func("k", {x, o, n}, T16())), ReturnStmt::make({})}));
  std::string code = gen(Program::make("P", {k, orch}));
  EXPECT_TRUE(has(code, "int64_t n = (int64_t)v.shapes[0];")) << code;
}
