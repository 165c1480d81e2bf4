// IRVisitor traversal and IRMutator rewriting: identity preservation, rewrites compared with
// a Before/Expected program, def/use remapping, re-typing, statement deletion and splicing.
#include <set>

#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "sample_program.h"

namespace pypto::ir {
namespace {

using namespace test;

struct Counter : IRVisitor {
  int calls = 0, submits = 0, fors = 0, ifs = 0, yields = 0;
  std::set<std::string> callees;
  std::set<const Var*> vars;
  void visit_(const Call* op) override {
    ++calls;
    callees.insert(op->callee);
    IRVisitor::visit_(op);
  }
  void visit_(const Submit* op) override {
    ++submits;
    IRVisitor::visit_(op);
  }
  void visit_(const Var* op) override {
    vars.insert(op);
    IRVisitor::visit_(op);
  }
  void visit_(const IterArg* op) override {
    vars.insert(op);
    IRVisitor::visit_(op);
  }
  void visit_(const ForStmt* op) override {
    ++fors;
    IRVisitor::visit_(op);
  }
  void visit_(const IfStmt* op) override {
    ++ifs;
    IRVisitor::visit_(op);
  }
  void visit_(const YieldStmt* op) override {
    ++yields;
    IRVisitor::visit_(op);
  }
};

TEST(Visitor, VisitsEverything) {
  auto p = sample_program();
  Counter c;
  c.visit_program(*p);
  // tile.load, tile.exp, tile.store in k; tensor.dim and system.task_invalid (an iter_arg init) in main.
  EXPECT_EQ(c.calls, 5);
  EXPECT_EQ(c.callees, (std::set<std::string>{"tile.load", "tile.exp", "tile.store", "tensor.dim", "system.task_invalid"}));
  EXPECT_EQ(c.submits, 1);
  EXPECT_EQ(c.fors, 1);
  EXPECT_EQ(c.ifs, 1);
  EXPECT_EQ(c.yields, 3);
  // Vars: M, k's a c t u c1, main's a out n i acc prev st acc1 tid acc2 prev2 r.
  EXPECT_EQ(c.vars.size(), 18u);
}

TEST(Visitor, ShapeSymbolsReachedThroughTypes) {
  auto p = sample_program();
  Counter c;
  c.visit_function(*p->get("k"));
  EXPECT_TRUE(c.vars.count(p->dynamic_dims[0].get()));
}

TEST(Mutator, IdentityPreservesPointers) {
  auto p = sample_program();
  IRMutator m;
  EXPECT_EQ(m.mutate_program(p), p);
  IRMutator m2;
  EXPECT_EQ(m2.mutate_function(p->get("main")), p->get("main"));
  IRMutator m3;
  EXPECT_EQ(m3.mutate_stmt(p->get("main")->body), p->get("main")->body);
}

struct RenameSubmitCallee : IRMutator {
  ExprPtr mutate_(const Submit* op, const ExprPtr& self) override {
    auto e = IRMutator::mutate_(op, self);
    auto* s = e->as<Submit>();
    if (s->callee != "k") return e;
    auto& els = s->type->as<TupleType>()->elements;
    return Submit::make("k2", s->args, std::vector<TypePtr>(els.begin(), els.end() - 1), s->deps, s->core_num, s->sync_start,
                        s->allow_early_resolve, s->timing_slot, s->predicate, s->arg_directions, s->span);
  }
};

TEST(Mutator, RewriteMatchesExpectedAndSharesUnchanged) {
  auto before = sample_program();
  SampleOptions o;
  o.submit_callee = "k2";
  auto expected = sample_program(o);
  RenameSubmitCallee m;
  auto after = m.mutate_program(before);
  std::string why;
  EXPECT_TRUE(structural_equal_explain(after, expected, &why)) << why;
  EXPECT_EQ(after->get("k"), before->get("k"));  // untouched function shared
  EXPECT_NE(after->get("main"), before->get("main"));
  // The statement before the loop is shared too.
  auto b0 = flatten_stmts(before->get("main")->body)[0];
  auto a0 = flatten_stmts(after->get("main")->body)[0];
  EXPECT_EQ(a0, b0);
  EXPECT_FALSE(structural_equal(after, before));
}

struct ChangeTrip : IRMutator {
  StmtPtr mutate_(const ForStmt* op, const StmtPtr& self) override {
    auto s = IRMutator::mutate_(op, self);
    auto* f = s->as<ForStmt>();
    return ForStmt::make(f->loop_var, f->start, ConstInt::make(8), f->step, f->iter_args, f->body, f->return_vars, f->for_kind,
                         f->attrs, f->span);
  }
};

TEST(Mutator, StmtRewrite) {
  SampleOptions o;
  o.trip = 8;
  ChangeTrip m;
  EXPECT_TRUE(structural_equal(m.mutate_program(sample_program()), sample_program(o)));
}

// Substitute one Var at its definition; every use must follow.
struct ReplaceParam : IRMutator {
  const Var* target;
  VarPtr replacement;
  ExprPtr mutate_(const Var* op, const ExprPtr& self) override {
    if (op == target) {
      if (!replacement) replacement = Var::make(op->name + "_new", op->type, op->span);
      return replacement;
    }
    return IRMutator::mutate_(op, self);
  }
};

TEST(Mutator, DefinitionSubstitutionReachesUses) {
  auto p = sample_program();
  auto main = p->get("main");
  ReplaceParam m;
  m.target = main->params[0].get();
  auto out = m.mutate_function(main);
  ASSERT_NE(out, main);
  EXPECT_EQ(out->params[0], m.replacement);
  Counter c;
  c.visit_function(*out);
  EXPECT_FALSE(c.vars.count(main->params[0].get()));
  EXPECT_TRUE(c.vars.count(m.replacement.get()));
  EXPECT_TRUE(structural_equal(out, main));  // only the identity of the var changed
}

// Replace the iter_arg init (task_invalid -> task_dummy): the IterArg is rebuilt and its uses
// in the loop body (the submit's deps) must point to the new IterArg.
struct InitToDummy : IRMutator {
  ExprPtr mutate_(const Call* op, const ExprPtr& self) override {
    if (op->callee == "system.task_invalid") return Call::make_op("system.task_dummy", {});
    return IRMutator::mutate_(op, self);
  }
};

struct FindLoop : IRVisitor {
  const ForStmt* loop = nullptr;
  const Submit* submit = nullptr;
  void visit_(const ForStmt* op) override {
    loop = op;
    IRVisitor::visit_(op);
  }
  void visit_(const Submit* op) override {
    submit = op;
    IRVisitor::visit_(op);
  }
};

TEST(Mutator, RebuiltIterArgIsUsedInBody) {
  auto p = sample_program();
  InitToDummy m;
  auto q = m.mutate_program(p);
  FindLoop f;
  f.visit_program(*q);
  ASSERT_TRUE(f.loop && f.submit);
  auto* init = f.loop->iter_args[1]->init->as<Call>();
  ASSERT_TRUE(init);
  EXPECT_EQ(init->callee, "system.task_dummy");
  ASSERT_EQ(f.submit->deps.size(), 1u);
  EXPECT_EQ(f.submit->deps[0].get(), static_cast<const Expr*>(f.loop->iter_args[1].get()));
  FindLoop old;
  old.visit_program(*p);
  EXPECT_NE(f.loop->iter_args[1], old.loop->iter_args[1]);
}

// Shrinking the loaded tile re-types t, then u (tile.exp re-infers), and the store still checks.
struct ShrinkLoad : IRMutator {
  ExprPtr mutate_(const Call* op, const ExprPtr& self) override {
    if (op->callee == "tile.load") return Call::make_op("tile.load", {op->args[0], op->args[1], list({8, 8})}, op->attrs, op->span);
    return IRMutator::mutate_(op, self);
  }
};

TEST(Mutator, AssignTargetsAreRetyped) {
  auto p = sample_program();
  ShrinkLoad m;
  auto k = m.mutate_function(p->get("k"));
  auto stmts = flatten_stmts(k->body);
  ASSERT_EQ(stmts.size(), 4u);
  auto* t = stmts[0]->as<AssignStmt>();
  auto* u = stmts[1]->as<AssignStmt>();
  EXPECT_TRUE(structural_equal(t->var->type, tile({8, 8})));
  EXPECT_TRUE(structural_equal(u->var->type, tile({8, 8})));
  EXPECT_EQ(u->value->as<Call>()->args[0], ExprPtr(t->var));  // use follows the new def
  EXPECT_EQ(t->var->name, "t");
  EXPECT_EQ(stmts[2]->as<AssignStmt>()->value->as<Call>()->args[0], ExprPtr(u->var));
}

struct DropAndSplice : IRMutator {
  StmtPtr mutate_(const EvalStmt* op, const StmtPtr& self) override {
    auto* c = op->expr->as<ConstInt>();
    if (c && c->value == 0) return nullptr;  // delete
    if (c && c->value == 1) return SeqStmts::make({EvalStmt::make(I(10)), EvalStmt::make(I(11))});  // splice
    return self;
  }
};

TEST(Mutator, DeleteAndSpliceStatements) {
  StmtPtr in = SeqStmts::make({EvalStmt::make(I(0)), EvalStmt::make(I(1)), EvalStmt::make(I(2))});
  DropAndSplice m;
  StmtPtr out = m.mutate_stmt(in);
  auto* seq = out->as<SeqStmts>();
  ASSERT_TRUE(seq);
  ASSERT_EQ(seq->stmts.size(), 3u);
  EXPECT_EQ(seq->stmts[0]->as<EvalStmt>()->expr->as<ConstInt>()->value, 10);
  EXPECT_EQ(seq->stmts[1]->as<EvalStmt>()->expr->as<ConstInt>()->value, 11);
  EXPECT_EQ(seq->stmts[2], in->as<SeqStmts>()->stmts[2]);
}

struct BadDef : IRMutator {
  ExprPtr mutate_(const Var* op, const ExprPtr& self) override { return ConstInt::make(0); }
};

TEST(Mutator, DefinitionMustStayAVar) {
  auto x = var("x", scalar(DataType::INDEX));
  BadDef m;
  EXPECT_THROW(m.mutate_stmt(AssignStmt::make(x, I(1))), InternalError);
}

TEST(SeqHelpers, FlattenAndMakeSeq) {
  auto s1 = EvalStmt::make(I(1));
  auto s2 = EvalStmt::make(I(2));
  auto s3 = EvalStmt::make(I(3));
  auto nested = SeqStmts::make({s1, SeqStmts::make({s2, SeqStmts::make({})}), s3});
  auto flat = flatten_stmts(nested);
  ASSERT_EQ(flat.size(), 3u);
  EXPECT_EQ(flat[0], StmtPtr(s1));
  EXPECT_EQ(flat[2], StmtPtr(s3));
  EXPECT_TRUE(flatten_stmts(nullptr).empty());
  EXPECT_EQ(flatten_stmts(s1).size(), 1u);
  EXPECT_EQ(make_seq({s1}), StmtPtr(s1));
  auto seq = make_seq({s1, s2});
  ASSERT_TRUE(seq->is<SeqStmts>());
  EXPECT_EQ(seq->as<SeqStmts>()->stmts.size(), 2u);
  EXPECT_TRUE(make_seq({})->is<SeqStmts>());
}

}  // namespace
}  // namespace pypto::ir
