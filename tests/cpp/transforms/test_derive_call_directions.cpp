// DeriveCallDirections: per-call-site directions from the callee's parameters.
#include "orch_test_util.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/ir_property.h"
#include "pypto/transforms/passes.h"

using namespace pypto::orch_test;
using namespace pypto::transforms;

namespace {

// orch(a, io: InOut, o: Out, s: Scalar[FP32]): r = k(a, io, o, s) with k(x0, y0: InOut, y1: Out, s0)
ProgramPtr build(std::vector<ArgDirection> dirs, bool submit) {
  std::vector<VarPtr> kp = {V("x0", T16()), V("y0", T16()), V("y1", T16()), V("s0", S(DataType::FP32))};
  auto k = Function::make("k", FunctionType::InCore, kp,
                          {ParamDirection::In, ParamDirection::InOut, ParamDirection::Out, ParamDirection::In},
                          {T16(), T16()}, ReturnStmt::make({kp[1], kp[2]}));
  auto a = V("a", T16()), io = V("io", T16()), o = V("o", T16()), s = V("s", S(DataType::FP32));
  ExprPtr call;
  if (submit) {
    call = Submit::make("k", {a, io, o, s}, {T16(), T16()}, {}, nullptr, false, false, -1, nullptr, dirs);
  } else {
    call = Call::make_func("k", {a, io, o, s}, k->call_result_type(), dirs);
  }
  auto r = V("r", call->type);
  auto orch = Function::make("orch", FunctionType::Orchestration, {a, io, o, s},
                             {ParamDirection::In, ParamDirection::InOut, ParamDirection::Out, ParamDirection::In}, {},
                             SeqStmts::make({AssignStmt::make(r, call), ReturnStmt::make({})}));
  return Program::make("P", {k, orch});
}

}  // namespace

TEST(DeriveCallDirections, FromCalleeParams) {
  auto got = DeriveCallDirections().run(build({}, false));
  auto expected = build({ArgDirection::In, ArgDirection::InOut, ArgDirection::Out, ArgDirection::Scalar}, false);
  EXPECT_TRUE(StructEq(got, expected));
  EXPECT_TRUE(VerifyProperty(IRProperty::CallDirectionsDerived, got).empty());
  EXPECT_FALSE(VerifyProperty(IRProperty::CallDirectionsDerived, build({}, false)).empty());
}

TEST(DeriveCallDirections, KeepsParserNoDep) {
  auto before = build({ArgDirection::NoDep, ArgDirection::Unset, ArgDirection::NoDep, ArgDirection::Unset}, false);
  auto got = DeriveCallDirections().run(before);
  EXPECT_TRUE(StructEq(got, build({ArgDirection::NoDep, ArgDirection::InOut, ArgDirection::NoDep, ArgDirection::Scalar}, false)));
}

TEST(DeriveCallDirections, Submit) {
  auto got = DeriveCallDirections().run(build({}, true));
  EXPECT_TRUE(StructEq(got, build({ArgDirection::In, ArgDirection::InOut, ArgDirection::Out, ArgDirection::Scalar}, true)));
}

TEST(DeriveCallDirections, Idempotent) {
  auto once = DeriveCallDirections().run(build({}, false));
  EXPECT_EQ(DeriveCallDirections().run(once), once);
}

// orch: r1 = k(a, io, o, s) with its directions given; r2 = k(a, io, o, s) with none; return.
// Only r2's statement is rebuilt: the others are the same nodes (shared, not copied), and r2's
// Out `o` becomes InOut because r1 wrote `o` before it (R-prior, seen through a given call).
TEST(DeriveCallDirections, RebuildsOnlyChangedStatements) {
  std::vector<VarPtr> kp = {V("x0", T16()), V("y0", T16()), V("y1", T16()), V("s0", S(DataType::FP32))};
  auto k = Function::make("k", FunctionType::InCore, kp,
                          {ParamDirection::In, ParamDirection::InOut, ParamDirection::Out, ParamDirection::In},
                          {T16(), T16()}, ReturnStmt::make({kp[1], kp[2]}));
  auto a = V("a", T16()), io = V("io", T16()), o = V("o", T16()), s = V("s", S(DataType::FP32));
  const std::vector<ArgDirection> given = {ArgDirection::In, ArgDirection::InOut, ArgDirection::Out,
                                           ArgDirection::Scalar};
  ExprPtr c1 = Call::make_func("k", {a, io, o, s}, k->call_result_type(), given);
  ExprPtr c2 = Call::make_func("k", {a, io, o, s}, k->call_result_type(), {});
  StmtPtr s1 = AssignStmt::make(V("r1", c1->type), c1), s2 = AssignStmt::make(V("r2", c2->type), c2);
  StmtPtr ret = ReturnStmt::make({});
  auto orch = Function::make("orch", FunctionType::Orchestration, {a, io, o, s},
                             {ParamDirection::In, ParamDirection::In, ParamDirection::Out, ParamDirection::In}, {},
                             SeqStmts::make({s1, s2, ret}));
  auto got = DeriveCallDirections().run(Program::make("P", {k, orch}));
  auto* body = got->get("orch")->body->as<SeqStmts>();
  ASSERT_NE(body, nullptr);
  ASSERT_EQ(body->stmts.size(), 3u);
  EXPECT_EQ(body->stmts[0], s1);
  EXPECT_EQ(body->stmts[2], ret);
  ASSERT_NE(body->stmts[1], s2);
  auto* call = body->stmts[1]->as<AssignStmt>()->value->as<Call>();
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->arg_directions, (std::vector<ArgDirection>{ArgDirection::In, ArgDirection::InOut,
                                                             ArgDirection::InOut, ArgDirection::Scalar}));
  EXPECT_EQ(got->get("k"), k);
}

// orch(a, o: Out, c: BOOL): if c: k(a, o) else: k(a, o); then `k(a, o)` as an EvalStmt.
// Each side of the branch starts from the roots written before it, so both calls write `o`
// as Out; the branch as a whole wrote `o`, so the call after it is promoted to InOut.
TEST(DeriveCallDirections, BranchSidesStartFromTheRootsBeforeTheBranch) {
  std::vector<VarPtr> kp = {V("x", T16()), V("y", T16())};
  auto k = Function::make("k", FunctionType::InCore, kp, {ParamDirection::In, ParamDirection::Out}, {T16()},
                          ReturnStmt::make({kp[1]}));
  auto a = V("a", T16()), o = V("o", T16()), c = V("c", S(DataType::BOOL));
  auto call = [&] { return Call::make_func("k", {a, o}, k->call_result_type(), {}); };
  ExprPtr then_call = call(), else_call = call(), after_call = call();
  StmtPtr branch = IfStmt::make(c, AssignStmt::make(V("r1", then_call->type), then_call),
                                AssignStmt::make(V("r2", else_call->type), else_call), {});
  auto orch = Function::make("orch", FunctionType::Orchestration, {a, o, c},
                             {ParamDirection::In, ParamDirection::Out, ParamDirection::In}, {},
                             SeqStmts::make({branch, EvalStmt::make(after_call), ReturnStmt::make({})}));
  auto got = DeriveCallDirections().run(Program::make("P", {k, orch}));
  auto* body = got->get("orch")->body->as<SeqStmts>();
  ASSERT_NE(body, nullptr);
  auto* got_if = body->stmts[0]->as<IfStmt>();
  ASSERT_NE(got_if, nullptr);
  const std::vector<ArgDirection> out = {ArgDirection::In, ArgDirection::Out};
  EXPECT_EQ(got_if->then_body->as<AssignStmt>()->value->as<Call>()->arg_directions, out);
  EXPECT_EQ(got_if->else_body->as<AssignStmt>()->value->as<Call>()->arg_directions, out);
  EXPECT_EQ(body->stmts[1]->as<EvalStmt>()->expr->as<Call>()->arg_directions,
            (std::vector<ArgDirection>{ArgDirection::In, ArgDirection::InOut}));
  EXPECT_TRUE(VerifyProperty(IRProperty::CallDirectionsDerived, got).empty());
}
