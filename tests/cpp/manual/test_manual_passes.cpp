// The manual-dependency passes: OutlineIncoreScopes, OutlineClusterScopes,
// ExpandManualPhaseFence, VerifyManualDepsOnSubmitOnly.
#include "manual_test_util.h"
#include "pypto/ir/visitor.h"

using namespace pypto::manual_test;
using namespace pypto::transforms;

namespace {

struct FindSubmits : IRVisitor {
  std::vector<const Submit*> subs;
  std::vector<const Call*> calls;
  void visit_(const Submit* op) override {
    subs.push_back(op);
    IRVisitor::visit_(op);
  }
  void visit_(const Call* op) override {
    calls.push_back(op);
    IRVisitor::visit_(op);
  }
};

StmtPtr store_block(const VarPtr& src, const VarPtr& dst, const VarPtr& result) {
  auto t = V("t", tile16());
  return SeqStmts::make({AssignStmt::make(t, Call::make_op("tile.load", {src, ilist({0, 0}), ilist({16, 16})})),
                         AssignStmt::make(result, Call::make_op("tile.store", {t, ilist({0, 0}), dst}))});
}

//   with pl.at(level=CORE_GROUP) as tid_a:       mid = pl.store(pl.load(x), mid)
//   with pl.at(level=CORE_GROUP, deps=[tid_a], no_dep_args=[x]) as tid_b:   out = pl.store(pl.load(mid) ..., out)
//   with pl.at(level=CORE_GROUP):                   out = pl.store(pl.load(out), out)    (plain call, InOut)
ProgramPtr at_program() {
  auto x = V("x", T16()), mid = V("mid", T16()), out = V("out", T16());
  auto mid1 = V("mid", T16()), out1 = V("out", T16()), out2 = V("out", T16());
  auto tid_a = V("tid_a", TID()), tid_b = V("tid_b", TID());
  Attrs cg{{"level", std::string("CORE_GROUP")}};
  ScopeOptions deps_opts;
  deps_opts.deps = {tid_a};
  deps_opts.no_dep_args = {x};
  auto t = V("t", tile16()), u = V("u", tile16());
  auto second = SeqStmts::make(
      {AssignStmt::make(t, Call::make_op("tile.load", {mid1, ilist({0, 0}), ilist({16, 16})})),
       AssignStmt::make(u, Call::make_op("tile.load", {x, ilist({0, 0}), ilist({16, 16})})),
       AssignStmt::make(out1, Call::make_op("tile.store", {Call::make_op("tile.add", {t, u}), ilist({0, 0}), out}))});
  auto body = SeqStmts::make({ScopeStmt::make(ScopeKind::At, cg, store_block(x, mid, mid1), tid_a),
                              ScopeStmt::make(ScopeKind::At, cg, second, tid_b)->with_options(deps_opts),
                              ScopeStmt::make(ScopeKind::At, cg, store_block(out1, out1, out2)),
                              ReturnStmt::make({out2})});
  auto main = Function::make("main", FunctionType::Orchestration, {x, mid, out},
                             {ParamDirection::In, ParamDirection::Out, ParamDirection::Out}, {T16()}, body);
  return Program::make("P", {main});
}

}  // namespace

TEST(OutlineIncoreScopes, AtScopesBecomeKernelsAndSubmits) {
  auto p = OutlineIncoreScopes().run(at_program());
  auto k0 = p->get("main_incore"), k1 = p->get("main_incore_1"), k2 = p->get("main_incore_2");
  ASSERT_TRUE(k0 && k1 && k2);
  EXPECT_EQ(k0->type, FunctionType::InCore);
  EXPECT_EQ(k0->param_directions, (std::vector<ParamDirection>{ParamDirection::In, ParamDirection::Out}));
  EXPECT_EQ(k1->param_directions, (std::vector<ParamDirection>{ParamDirection::In, ParamDirection::In, ParamDirection::Out}));
  EXPECT_EQ(k2->param_directions, (std::vector<ParamDirection>{ParamDirection::InOut}));
  EXPECT_EQ(k2->return_types.size(), 1u);
  FindSubmits f;
  f.visit_stmt(p->get("main")->body);
  ASSERT_EQ(f.subs.size(), 2u);                          // tid / deps force Submits
  EXPECT_TRUE(f.subs[0]->deps.empty());
  ASSERT_EQ(f.subs[1]->deps.size(), 1u);
  EXPECT_EQ(as_var(f.subs[1]->deps[0])->name, "tid_a");
  // no_dep_args=[x]: x is the second captured arg of the second scope (mid is read first).
  EXPECT_EQ(f.subs[1]->arg_directions[1], ArgDirection::NoDep);
  bool plain_call = false;
  for (auto* c : f.calls) plain_call = plain_call || (!c->is_op && c->callee == "main_incore_2");
  EXPECT_TRUE(plain_call) << "a scope without deps/tid/predicate becomes a plain Call";

  auto code = generate(at_program()).code;
  EXPECT_NE(code.find("params_t1.add_no_dep(ext_x);"), std::string::npos) << code;
  EXPECT_NE(code.find("params_t1_deps[params_t1_deps_count++] = tid_a;"), std::string::npos) << code;
  EXPECT_NE(code.find("params_t2.add_inout(ext_out);"), std::string::npos) << code;
  EXPECT_TRUE(Compiles(code, "at_scopes"));
}

TEST(OutlineIncoreScopes, SpmdScopeAroundOneKernelCallSubmitsTheKernel) {
  auto x = V("x", T16()), out = V("out", T16()), out1 = V("out", T16());
  auto g = V("g", TID());
  Attrs a{{"core_num", ExprPtr(I(4))}};
  ScopeOptions opts;
  opts.sync_start = true;
  opts.allow_early_resolve = true;
  auto body = SeqStmts::make({ScopeStmt::make(ScopeKind::Spmd, a,
                                              AssignStmt::make(out1, Call::make_func("stage", {x, out}, T16())), g)
                                  ->with_options(opts),
                              ReturnStmt::make({out1})});
  auto main = Function::make("main", FunctionType::Orchestration, {x, out}, {ParamDirection::In, ParamDirection::Out},
                             {T16()}, body);
  auto prog = Program::make("P", {kernel("stage", 1, 1, true), main});
  auto p = OutlineIncoreScopes().run(prog);
  EXPECT_EQ(p->functions.size(), 2u) << "no new kernel: the scope submits `stage` itself";
  FindSubmits f;
  f.visit_stmt(p->get("main")->body);
  ASSERT_EQ(f.subs.size(), 1u);
  EXPECT_EQ(f.subs[0]->callee, "stage");
  EXPECT_TRUE(f.subs[0]->sync_start);
  EXPECT_TRUE(f.subs[0]->allow_early_resolve);
  auto code = generate(prog).code;
  EXPECT_NE(code.find("params_t0.launch_spec.set_block_num(4);"), std::string::npos) << code;
  EXPECT_NE(code.find("PTO2TaskId g = task_0_outs.task_id();"), std::string::npos) << code;
  EXPECT_TRUE(Compiles(code, "spmd_direct"));
}

TEST(OutlineIncoreScopes, ValueComputedInsideUsedAfterIsAUserError) {
  auto x = V("x", T16());
  auto v = Var::make("v", S(DataType::INDEX), at_line(9));
  Attrs cg{{"level", std::string("CORE_GROUP")}};
  auto body = SeqStmts::make({ScopeStmt::make(ScopeKind::At, cg, AssignStmt::make(v, I(3))),
                              EvalStmt::make(Call::make_func("k", {x, v}, TupleType::unit()))});
  auto main = Function::make("main", FunctionType::Orchestration, {x}, {ParamDirection::In}, {}, body);
  ExpectUserError([&] { OutlineIncoreScopes().run(Program::make("P", {main})); }, "'v' is computed inside the pl.at scope");
}

TEST(OutlineClusterScopes, ClusterBecomesGroupFunction) {
  auto a = V("a", T16()), out = V("out", T16());
  auto tmp = V("tmp", T16()), tmp1 = V("tmp", T16()), out1 = V("out", T16());
  auto cluster = SeqStmts::make({AssignStmt::make(tmp1, Call::make_func("k_aic", {a, tmp}, T16())),
                                 AssignStmt::make(out1, Call::make_func("k_aiv", {tmp1, out}, T16()))});
  auto body = SeqStmts::make({AssignStmt::make(tmp, create16()), ScopeStmt::make(ScopeKind::Cluster, {}, cluster),
                              ReturnStmt::make({out1})});
  auto main = Function::make("main", FunctionType::Orchestration, {a, out}, {ParamDirection::In, ParamDirection::Out},
                             {T16()}, body);
  auto prog = Program::make("P", {kernel("k_aic", 1, 1, true, FunctionType::AIC), kernel("k_aiv", 1, 1, true, FunctionType::AIV),
                                  main});
  auto p = OutlineClusterScopes().run(prog);
  auto g = p->get("main_cluster");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->type, FunctionType::Group);
  EXPECT_EQ(g->param_directions,
            (std::vector<ParamDirection>{ParamDirection::In, ParamDirection::InOut, ParamDirection::Out}));
  auto code = generate(prog).code;
  EXPECT_NE(code.find("MixedKernels mixed_0 = {0, 1, INVALID_KERNEL_ID};"), std::string::npos) << code;
  EXPECT_NE(code.find("rt_submit_task(mixed_0, params_t0);"), std::string::npos) << code;
  EXPECT_TRUE(Compiles(code, "cluster"));
}

TEST(VerifyManualDepsOnSubmitOnly, OnlySubmitsAndTaskDummyCarryEdges) {
  auto x = V("x", T16()), t = V("t", TID());
  Attrs bad{{"manual_dep_edges", std::vector<ExprPtr>{t}}};
  auto body = SeqStmts::make({AssignStmt::make(t, Call::make_op("system.task_invalid", {})),
                              AssignStmt::make(V("b", TID()), Call::make_op("system.task_dummy", {}, bad)),
                              EvalStmt::make(Call::make_func("stage", {x}, TupleType::unit(), {}, at_line(4), bad))});
  auto main = Function::make("main", FunctionType::Orchestration, {x}, {ParamDirection::In}, {}, body);
  auto problems = CheckManualDepsOnSubmitOnly(Program::make("P", {main}));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("call to 'stage' at prog.py:4 carries manual_dep_edges"), std::string::npos) << problems[0];
  EXPECT_THROW(VerifyManualDepsOnSubmitOnly().run(Program::make("P", {main})), InternalError);
}

// case1: for phase in pl.range(3): for b in pl.parallel(4): out, prev = pl.submit(k, ..., deps=[prev])
namespace {
ProgramPtr case1(int64_t branches) {
  auto x = V("x", T16()), out = V("out", T16());
  auto seed = V("prev", TID());
  auto outer = IterArg::make("prev", TID(), seed);
  auto inner = IterArg::make("prev", TID(), outer);
  std::vector<StmtPtr> ib;
  auto s = submit(ib, "stage", {x, out}, {inner});
  ib.push_back(YieldStmt::make({s.tid}));
  auto b = V("branch", S(DataType::INDEX)), ph = V("phase", S(DataType::INDEX));
  auto inner_rv = V("prev", TID()), outer_rv = V("prev", TID());
  auto inner_loop = ForStmt::make(b, I(0), I(branches), I(1), {inner}, SeqStmts::make(ib), {inner_rv}, ForKind::Parallel);
  auto outer_loop = ForStmt::make(ph, I(0), I(3), I(1), {outer}, SeqStmts::make({inner_loop, YieldStmt::make({inner_rv})}),
                                  {outer_rv});
  auto body = RuntimeScopeStmt::make(
      RuntimeScopeMode::Manual,
      SeqStmts::make({AssignStmt::make(seed, Call::make_op("system.task_invalid", {})), outer_loop}));
  auto main = Function::make("main", FunctionType::Orchestration, {x, out}, {ParamDirection::In, ParamDirection::Out}, {},
                             body);
  return Program::make("P", {kernel("stage", 1, 1, true), main});
}
}  // namespace

TEST(ExpandManualPhaseFence, Case1GetsOneBarrierPerPhase) {
  auto p = ExpandManualPhaseFence().run(case1(4));
  FindSubmits f;
  f.visit_stmt(p->get("main")->body);
  int dummies = 0;
  for (auto* c : f.calls) dummies += c->is_op && c->callee == "system.task_dummy";
  EXPECT_EQ(dummies, 1);
  ASSERT_EQ(f.subs.size(), 1u);
  EXPECT_EQ(as_var(f.subs[0]->deps[0])->name, "prev_fence");

  auto code = generate(case1(4)).code;
  EXPECT_NE(code.find("PTO2TaskId prev_1[4];"), std::string::npos) << code;
  EXPECT_NE(code.find("prev_2[branch] = tid;"), std::string::npos) << code;
  EXPECT_NE(code.find("prev_1[k] = prev_2[k];"), std::string::npos) << code;
  EXPECT_NE(code.find("rt_submit_dummy_task("), std::string::npos) << code;
  EXPECT_TRUE(Compiles(code, "case1_fence"));
}

TEST(ExpandManualPhaseFence, UnprofitableShapeKeepsDirectDeps) {
  auto p = ExpandManualPhaseFence().run(case1(2));   // 2 x 2: 4 direct edges == 2 + 2
  FindSubmits f;
  f.visit_stmt(p->get("main")->body);
  ASSERT_EQ(f.subs.size(), 1u);
  EXPECT_EQ(as_var(f.subs[0]->deps[0])->name, "prev");
  auto code = generate(case1(2)).code;
  EXPECT_NE(code.find("PTO2TaskId params_t0_deps[2];"), std::string::npos) << code;
  EXPECT_NE(code.find("if (prev_1[k].is_valid()) params_t0_deps[params_t0_deps_count++] = prev_1[k];"), std::string::npos)
      << code;
  EXPECT_TRUE(Compiles(code, "case1_direct"));
}

// An Array[4, TASK_ID] filled before a pl.parallel(4) loop whose Submits all depend on it.
TEST(ExpandManualPhaseFence, StableArrayDependencyGetsOneBarrier) {
  auto x = V("x", T16()), out = V("out", T16());
  auto tids = V("tids", ArrayType::make(4, DataType::TASK_ID));
  auto carry = IterArg::make("tids", tids->type, tids);
  auto i = V("i", S(DataType::INDEX)), j = V("j", S(DataType::INDEX));
  std::vector<StmtPtr> fill;
  auto s = submit(fill, "stage", {x, out});
  auto next = V("tids", tids->type);
  fill.push_back(AssignStmt::make(next, Call::make_op("array.update_element", {carry, i, s.tid})));
  fill.push_back(YieldStmt::make({next}));
  auto filled = V("tids", tids->type);
  std::vector<StmtPtr> use;
  submit(use, "stage", {x, out}, {filled});
  std::vector<StmtPtr> body{
      AssignStmt::make(tids, Call::make_op("array.create", {}, Attrs{{"size", int64_t{4}}, {"dtype", std::string("TASK_ID")}})),
      ForStmt::make(i, I(0), I(4), I(1), {carry}, SeqStmts::make(fill), {filled}),
      ForStmt::make(j, I(0), I(4), I(1), {}, SeqStmts::make(use), {}, ForKind::Parallel)};
  auto main = Function::make("main", FunctionType::Orchestration, {x, out}, {ParamDirection::In, ParamDirection::Out}, {},
                             RuntimeScopeStmt::make(RuntimeScopeMode::Manual, SeqStmts::make(body)));
  auto prog = Program::make("P", {kernel("stage", 1, 1, true), main});
  auto p = ExpandManualPhaseFence().run(prog);
  FindSubmits f;
  f.visit_stmt(p->get("main")->body);
  ASSERT_EQ(f.subs.size(), 2u);
  EXPECT_EQ(as_var(f.subs[1]->deps[0])->name, "tids_fence");
  auto code = generate(prog).code;
  EXPECT_NE(code.find("if (tids[k].is_valid()) params_t1_deps[params_t1_deps_count++] = tids[k];"), std::string::npos)
      << code;
  EXPECT_NE(code.find("if (tids_fence.is_valid()) params_t2_deps[params_t2_deps_count++] = tids_fence;"), std::string::npos)
      << code;
  EXPECT_TRUE(Compiles(code, "array_fence"));
}
