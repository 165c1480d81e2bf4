// MaterializeRuntimeScopes
//
// What: in every Orchestration function, wraps the body (all statements but the trailing
//   ReturnStmt) in a RuntimeScopeStmt AUTO, and the body of every ForStmt and every IfStmt
//   branch in one too — except inside a MANUAL RuntimeScopeStmt (`with pl.manual_scope():`),
//   where an AUTO scope would re-enable automatic tracking (runtime misuse). A body that
//   already is a single AUTO RuntimeScopeStmt is not wrapped again (the pass is idempotent).
//       for i in pl.range(4):              for i in pl.range(4):
//           c = self.k(a, c)       ==>         with pl.scope():
//                                                  c = self.k(a, c)
//   A function marked `@pl.function(auto_scope=False)` (attr auto_scope: False) is left alone:
//   its only scopes are the author's `with pl.scope():` / `pl.manual_scope()` blocks. Every
//   function the pass wrapped is marked `auto_scope=False` (spec anchor_features §4), so the
//   printed output re-parses with its scopes as the author's and a second run changes nothing.
//   Allocations that escape a for / if body (spec anchor_features §17): a `tensor.create` whose
//   value the body yields (a carry, an if-result, a view of it or a kernel result in it) is
//   placed before the body's AUTO scope, with the pure scalar statements its shape needs, so it
//   lives in the enclosing runtime scope (escaping_allocations.h):
//       for i, (acc,) in pl.range(n, init_values=(t0,)):     for i, (acc,) in ...:
//           t = pl.create_tensor([16, 16], ...)       ==>        t = pl.create_tensor(...)
//           t1 = self.k(x, t)                                    with pl.scope():
//           acc2 = pl.yield_(t1)                                     t1 = ...; acc2 = pl.yield_(t1)
//   A `pl.submit` output the runtime allocates (a trailing Out left out) that escapes is passed
//   explicitly instead, as such a lifted `tensor.create` (the runtime would reclaim it with the
//   body's scope while the carry still names it).
// Input invariants: none. Other function types are left alone.
// Output invariants: RuntimeScopesMaterialized. SSA is unchanged (a RuntimeScopeStmt binds
//   nothing; trailing YieldStmts move into the scope with the rest of their body, so every
//   value they name is declared in the same C++ block).
// Why: codegen emits PTO2_SCOPE 1:1 from RuntimeScopeStmt nodes; where scopes go (and so
//   when the runtime may release a loop iteration's buffers) is decided here, not in codegen.
#include "escaping_allocations.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/scope_carries.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// Counts the statements of `s` as flatten_stmts lists them, stopping after the second, and
// keeps the first in `first`: a long body is neither copied nor read to its end.
void count_flat_upto_two(const StmtPtr& s, const Stmt** first, int* n) {
  if (!s || *n > 1) return;
  if (auto* seq = s->as<SeqStmts>()) {
    for (size_t i = 0; i < seq->stmts.size() && *n <= 1; ++i) count_flat_upto_two(seq->stmts[i], first, n);
    return;
  }
  if ((*n)++ == 0) *first = s.get();
}

bool is_auto_scope(const StmtPtr& s) {
  const Stmt* only = nullptr;
  int n = 0;
  count_flat_upto_two(s, &only, &n);
  if (n != 1) return false;
  auto* rs = only->as<RuntimeScopeStmt>();
  return rs && rs->mode == RuntimeScopeMode::Auto;
}

StmtPtr wrap(const StmtPtr& body, const Span& span) {
  if (is_auto_scope(body)) return body;
  return RuntimeScopeStmt::make(RuntimeScopeMode::Auto, body ? body : make_seq({}, span), body ? body->span : span);
}

// Is `stmts` what wrap_lifting gives: the escaping allocations (and the pure statements their
// shapes need), then an AUTO scope holding the rest and the yield? AutoDeriveTaskDependencies
// lays out its per-iteration scopes this way too.
bool already_lifted(const std::vector<StmtPtr>& stmts, const BufferRoots& roots, const Program& program,
                    const char* what) {
  auto* scope = stmts.size() >= 2 ? stmts.back()->as<RuntimeScopeStmt>() : nullptr;
  StmtPtr y = scope && scope->mode == RuntimeScopeMode::Auto ? YieldEndingScope(*scope) : nullptr;
  if (!y) return false;
  std::vector<StmtPtr> probe(stmts.begin(), stmts.end() - 1);
  probe.push_back(y);
  EscapeSplit split = SplitEscapingAllocations(probe, roots, program, what);
  return split.scope_ok && split.rest.size() == 1;
}

// A for / if body wrapped in its AUTO scope, with the allocations that escape it placed before
// that scope (§17); left unwrapped when one escapes from a nested body (see escaping_allocations.h).
StmtPtr wrap_lifting(const StmtPtr& body, const Span& span, const BufferRoots& roots, const Program& program,
                     const char* what) {
  if (!body) return wrap(body, span);
  std::vector<StmtPtr> stmts = flatten_stmts(body);
  if (already_lifted(stmts, roots, program, what)) return body;
  bool hand_scope = is_auto_scope(body);   // a hand-written `with pl.scope():` body: lift out of it
  if (hand_scope) stmts = flatten_stmts(flatten_stmts(body)[0]->as<RuntimeScopeStmt>()->body);
  EscapeSplit split = SplitEscapingAllocations(stmts, roots, program, what);
  if (!split.scope_ok) return body;
  if (split.lifted.empty()) return wrap(body, span);
  std::vector<StmtPtr> out = split.lifted;
  out.push_back(RuntimeScopeStmt::make(RuntimeScopeMode::Auto, make_seq(split.rest, body->span), body->span));
  return make_seq(out, body->span);
}

class ScopeMaterializer : public IRMutator {
 public:
  ScopeMaterializer(const BufferRoots& roots, const Program& program) : roots_(roots), program_(program) {}
  // Only loop / branch bodies change: other statements (and their expressions) are kept, not walked.
  StmtPtr mutate_(const AssignStmt*, const StmtPtr& self) override { return self; }
  StmtPtr mutate_(const EvalStmt*, const StmtPtr& self) override { return self; }

  StmtPtr mutate_(const RuntimeScopeStmt* op, const StmtPtr& self) override {
    if (op->mode == RuntimeScopeMode::Manual) ++manual_depth_;
    StmtPtr out = IRMutator::mutate_(op, self);
    if (op->mode == RuntimeScopeMode::Manual) --manual_depth_;
    return out;
  }

  StmtPtr mutate_(const ForStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);
    if (manual_depth_ > 0) return s;
    auto* f = s->as<ForStmt>();
    StmtPtr body = wrap_lifting(f->body, f->span, roots_, program_, "loop");
    if (body == f->body) return s;
    return ForStmt::make(f->loop_var, f->start, f->stop, f->step, f->iter_args, body, f->return_vars, f->for_kind,
                         f->attrs, f->span)
        ->with_typed_fields_of(*f);
  }

  StmtPtr mutate_(const IfStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);
    if (manual_depth_ > 0) return s;
    auto* i = s->as<IfStmt>();
    StmtPtr then_body = wrap_lifting(i->then_body, i->span, roots_, program_, "branch");
    StmtPtr else_body = i->else_body ? wrap_lifting(i->else_body, i->span, roots_, program_, "branch") : nullptr;
    if (then_body == i->then_body && else_body == i->else_body) return s;
    return IfStmt::make(i->cond, then_body, else_body, i->return_vars, i->span);
  }

 private:
  const BufferRoots& roots_;
  const Program& program_;
  int manual_depth_ = 0;
};

FunctionPtr materialize(const ProgramPtr& program, const FunctionPtr& fn) {
  BufferRoots roots(*program, *fn, /*views_are_roots=*/false);
  ScopeMaterializer m(roots, *program);
  FunctionPtr f = m.mutate_function(fn);
  std::vector<StmtPtr> stmts = flatten_stmts(f->body);
  StmtPtr ret;
  if (!stmts.empty() && stmts.back()->is<ReturnStmt>()) {
    ret = stmts.back();
    stmts.pop_back();
  }
  StmtPtr body = f->body;
  if (stmts.size() != 1 || !is_auto_scope(stmts[0])) {
    std::vector<StmtPtr> seq{RuntimeScopeStmt::make(RuntimeScopeMode::Auto, make_seq(stmts, f->span), f->span)};
    if (ret) seq.push_back(ret);
    body = make_seq(seq, f->span);
  }
  // §4: the scopes are placed now, so the output says so; it re-parses as is and a second run is a no-op.
  Attrs attrs = f->attrs;
  attrs["auto_scope"] = false;
  return Function::make(f->name, f->type, f->params, f->param_directions, f->return_types, body, f->level, f->role,
                        attrs, f->span);
}

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (fn->type != FunctionType::Orchestration) continue;
    // @pl.function(auto_scope=False) (spec anchor_features §4): the author places the scopes.
    if (const bool* auto_scope = attr_get<bool>(fn->attrs, "auto_scope"); auto_scope && !*auto_scope) continue;
    FunctionPtr nf = materialize(program, fn);
    if (nf != fn) out = out->with_function(nf);
  }
  return out;
}

}  // namespace

Pass MaterializeRuntimeScopes() {
  return Pass{"MaterializeRuntimeScopes", {}, {IRProperty::RuntimeScopesMaterialized}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
