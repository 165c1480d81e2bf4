// VerifyOrchestrationFunction / VerifyHostFunction (verify_program.h): the user-facing checks of
// the L2 and HOST code generators, run on a prepared program before anything is printed.
#include "orch_test_util.h"
#include "pypto/transforms/pass.h"
#include "pypto/transforms/verify_program.h"

using namespace pypto::orch_test;
using pypto::transforms::PassOptions;
using pypto::transforms::RunDefaultPipeline;
using pypto::transforms::VerifyHostFunction;
using pypto::transforms::VerifyOrchestrationFunction;

namespace {

ProgramPtr prepared(const ProgramPtr& p) { return RunDefaultPipeline(p, PassOptions{}); }

// orch_basic with `extra` inserted before its return.
ProgramPtr orch_with(const std::vector<StmtPtr>& extra, std::vector<VarPtr> more_params = {}) {
  auto a = V("a", T16()), b = V("b", T16()), d = V("d", T16());
  auto d1 = V("d", T16());
  std::vector<StmtPtr> body = {AssignStmt::make(d1, Call::make_func("kernel_add", {a, b, d}, T16()))};
  body.insert(body.end(), extra.begin(), extra.end());
  body.push_back(ReturnStmt::make({d1}));
  std::vector<VarPtr> params = {a, b, d};
  std::vector<ParamDirection> dirs = {ParamDirection::In, ParamDirection::In, ParamDirection::Out};
  for (auto& p : more_params) {
    params.push_back(p);
    dirs.push_back(ParamDirection::In);
  }
  auto orch = Function::make("orch", FunctionType::Orchestration, params, dirs, {T16()}, SeqStmts::make(body));
  return Program::make("P", {kernel("kernel_add", 2, 1), orch});
}

FunctionPtr chip(const std::string& name) {
  auto a = V("a", T16()), b = V("b", T16()), c = V("c", T16()), c1 = V("c", T16());
  auto body = SeqStmts::make({AssignStmt::make(c1, Call::make_func("kernel_add", {a, b, c}, T16())), ReturnStmt::make({c})});
  return Function::make(name, FunctionType::Orchestration, {a, b, c},
                        {ParamDirection::In, ParamDirection::In, ParamDirection::Out}, {T16()}, body);
}

// def host_main(self, x, y, z: Out):  z, t0 = pl.submit(self.<callee>, <args>); return z   (HOST)
ProgramPtr host_program(const std::string& callee, bool early = false, bool pass_out = true) {
  auto x = V("x", T16()), y = V("y", T16()), z = V("z", T16());
  std::vector<ExprPtr> args = {x, y};
  if (pass_out) args.push_back(z);
  auto s0 = Submit::make(callee, args, {T16()}, {}, nullptr, false, early);
  auto tup = V("z_t0_tuple", s0->type);
  auto z1 = V("z", T16()), t0 = V("t0", S(DataType::TASK_ID));
  auto body = SeqStmts::make({AssignStmt::make(tup, s0), AssignStmt::make(z1, TupleGetItem::make(tup, 0)),
                              AssignStmt::make(t0, TupleGetItem::make(tup, 1)), ReturnStmt::make({z1})});
  auto host = Function::make("host_main", FunctionType::Orchestration, {x, y, z},
                             {ParamDirection::In, ParamDirection::In, ParamDirection::Out}, {T16()}, body, Level::HOST);
  return Program::make("Dist", {kernel("kernel_add", 2, 1), chip("chip_a"), host});
}

}  // namespace

TEST(VerifyOrchestrationProgram, AcceptsAPreparedProgram) {
  EXPECT_NO_THROW(VerifyOrchestrationFunction(prepared(orch_basic()), "orch_basic"));
}

TEST(VerifyOrchestrationProgram, EntryMustBeAnOrchestrationFunction) {
  ExpectUserError([] { VerifyOrchestrationFunction(prepared(orch_basic()), "nope"); }, "has no function named 'nope'");
  ExpectUserError([] { VerifyOrchestrationFunction(prepared(orch_basic()), "kernel_add"); },
                  "function 'kernel_add' is InCore, not Orchestration");
}

TEST(VerifyOrchestrationProgram, TileOpInAnOrchestrationBodyIsRefused) {
  auto t = V("t", tile16());
  auto a = V("a", T16());
  auto p = orch_with({AssignStmt::make(t, Call::make_op("tile.load", {a, ilist({0, 0}), ilist({16, 16})}))});
  ExpectUserError([&] { VerifyOrchestrationFunction(prepared(p), "orch"); },
                  "operation 'tile.load' is not supported in an orchestration function");
}

TEST(VerifyOrchestrationProgram, FloatModuloIsAccepted) {
  // Printed as pto2_float_mod (Python's float %); it was refused.
  auto s = V("s", S(DataType::FP32));
  auto r = V("r", S(DataType::FP32));
  auto p = orch_with({AssignStmt::make(r, BinaryExpr::make(BinaryOp::Mod, s, ConstFloat::make(2.0)))}, {s});
  EXPECT_NO_THROW(VerifyOrchestrationFunction(prepared(p), "orch"));
}

TEST(VerifyOrchestrationProgram, TaskIdParameterIsRefused) {
  auto p = orch_with({}, {V("tid", S(DataType::TASK_ID))});
  ExpectUserError([&] { VerifyOrchestrationFunction(prepared(p), "orch"); },
                  "orchestration parameter 'tid' cannot be a TaskId");
}

TEST(VerifyOrchestrationProgram, UnpreparedProgramIsAnInternalError) {
  EXPECT_THROW(VerifyOrchestrationFunction(orch_basic(), "orch_basic"), InternalError);
}

TEST(VerifyHostProgram, AcceptsAPreparedProgram) {
  EXPECT_NO_THROW(VerifyHostFunction(prepared(host_program("chip_a")), "host_main"));
}

TEST(VerifyHostProgram, OnlyChipLevelOrchestrationsAreSubmitted) {
  ExpectUserError([] { VerifyHostFunction(prepared(host_program("kernel_add")), "host_main"); },
                  "a HOST-level orchestration can only submit chip-level Orchestration functions; 'kernel_add' is InCore");
}

TEST(VerifyHostProgram, OnlyDepsIsSupported) {
  ExpectUserError([] { VerifyHostFunction(prepared(host_program("chip_a", /*early=*/true)), "host_main"); },
                  "only deps= is supported by pl.submit in a HOST-level orchestration");
}

TEST(VerifyHostProgram, EveryArgumentIsPassed) {
  ExpectUserError([] { VerifyHostFunction(prepared(host_program("chip_a", false, /*pass_out=*/false)), "host_main"); },
                  "the HOST-level submit of 'chip_a' must pass every argument (3), got 2");
}

TEST(VerifyHostProgram, ChipLevelFunctionIsNotAHostEntry) {
  ExpectUserError([] { VerifyHostFunction(prepared(host_program("chip_a")), "chip_a"); },
                  "is not a HOST-level Orchestration function");
}

namespace {

// main(x, out: Out) whose body is `inner` in an AUTO PTO2_SCOPE, then `after` (no MANUAL scope).
ProgramPtr scoped_main(std::vector<StmtPtr> inner, std::vector<StmtPtr> after, VarPtr x, VarPtr out) {
  std::vector<StmtPtr> body{RuntimeScopeStmt::make(RuntimeScopeMode::Auto, SeqStmts::make(inner))};
  body.insert(body.end(), after.begin(), after.end());
  auto main = Function::make("main", FunctionType::Orchestration, {x, out}, {ParamDirection::In, ParamDirection::Out},
                             {}, SeqStmts::make(body));
  return Program::make("P", {kernel("stage", 1, 1, true), main});
}

// `o, tid = pl.submit(self.stage, args..., deps=deps)`; returns the TaskId.
VarPtr submit_stage(std::vector<StmtPtr>& body, std::vector<ExprPtr> args, std::vector<ExprPtr> deps = {}) {
  auto s = Submit::make("stage", std::move(args), {T16()}, std::move(deps));
  auto tup = V("r", s->type);
  auto tid = V("tid", S(DataType::TASK_ID));
  body.push_back(AssignStmt::make(tup, s));
  body.push_back(AssignStmt::make(V("o", T16()), TupleGetItem::make(tup, 0)));
  body.push_back(AssignStmt::make(tid, TupleGetItem::make(tup, 1)));
  return tid;
}

}  // namespace

TEST(VerifyOrchestrationProgram, UserEdgeToATaskIdWhoseScopeClosedIsRefused) {
  auto x = V("x", T16()), out = V("out", T16());
  std::vector<StmtPtr> inner, after;
  VarPtr dead = submit_stage(inner, {x, out});
  submit_stage(after, {x, out}, {dead});
  ExpectUserError([&] { VerifyOrchestrationFunction(prepared(scoped_main(inner, after, x, out)), "main"); },
                  "deps= names TaskId 'tid' (produced at an unknown line), whose scope has already closed here");
}

TEST(VerifyOrchestrationProgram, UserEdgeInsideTheProducersScopeIsAccepted) {
  auto x = V("x", T16()), out = V("out", T16());
  std::vector<StmtPtr> inner;
  VarPtr live = submit_stage(inner, {x, out});
  submit_stage(inner, {x, out}, {live});
  EXPECT_NO_THROW(VerifyOrchestrationFunction(prepared(scoped_main(inner, {}, x, out)), "main"));
}

TEST(VerifyOrchestrationProgram, RuntimeAllocatedOutputUsedAfterItsScopeIsRefused) {
  // with pl.scope(): tmp, t = pl.submit(self.stage, x)   (the runtime allocates `tmp`)
  // out = self.stage(tmp, out)                           (after the scope: storage reclaimed)
  auto x = V("x", T16()), out = V("out", T16());
  std::vector<StmtPtr> inner;
  auto s = Submit::make("stage", {x}, {T16()}, {});
  auto tup = V("r", s->type);
  auto tmp = V("tmp", T16());
  inner.push_back(AssignStmt::make(tup, s));
  inner.push_back(AssignStmt::make(tmp, TupleGetItem::make(tup, 0)));
  std::vector<StmtPtr> after{AssignStmt::make(V("out", T16()), Call::make_func("stage", {tmp, out}, T16()))};
  ExpectUserError([&] { VerifyOrchestrationFunction(prepared(scoped_main(inner, after, x, out)), "main"); },
                  "'tmp' is used outside the runtime scope that produced it");
}
