// The well-formedness verifier (well_formed.h): SSA single definition, dominance of uses,
// iter_arg / yield arity and spans. A scoped walk: each block opens a scope of visible Vars;
// definitions go into the innermost scope, uses must find their Var in some open scope.
#include <set>
#include <unordered_set>
#include <vector>

#include "pypto/ir/visitor.h"
#include "pypto/transforms/at_location.h"
#include "pypto/transforms/well_formed.h"

namespace pypto::transforms {

using namespace ir;

namespace {

class WellFormedChecker : public IRVisitor {
 public:
  // Spans are required in programs parsed from source (known program span); IR built with
  // the C++ API (unit tests) has none to keep.
  WellFormedChecker(const Program& program, std::vector<std::string>* out)
      : out_(out), require_spans_(program.span.known()) {
    for (auto& d : program.dynamic_dims) globals_.insert(d.get());
  }

  void check_function(const Function& f) {
    fn_ = f.name;
    defined_.clear();
    scopes_.assign(1, {});
    for (auto& p : f.params) define(p.get(), f.span);
    for (auto& p : f.params) visit_type(p->type);
    for (auto& t : f.return_types) visit_type(t);
    if (f.body) visit_stmt(f.body);
  }

  void visit_stmt(const StmtPtr& s) override {
    if (require_spans_ && s && !s->span.known() && s->kind != NodeKind::SeqStmts) {
      report(std::string(to_string(s->kind)) + " has no source span");
    }
    IRVisitor::visit_stmt(s);
  }

  void visit_(const Var* op) override { use(op); }
  void visit_(const IterArg* op) override { use(op); }

  void visit_(const AssignStmt* op) override {
    visit_expr(op->value);
    define(op->var.get(), op->span);
  }
  void visit_(const SeqStmts* op) override {
    for (size_t i = 0; i < op->stmts.size(); ++i) {
      if (op->stmts[i]->is<YieldStmt>() && i + 1 != op->stmts.size()) {
        report("yield" + AtLocation(op->stmts[i]->span) + " is not the last statement of its body");
      }
      visit_stmt(op->stmts[i]);
    }
  }
  void visit_(const ForStmt* op) override {
    visit_expr(op->start);
    visit_expr(op->stop);
    visit_expr(op->step);
    for (auto& ia : op->iter_args) visit_expr(ia->init);
    if (op->return_vars.size() != op->iter_args.size()) {
      report("for loop" + AtLocation(op->span) + " has " + std::to_string(op->iter_args.size()) + " iter_args but " +
             std::to_string(op->return_vars.size()) + " return vars");
    }
    if (!op->iter_args.empty()) check_yield(op->body, op->iter_args.size(), "for loop", op->span);
    scopes_.emplace_back();
    define(op->loop_var.get(), op->span);
    for (auto& ia : op->iter_args) define(ia.get(), op->span);
    for (auto& [k, v] : op->attrs) visit_attr(v);
    visit_stmt(op->body);
    scopes_.pop_back();
    for (auto& rv : op->return_vars) define(rv.get(), op->span);
  }
  void visit_(const IfStmt* op) override {
    visit_expr(op->cond);
    if (!op->return_vars.empty()) {
      if (!op->else_body) report("if" + AtLocation(op->span) + " has return vars but no else branch");
      check_yield(op->then_body, op->return_vars.size(), "if", op->span);
      if (op->else_body) check_yield(op->else_body, op->return_vars.size(), "if", op->span);
    }
    in_scope(op->then_body);
    if (op->else_body) in_scope(op->else_body);
    for (auto& rv : op->return_vars) define(rv.get(), op->span);
  }
  // pl.at / pl.spmd / pl.cluster and runtime scopes are transparent for values: what their
  // body defines stays visible after them (outlining turns it into the outlined call's results).
  void visit_(const ScopeStmt* op) override {
    for (auto& [k, v] : op->attrs) visit_attr(v);
    for (const ExprPtr& e : op->options.exprs()) visit_expr(e);
    if (op->block_var) define(op->block_var.get(), op->span);
    visit_stmt(op->body);
    if (op->task_id_var) define(op->task_id_var.get(), op->span);
  }
  void visit_(const RuntimeScopeStmt* op) override { visit_stmt(op->body); }

 private:
  void report(const std::string& msg) { out_->push_back("function '" + fn_ + "': " + msg); }

  void define(const Var* v, const Span& span) {
    if (!defined_.insert(v).second) {
      report("'" + v->name + "'" + AtLocation(v->span.known() ? v->span : span) + " is defined more than once");
    }
    scopes_.back().insert(v);
    visit_type(v->type);
  }

  void use(const Var* v) {
    if (globals_.count(v)) return;
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->count(v)) return;
    }
    report("use of '" + v->name + "'" + AtLocation(v->span) + " is not dominated by its definition");
  }

  void in_scope(const StmtPtr& body) {
    scopes_.emplace_back();
    visit_stmt(body);
    scopes_.pop_back();
  }

  void visit_attr(const AttrValue& v) {
    if (auto* e = std::get_if<ExprPtr>(&v)) {
      if (*e) visit_expr(*e);
    } else if (auto* l = std::get_if<std::vector<ExprPtr>>(&v)) {
      for (auto& x : *l) {
        if (x) visit_expr(x);
      }
    }
  }

  // The body's last statement (through nested SeqStmts / runtime scopes) is a yield of `n` values.
  void check_yield(const StmtPtr& body, size_t n, const char* what, const Span& span) {
    const Stmt* last = body.get();
    while (last) {
      if (auto* seq = last->as<SeqStmts>()) {
        last = seq->stmts.empty() ? nullptr : seq->stmts.back().get();
      } else if (auto* rs = last->as<RuntimeScopeStmt>()) {
        last = rs->body.get();
      } else {
        break;
      }
    }
    auto* y = last ? last->as<YieldStmt>() : nullptr;
    if (!y) {
      report(std::string(what) + AtLocation(span) + " body does not end in a yield of " + std::to_string(n) + " values");
    } else if (y->values.size() != n) {
      report(std::string(what) + AtLocation(span) + " yields " + std::to_string(y->values.size()) + " values, expected " +
             std::to_string(n));
    }
  }

  std::vector<std::string>* out_;
  bool require_spans_;
  std::string fn_;
  std::unordered_set<const Var*> globals_;
  std::unordered_set<const Var*> defined_;
  std::vector<std::unordered_set<const Var*>> scopes_;
};

}  // namespace

std::vector<std::string> VerifyWellFormed(const ProgramPtr& program) {
  std::vector<std::string> out;
  WellFormedChecker checker(*program, &out);
  for (auto& f : program->functions) checker.check_function(*f);
  return out;
}

}  // namespace pypto::transforms
