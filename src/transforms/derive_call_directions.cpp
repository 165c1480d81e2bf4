// DeriveCallDirections
//
// What: fills Call::arg_directions / Submit::arg_directions of every call to a program
//   function from the callee's declared parameters: a tensor parameter declared In / Out /
//   InOut gives ArgDirection In / Out / InOut, a scalar parameter gives Scalar. An entry the
//   parser already set to NoDep (`pl.no_dep(x)`, `no_dep_args=`) is kept. Op calls are left
//   alone; a call whose directions are all set already is left alone (idempotent).
//   Out -> InOut promotion (anchor §16 B), by buffer root (buffer_roots.h, views are roots):
//     R-seq        the call sits in a sequential loop (`pl.range`), whatever the root (as the
//                  spec words it: a buffer created inside the loop body is promoted too);
//     R-prior      an earlier writer unit of the same block (or of an enclosing block, before
//                  this body) wrote the same root;
//     R-enclosing  the root is a parameter of the enclosing function declared InOut.
//   Writer units: each statement of a block; a for / if is one unit whose footprint is every
//   root written through Out / InOut arguments inside it. A loop or branch body starts from a
//   copy of the roots written before it; runtime scopes and remaining pl.at scopes are
//   transparent.
//       for i in pl.parallel(4): b = self.k(a, b)     # Out   (first writer of b)
//       for i in pl.parallel(4): b = self.k(a, b)     # InOut (b written by the first loop)
// Input invariants: callees exist and each call has one argument per callee parameter
//   (the parser checks both).
// Output invariants: CallDirectionsDerived — every function Call/Submit has exactly one
//   direction per argument and none is Unset.
// Cost: the buffer-root analysis, then one walk that decides each statement's calls and rebuilds
//   the statement right away, only when a direction changes (unchanged statements are shared).
// Why: the direction of an argument is a property of the call site (a no_dep override is
//   per call), so codegen reads `add_input/add_output/add_inout/add_no_dep/add_scalar`
//   straight off the call instead of looking the callee up. The promotions make our C++ match
//   the reference's; our runtime orders write-after-write either way.
#include <utility>
#include <vector>

#include "buffer_roots.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/node_pool.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

std::vector<ArgDirection> derive(const Program& program, const std::string& callee, const std::vector<ExprPtr>& args,
                                 const std::vector<ArgDirection>& current, const Span& span) {
  FunctionPtr f = program.get(callee);
  PYPTO_CHECK(f, "DeriveCallDirections: call to unknown function '" << callee << "'");
  PYPTO_CHECK(f->params.size() >= args.size(), "DeriveCallDirections: call to '" << callee << "' has " << args.size()
                                                  << " args, the function has " << f->params.size() << " params");
  std::vector<ArgDirection> dirs(args.size(), ArgDirection::Unset);
  for (size_t i = 0; i < args.size(); ++i) {
    if (i < current.size() && current[i] == ArgDirection::NoDep) {
      dirs[i] = ArgDirection::NoDep;
      continue;
    }
    if (!f->params[i]->type->is<TensorType>()) {
      dirs[i] = ArgDirection::Scalar;
      continue;
    }
    switch (f->param_directions[i]) {
      case ParamDirection::In: dirs[i] = ArgDirection::In; break;
      case ParamDirection::Out: dirs[i] = ArgDirection::Out; break;
      case ParamDirection::InOut: dirs[i] = ArgDirection::InOut; break;
    }
  }
  return dirs;
}

bool all_set(const std::vector<ArgDirection>& dirs, size_t n) {
  if (dirs.size() != n) return false;
  for (ArgDirection d : dirs) {
    if (d == ArgDirection::Unset) return false;
  }
  return true;
}

// One walk per function that decides each call's directions and rewrites the call at once:
// the promotion rules read only the roots written before a statement, so a statement can be
// decided and rebuilt before the next is read (its nodes are still in cache, and no map of
// every call's directions is kept). A statement none of whose calls changes is returned as it
// is (shared, its expressions not walked again); a loop, branch or block is rebuilt only when
// a statement inside it changed.
class DirectionDeriver : public IRMutator {
 public:
  DirectionDeriver(const Program& program, const Function& fn)
      : program_(program), roots_(program, fn, /*views_are_roots=*/true) {
    for (size_t i = 0; i < fn.params.size(); ++i) {
      if (fn.param_directions[i] == ParamDirection::InOut) inout_params_.insert(fn.params[i].get());
    }
    seen_ = &top_seen_;
    footprint_ = &top_footprint_;
  }

  // Statements of a block in order, each a writer unit of the current block; blocks, runtime
  // scopes and pl.at scopes are transparent.
  StmtPtr mutate_stmt(const StmtPtr& s) override {
    if (!s || rewriting_ || s->is<SeqStmts>() || s->is<RuntimeScopeStmt>() || s->is<ScopeStmt>() || s->is<ForStmt>() ||
        s->is<IfStmt>()) {
      return IRMutator::mutate_stmt(s);
    }
    return mutate_writer_unit(s);
  }

  // A loop is one writer unit: its body starts from a copy of the roots written before it.
  StmtPtr mutate_(const ForStmt* op, const StmtPtr& self) override {
    RootSet unit, body_seen = *seen_;
    RootSet* outer_seen = std::exchange(seen_, &body_seen);
    RootSet* outer_footprint = std::exchange(footprint_, &unit);
    loops_.push_back(op->for_kind == ForKind::Sequential);
    StmtPtr out = IRMutator::mutate_(op, self);
    loops_.pop_back();
    seen_ = outer_seen;
    footprint_ = outer_footprint;
    close_unit(unit);
    return out;
  }

  // A branch is one writer unit: each side starts from a copy of the roots written before it.
  StmtPtr mutate_(const IfStmt* op, const StmtPtr& self) override {
    ExprPtr cond = mutate_expr(op->cond);
    RootSet unit, then_seen = *seen_, else_seen = *seen_;
    RootSet* outer_seen = std::exchange(seen_, &then_seen);
    RootSet* outer_footprint = std::exchange(footprint_, &unit);
    StmtPtr then_body = mutate_stmt(op->then_body);
    seen_ = &else_seen;
    StmtPtr else_body = op->else_body ? mutate_stmt(op->else_body) : nullptr;
    seen_ = outer_seen;
    footprint_ = outer_footprint;
    close_unit(unit);
    bool changed = cond != op->cond || then_body != op->then_body || else_body != op->else_body;
    std::vector<VarPtr> rvs;
    for (auto& rv : op->return_vars) {
      rvs.push_back(mutate_def(rv));
      changed |= rvs.back() != rv;
    }
    if (!changed) return self;
    return IfStmt::make(std::move(cond), then_body ? then_body : make_seq({}, op->span), std::move(else_body),
                        std::move(rvs), op->span);
  }

  ExprPtr mutate_(const Call* op, const ExprPtr& self) override {
    ExprPtr e = IRMutator::mutate_(op, self);
    auto* c = e->as<Call>();
    if (c->is_op) return e;
    const std::vector<ArgDirection>* dirs = decided(op);
    PYPTO_CHECK(dirs, "DeriveCallDirections: call to '" << c->callee << "' was not analysed");
    if (*dirs == c->arg_directions) return e;
    return with_directions(*c, *dirs);
  }

  ExprPtr mutate_(const Submit* op, const ExprPtr& self) override {
    ExprPtr e = IRMutator::mutate_(op, self);
    auto* s = e->as<Submit>();
    const std::vector<ArgDirection>* dirs = decided(op);
    PYPTO_CHECK(dirs, "DeriveCallDirections: submit of '" << s->callee << "' was not analysed");
    if (*dirs == s->arg_directions) return e;
    auto* tt = s->type->as<TupleType>();
    PYPTO_CHECK(tt && !tt->elements.empty(), "Submit to '" << s->callee << "' is not tuple-typed");
    std::vector<TypePtr> rets(tt->elements.begin(), tt->elements.end() - 1);   // drop the TaskId
    ExprPtr out = Submit::make(s->callee, s->args, std::move(rets), s->deps, s->core_num, s->sync_start,
                               s->allow_early_resolve, s->timing_slot, s->predicate, *dirs, s->span);
    if (!s->dump_vars.empty()) out = with_dump_vars(out, s->dump_vars);
    return s->compiler_manual_dep_edges.empty() ? out : with_compiler_dep_edges(out, s->compiler_manual_dep_edges);
  }

 private:
  struct CallCollector : IRVisitor {
    std::vector<const Node*> calls;
    // A type's shape holds no call: skip the type walk at every Var use.
    void visit_(const Var*) override {}
    void visit_(const IterArg*) override {}
    void visit_(const Call* op) override {
      IRVisitor::visit_(op);
      if (!op->is_op) calls.push_back(op);
    }
    void visit_(const Submit* op) override {
      IRVisitor::visit_(op);
      calls.push_back(op);
    }
  };

  struct Decision {
    const Node* call;
    std::vector<ArgDirection> dirs;
  };

  // Decides the calls of one plain statement (against the roots written before it), then
  // rebuilds the statement only if a call's directions change.
  StmtPtr mutate_writer_unit(const StmtPtr& s) {
    collector_.calls.clear();   // (one collector and one decision list for every statement)
    collector_.visit_stmt(s);
    decisions_.clear();
    RootSet unit;
    bool changed = false;
    for (const Node* c : collector_.calls) changed |= decide(c, unit);
    close_unit(unit);
    if (!changed) return s;
    if (StmtPtr direct = rebuild_single_call(s)) return direct;
    rewriting_ = true;
    StmtPtr out = IRMutator::mutate_stmt(s);
    rewriting_ = false;
    decisions_.clear();
    return out;
  }

  // `v = f(...)` or `f(...)` whose call is the statement's only one: the new call and statement
  // built directly, as the general rewrite would build them, without walking the arguments
  // again (the common orchestration statement). Null for any other statement.
  StmtPtr rebuild_single_call(const StmtPtr& s) {
    if (decisions_.size() != 1) return nullptr;
    auto* assign = s->as<AssignStmt>();
    auto* eval = s->as<EvalStmt>();
    const ExprPtr& value = assign ? assign->value : eval ? eval->expr : nullptr;
    if (!value || value.get() != decisions_[0].call || !value->is<Call>()) return nullptr;
    // (the general rewrite re-types a target whose type differs from its value's)
    if (assign && assign->var->type != value->type && !structural_equal(assign->var->type, value->type)) return nullptr;
    ExprPtr call = with_directions(*value->as<Call>(), std::move(decisions_[0].dirs));
    decisions_.clear();
    if (assign) return AssignStmt::make(assign->var, std::move(call), assign->span);
    return EvalStmt::make(std::move(call), eval->span);
  }

  // A copy of `c` with `dirs` (its dump marks and edges kept as they are).
  static ExprPtr with_directions(const Call& c, std::vector<ArgDirection> dirs) {
    PYPTO_CHECK(dirs.size() == c.args.size(), "DeriveCallDirections: call to '" << c.callee << "' got " << dirs.size()
                                                 << " directions for " << c.args.size() << " args");
    auto out = make_node<Call>(c);
    out->arg_directions = std::move(dirs);
    return out;
  }

  // The directions decided for `call` in the current statement (null: not one of its calls).
  // The last decision wins, as a call node shared within a statement is decided twice.
  const std::vector<ArgDirection>* decided(const Node* call) const {
    for (auto it = decisions_.rbegin(); it != decisions_.rend(); ++it) {
      if (it->call == call) return &it->dirs;
    }
    return nullptr;
  }

  void close_unit(const RootSet& unit) {
    seen_->insert(unit.begin(), unit.end());
    footprint_->insert(unit.begin(), unit.end());
  }

  bool promote(const RootSet& roots) const {
    for (bool sequential : loops_) {
      if (sequential) return true;                                                // R-seq
    }
    for (const Var* r : roots) {
      if (seen_->count(r) || inout_params_.count(r)) return true;              // R-prior, R-enclosing
    }
    return false;
  }

  // Records `node`'s directions and adds the roots it writes to `unit`; true when they differ
  // from the call's current ones.
  bool decide(const Node* node, RootSet& unit) {
    const std::string* callee;
    const std::vector<ExprPtr>* args;
    const std::vector<ArgDirection>* current;
    const Span* span;   // (not a copy: a Span owns two strings)
    if (auto* c = node->as<Call>()) {
      callee = &c->callee, args = &c->args, current = &c->arg_directions, span = &c->span;
    } else {
      auto* s = node->as<Submit>();
      callee = &s->callee, args = &s->args, current = &s->arg_directions, span = &s->span;
    }
    const bool given = all_set(*current, args->size());
    std::vector<ArgDirection> dirs = given ? *current : derive(program_, *callee, *args, *current, *span);
    for (size_t i = 0; i < dirs.size(); ++i) {
      const RootSet& r = roots_.of((*args)[i]);
      if (dirs[i] == ArgDirection::Out && !given && promote(r)) dirs[i] = ArgDirection::InOut;
      if (dirs[i] == ArgDirection::Out || dirs[i] == ArgDirection::InOut) unit.insert(r.begin(), r.end());
    }
    const bool changed = dirs != *current;
    decisions_.push_back({node, std::move(dirs)});
    return changed;
  }

  const Program& program_;
  BufferRoots roots_;
  RootSet inout_params_;
  RootSet top_seen_, top_footprint_;
  RootSet* seen_;                                      // roots written before this statement
  RootSet* footprint_;                                 // roots written by the enclosing unit
  std::vector<bool> loops_;                            // enclosing loops, outermost first: sequential?
  bool rewriting_ = false;                             // inside a changed statement: plain rewrite
  CallCollector collector_;
  std::vector<Decision> decisions_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    FunctionPtr nf = DirectionDeriver(*program, *fn).mutate_function(fn);
    if (nf != fn) out = out->with_function(nf);
  }
  return out;
}

}  // namespace

Pass DeriveCallDirections() {
  return Pass{"DeriveCallDirections", {}, {IRProperty::CallDirectionsDerived}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
