// CheckNestingDepth (pass.h): the pass pipeline, the printer and the code generators walk the IR
// recursively, so an IR nested tens of thousands of levels deep (built through the IR API; the
// DSL parser cannot nest that far) would overflow the C++ stack. This walk is iterative and
// refuses such a program up front with a UserError at the statement or expression that crosses
// the limit, naming the function.
#include <utility>
#include <vector>

#include "pypto/ir/error.h"
#include "pypto/ir/function.h"
#include "pypto/transforms/pass.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// Expression children of an expression node (leaves: none).
void expr_children(const Expr& e, std::vector<const Expr*>& out) {
  auto add = [&](const ExprPtr& c) {
    if (c) out.push_back(c.get());
  };
  if (auto* b = e.as<BinaryExpr>()) { add(b->a); add(b->b); }
  else if (auto* u = e.as<UnaryExpr>()) add(u->a);
  else if (auto* c = e.as<Cast>()) add(c->value);
  else if (auto* call = e.as<Call>()) { for (auto& a : call->args) add(a); }
  else if (auto* s = e.as<Submit>()) {
    for (auto& a : s->args) add(a);
    for (auto& d : s->deps) add(d);
    add(s->core_num);
    add(s->predicate);
  } else if (auto* t = e.as<MakeTuple>()) { for (auto& x : t->elements) add(x); }
  else if (auto* g = e.as<TupleGetItem>()) add(g->tuple);
  else if (auto* ia = e.as<IterArg>()) add(ia->init);
}

[[noreturn]] void too_deep(const char* what, int limit, const Function& f, const Span& span) {
  throw UserError(std::string(what) + " nested more than " + std::to_string(limit) + " levels deep in function '" +
                      f.name + "': the compiler's passes and code generators cannot follow it",
                  span, "flatten it: fewer nested scopes / loops / branches, or intermediate variables");
}

// Deepest expression under `root` (iterative).
void check_expr(const ExprPtr& root, const Function& f, const Span& where) {
  if (!root) return;
  std::vector<std::pair<const Expr*, int>> stack{{root.get(), 1}};
  std::vector<const Expr*> kids;
  while (!stack.empty()) {
    auto [e, d] = stack.back();
    stack.pop_back();
    if (d > kMaxExprDepth) too_deep("an expression is", kMaxExprDepth, f, e->span.known() ? e->span : where);
    kids.clear();
    expr_children(*e, kids);
    for (const Expr* k : kids) stack.emplace_back(k, d + 1);
  }
}

void check_function(const Function& f) {
  if (!f.body) return;
  std::vector<std::pair<const Stmt*, int>> stack{{f.body.get(), 1}};
  while (!stack.empty()) {
    auto [s, d] = stack.back();
    stack.pop_back();
    if (d > kMaxStmtDepth) too_deep("statements are", kMaxStmtDepth, f, s->span);
    auto push = [&](const StmtPtr& c) {
      if (c) stack.emplace_back(c.get(), d + 1);
    };
    if (auto* q = s->as<SeqStmts>()) { for_each_prefetched(q->stmts, [&](const StmtPtr& c) { push(c); }); }
    else if (auto* fs = s->as<ForStmt>()) {
      check_expr(fs->start, f, s->span);
      check_expr(fs->stop, f, s->span);
      check_expr(fs->step, f, s->span);
      for (auto& ia : fs->iter_args) check_expr(ia, f, s->span);
      push(fs->body);
    } else if (auto* is = s->as<IfStmt>()) {
      check_expr(is->cond, f, s->span);
      push(is->then_body);
      push(is->else_body);
    } else if (auto* sc = s->as<ScopeStmt>()) push(sc->body);
    else if (auto* rs = s->as<RuntimeScopeStmt>()) push(rs->body);
    else if (auto* a = s->as<AssignStmt>()) check_expr(a->value, f, s->span);
    else if (auto* ev = s->as<EvalStmt>()) check_expr(ev->expr, f, s->span);
    else if (auto* y = s->as<YieldStmt>()) { for (auto& v : y->values) check_expr(v, f, s->span); }
    else if (auto* r = s->as<ReturnStmt>()) { for (auto& v : r->values) check_expr(v, f, s->span); }
  }
}

}  // namespace

void CheckNestingDepth(const ProgramPtr& program) {
  if (!program) return;
  for (auto& f : program->functions) {
    if (f) check_function(*f);
  }
}

}  // namespace pypto::transforms
