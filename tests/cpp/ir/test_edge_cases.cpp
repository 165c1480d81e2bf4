// Edge cases: unknown node kinds fail loudly, float constants, rendered op errors, var kinds.
#include <cmath>

#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "sample_program.h"

namespace pypto::ir {
namespace {

using namespace test;

// A node kind no traversal knows (as if someone added a node without updating the list).
struct Weird : Expr {
  Weird() : Expr(static_cast<NodeKind>(200), ScalarType::make(DataType::INDEX), Span{}) {}
};

TEST(EdgeCases, UnknownKindThrowsInternalError) {
  ExprPtr w = std::make_shared<Weird>();
  IRVisitor v;
  EXPECT_THROW(v.visit_expr(w), InternalError);
  IRMutator m;
  EXPECT_THROW(m.mutate_expr(w), InternalError);
  EXPECT_THROW(structural_equal(w, w), InternalError);
  EXPECT_THROW(structural_hash(w), InternalError);
  EXPECT_STREQ(to_string(static_cast<NodeKind>(200)), "<invalid NodeKind>");
}

TEST(EdgeCases, FloatConstants) {
  EXPECT_TRUE(structural_equal(F(0.0), F(-0.0)));
  EXPECT_EQ(structural_hash(F(0.0)), structural_hash(F(-0.0)));
  EXPECT_TRUE(structural_equal(F(std::nan("")), F(std::nan(""))));
  EXPECT_EQ(structural_hash(F(std::nan(""))), structural_hash(F(std::nan(""))));
  EXPECT_FALSE(structural_equal(F(1.0), F(1.5)));
  EXPECT_FALSE(structural_equal(F(1.0), ExprPtr(ConstFloat::make(1.0, DataType::FP16))));
}

TEST(EdgeCases, OpErrorRendersSpanAndHelp) {
  Span s = span_at(6, 13, 27, "        u = pl.add(t, a)");
  auto t = var("t", tile({16, 16}));
  auto a = var("a", tensor({16, 16}));
  auto e = expect_user_error([&] { op("tile.add", {t, a}, {}, s); }, "tile.add: argument 'b' must be a Tile or a scalar");
  EXPECT_EQ(std::string(e.what()),
            "error: tile.add: argument 'b' must be a Tile or a scalar, got Tensor[[16, 16], FP32] --> prog.py:6:13\n"
            "  |\n"
            "6 |         u = pl.add(t, a)\n"
            "  |             ^^^^^^^^^^^^^^");
  auto e2 = expect_user_error([&] { op("tile.exp", {a}, {}, s); }, "must be a Tile, got Tensor");
  EXPECT_EQ(e2.help(), "load the tensor into a tile first with pl.load(tensor, offsets, shapes)");
}

TEST(EdgeCases, VarKindsDoNotMatch) {
  auto x = var("x", scalar(DataType::INDEX));
  auto i = var("i", scalar(DataType::INDEX));
  auto ia = IterArg::make("x", scalar(DataType::INDEX), I(0));
  EXPECT_FALSE(structural_equal(ExprPtr(x), ExprPtr(ia)));
  // Loops whose iter_args differ only in their init.
  auto mk = [](int64_t init) {
    auto i = var("i", scalar(DataType::INDEX));
    auto ia = IterArg::make("s", scalar(DataType::INDEX), I(init));
    auto rv = var("s_out", scalar(DataType::INDEX));
    auto body = YieldStmt::make({BinaryExpr::make(BinaryOp::Add, ia, i)});
    return StmtPtr(ForStmt::make(i, I(0), I(4), I(1), {ia}, body, {rv}));
  };
  EXPECT_TRUE(structural_equal(mk(0), mk(0)));
  EXPECT_EQ(structural_hash(mk(0)), structural_hash(mk(0)));
  EXPECT_FALSE(structural_equal(mk(0), mk(1)));
  EXPECT_NE(structural_hash(mk(0)), structural_hash(mk(1)));
  (void)i;
}

TEST(EdgeCases, ScopeVarsAreDefinitions) {
  auto mk = [](bool use_block) {
    auto tid = var("tid", scalar(DataType::TASK_ID));
    auto b = var("b", scalar(DataType::INDEX));
    auto body = EvalStmt::make(use_block ? ExprPtr(b) : I(0));
    auto scope = ScopeStmt::make(ScopeKind::Spmd, {{"core_num", I(4)}}, body, tid, b);
    auto after = EvalStmt::make(tid);
    return StmtPtr(SeqStmts::make({scope, after}));
  };
  EXPECT_TRUE(structural_equal(mk(true), mk(true)));
  EXPECT_EQ(structural_hash(mk(true)), structural_hash(mk(true)));
  EXPECT_FALSE(structural_equal(mk(true), mk(false)));
}

TEST(EdgeCases, ExplainOnNullPrograms) {
  std::string why;
  EXPECT_TRUE(structural_equal_explain(nullptr, nullptr, &why));
  EXPECT_FALSE(structural_equal_explain(sample_program(), nullptr, &why));
  EXPECT_EQ(why, "one program is null");
  EXPECT_TRUE(structural_equal_explain(sample_program(), sample_program(), nullptr));
}

}  // namespace
}  // namespace pypto::ir
