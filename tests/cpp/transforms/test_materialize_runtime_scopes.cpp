// MaterializeRuntimeScopes: AUTO scopes around the body and every for / if body, none inside
// MANUAL scopes, kernels untouched.
#include "orch_test_util.h"
#include "pypto/transforms/ir_property.h"
#include "pypto/transforms/passes.h"

using namespace pypto::orch_test;
using namespace pypto::transforms;

namespace {

StmtPtr scope(StmtPtr s, RuntimeScopeMode m = RuntimeScopeMode::Auto) { return RuntimeScopeStmt::make(m, std::move(s)); }

// orch(a, c: InOut):
//   [with pl.manual_scope():]
//     for i in pl.range(4):
//       if i == 0: c1 = k(a, c) ... (EvalStmt calls)
ProgramPtr build(bool materialized, bool manual) {
  auto k = kernel("k", 1, 1, true, FunctionType::InCore, MemorySpace::Vec, {}, ParamDirection::InOut);
  auto a = V("a", T16()), c = V("c", T16());
  auto i = V("i", S(DataType::INDEX));
  auto call_then = EvalStmt::make(Call::make_func("k", {a, c}, T16()));
  auto call_else = EvalStmt::make(Call::make_func("k", {c, c}, T16()));
  auto wrap = [&](StmtPtr s) { return (materialized && !manual) ? scope(s) : s; };
  auto iff = IfStmt::make(BinaryExpr::make(BinaryOp::Eq, i, I(0)), wrap(call_then), wrap(call_else));
  StmtPtr loop = ForStmt::make(i, I(0), I(4), I(1), {}, wrap(iff), {});
  if (manual) loop = scope(loop, RuntimeScopeMode::Manual);
  StmtPtr body = materialized ? scope(loop) : loop;
  // The pass marks what it wrapped auto_scope=False (spec anchor_features §4).
  Attrs attrs = materialized ? Attrs{{"auto_scope", false}} : Attrs{};
  auto orch = Function::make("orch", FunctionType::Orchestration, {a, c}, {ParamDirection::In, ParamDirection::InOut}, {},
                             SeqStmts::make({body, ReturnStmt::make({})}), Level::None, Role::None, attrs);
  return Program::make("P", {k, orch});
}

}  // namespace

TEST(MaterializeRuntimeScopes, WrapsBodyLoopAndBranches) {
  auto got = MaterializeRuntimeScopes().run(build(false, false));
  EXPECT_TRUE(StructEq(got, build(true, false)));
  EXPECT_TRUE(VerifyProperty(IRProperty::RuntimeScopesMaterialized, got).empty());
  EXPECT_FALSE(VerifyProperty(IRProperty::RuntimeScopesMaterialized, build(false, false)).empty());
}

TEST(MaterializeRuntimeScopes, NothingInsideManualScope) {
  auto got = MaterializeRuntimeScopes().run(build(false, true));
  EXPECT_TRUE(StructEq(got, build(true, true)));
  EXPECT_TRUE(VerifyProperty(IRProperty::RuntimeScopesMaterialized, got).empty());
}

TEST(MaterializeRuntimeScopes, Idempotent) {
  auto once = MaterializeRuntimeScopes().run(build(false, false));
  EXPECT_EQ(MaterializeRuntimeScopes().run(once), once);
  const bool* auto_scope = attr_get<bool>(once->get("orch")->attrs, "auto_scope");
  ASSERT_NE(auto_scope, nullptr);
  EXPECT_FALSE(*auto_scope);
}

TEST(MaterializeRuntimeScopes, KernelsUntouched) {
  auto p = Program::make("P", {kernel("k", 1, 1)});
  EXPECT_EQ(MaterializeRuntimeScopes().run(p), p);
}

TEST(MaterializeRuntimeScopes, ReturnStaysOutsideScope) {
  auto got = MaterializeRuntimeScopes().run(orch_basic());
  auto stmts = flatten_stmts(got->get("orch_basic")->body);
  ASSERT_EQ(stmts.size(), 2u);
  EXPECT_TRUE(stmts[0]->is<RuntimeScopeStmt>());
  EXPECT_TRUE(stmts[1]->is<ReturnStmt>());
}
