// FoldTensorDims: Before / Expected programs compared structurally, and its property.
#include "orch_test_util.h"
#include "pypto/transforms/ir_property.h"
#include "pypto/transforms/pass.h"
#include "pypto/transforms/passes.h"

using namespace pypto::orch_test;
using namespace pypto::transforms;

namespace {

// orch(x: [M, 16], o: Out[16, 16]): n = <dim0>; c = <dim1>; for i in range(0, n, c): k(o, o); return
// Before: the dims are tensor.dim(x, 0) and tensor.dim(x, -1); Expected: M and 16.
ProgramPtr dims_program(const VarPtr& M, bool folded) {
  auto k = kernel("k", 1, 1, true);
  auto x = V("x", TensorType::make({M, I(16)}, DataType::FP32)), o = V("o", T16());
  auto n = V("n", S(DataType::INDEX)), c = V("c", S(DataType::INDEX)), i = V("i", S(DataType::INDEX));
  ExprPtr dim0 = folded ? ExprPtr(M) : Call::make_op("tensor.dim", {x, I(0)});
  ExprPtr dim1 = folded ? I(16) : Call::make_op("tensor.dim", {x, I(-1)});
  auto loop = ForStmt::make(i, I(0), n, c, {}, EvalStmt::make(Call::make_func("k", {o, o}, T16())), {});
  auto orch = Function::make("orch", FunctionType::Orchestration, {x, o}, {ParamDirection::In, ParamDirection::Out}, {},
                             SeqStmts::make({AssignStmt::make(n, dim0), AssignStmt::make(c, dim1), loop,
                                             ReturnStmt::make({})}));
  return Program::make("P", {k, orch}, {M});
}

}  // namespace

TEST(FoldTensorDims, LiteralAndParameterDimSymbolAreFolded) {
  auto M = V("M", S(DataType::INDEX));
  ProgramPtr before = dims_program(M, false);
  EXPECT_FALSE(VerifyProperty(IRProperty::TensorDimsFolded, before).empty());
  ProgramPtr got = RunPass(FoldTensorDims(), before);
  EXPECT_TRUE(StructEq(got, dims_program(M, true)));
  EXPECT_TRUE(VerifyProperty(IRProperty::TensorDimsFolded, got).empty());
  EXPECT_EQ(TensorParamDimSymbols(*got->get("orch")), std::vector<VarPtr>{M});
}

TEST(FoldTensorDims, ExtentNoParameterDeclaresIsLeft) {
  // v = tensor.slice(x, [m, 16], [0, 0]) with m a scalar parameter: v's extent `m` is no dim
  // symbol, so tensor.dim(v, 0) stays (codegen reads the run-time Tensor's extent); a kernel's
  // tensor.dim is kernel code and is left too.
  auto x = V("x", T16()), m = V("m", S(DataType::INDEX));
  auto v = V("v", TensorType::make({m, I(16)}, DataType::FP32));
  auto d = V("d", S(DataType::INDEX));
  auto slice = Call::make_op("tensor.slice", {x, MakeTuple::make({m, I(16)}), ilist({0, 0})});
  auto orch = Function::make(
      "orch", FunctionType::Orchestration, {x, m}, {ParamDirection::In, ParamDirection::In}, {},
      SeqStmts::make({AssignStmt::make(v, slice), AssignStmt::make(d, Call::make_op("tensor.dim", {v, I(0)})),
                      ReturnStmt::make({})}));
  auto a = V("a", T16()), kd = V("kd", S(DataType::INDEX));
  auto kern = Function::make("kd_kernel", FunctionType::InCore, {a}, {ParamDirection::In}, {},
                             SeqStmts::make({AssignStmt::make(kd, Call::make_op("tensor.dim", {a, I(0)})),
                                             ReturnStmt::make({})}));
  ProgramPtr before = Program::make("P", {kern, orch});
  ProgramPtr got = RunPass(FoldTensorDims(), before);
  EXPECT_EQ(got, before);   // nothing to fold: the very same program
  EXPECT_TRUE(VerifyProperty(IRProperty::TensorDimsFolded, got).empty());
}

TEST(FoldTensorDims, RunsInTheDefaultPipelineBeforeCodegen) {
  std::vector<std::string> names;
  for (const Pass& p : DefaultPipeline()) names.push_back(p.name);
  auto at = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  ASSERT_LT(at("FoldTensorDims"), static_cast<long>(names.size()));
  EXPECT_LT(at("OutlineIncoreScopes"), at("FoldTensorDims"));   // kernel scopes are functions by then
}
