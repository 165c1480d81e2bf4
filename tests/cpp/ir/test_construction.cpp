// Construction invariants and type inference of the expression/statement/function factories.
#include "ir_test_util.h"

namespace pypto::ir {
namespace {

using namespace test;

DataType dtype_of(const ExprPtr& e) { return e->type->as<ScalarType>()->dtype; }

ExprPtr sv(const std::string& n, DataType d) { return var(n, scalar(d)); }

TEST(Constants, DefaultDtypes) {
  EXPECT_EQ(dtype_of(ConstInt::make(3)), DataType::INDEX);
  EXPECT_EQ(dtype_of(ConstInt::make(3, DataType::INT32)), DataType::INT32);
  EXPECT_EQ(dtype_of(ConstFloat::make(1.5)), DataType::FP32);
  EXPECT_EQ(dtype_of(ConstBool::make(true)), DataType::BOOL);
  EXPECT_THROW(ConstInt::make(1, DataType::FP32), InternalError);
  EXPECT_THROW(ConstFloat::make(1.0, DataType::INT32), InternalError);
}

TEST(Var, NeedsType) {
  EXPECT_THROW(Var::make("x", nullptr), InternalError);
  EXPECT_THROW(IterArg::make("x", scalar(DataType::INDEX), nullptr), InternalError);
  auto ia = IterArg::make("acc", scalar(DataType::INDEX), I(0));
  EXPECT_EQ(as_var(ia), ia.get());
  EXPECT_EQ(ia->as<Var>(), nullptr);  // kinds differ; as_var accepts both
  EXPECT_EQ(as_var(I(1)), nullptr);
}

TEST(BinaryExpr, ComparisonAndLogicGiveBool) {
  auto i = sv("i", DataType::INDEX);
  for (auto op : {BinaryOp::Eq, BinaryOp::Ne, BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge}) {
    EXPECT_EQ(dtype_of(BinaryExpr::make(op, i, F(2.0))), DataType::BOOL);
  }
  EXPECT_EQ(dtype_of(BinaryExpr::make(BinaryOp::And, ConstBool::make(true), ConstBool::make(false))), DataType::BOOL);
  EXPECT_EQ(dtype_of(BinaryExpr::make(BinaryOp::Or, i, i)), DataType::BOOL);
}

TEST(BinaryExpr, ArithmeticPromotion) {
  auto idx = sv("i", DataType::INDEX);
  auto i32 = sv("a", DataType::INT32);
  auto i64 = sv("b", DataType::INT64);
  auto f16 = sv("h", DataType::FP16);
  auto f32 = sv("f", DataType::FP32);
  auto b = sv("c", DataType::BOOL);
  EXPECT_EQ(dtype_of(BinaryExpr::make(BinaryOp::Add, i32, i64)), DataType::INT64);
  EXPECT_EQ(dtype_of(BinaryExpr::make(BinaryOp::Mul, i64, idx)), DataType::INDEX);
  EXPECT_EQ(dtype_of(BinaryExpr::make(BinaryOp::Sub, i32, f16)), DataType::FP16);
  EXPECT_EQ(dtype_of(BinaryExpr::make(BinaryOp::Add, f16, f32)), DataType::FP32);
  EXPECT_EQ(dtype_of(BinaryExpr::make(BinaryOp::Add, b, i32)), DataType::INT32);
  EXPECT_EQ(dtype_of(BinaryExpr::make(BinaryOp::FloorDiv, idx, I(2))), DataType::INDEX);
  EXPECT_EQ(dtype_of(BinaryExpr::make(BinaryOp::Mod, i32, i32)), DataType::INT32);
  EXPECT_EQ(dtype_of(BinaryExpr::make(BinaryOp::Max, i32, idx)), DataType::INDEX);
  // True division of two ints is a float.
  EXPECT_EQ(dtype_of(BinaryExpr::make(BinaryOp::Div, idx, I(2))), DataType::FP32);
  EXPECT_EQ(dtype_of(BinaryExpr::make(BinaryOp::Div, f16, I(2))), DataType::FP16);
}

TEST(BinaryExpr, TensorOperandIsUserError) {
  auto t = var("a", tensor({16, 16}));
  Span s = span_at(4, 9, 14, "    x = a + 1");
  auto e = expect_user_error([&] { BinaryExpr::make(BinaryOp::Add, t, I(1), s); },
                             "operator '+' expects scalar operands, got Tensor[[16, 16], FP32]");
  EXPECT_EQ(e.span().line, 4);
  EXPECT_NE(std::string(e.what()).find("--> prog.py:4:9"), std::string::npos);
  expect_user_error([&] { BinaryExpr::make(BinaryOp::Lt, I(1), var("t", tile({8}))); }, "got Tile[[8], FP32]");
  expect_user_error([&] { BinaryExpr::make(BinaryOp::Add, sv("tid", DataType::TASK_ID), I(1)); }, "TaskId");
  EXPECT_THROW(BinaryExpr::make(BinaryOp::Add, nullptr, I(1)), InternalError);
}

TEST(UnaryAndCast, Types) {
  auto i32 = sv("a", DataType::INT32);
  EXPECT_EQ(dtype_of(UnaryExpr::make(UnaryOp::Neg, i32)), DataType::INT32);
  EXPECT_EQ(dtype_of(UnaryExpr::make(UnaryOp::Not, i32)), DataType::BOOL);
  EXPECT_EQ(dtype_of(Cast::make(i32, DataType::INT64)), DataType::INT64);
  expect_user_error([&] { UnaryExpr::make(UnaryOp::Neg, var("t", tensor({4}))); }, "expects a scalar operand");
  expect_user_error([&] { Cast::make(var("t", tile({4})), DataType::FP16); }, "expects a scalar value, got Tile[[4], FP32]");
}

TEST(Call, OpUnknownAndArityAndAttrs) {
  Span s = span_at(7, 5, 20, "    y = pl.frobnicate(x)");
  auto e = expect_user_error([&] { op("tile.frobnicate", {}, {}, s); }, "unknown op 'tile.frobnicate'");
  EXPECT_EQ(e.span().line, 7);
  auto t = var("t", tile({16, 16}));
  expect_user_error([&] { op("tile.add", {t}); }, "op 'tile.add' expects 2 arguments (a, b), got 1");
  expect_user_error([&] { op("tile.exp", {t}, {{"dtype", std::string("FP32")}}); }, "op 'tile.exp' has no parameter 'dtype'");
  auto c = op("tile.exp", {t});
  EXPECT_TRUE(c->is_op);
  EXPECT_TRUE(structural_equal(c->type, t->type));
  EXPECT_TRUE(c->arg_directions.empty());
}

TEST(Call, FuncTakesGivenTypeAndChecksDirections) {
  auto a = var("a", tensor({16}));
  auto c = Call::make_func("kernel", {a}, a->type, {ArgDirection::In});
  EXPECT_FALSE(c->is_op);
  EXPECT_EQ(c->type, a->type);
  EXPECT_THROW(Call::make_func("kernel", {a}, a->type, {ArgDirection::In, ArgDirection::Out}), InternalError);
  EXPECT_THROW(Call::make_func("kernel", {a}, nullptr), InternalError);
}

TEST(Submit, TypeAndChecks) {
  auto a = var("a", tensor({16}));
  auto tid = var("tid", scalar(DataType::TASK_ID));
  auto arr = var("tids", ArrayType::make(4, DataType::TASK_ID));
  auto s = Submit::make("k", {a}, {a->type}, {tid, arr}, I(4), true, true, 3);
  auto* tt = s->type->as<TupleType>();
  ASSERT_TRUE(tt);
  ASSERT_EQ(tt->elements.size(), 2u);
  EXPECT_TRUE(structural_equal(tt->elements[0], a->type));
  EXPECT_TRUE(structural_equal(tt->elements[1], scalar(DataType::TASK_ID)));
  // No returns: the TaskId alone.
  EXPECT_EQ(Submit::make("k", {a}, {})->type->as<TupleType>()->elements.size(), 1u);

  Span sp = span_at(9, 5, 40, "    out, t = pl.submit(self.k, a, deps=[a])");
  auto e = expect_user_error([&] { Submit::make("k", {a}, {}, {a}, nullptr, false, false, -1, nullptr, {}, sp); },
                             "deps= entries must be TaskIds (from pl.submit, pl.at ... as tid, pl.system.task_dummy, a "
                             "TaskId loop carry or array slot, or None), got Tensor[[16], FP32]");
  EXPECT_EQ(e.span().line, 9);
  expect_user_error([&] { Submit::make("k", {a}, {}, {}, nullptr, false, false, 16); }, "timing_slot must be in 0..15, got 16");
  expect_user_error([&] { Submit::make("k", {a}, {}, {}, nullptr, false, false, -2); }, "timing_slot");
  expect_user_error([&] { Submit::make("k", {a}, {}, {}, F(2.0)); }, "core_num must be an integer scalar, got Scalar[FP32]");
  expect_user_error([&] { Submit::make("k", {a}, {}, {}, I(0)); }, "core_num must be positive");
  EXPECT_THROW(Submit::make("k", {a}, {}, {}, nullptr, false, false, -1, nullptr, {ArgDirection::In, ArgDirection::In}),
               InternalError);
}

TEST(Tuples, MakeTupleAndGetItem) {
  auto a = var("a", tensor({16}));
  auto t = MakeTuple::make({a, I(3)});
  auto* tt = t->type->as<TupleType>();
  ASSERT_EQ(tt->elements.size(), 2u);
  auto g = TupleGetItem::make(t, 1);
  EXPECT_EQ(dtype_of(g), DataType::INDEX);
  expect_user_error([&] { TupleGetItem::make(t, 2); }, "tuple index 2 out of range");
  expect_user_error([&] { TupleGetItem::make(t, -1); }, "out of range");
  expect_user_error([&] { TupleGetItem::make(a, 0); }, "cannot index a value of type Tensor[[16], FP32] like a tuple");
}

TEST(Stmts, AssignChecksTypes) {
  auto x = var("x", scalar(DataType::INDEX));
  EXPECT_NO_THROW(AssignStmt::make(x, I(3)));
  EXPECT_THROW(AssignStmt::make(x, F(3.0)), InternalError);
  EXPECT_THROW(AssignStmt::make(nullptr, I(3)), InternalError);
  EXPECT_THROW(AssignStmt::make(x, nullptr), InternalError);
  // Tensor types compare structurally, not by pointer.
  auto t = var("t", tensor({16, 16}));
  EXPECT_NO_THROW(AssignStmt::make(t, op("tensor.create", {list({16, 16})}, {{"dtype", std::string("FP32")}})));
  EXPECT_THROW(AssignStmt::make(t, op("tensor.create", {list({16, 8})}, {{"dtype", std::string("FP32")}})), InternalError);
}

TEST(Stmts, ForInvariants) {
  auto i = var("i", scalar(DataType::INDEX));
  auto ia = IterArg::make("acc", scalar(DataType::INDEX), I(0));
  auto rv = var("acc_out", scalar(DataType::INDEX));
  auto body = YieldStmt::make({ia});
  EXPECT_NO_THROW(ForStmt::make(i, I(0), I(4), I(1), {ia}, body, {rv}));
  EXPECT_THROW(ForStmt::make(i, I(0), I(4), I(1), {ia}, body, {}), InternalError);
  EXPECT_THROW(ForStmt::make(var("f", scalar(DataType::FP32)), I(0), I(4), I(1), {}, body, {}), InternalError);
  expect_user_error([&] { ForStmt::make(i, I(0), F(4.0), I(1), {}, body, {}); }, "loop stop must be an integer scalar");
}

TEST(Stmts, IfAndScopes) {
  auto c = var("c", scalar(DataType::BOOL));
  auto body = EvalStmt::make(I(1));
  EXPECT_NO_THROW(IfStmt::make(c, body, nullptr));
  EXPECT_THROW(IfStmt::make(c, nullptr, nullptr), InternalError);
  expect_user_error([&] { IfStmt::make(var("t", tensor({4})), body, nullptr); }, "if condition must be a scalar");
  EXPECT_THROW(IfStmt::make(c, body, nullptr, {var("r", scalar(DataType::INDEX))}), InternalError);

  auto tid = var("tid", scalar(DataType::TASK_ID));
  EXPECT_NO_THROW(ScopeStmt::make(ScopeKind::At, {{"level", std::string("CORE_GROUP")}}, body, tid));
  EXPECT_THROW(ScopeStmt::make(ScopeKind::At, {}, body, var("x", scalar(DataType::INDEX))), InternalError);
  EXPECT_THROW(ScopeStmt::make(ScopeKind::At, {}, nullptr), InternalError);
  auto t = var("a", tensor({4}));
  ScopeOptions bad_deps;
  bad_deps.deps = {t};
  expect_user_error([&] { ScopeStmt::make(ScopeKind::At, {}, body)->with_options(bad_deps); },
                    "deps= entries must be TaskIds");
  // The task options are typed: a string-keyed one is an internal error, a cluster takes none.
  EXPECT_THROW(ScopeStmt::make(ScopeKind::At, {{"deps", std::vector<ExprPtr>{tid}}}, body), InternalError);
  EXPECT_THROW(ScopeStmt::make(ScopeKind::Spmd, {{"sync_start", true}}, body), InternalError);
  ScopeOptions sync;
  sync.sync_start = true;
  EXPECT_THROW(ScopeStmt::make(ScopeKind::Cluster, {}, body)->with_options(sync), InternalError);
  ScopeOptions tensor_no_dep;
  tensor_no_dep.no_dep_args = {tid};
  EXPECT_THROW(ScopeStmt::make(ScopeKind::At, {}, body)->with_options(tensor_no_dep), InternalError);
  EXPECT_NO_THROW(RuntimeScopeStmt::make(RuntimeScopeMode::Manual, body));
  EXPECT_THROW(RuntimeScopeStmt::make(RuntimeScopeMode::Manual, nullptr), InternalError);
  EXPECT_THROW(SeqStmts::make({body, nullptr}), InternalError);
}

TEST(Function, MakeAndCallResultType) {
  auto a = var("a", tensor({16}));
  auto n = var("n", scalar(DataType::INDEX));
  auto body = ReturnStmt::make({a});
  auto f = Function::make("k", FunctionType::InCore, {a, n}, {ParamDirection::InOut, ParamDirection::In}, {a->type}, body);
  EXPECT_TRUE(f->is_kernel());
  EXPECT_EQ(f->call_result_type(), a->type);
  auto g = Function::make("g", FunctionType::Orchestration, {}, {}, {}, ReturnStmt::make({}));
  EXPECT_FALSE(g->is_kernel());
  EXPECT_TRUE(structural_equal(g->call_result_type(), TupleType::unit()));
  auto h = Function::make("h", FunctionType::AIV, {a}, {ParamDirection::In}, {a->type, n->type}, body);
  EXPECT_EQ(h->call_result_type()->as<TupleType>()->elements.size(), 2u);

  EXPECT_THROW(Function::make("k", FunctionType::InCore, {a}, {}, {}, body), InternalError);
  Span ps = span_at(2, 20, 45, "    def k(self, n: pl.Out[pl.Scalar[pl.INDEX]]):");
  auto bad = Var::make("n", scalar(DataType::INDEX), ps);
  auto e = expect_user_error([&] { Function::make("k", FunctionType::InCore, {bad}, {ParamDirection::Out}, {}, body); },
                             "parameter 'n' of type Scalar[INDEX] cannot be Out");
  EXPECT_EQ(e.span().line, 2);
}

TEST(Program, GetAndWithFunction) {
  auto body = ReturnStmt::make({});
  auto f = Function::make("f", FunctionType::Opaque, {}, {}, {}, body);
  auto g = Function::make("g", FunctionType::Opaque, {}, {}, {}, body);
  auto p = Program::make("P", {f, g});
  EXPECT_EQ(p->get("g"), g);
  EXPECT_EQ(p->get("nope"), nullptr);
  auto f2 = Function::make("f", FunctionType::InCore, {}, {}, {}, body);
  auto p2 = p->with_function(f2);
  EXPECT_EQ(p2->get("f"), f2);
  EXPECT_EQ(p->get("f"), f);  // original untouched
  EXPECT_EQ(p2->functions.size(), 2u);
  EXPECT_EQ(p2->functions[0], f2);  // position kept
  auto h = Function::make("h", FunctionType::Opaque, {}, {}, {}, body);
  auto p3 = p->with_function(h);
  ASSERT_EQ(p3->functions.size(), 3u);
  EXPECT_EQ(p3->functions[2], h);
  EXPECT_THROW(Program::make("P", {f, f}), UserError);   // hand-built IR: the user's mistake
}

// A hand-built function named "../../x" wrote orchestration/../../x.cpp outside the output and
// cache directories; a constant zero step compiled to `i += 0` and the run hung (tester F #14, #15).
TEST(Function, NameMustBeAnIdentifierAndALoopStepNonZero) {
  auto body = SeqStmts::make({});
  for (const char* bad : {"../../x", "m\nain", "m\"ain", "a b", "1st", "a.b"}) {
    EXPECT_THROW(Function::make(bad, FunctionType::Orchestration, {}, {}, {}, body), UserError) << bad;
  }
  for (const char* good : {"main", "_k2", "caf\xc3\xa9"}) {
    EXPECT_NO_THROW(Function::make(good, FunctionType::Orchestration, {}, {}, {}, body)) << good;
  }
  auto i = Var::make("i", ScalarType::make(DataType::INDEX));
  auto c = [](int64_t v) { return ConstInt::make(v, DataType::INDEX); };
  EXPECT_THROW(ForStmt::make(i, c(0), c(10), c(0), {}, body, {}), UserError);
  EXPECT_NO_THROW(ForStmt::make(i, c(0), c(10), c(-1), {}, body, {}));
}

}  // namespace
}  // namespace pypto::ir
