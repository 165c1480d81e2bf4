// ClassifyIterArgCarry: ForStmt::carries (alias / rebind / slots(N)) on Orchestration ForStmts.
#include "orch_test_util.h"
#include "pypto/transforms/ir_property.h"
#include "pypto/transforms/passes.h"

using namespace pypto::orch_test;
using namespace pypto::transforms;

namespace {

const ForStmt* first_loop(const StmtPtr& s) {
  for (auto& st : flatten_stmts(s)) {
    if (auto* f = st->as<ForStmt>()) return f;
    if (auto* r = st->as<RuntimeScopeStmt>()) {
      if (auto* f = first_loop(r->body)) return f;
    }
  }
  return nullptr;
}

const ForStmt* loop_of(const ProgramPtr& p) { return first_loop(p->get("orch")->body); }

// orch(a, acc0: InOut, other: Out):
//   for i, (acc,) in pl.range(4, init_values=(acc0,)):
//       acc2 = self.k(a, acc)        # in place: k(x0, y0: InOut) returns y0
//    or acc2 = self.k(acc, other)    # a different tensor
//       pl.yield_(acc2)
ProgramPtr carry_program(bool in_place, std::vector<LoopCarry> carries = {}, int64_t trips = -1) {
  auto k = kernel("k", 1, 1, true, FunctionType::InCore, MemorySpace::Vec, {}, ParamDirection::InOut);
  auto a = V("a", T16()), acc0 = V("acc0", T16()), other = V("other", T16());
  auto i = V("i", S(DataType::INDEX));
  auto acc = IterArg::make("acc", T16(), acc0);
  auto acc2 = V("acc2", T16());
  auto call = in_place ? Call::make_func("k", {a, acc}, T16()) : Call::make_func("k", {acc, other}, T16());
  auto body = SeqStmts::make({AssignStmt::make(acc2, call), YieldStmt::make({acc2})});
  auto out = V("acc_out", T16());
  auto loop = ForStmt::make(i, I(0), I(4), I(1), {acc}, body, {out}, ForKind::Sequential)->with_results(carries, trips);
  auto orch = Function::make("orch", FunctionType::Orchestration, {a, acc0, other},
                             {ParamDirection::In, ParamDirection::InOut, ParamDirection::Out}, {},
                             SeqStmts::make({loop, ReturnStmt::make({})}));
  return Program::make("P", {k, orch});
}

// orch(a, o: Out): prev = None; for i, (prev_c,) in pl.parallel(start, stop, 1, init_values=(prev,)):
//     r, tid = pl.submit(self.k, a, o, deps=[prev_c]); pl.yield_(tid)
ProgramPtr task_id_program(ForKind kind, ExprPtr stop) {
  auto k = kernel("k", 1, 1, true);
  auto a = V("a", T16()), o = V("o", T16());
  auto n = V("n", S(DataType::INDEX));
  auto prev = V("prev", S(DataType::TASK_ID));
  auto i = V("i", S(DataType::INDEX));
  auto carry = IterArg::make("prev_c", S(DataType::TASK_ID), prev);
  auto sub = Submit::make("k", {a, o}, {T16()}, {carry});
  auto st = V("st", sub->type);
  auto tid = V("tid", S(DataType::TASK_ID));
  auto body = SeqStmts::make({AssignStmt::make(st, sub), AssignStmt::make(tid, TupleGetItem::make(st, 1)),
                              YieldStmt::make({tid})});
  auto rv = V("prev_out", S(DataType::TASK_ID));
  auto loop = ForStmt::make(i, I(0), stop ? stop : ExprPtr(n), I(1), {carry}, body, {rv}, kind);
  auto orch = Function::make("orch", FunctionType::Orchestration, {a, o, n},
                             {ParamDirection::In, ParamDirection::Out, ParamDirection::In}, {},
                             SeqStmts::make({AssignStmt::make(prev, Call::make_op("system.task_invalid", {})), loop,
                                             ReturnStmt::make({})}));
  return Program::make("P", {k, orch});
}

// The pass after its requirement StaticTripCountsStamped.
ProgramPtr classify(const ProgramPtr& p) { return ClassifyIterArgCarry().run(StampStaticTripCounts().run(p)); }

}  // namespace

TEST(ClassifyIterArgCarry, InPlaceCarryIsNotRebound) {
  auto got = classify(carry_program(true));
  EXPECT_TRUE(StructEq(got, carry_program(true, {LoopCarry::alias()}, 4)));
  EXPECT_TRUE(VerifyProperty(IRProperty::IterArgCarryClassified, got).empty());
  EXPECT_FALSE(VerifyProperty(IRProperty::IterArgCarryClassified, carry_program(true)).empty());
  EXPECT_TRUE(VerifyProperty(IRProperty::StaticTripCountsStamped, got).empty());
  EXPECT_FALSE(VerifyProperty(IRProperty::StaticTripCountsStamped, carry_program(true)).empty());
}

TEST(ClassifyIterArgCarry, DifferentTensorIsRebound) {
  auto got = classify(carry_program(false));
  EXPECT_TRUE(StructEq(got, carry_program(false, {LoopCarry::rebound()}, 4)));
}

TEST(ClassifyIterArgCarry, ScalarCarries) {
  // for i, (s, t) in pl.range(4, init_values=(0, 7)): s2 = s + i; pl.yield_(s2, t)
  auto i = V("i", S(DataType::INDEX));
  auto s = IterArg::make("s", S(DataType::INDEX), I(0));
  auto t = IterArg::make("t", S(DataType::INDEX), I(7));
  auto s2 = V("s2", S(DataType::INDEX));
  auto body = SeqStmts::make({AssignStmt::make(s2, BinaryExpr::make(BinaryOp::Add, s, i)), YieldStmt::make({s2, t})});
  auto loop = ForStmt::make(i, I(0), I(4), I(1), {s, t}, body, {V("s_out", S(DataType::INDEX)), V("t_out", S(DataType::INDEX))});
  auto orch = Function::make("orch", FunctionType::Orchestration, {}, {}, {}, SeqStmts::make({loop, ReturnStmt::make({})}));
  auto got = classify(Program::make("P", {orch}));
  auto* f = loop_of(got);
  ASSERT_TRUE(f);
  ASSERT_EQ(f->carries.size(), 2u);
  EXPECT_TRUE(f->carries[0].rebind);
  EXPECT_FALSE(f->carries[1].rebind);
}

TEST(ClassifyIterArgCarry, ParallelTaskIdCarryGetsArraySize) {
  auto got = classify(task_id_program(ForKind::Parallel, I(6)));
  auto* f = loop_of(got);
  ASSERT_TRUE(f);
  ASSERT_EQ(f->carries.size(), 1u);
  EXPECT_EQ(f->carries[0], LoopCarry::rebound(6));
  EXPECT_EQ(f->trip_count, 6);
}

TEST(ClassifyIterArgCarry, SequentialTaskIdCarryIsScalar) {
  auto got = classify(task_id_program(ForKind::Sequential, I(6)));
  auto* f = loop_of(got);
  ASSERT_EQ(f->carries.size(), 1u);
  EXPECT_EQ(f->carries[0], LoopCarry::rebound());
}

TEST(ClassifyIterArgCarry, DynamicParallelTripCountIsUserError) {
  ExpectUserError([] { classify(task_id_program(ForKind::Parallel, nullptr)); },
                  "statically-known trip count");
}

TEST(ClassifyIterArgCarry, NestedInPlaceLoops) {
  // for i, (acc,) in range(2, init=(acc0,)):
  //   for j, (b,) in range(3, init=(acc,)): b2 = k(a, b); yield b2
  //   yield b_out
  auto k = kernel("k", 1, 1, true, FunctionType::InCore, MemorySpace::Vec, {}, ParamDirection::InOut);
  auto a = V("a", T16()), acc0 = V("acc0", T16());
  auto i = V("i", S(DataType::INDEX)), j = V("j", S(DataType::INDEX));
  auto acc = IterArg::make("acc", T16(), acc0);
  auto b = IterArg::make("b", T16(), acc);
  auto b2 = V("b2", T16());
  auto b_out = V("b_out", T16());
  auto inner = ForStmt::make(j, I(0), I(3), I(1), {b},
                             SeqStmts::make({AssignStmt::make(b2, Call::make_func("k", {a, b}, T16())), YieldStmt::make({b2})}),
                             {b_out});
  auto outer = ForStmt::make(i, I(0), I(2), I(1), {acc}, SeqStmts::make({inner, YieldStmt::make({b_out})}),
                             {V("acc_out", T16())});
  auto orch = Function::make("orch", FunctionType::Orchestration, {a, acc0}, {ParamDirection::In, ParamDirection::InOut}, {},
                             SeqStmts::make({outer, ReturnStmt::make({})}));
  auto got = classify(Program::make("P", {k, orch}));
  auto* f = loop_of(got);
  EXPECT_EQ(f->carries.at(0), LoopCarry::alias());
  auto* in = first_loop(f->body);
  ASSERT_TRUE(in);
  EXPECT_EQ(in->carries.at(0), LoopCarry::alias());
}
