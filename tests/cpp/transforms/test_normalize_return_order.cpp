// NormalizeReturnOrder: Before / Expected programs compared structurally.
#include "orch_test_util.h"
#include "pypto/transforms/ir_property.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/return_lineage.h"

using namespace pypto::orch_test;
using namespace pypto::transforms;

TEST(NormalizeReturnOrder, KernelStoreResultBecomesParam) {
  auto before = Program::make("P", {kernel("k", 2, 1)});
  auto expected = Program::make("P", {kernel("k", 2, 1, /*explicit_return=*/true)});
  auto got = NormalizeReturnOrder().run(before);
  EXPECT_TRUE(StructEq(got, expected));
  EXPECT_EQ(ExplicitReturnedParamIndices(*got->get("k")), std::vector<int>{2});
}

TEST(NormalizeReturnOrder, MultiOutputKeepsPositions) {
  auto before = Program::make("P", {kernel("k", 1, 3)});
  auto got = NormalizeReturnOrder().run(before);
  EXPECT_TRUE(StructEq(got, Program::make("P", {kernel("k", 1, 3, true)})));
  EXPECT_EQ(ExplicitReturnedParamIndices(*got->get("k")), (std::vector<int>{1, 2, 3}));
}

TEST(NormalizeReturnOrder, OrchestrationReturnThroughCall) {
  auto got = NormalizeReturnOrder().run(orch_basic());
  auto* orch = got->get("orch_basic").get();
  EXPECT_EQ(ExplicitReturnedParamIndices(*orch), std::vector<int>{2});   // return d (the Out param)
  EXPECT_TRUE(VerifyProperty(IRProperty::ReturnParamsExplicit, got).empty());
  EXPECT_FALSE(VerifyProperty(IRProperty::ReturnParamsExplicit, orch_basic()).empty());
}

TEST(NormalizeReturnOrder, ThroughLoopCarry) {
  // for i, (acc,) in pl.range(4, init_values=(c,)): acc2 = pl.store(t, [0,0], acc); yield acc2
  // return acc_out   ==>  return c
  auto build = [](bool normalized) {
    auto x = V("x", T16()), c = V("c", T16());
    auto i = V("i", S(DataType::INDEX));
    auto acc = IterArg::make("acc", T16(), c);
    auto t = V("t", tile16());
    auto acc2 = V("acc2", T16());
    auto body = SeqStmts::make({
        AssignStmt::make(t, Call::make_op("tile.load", {x, ilist({0, 0}), ilist({16, 16})})),
        AssignStmt::make(acc2, Call::make_op("tile.store", {t, ilist({0, 0}), acc})),
        YieldStmt::make({acc2}),
    });
    auto out = V("acc_out", T16());
    auto loop = ForStmt::make(i, I(0), I(4), I(1), {acc}, body, {out});
    auto fn = Function::make("k", FunctionType::InCore, {x, c}, {ParamDirection::In, ParamDirection::InOut}, {T16()},
                             SeqStmts::make({loop, ReturnStmt::make({normalized ? ExprPtr(c) : ExprPtr(out)})}));
    return Program::make("P", {fn});
  };
  EXPECT_EQ(ReturnedParamIndices(*build(false), *build(false)->functions[0]), std::vector<int>{1});
  EXPECT_TRUE(StructEq(NormalizeReturnOrder().run(build(false)), build(true)));
}

// CollectVarDefs finds each Var's own definition in a body longer than its table's first size
// (the table grows), and nothing for a Var the body does not define.
TEST(ReturnLineage, CollectVarDefsFindsEveryDefinition) {
  std::vector<StmtPtr> stmts;
  std::vector<VarPtr> vars;
  for (int k = 0; k < 100; ++k) {
    vars.push_back(V("v" + std::to_string(k), T16()));
    stmts.push_back(AssignStmt::make(vars.back(), create16()));
  }
  VarDefs defs = CollectVarDefs(SeqStmts::make(stmts));
  EXPECT_EQ(defs.size(), 100u);
  for (size_t k = 0; k < vars.size(); ++k) {
    const VarDef* d = defs.find(vars[k].get());
    ASSERT_NE(d, nullptr) << k;
    EXPECT_EQ(d->kind, VarDef::Assign);
    EXPECT_EQ(d->assign, stmts[k].get());
  }
  auto stranger = V("stranger", T16());
  EXPECT_EQ(defs.find(stranger.get()), nullptr);
  EXPECT_EQ(VarDefs{}.find(stranger.get()), nullptr);
}

TEST(ReturnLineage, CountVarDefsCountsEveryDefinition) {
  // The table reservation of CollectVarDefs / BufferRoots: assignments (also inside a loop
  // body), a loop's iter_args and results; not parameters, yields or returns.
  auto x = V("x", T16()), c = V("c", T16());
  auto i = V("i", S(DataType::INDEX));
  auto acc = IterArg::make("acc", T16(), c);
  auto t = V("t", tile16()), acc2 = V("acc2", T16()), out = V("acc_out", T16());
  auto body = SeqStmts::make({
      AssignStmt::make(t, Call::make_op("tile.load", {x, ilist({0, 0}), ilist({16, 16})})),
      AssignStmt::make(acc2, Call::make_op("tile.store", {t, ilist({0, 0}), acc})),
      YieldStmt::make({acc2}),
  });
  auto loop = ForStmt::make(i, I(0), I(4), I(1), {acc}, body, {out});
  EXPECT_EQ(CountVarDefs(SeqStmts::make({loop, ReturnStmt::make({out})})), 4u);   // t, acc2, acc, acc_out
  EXPECT_EQ(CountVarDefs(SeqStmts::make({loop, ReturnStmt::make({out})})),
            CollectVarDefs(SeqStmts::make({loop, ReturnStmt::make({out})})).size());
  EXPECT_EQ(CountVarDefs(orch_basic()->functions[1]->body), 3u);   // c, c, d
  EXPECT_EQ(CountVarDefs(nullptr), 0u);
}

TEST(NormalizeReturnOrder, NonParamReturnUntouched) {
  // An orchestration function returning an internal tensor keeps it.
  auto a = V("a", T16()), c = V("c", T16());
  auto fn = Function::make("o", FunctionType::Orchestration, {a}, {ParamDirection::In}, {T16()},
                           SeqStmts::make({AssignStmt::make(c, create16()), ReturnStmt::make({c})}));
  auto p = Program::make("P", {fn});
  EXPECT_EQ(NormalizeReturnOrder().run(p), p);
  EXPECT_EQ(ReturnedParamIndices(*p, *fn), std::vector<int>{-1});
}
