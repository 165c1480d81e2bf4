// CountTaskStatements
//
// What: stamps Function::task_statements on every Orchestration function: the number of task
//   statements in its body — kernel / Group calls whose result is not a tuple, and pl.submits —
//   counted through loops, branches and runtime scopes, each statement once (not per iteration).
//
//     @pl.function(type=pl.FunctionType.Orchestration)      @pl.function(..., task_statements=3)
//     def main(self, a, out):                      ==>      def main(self, a, out):
//         out = self.k(a, out)                                  (the same body)
//         for i in pl.range(4):
//             out = self.k(a, out)
//         out, t = pl.submit(self.k, a, out)
//
// Input invariants: none. Output invariants: TaskStatementsCounted; nothing else changes.
// Why: the L2 generator prints each task in a `{ }` block of its own, and long runs of calls in
//   chunks, when a function has 64 or more task statements (the compile-time bound of g++ on one
//   huge function, emit_statements.cpp); it reads the count instead of walking the body.
#include "pypto/ir/mutator.h"
#include "pypto/transforms/flat_stmts.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// A kernel / Group call that is no tuple-valued assignment, or a pl.submit.
bool is_task_statement(const Stmt& s) {
  const Expr* e = nullptr;
  if (auto* ev = s.as<EvalStmt>()) e = ev->expr.get();
  if (auto* a = s.as<AssignStmt>()) {
    if (a->value->is<Submit>()) return true;
    if (a->var->type->is<TupleType>()) return false;
    e = a->value.get();
  }
  if (!e) return false;
  if (e->is<Submit>()) return true;
  auto* c = e->as<Call>();
  return c && !c->is_op;
}

int64_t count(const StmtPtr& s) {
  if (!s) return 0;
  int64_t n = 0;
  // FlatStmts: no shared_ptr copy (an atomic write to each cold node) of a long body.
  for_each_prefetched(FlatStmts(s).stmts(), [&](const StmtPtr& st) {
    if (is_task_statement(*st)) ++n;
    if (auto* f = st->as<ForStmt>()) n += count(f->body);
    if (auto* i = st->as<IfStmt>()) n += count(i->then_body) + count(i->else_body);
    if (auto* r = st->as<RuntimeScopeStmt>()) n += count(r->body);
  });
  return n;
}

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    const int64_t n = TaskStatementsOf(*fn);
    if (n != fn->task_statements) out = out->with_function(fn->with_task_statements(n));
  }
  return out;
}

}  // namespace

int64_t TaskStatementsOf(const Function& fn) {
  return fn.type == FunctionType::Orchestration ? count(fn.body) : 0;
}

Pass CountTaskStatements() {
  return Pass{"CountTaskStatements", {}, {IRProperty::TaskStatementsCounted}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
