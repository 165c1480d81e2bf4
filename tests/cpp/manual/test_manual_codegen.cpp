// Manual-dependency lowering in orchestration codegen: the deps stack array and guards,
// TaskId carries and arrays, dummy barriers, predicates, launch specs, unresolvable edges.
// Every generated file is also compiled with g++ -Wall -Werror against the runtime header.
#include "manual_test_util.h"

using namespace pypto::manual_test;

namespace {

ProgramPtr with_main(std::vector<StmtPtr> body, std::vector<VarPtr> params, std::vector<ParamDirection> dirs,
                     bool manual = true) {
  StmtPtr b = SeqStmts::make(body);
  if (manual) b = RuntimeScopeStmt::make(RuntimeScopeMode::Manual, b);
  auto main = Function::make("main", FunctionType::Orchestration, params, dirs, {}, b);
  return Program::make("P", {kernel("stage", 1, 1, true), main});
}

CallPtr task_dummy(std::vector<ExprPtr> deps) {
  Attrs a{{"dummy_task", true}};
  if (!deps.empty()) a["manual_dep_edges"] = deps;
  return Call::make_op("system.task_dummy", {}, a);
}

}  // namespace

// 示例 1: scope-wide opt-out + one explicit edge from a fresh pl.submit id (unguarded).
TEST(ManualCodegen, FreshSubmitIdIsUnguardedOneSetDependencies) {
  auto x = V("x", T16()), scratch = V("scratch", T16()), out = V("out", T16());
  std::vector<StmtPtr> body;
  auto s1 = submit(body, "stage", {x, scratch}, {}, {}, nullptr, "stage1_tid");
  submit(body, "stage", {s1.out, out}, {s1.tid});
  auto code = generate(with_main(body, {x, scratch, out}, {ParamDirection::In, ParamDirection::Out, ParamDirection::Out})).code;
  EXPECT_NE(code.find("PTO2_SCOPE(PTO2ScopeMode::MANUAL) {"), std::string::npos) << code;
  EXPECT_NE(code.find("PTO2TaskId stage1_tid = task_0_outs.task_id();"), std::string::npos) << code;
  EXPECT_NE(code.find("PTO2TaskId params_t1_deps[1];"), std::string::npos) << code;
  EXPECT_NE(code.find("uint32_t params_t1_deps_count = 0;"), std::string::npos) << code;
  EXPECT_NE(code.find("        params_t1_deps[params_t1_deps_count++] = stage1_tid;"), std::string::npos) << code;
  EXPECT_EQ(code.find("is_valid"), std::string::npos) << code;
  EXPECT_EQ(count(code, "set_dependencies("), 1) << code;
  EXPECT_NE(code.find("params_t1.set_dependencies(params_t1_deps, params_t1_deps_count);"), std::string::npos);
  EXPECT_TRUE(Compiles(code, "fresh"));
}

// A None-seeded scalar loop carry is guarded; the yield rebinds it.
TEST(ManualCodegen, ScalarLoopCarryIsGuarded) {
  auto x = V("x", T16()), out = V("out", T16());
  auto seed = V("prev", TID());
  auto prev = IterArg::make("prev", TID(), seed);
  std::vector<StmtPtr> loop_body;
  auto s = submit(loop_body, "stage", {x, out}, {prev});
  loop_body.push_back(YieldStmt::make({s.tid}));
  auto i = V("i", S(DataType::INDEX));
  auto rv = V("prev_out", TID());
  std::vector<StmtPtr> body{AssignStmt::make(seed, Call::make_op("system.task_invalid", {})),
                            ForStmt::make(i, I(0), I(4), I(1), {prev}, SeqStmts::make(loop_body), {rv})};
  auto code = generate(with_main(body, {x, out}, {ParamDirection::In, ParamDirection::Out})).code;
  EXPECT_NE(code.find("PTO2TaskId prev = PTO2TaskId::invalid();"), std::string::npos) << code;
  EXPECT_NE(code.find("if (prev_1.is_valid()) params_t0_deps[params_t0_deps_count++] = prev_1;"), std::string::npos)
      << code;
  EXPECT_NE(code.find("prev_1 = tid;"), std::string::npos) << code;
  EXPECT_TRUE(Compiles(code, "carry"));
}

// A user edge naming a TaskId whose PTO2_SCOPE closed: UserError naming it, at the consumer.
TEST(ManualCodegen, UnresolvableUserEdgeIsAnErrorWithNameAndLine) {
  auto x = V("x", T16()), out = V("out", T16());
  std::vector<StmtPtr> loop_body;
  auto inner = submit(loop_body, "stage", {x, out}, {}, at_line(7), nullptr, "tid_in");
  auto i = V("i", S(DataType::INDEX));
  std::vector<StmtPtr> body{ForStmt::make(i, I(0), I(2), I(1), {}, SeqStmts::make(loop_body), {})};
  submit(body, "stage", {x, out}, {inner.tid}, at_line(12));
  auto prog = with_main(body, {x, out}, {ParamDirection::In, ParamDirection::Out}, /*manual=*/false);
  try {
    generate(prog);
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("TaskId 'tid_in'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("prog.py:7"), std::string::npos) << e.message();
    EXPECT_EQ(e.span().line, 12);
    EXPECT_NE(std::string(e.what()).find("--> prog.py:12:5"), std::string::npos) << e.what();
  }
}

// A dep-carrying barrier is submitted under `if (count > 0)`; a statically empty one always.
TEST(ManualCodegen, DummyBarriers) {
  auto x = V("x", T16()), a = V("a", T16()), out = V("out", T16());
  std::vector<StmtPtr> body;
  auto s1 = submit(body, "stage", {x, a}, {}, {}, nullptr, "t1");
  auto s2 = submit(body, "stage", {x, out}, {}, {}, nullptr, "t2");
  auto barrier = V("barrier", TID()), empty = V("empty", TID());
  body.push_back(AssignStmt::make(barrier, task_dummy({s1.tid, s2.tid})));
  body.push_back(AssignStmt::make(empty, task_dummy({})));
  submit(body, "stage", {s1.out, s2.out}, {barrier, empty});
  auto code = generate(with_main(body, {x, a, out}, {ParamDirection::In, ParamDirection::Out, ParamDirection::Out})).code;
  EXPECT_NE(code.find("PTO2TaskId params_t2_deps[2];"), std::string::npos) << code;
  EXPECT_NE(code.find("PTO2TaskId barrier = PTO2TaskId::invalid();"), std::string::npos) << code;
  EXPECT_NE(code.find("if (params_t2_deps_count > 0) barrier = rt_submit_dummy_task(params_t2).task_id();"), std::string::npos)
      << code;
  EXPECT_NE(code.find("PTO2TaskId empty = rt_submit_dummy_task(params_t3).task_id();"), std::string::npos) << code;
  EXPECT_NE(code.find("if (barrier.is_valid()) params_t4_deps[params_t4_deps_count++] = barrier;"), std::string::npos)
      << code;
  EXPECT_NE(code.find("params_t4_deps[params_t4_deps_count++] = empty;"), std::string::npos) << code;
  EXPECT_EQ(code.find("if (empty.is_valid())"), std::string::npos) << code;
  EXPECT_TRUE(Compiles(code, "dummy"));
}

// predicate=(0 < rc[2]) is stored as written; codegen flips it so the tensor is the operand.
TEST(ManualCodegen, MirroredPredicateIsFlipped) {
  auto x = V("x", T16()), out = V("out", T16());
  auto rc = V("rc", TensorType::make({I(4)}, DataType::INT32));
  auto read = Call::make_op("tensor.read", {rc, MakeTuple::make({I(2)})});
  auto pred = BinaryExpr::make(BinaryOp::Lt, I(0), Cast::make(read, DataType::INT64));
  auto pred2 = BinaryExpr::make(BinaryOp::Ge, Cast::make(read, DataType::INT64), ConstInt::make(-3));
  std::vector<StmtPtr> body;
  submit(body, "stage", {x, out}, {}, {}, pred);
  submit(body, "stage", {x, out}, {}, {}, pred2);
  auto code = generate(with_main(body, {x, rc, out}, {ParamDirection::In, ParamDirection::In, ParamDirection::Out},
                                 false)).code;
  EXPECT_NE(code.find("params_t0.set_predicate(CoreTaskPredicate(ext_rc, {2}, PredicateOp::GT, 0));"), std::string::npos)
      << code;
  EXPECT_NE(code.find("params_t1.set_predicate(CoreTaskPredicate(ext_rc, {2}, PredicateOp::GE, -3));"), std::string::npos)
      << code;
  EXPECT_EQ(code.find("get_tensor_data"), std::string::npos) << "a predicate is never evaluated by orchestration";
  EXPECT_TRUE(Compiles(code, "pred"));
}

// pl.array.create / tids[i] = tid / prev = tids[k] / deps=[tids] (N guarded slots).
TEST(ManualCodegen, TaskIdArrays) {
  auto x = V("x", T16()), out = V("out", T16());
  auto tids = V("tids", ArrayType::make(4, DataType::TASK_ID));
  auto carry = IterArg::make("tids", tids->type, tids);
  auto i = V("i", S(DataType::INDEX));
  std::vector<StmtPtr> lb;
  auto s = submit(lb, "stage", {x, out});
  auto next = V("tids", tids->type);
  lb.push_back(AssignStmt::make(next, Call::make_op("array.update_element", {carry, i, s.tid})));
  lb.push_back(YieldStmt::make({next}));
  auto rv = V("tids", tids->type);
  auto prev = V("prev", TID());
  std::vector<StmtPtr> body{
      AssignStmt::make(tids, Call::make_op("array.create", {}, Attrs{{"size", int64_t{4}}, {"dtype", std::string("TASK_ID")}})),
      ForStmt::make(i, I(0), I(4), I(1), {carry}, SeqStmts::make(lb), {rv}),
      AssignStmt::make(prev, Call::make_op("array.get_element", {rv, I(2)}))};
  submit(body, "stage", {x, out}, {rv});
  submit(body, "stage", {x, out}, {prev});
  auto code = generate(with_main(body, {x, out}, {ParamDirection::In, ParamDirection::Out})).code;
  EXPECT_NE(code.find("PTO2TaskId tids[4];"), std::string::npos) << code;
  // A slot index known only at run time is checked there (pto2_array_slot); a constant is not.
  EXPECT_NE(code.find("tids[pto2_array_slot(i, 4, \"\", 0)] = tid;"), std::string::npos) << code;
  EXPECT_NE(code.find("PTO2TaskId prev = tids[2];"), std::string::npos) << code;
  EXPECT_NE(code.find("PTO2TaskId params_t1_deps[4];"), std::string::npos) << code;
  EXPECT_NE(code.find("if (tids[k].is_valid()) params_t1_deps[params_t1_deps_count++] = tids[k];"), std::string::npos)
      << code;
  EXPECT_NE(code.find("if (prev.is_valid()) params_t2_deps[params_t2_deps_count++] = prev;"), std::string::npos) << code;
  EXPECT_TRUE(Compiles(code, "arrays"));
}

// Launch spec, early resolve and timing slot on a Submit.
TEST(ManualCodegen, LaunchSpecEarlyResolveTimingSlot) {
  auto x = V("x", T16()), out = V("out", T16());
  auto s = Submit::make("stage", {x, out}, {T16()}, {}, I(4), true, true, 3, nullptr, {});
  std::vector<StmtPtr> body{AssignStmt::make(V("r", s->type), s)};
  auto code = generate(with_main(body, {x, out}, {ParamDirection::In, ParamDirection::Out}, false)).code;
  EXPECT_NE(code.find("params_t0.launch_spec.set_block_num(4);"), std::string::npos) << code;
  EXPECT_NE(code.find("params_t0.launch_spec.set_require_sync_start(true);"), std::string::npos) << code;
  EXPECT_NE(code.find("params_t0.set_allow_early_resolve(true);"), std::string::npos) << code;
  EXPECT_NE(code.find("params_t0.set_task_timing_slot(3);"), std::string::npos) << code;
  EXPECT_TRUE(Compiles(code, "launch"));
}

// pl.no_dep(x) keeps NoDep through DeriveCallDirections -> add_no_dep.
TEST(ManualCodegen, NoDepArgument) {
  auto x = V("x", T16()), out = V("out", T16());
  auto c = Call::make_func("stage", {x, out}, T16(), {ArgDirection::NoDep, ArgDirection::Unset});
  std::vector<StmtPtr> body{AssignStmt::make(V("o", T16()), c)};
  auto code = generate(with_main(body, {x, out}, {ParamDirection::In, ParamDirection::Out}, false)).code;
  EXPECT_NE(code.find("params_t0.add_no_dep(ext_x);"), std::string::npos) << code;
  EXPECT_NE(code.find("params_t0.add_output(ext_out);"), std::string::npos) << code;
  EXPECT_TRUE(Compiles(code, "nodep"));
}

// pl.submit leaving out the trailing Out argument: the runtime allocates it.
TEST(ManualCodegen, OmittedTrailingOutIsRuntimeAllocated) {
  auto x = V("x", T16()), out = V("out", T16());
  std::vector<StmtPtr> body;
  auto s1 = submit(body, "stage", {x}, {}, {}, nullptr, "prep_tid");
  submit(body, "stage", {s1.out, out}, {s1.tid});
  auto code = generate(with_main(body, {x, out}, {ParamDirection::In, ParamDirection::Out}, false)).code;
  EXPECT_NE(code.find("params_t0.add_output(params_t0_out0_ci);"), std::string::npos) << code;
  // The runtime-allocated output keeps its binding (issue 13): later uses name it.
  EXPECT_NE(code.find("const Tensor& out = task_0_outs.get_ref(0);"), std::string::npos) << code;
  EXPECT_NE(code.find("params_t1.add_input(out);"), std::string::npos) << code;
  EXPECT_TRUE(Compiles(code, "omitted"));
}

// A TaskId carried through pl.parallel with a non-literal trip count cannot become an array:
// rejected (ClassifyIterArgCarry) with "statically-known trip count" at the loop's line.
TEST(ManualCodegen, DynamicParallelTripCountIsRejected) {
  auto x = V("x", T16()), out = V("out", T16());
  auto n = V("n", S(DataType::INDEX));
  auto seed = V("prev", TID());
  auto prev = IterArg::make("prev", TID(), seed);
  std::vector<StmtPtr> lb;
  auto s = submit(lb, "stage", {x, out}, {prev});
  lb.push_back(YieldStmt::make({s.tid}));
  auto i = V("branch", S(DataType::INDEX));
  std::vector<StmtPtr> body{
      AssignStmt::make(seed, Call::make_op("system.task_invalid", {})),
      ForStmt::make(i, I(0), n, I(1), {prev}, SeqStmts::make(lb), {V("prev", TID())}, ForKind::Parallel, {}, at_line(21))};
  auto prog = with_main(body, {x, n, out}, {ParamDirection::In, ParamDirection::In, ParamDirection::Out});
  try {
    generate(prog);
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("statically-known trip count"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("'prev'"), std::string::npos) << e.message();
    EXPECT_EQ(e.span().line, 21);
  }
}

// Compiler-derived edges (the typed Call::compiler_manual_dep_edges) are best-effort: one that no
// longer resolves is skipped silently; a live one is emitted like a user edge. Duplicates merge.
TEST(ManualCodegen, CompilerEdgesAreSkippedWhenUnresolvableAndEdgesDeduplicate) {
  auto x = V("x", T16()), out = V("out", T16());
  std::vector<StmtPtr> inner;
  auto dead = submit(inner, "stage", {x, out}, {}, {}, nullptr, "t_dead");
  std::vector<StmtPtr> body{RuntimeScopeStmt::make(RuntimeScopeMode::Auto, SeqStmts::make(inner))};
  auto live = submit(body, "stage", {x, out}, {}, {}, nullptr, "t_live");
  ExprPtr call = with_compiler_dep_edges(Call::make_func("stage", {x, out}, T16()), {dead.tid, live.tid, live.tid});
  body.push_back(AssignStmt::make(V("o", T16()), call));
  submit(body, "stage", {x, out}, {live.tid, live.tid});
  auto code = generate(with_main(body, {x, out}, {ParamDirection::In, ParamDirection::Out}, false)).code;
  EXPECT_EQ(code.find("= t_dead;"), std::string::npos) << code;
  EXPECT_NE(code.find("PTO2TaskId params_t2_deps[1];"), std::string::npos) << code;
  EXPECT_NE(code.find("params_t2_deps[params_t2_deps_count++] = t_live;"), std::string::npos) << code;
  EXPECT_NE(code.find("PTO2TaskId params_t3_deps[1];"), std::string::npos) << code;
  EXPECT_TRUE(Compiles(code, "compiler_edges"));
}
