// Freeing IR trees without recursion (expr.h release_children, src/ir/node_release.cpp): a
// tree far deeper than any stack allows is freed, and a subtree still owned elsewhere survives.
#include <gtest/gtest.h>

#include "ir_test_util.h"
#include "pypto/ir/stmt.h"

using namespace pypto::ir;
using namespace pypto::ir::test;

namespace {

constexpr int kLevels = 200000;

TEST(NodeRelease, FreesAnExpressionNestedTwoHundredThousandLevels) {
  auto n = Var::make("n", scalar(DataType::INDEX));
  ExprPtr e = n;
  for (int i = 0; i < kLevels; ++i) e = BinaryExpr::make(i % 2 ? BinaryOp::Add : BinaryOp::Mul, e, I(i));
  for (int i = 0; i < kLevels; ++i) e = UnaryExpr::make(UnaryOp::Neg, Cast::make(e, DataType::INT64));
  std::weak_ptr<const Expr> watch = e;
  e.reset();   // recursive destructors would overflow the stack here
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(n.use_count(), 1);   // every node holding `n` is gone
}

TEST(NodeRelease, FreesStatementsNestedTwoHundredThousandLevels) {
  auto c = Var::make("c", scalar(DataType::BOOL));
  StmtPtr s = EvalStmt::make(c);
  for (int i = 0; i < kLevels; ++i) {
    s = i % 2 ? StmtPtr(IfStmt::make(c, SeqStmts::make({s}), nullptr)) : StmtPtr(RuntimeScopeStmt::make(RuntimeScopeMode::Auto, s));
  }
  std::weak_ptr<const Stmt> watch = s;
  s.reset();
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(c.use_count(), 1);
}

TEST(NodeRelease, ASharedSubtreeOutlivesItsParent) {
  auto n = Var::make("n", scalar(DataType::INDEX));
  ExprPtr shared = BinaryExpr::make(BinaryOp::Add, n, I(1));
  ExprPtr parent = BinaryExpr::make(BinaryOp::Mul, shared, Cast::make(shared, DataType::INT64));
  parent.reset();
  ASSERT_NE(shared, nullptr);
  auto* b = shared->as<BinaryExpr>();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->a, n);                          // the subtree is intact
  EXPECT_EQ(b->b->as<ConstInt>()->value, 1);
}

}  // namespace
