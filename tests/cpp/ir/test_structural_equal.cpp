// Structural equality (var bijection, names/spans ignored, every field compared), explain
// messages, and hash consistency.
#include "sample_program.h"
#include "pypto/ir/mutator.h"

namespace pypto::ir {
namespace {

using namespace test;

std::string why_differs(const ProgramPtr& a, const ProgramPtr& b) {
  std::string why;
  EXPECT_FALSE(structural_equal_explain(a, b, &why));
  EXPECT_FALSE(structural_equal(a, b));
  return why;
}

TEST(StructuralEqual, FreshCopiesAreEqualAndHashEqual) {
  auto p = sample_program(), q = sample_program();
  EXPECT_NE(p, q);
  EXPECT_TRUE(structural_equal(p, q));
  std::string why = "stale";
  EXPECT_TRUE(structural_equal_explain(p, q, &why));
  EXPECT_EQ(why, "");
  EXPECT_EQ(structural_hash(p), structural_hash(q));
  EXPECT_EQ(structural_hash(p), structural_hash(p));
}

TEST(StructuralEqual, ExplainNamesThePath) {
  SampleOptions o;
  o.submit_callee = "k2";
  EXPECT_EQ(why_differs(sample_program(), sample_program(o)),
            "function main: body[1]: ForStmt.body[0]: AssignStmt.value: Submit.callee 'k' vs 'k2'");
  SampleOptions t;
  t.trip = 8;
  EXPECT_EQ(why_differs(sample_program(), sample_program(t)), "function main: body[1]: ForStmt.stop: ConstInt 4 vs 8");
  SampleOptions ts;
  ts.timing_slot = 3;
  EXPECT_EQ(why_differs(sample_program(), sample_program(ts)),
            "function main: body[1]: ForStmt.body[0]: AssignStmt.value: Submit.timing_slot -1 vs 3");
  SampleOptions kn;
  kn.kernel_name = "k9";
  EXPECT_EQ(why_differs(sample_program(), sample_program(kn)), "function k: function name 'k' vs 'k9'");
}

TEST(StructuralEqual, BijectionDistinguishesDefinitions) {
  // else branch yields `acc2` (a loop result) instead of `out` (a param): same type, other var.
  SampleOptions o;
  o.swap_yield = true;
  std::string why = why_differs(sample_program(), sample_program(o));
  EXPECT_NE(why.find("IfStmt.else"), std::string::npos) << why;
  EXPECT_NE(why.find("var 'out' vs 'acc2'"), std::string::npos) << why;
  EXPECT_NE(structural_hash(sample_program()), structural_hash(sample_program(o)));
}

FunctionPtr two_param_fn(const std::string& n1, const std::string& n2, int ret0, int ret1) {
  auto a = var(n1, scalar(DataType::INDEX));
  auto b = var(n2, scalar(DataType::INDEX));
  std::vector<VarPtr> ps{a, b};
  auto body = ReturnStmt::make({ps[static_cast<size_t>(ret0)], ps[static_cast<size_t>(ret1)]});
  return Function::make("f", FunctionType::Opaque, ps, {ParamDirection::In, ParamDirection::In},
                        {scalar(DataType::INDEX), scalar(DataType::INDEX)}, body);
}

TEST(StructuralEqual, NamesIgnoredPositionsMatter) {
  EXPECT_TRUE(structural_equal(two_param_fn("a", "b", 0, 1), two_param_fn("x", "y", 0, 1)));
  EXPECT_EQ(structural_hash(two_param_fn("a", "b", 0, 1)), structural_hash(two_param_fn("x", "y", 0, 1)));
  EXPECT_FALSE(structural_equal(two_param_fn("a", "b", 0, 1), two_param_fn("a", "b", 1, 0)));
  EXPECT_FALSE(structural_equal(two_param_fn("a", "b", 0, 0), two_param_fn("a", "b", 0, 1)));  // injectivity
  EXPECT_FALSE(structural_equal(two_param_fn("a", "b", 0, 1), two_param_fn("a", "b", 0, 0)));
  EXPECT_NE(structural_hash(two_param_fn("a", "b", 0, 1)), structural_hash(two_param_fn("a", "b", 1, 0)));
}

TEST(StructuralEqual, SpansIgnored) {
  auto x = var("x", scalar(DataType::INDEX));
  auto s1 = AssignStmt::make(x, BinaryExpr::make(BinaryOp::Add, I(1), I(2), span_at(1, 1, 5, "1 + 2")), span_at(1, 1, 9, "x = 1 + 2"));
  auto y = var("y", scalar(DataType::INDEX));
  auto s2 = AssignStmt::make(y, BinaryExpr::make(BinaryOp::Add, I(1), I(2)));
  EXPECT_TRUE(structural_equal(StmtPtr(s1), StmtPtr(s2)));
  EXPECT_EQ(structural_hash(StmtPtr(s1)), structural_hash(StmtPtr(s2)));
}

TEST(StructuralEqual, FreeVarsCompareByPointer) {
  auto x = var("x", scalar(DataType::INDEX));
  auto x2 = var("x", scalar(DataType::INDEX));
  auto e1 = BinaryExpr::make(BinaryOp::Add, x, I(1));
  auto e2 = BinaryExpr::make(BinaryOp::Add, x, I(1));
  auto e3 = BinaryExpr::make(BinaryOp::Add, x2, I(1));
  EXPECT_TRUE(structural_equal(ExprPtr(e1), ExprPtr(e2)));
  EXPECT_EQ(structural_hash(ExprPtr(e1)), structural_hash(ExprPtr(e2)));
  EXPECT_FALSE(structural_equal(ExprPtr(e1), ExprPtr(e3)));
  EXPECT_FALSE(structural_equal(ExprPtr(e1), ExprPtr(BinaryExpr::make(BinaryOp::Sub, x, I(1)))));
  EXPECT_FALSE(structural_equal(ExprPtr(I(1)), ExprPtr(ConstInt::make(1, DataType::INT32))));
  EXPECT_FALSE(structural_equal(ExprPtr(I(1)), F(1.0)));
  EXPECT_TRUE(structural_equal(ExprPtr(nullptr), ExprPtr(nullptr)));
  EXPECT_FALSE(structural_equal(ExprPtr(I(1)), ExprPtr(nullptr)));
}

TEST(StructuralEqual, DynamicDimsMatchThroughProgram) {
  auto p = sample_program(), q = sample_program();
  // Program-level: the M symbols are bound in order.
  EXPECT_TRUE(structural_equal(p, q));
  // Function-level: M is free, and the two programs' Ms are different pointers.
  EXPECT_FALSE(structural_equal(p->get("k"), q->get("k")));
  EXPECT_TRUE(structural_equal(p->get("k"), p->get("k")));
  // A program that lists no dynamic dims differs from one that does.
  auto r = Program::make(q->name, q->functions, {});
  std::string why = why_differs(p, r);
  EXPECT_EQ(why, "dynamic dim count 1 vs 0");
}

TEST(StructuralEqual, Types) {
  auto m = var("M", scalar(DataType::INDEX));
  EXPECT_TRUE(structural_equal(tensor({16, 16}), tensor({16, 16})));
  EXPECT_FALSE(structural_equal(tensor({16, 16}), tensor({16, 8})));
  EXPECT_FALSE(structural_equal(tensor({16}), tensor({16, 1})));
  EXPECT_FALSE(structural_equal(tensor({16}), tensor({16}, DataType::FP16)));
  EXPECT_FALSE(structural_equal(TypePtr(TensorType::make({I(4)}, DataType::FP32, Layout::DN)), tensor({4})));
  EXPECT_FALSE(structural_equal(tile({4}), tile({4}, DataType::FP32, MemorySpace::Acc)));
  EXPECT_FALSE(structural_equal(tile({4}), tensor({4})));
  EXPECT_TRUE(structural_equal(TypePtr(TensorType::make({m}, DataType::FP32)), TypePtr(TensorType::make({m}, DataType::FP32))));
  EXPECT_FALSE(structural_equal(TypePtr(TensorType::make({m}, DataType::FP32)), tensor({16})));
  EXPECT_FALSE(structural_equal(TypePtr(ArrayType::make(4, DataType::TASK_ID)), TypePtr(ArrayType::make(5, DataType::TASK_ID))));
  EXPECT_TRUE(structural_equal(TypePtr(TupleType::make({tensor({4}), scalar(DataType::TASK_ID)})),
                               TypePtr(TupleType::make({tensor({4}), scalar(DataType::TASK_ID)}))));
  EXPECT_FALSE(structural_equal(TypePtr(TupleType::make({tensor({4})})), TypePtr(TupleType::unit())));
  EXPECT_EQ(structural_hash(tensor({3, 5})), structural_hash(tensor({3, 5})));
  EXPECT_NE(structural_hash(tensor({3, 5})), structural_hash(tensor({5, 3})));
}

TEST(StructuralEqual, AttrsAndDirections) {
  auto a = var("a", tensor({4}));
  auto c1 = op("tensor.create", {list({4})}, {{"dtype", std::string("FP32")}});
  auto c2 = op("tensor.create", {list({4})}, {{"dtype", std::string("FP32")}, {"manual_dep", true}});
  auto c3 = op("tensor.create", {list({4})}, {{"dtype", std::string("FP32")}, {"manual_dep", false}});
  EXPECT_FALSE(structural_equal(ExprPtr(c1), ExprPtr(c2)));
  EXPECT_FALSE(structural_equal(ExprPtr(c2), ExprPtr(c3)));
  EXPECT_TRUE(structural_equal(ExprPtr(c2), ExprPtr(op("tensor.create", {list({4})}, {{"dtype", std::string("FP32")}, {"manual_dep", true}}))));
  auto f1 = Call::make_func("k", {a}, a->type, {ArgDirection::In});
  auto f2 = Call::make_func("k", {a}, a->type, {ArgDirection::NoDep});
  auto f3 = Call::make_func("k", {a}, a->type, {});
  EXPECT_FALSE(structural_equal(ExprPtr(f1), ExprPtr(f2)));
  EXPECT_FALSE(structural_equal(ExprPtr(f1), ExprPtr(f3)));
  EXPECT_FALSE(structural_equal(ExprPtr(f1), ExprPtr(Call::make_func("k2", {a}, a->type, {ArgDirection::In}))));
  // Expr-valued attrs compare structurally.
  auto body = EvalStmt::make(I(0));
  auto h1 = ScopeStmt::make(ScopeKind::Spmd, {{"core_num", ExprPtr(I(4))}}, body);
  auto h2 = ScopeStmt::make(ScopeKind::Spmd, {{"core_num", ExprPtr(I(4))}}, body);
  auto h3 = ScopeStmt::make(ScopeKind::Spmd, {{"core_num", ExprPtr(I(8))}}, body);
  EXPECT_TRUE(structural_equal(StmtPtr(h1), StmtPtr(h2)));
  EXPECT_FALSE(structural_equal(StmtPtr(h1), StmtPtr(h3)));
}

TEST(StructuralEqual, ScopeOptions) {
  // The typed task options of a scope compare (and hash) field by field, expressions structurally.
  auto t1 = var("t1", scalar(DataType::TASK_ID));
  auto t2 = var("t2", scalar(DataType::TASK_ID));
  auto x = var("x", tensor({4}));
  auto y = var("y", tensor({4}));
  auto body = EvalStmt::make(I(0));
  auto scope = [&](ScopeKind k, std::vector<ExprPtr> deps, ExprPtr pred, std::vector<ExprPtr> no_dep, bool sync, bool aer) {
    ScopeOptions o;
    o.deps = std::move(deps);
    o.predicate = std::move(pred);
    o.no_dep_args = std::move(no_dep);
    o.sync_start = sync;
    o.allow_early_resolve = aer;
    return StmtPtr(ScopeStmt::make(k, {}, body)->with_options(o));
  };
  StmtPtr base = scope(ScopeKind::At, {t1}, nullptr, {x}, false, false);
  EXPECT_TRUE(structural_equal(base, scope(ScopeKind::At, {t1}, nullptr, {x}, false, false)));
  EXPECT_EQ(structural_hash(base), structural_hash(scope(ScopeKind::At, {t1}, nullptr, {x}, false, false)));
  EXPECT_FALSE(structural_equal(base, scope(ScopeKind::At, {t2}, nullptr, {x}, false, false)));
  EXPECT_FALSE(structural_equal(base, scope(ScopeKind::At, {}, nullptr, {x}, false, false)));
  EXPECT_FALSE(structural_equal(base, scope(ScopeKind::At, {t1}, I(1), {x}, false, false)));
  EXPECT_FALSE(structural_equal(base, scope(ScopeKind::At, {t1}, nullptr, {y}, false, false)));
  EXPECT_FALSE(structural_equal(base, scope(ScopeKind::At, {t1}, nullptr, {x}, true, false)));
  EXPECT_FALSE(structural_equal(base, scope(ScopeKind::At, {t1}, nullptr, {x}, false, true)));
  EXPECT_FALSE(structural_equal(base, scope(ScopeKind::Spmd, {t1}, nullptr, {x}, false, false)));
  EXPECT_NE(structural_hash(scope(ScopeKind::At, {}, nullptr, {}, true, false)),
            structural_hash(scope(ScopeKind::At, {}, nullptr, {}, false, true)));
  // The mutator keeps the options; a rename reaches the expressions in them.
  struct Rename : IRMutator {
    VarPtr from, to;
    ExprPtr mutate_(const Var* op, const ExprPtr& self) override { return op == from.get() ? ExprPtr(to) : self; }
    using IRMutator::mutate_;
  } rename;
  rename.from = t1;
  rename.to = t2;
  StmtPtr renamed = rename.mutate_stmt(scope(ScopeKind::At, {t1}, nullptr, {x}, true, true));
  EXPECT_TRUE(structural_equal(renamed, scope(ScopeKind::At, {t2}, nullptr, {x}, true, true)));
  EXPECT_FALSE(structural_equal(renamed, scope(ScopeKind::At, {t2}, nullptr, {x}, false, false)));
}

TEST(StructuralEqual, SubmitFields) {
  auto a = var("a", tensor({4}));
  auto t = var("t", scalar(DataType::TASK_ID));
  auto base = [&](bool ss, bool aer, ExprPtr cn, std::vector<ExprPtr> deps) {
    return ExprPtr(Submit::make("k", {a}, {}, std::move(deps), std::move(cn), ss, aer));
  };
  EXPECT_TRUE(structural_equal(base(false, false, nullptr, {t}), base(false, false, nullptr, {t})));
  EXPECT_FALSE(structural_equal(base(true, false, nullptr, {t}), base(false, false, nullptr, {t})));
  EXPECT_FALSE(structural_equal(base(false, true, nullptr, {t}), base(false, false, nullptr, {t})));
  EXPECT_FALSE(structural_equal(base(false, false, I(4), {t}), base(false, false, nullptr, {t})));
  EXPECT_FALSE(structural_equal(base(false, false, nullptr, {t}), base(false, false, nullptr, {})));
  auto pred = BinaryExpr::make(BinaryOp::Gt, Cast::make(op("tensor.read", {a, list({0})}), DataType::INT64),
                               ConstInt::make(0, DataType::INT64));
  auto p1 = Submit::make("k", {a}, {}, {}, nullptr, false, false, -1, pred);
  auto p2 = Submit::make("k", {a}, {}, {}, nullptr, false, false, -1, nullptr);
  EXPECT_FALSE(structural_equal(ExprPtr(p1), ExprPtr(p2)));
  // Different callee return types give different Submit types.
  EXPECT_FALSE(structural_equal(ExprPtr(Submit::make("k", {a}, {a->type})), ExprPtr(Submit::make("k", {a}, {}))));
}

TEST(StructuralEqual, SeqNestingIgnored) {
  auto s1 = EvalStmt::make(I(1));
  auto s2 = EvalStmt::make(I(2));
  StmtPtr flat = SeqStmts::make({s1, s2});
  StmtPtr nested = SeqStmts::make({s1, SeqStmts::make({s2})});
  EXPECT_TRUE(structural_equal(flat, nested));
  EXPECT_EQ(structural_hash(flat), structural_hash(nested));
  EXPECT_TRUE(structural_equal(StmtPtr(s1), StmtPtr(SeqStmts::make({s1}))));
  EXPECT_FALSE(structural_equal(flat, StmtPtr(SeqStmts::make({s2, s1}))));
  EXPECT_FALSE(structural_equal(flat, StmtPtr(s1)));
}

TEST(StructuralEqual, ForAndIfFields) {
  auto mk = [](ForKind kind, bool with_attr) {
    auto i = var("i", scalar(DataType::INDEX));
    Attrs at;
    if (with_attr) at["iter_arg_rebind_0"] = true;
    return StmtPtr(ForStmt::make(i, I(0), I(4), I(1), {}, EvalStmt::make(i), {}, kind, at));
  };
  EXPECT_TRUE(structural_equal(mk(ForKind::Parallel, true), mk(ForKind::Parallel, true)));
  EXPECT_FALSE(structural_equal(mk(ForKind::Parallel, true), mk(ForKind::Sequential, true)));
  EXPECT_FALSE(structural_equal(mk(ForKind::Parallel, true), mk(ForKind::Parallel, false)));
  EXPECT_NE(structural_hash(mk(ForKind::Parallel, true)), structural_hash(mk(ForKind::Sequential, true)));
  auto c = var("c", scalar(DataType::BOOL));
  auto body = EvalStmt::make(I(0));
  EXPECT_FALSE(structural_equal(StmtPtr(IfStmt::make(c, body, nullptr)), StmtPtr(IfStmt::make(c, body, body))));
  EXPECT_FALSE(structural_equal(StmtPtr(RuntimeScopeStmt::make(RuntimeScopeMode::Auto, body)),
                                StmtPtr(RuntimeScopeStmt::make(RuntimeScopeMode::Manual, body))));
}

// A loop whose every typed field differs from its default (the chunk request, the
// SplitChunkedLoops / ClassifyIterArgCarry / StampStaticTripCounts / KernelInPlaceCarries results).
struct TypedLoop {
  VarPtr i = var("i", scalar(DataType::INDEX)), s = var("s", scalar(DataType::INDEX)), init = var("a0", scalar(DataType::INDEX));
  IterArgPtr acc = IterArg::make("acc", scalar(DataType::INDEX), init);
  VarPtr out = var("out", scalar(DataType::INDEX));
  StmtPtr body = YieldStmt::make({BinaryExpr::make(BinaryOp::Add, acc, i)});
  std::shared_ptr<const ForStmt> plain() const {
    return ForStmt::make(i, I(0), I(64), BinaryExpr::make(BinaryOp::Mul, s, I(4)), {acc}, body, {out});
  }
  std::shared_ptr<const ForStmt> full() const {
    return plain()
        ->with_results({LoopCarry::rebound(0)}, 16)
        ->with_inplace_carries({0})
        ->with_lent_inits({0})
        ->with_chunk_split(LoopOrigin::ChunkOuter, 4)
        ->with_chunk({2, ChunkPolicy::LeadingFull});
  }
};

TEST(StructuralEqual, ForStmtChunkRequest) {
  TypedLoop t;
  auto chunked = [&](int64_t c, ChunkPolicy p) { return StmtPtr(t.plain()->with_chunk({c, p})); };
  EXPECT_TRUE(structural_equal(chunked(4, ChunkPolicy::Guarded), chunked(4, ChunkPolicy::Guarded)));
  EXPECT_EQ(structural_hash(chunked(4, ChunkPolicy::Guarded)), structural_hash(chunked(4, ChunkPolicy::Guarded)));
  EXPECT_FALSE(structural_equal(chunked(4, ChunkPolicy::Guarded), chunked(3, ChunkPolicy::Guarded)));
  EXPECT_FALSE(structural_equal(chunked(4, ChunkPolicy::Guarded), chunked(4, ChunkPolicy::LeadingFull)));
  EXPECT_FALSE(structural_equal(chunked(4, ChunkPolicy::Guarded), StmtPtr(t.plain())));
  EXPECT_NE(structural_hash(chunked(4, ChunkPolicy::Guarded)), structural_hash(chunked(4, ChunkPolicy::LeadingFull)));
  EXPECT_THROW(t.plain()->with_chunk({-1, ChunkPolicy::Guarded}), InternalError);
  EXPECT_THROW(t.plain()->with_chunk({0, ChunkPolicy::LeadingFull}), InternalError);
  // The request is typed: ForStmt::make refuses the old string keys.
  EXPECT_THROW(ForStmt::make(t.i, I(0), I(4), I(1), {}, EvalStmt::make(t.i), {}, ForKind::Sequential, {{"chunk", int64_t(4)}}),
               InternalError);
}

TEST(StructuralEqual, LoopRebuildKeepsEveryTypedField) {
  TypedLoop t;
  auto full = t.full();
  auto rebuilt = t.plain()->with_typed_fields_of(*full);
  EXPECT_TRUE(structural_equal(StmtPtr(rebuilt), StmtPtr(full)));
  EXPECT_EQ(structural_hash(StmtPtr(rebuilt)), structural_hash(StmtPtr(full)));
  EXPECT_FALSE(structural_equal(StmtPtr(t.plain()), StmtPtr(full)));
  // The IRMutator rebuilds a loop whose body changed: every typed field survives.
  struct Rename : IRMutator {
    const Var* from = nullptr;
    VarPtr to;
    ExprPtr mutate_(const Var* op, const ExprPtr& self) override { return op == from ? ExprPtr(to) : self; }
    using IRMutator::mutate_;
  } rename;
  rename.from = t.s.get();
  rename.to = var("s2", scalar(DataType::INDEX));
  StmtPtr mutated = rename.mutate_stmt(full);
  auto* m = mutated->as<ForStmt>();
  ASSERT_TRUE(m != nullptr && m != full.get());
  EXPECT_EQ(m->carries, full->carries);
  EXPECT_EQ(m->trip_count, 16);
  EXPECT_EQ(m->inplace_carries, std::vector<int64_t>{0});
  EXPECT_EQ(m->lent_inits, std::vector<int64_t>{0});
  EXPECT_EQ(m->loop_origin, LoopOrigin::ChunkOuter);
  EXPECT_EQ(m->chunk_stride, 4);
  EXPECT_EQ(m->chunk, (ChunkSpec{2, ChunkPolicy::LeadingFull}));
  // A loop of another arity cannot take the fields.
  auto bare = ForStmt::make(t.i, I(0), I(4), I(1), {}, EvalStmt::make(t.i), {});
  EXPECT_THROW(bare->with_typed_fields_of(*full), InternalError);
}

TEST(StructuralEqual, CallPeerBaseAndRebuild) {
  auto imp = [](int64_t base) {
    ExprPtr c = Call::make_op("system.import_peer_buffer", {}, {{"name", std::string("ring")}, {"peer_func", std::string("p")}});
    return base == Call::kNoPeerBase ? c : with_peer_base(c, base);
  };
  EXPECT_TRUE(structural_equal(imp(256), imp(256)));
  EXPECT_EQ(structural_hash(imp(256)), structural_hash(imp(256)));
  EXPECT_FALSE(structural_equal(imp(256), imp(-1)));
  EXPECT_FALSE(structural_equal(imp(-1), imp(Call::kNoPeerBase)));
  EXPECT_NE(structural_hash(imp(-1)), structural_hash(imp(Call::kNoPeerBase)));
  EXPECT_THROW(with_peer_base(Call::make_op("system.reserve_buffer", {}, {{"name", std::string("r")}, {"size", int64_t(64)},
                                                                          {"base", int64_t(-1)}}),
                              0),
               InternalError);
  // A rebuild from callee / args / attrs takes the typed pass results along.
  ExprPtr stamped = with_cpu_base(imp(256), 256);
  auto* c = stamped->as<Call>();
  ExprPtr rebuilt = with_pass_results_of(Call::make_op(c->callee, c->args, c->attrs, c->span), *c);
  EXPECT_TRUE(structural_equal(rebuilt, stamped));
  EXPECT_FALSE(structural_equal(ExprPtr(Call::make_op(c->callee, c->args, c->attrs, c->span)), stamped));
}

TEST(StructuralEqual, LoopLentInits) {
  TypedLoop t;
  StmtPtr lent = t.plain()->with_lent_inits({0});
  EXPECT_TRUE(structural_equal(lent, StmtPtr(t.plain()->with_lent_inits({0}))));
  EXPECT_EQ(structural_hash(lent), structural_hash(StmtPtr(t.plain()->with_lent_inits({0}))));
  EXPECT_FALSE(structural_equal(lent, StmtPtr(t.plain())));
  EXPECT_NE(structural_hash(lent), structural_hash(StmtPtr(t.plain())));
  EXPECT_THROW(t.plain()->with_lent_inits({1}), InternalError);   // one iter_arg
}

TEST(StructuralEqual, CallReadsInPlaceAndRebuild) {
  auto x = var("x", tensor({16, 16}));
  ExprPtr load = Call::make_op("tile.load", {x, MakeTuple::make({I(0), I(0)}), MakeTuple::make({I(16), I(16)})});
  ExprPtr in_place = with_reads_in_place(load, true);
  EXPECT_TRUE(structural_equal(in_place, with_reads_in_place(load, true)));
  EXPECT_EQ(structural_hash(in_place), structural_hash(with_reads_in_place(load, true)));
  EXPECT_FALSE(structural_equal(in_place, load));
  EXPECT_NE(structural_hash(in_place), structural_hash(load));
  EXPECT_EQ(with_reads_in_place(in_place, false)->as<Call>()->reads_in_place, false);
  EXPECT_THROW(with_reads_in_place(Call::make_op("tile.add", {load, load}), true), InternalError);   // loads only
  // A rebuild from callee / args / attrs takes the stamp along.
  auto* c = in_place->as<Call>();
  EXPECT_TRUE(structural_equal(with_pass_results_of(Call::make_op(c->callee, c->args, c->attrs, c->span), *c), in_place));
}

TEST(StructuralEqual, FunctionMetadata) {
  auto mk = [](FunctionType t, Level l, Role r, ParamDirection d) {
    auto a = var("a", tensor({4}));
    return Function::make("f", t, {a}, {d}, {}, ReturnStmt::make({}), l, r);
  };
  auto base = mk(FunctionType::InCore, Level::None, Role::None, ParamDirection::In);
  EXPECT_TRUE(structural_equal(base, mk(FunctionType::InCore, Level::None, Role::None, ParamDirection::In)));
  EXPECT_FALSE(structural_equal(base, mk(FunctionType::AIV, Level::None, Role::None, ParamDirection::In)));
  EXPECT_FALSE(structural_equal(base, mk(FunctionType::InCore, Level::HOST, Role::None, ParamDirection::In)));
  EXPECT_FALSE(structural_equal(base, mk(FunctionType::InCore, Level::None, Role::Worker, ParamDirection::In)));
  EXPECT_FALSE(structural_equal(base, mk(FunctionType::InCore, Level::None, Role::None, ParamDirection::InOut)));
}

}  // namespace
}  // namespace pypto::ir
