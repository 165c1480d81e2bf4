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
// Why: the direction of an argument is a property of the call site (a no_dep override is
//   per call), so codegen reads `add_input/add_output/add_inout/add_no_dep/add_scalar`
//   straight off the call instead of looking the callee up. The promotions make our C++ match
//   the reference's; our runtime orders write-after-write either way.
#include <unordered_map>

#include "buffer_roots.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/return_lineage.h"

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

using DirectionMap = std::unordered_map<const Node*, std::vector<ArgDirection>>;   // (looked up, never iterated)

// Walks one function's blocks in order and decides each call's directions (with promotions).
class PromotionWalker {
 public:
  PromotionWalker(const Program& program, const Function& fn)
      : program_(program), fn_(fn), roots_(program, fn, /*views_are_roots=*/true) {
    for (size_t i = 0; i < fn.params.size(); ++i) {
      if (fn.param_directions[i] == ParamDirection::InOut) inout_params_.insert(fn.params[i].get());
    }
  }

  DirectionMap run() {
    out_.reserve(CountVarDefs(fn_.body));   // about one call per defined Var: no rehash on long bodies
    RootSet seen, footprint;
    walk(fn_.body, seen, footprint);
    return std::move(out_);
  }

 private:
  // Statements of `s` in order, each a writer unit of the current block.
  void walk(const StmtPtr& s, RootSet& seen, RootSet& footprint) {
    if (!s) return;
    if (auto* seq = s->as<SeqStmts>()) {
      for (auto& c : seq->stmts) walk(c, seen, footprint);
      return;
    }
    if (auto* rs = s->as<RuntimeScopeStmt>()) return walk(rs->body, seen, footprint);   // transparent
    if (auto* sc = s->as<ScopeStmt>()) return walk(sc->body, seen, footprint);
    RootSet unit;
    if (auto* f = s->as<ForStmt>()) {
      loops_.push_back(f->for_kind == ForKind::Sequential);
      RootSet body_seen = seen;
      walk(f->body, body_seen, unit);
      loops_.pop_back();
    } else if (auto* i = s->as<IfStmt>()) {
      RootSet then_seen = seen, else_seen = seen;
      walk(i->then_body, then_seen, unit);
      walk(i->else_body, else_seen, unit);
    } else {
      collector_.calls.clear();   // (one collector for every statement: no list allocated per statement)
      collector_.visit_stmt(s);
      for (const Node* c : collector_.calls) decide(c, seen, unit);
    }
    seen.insert(unit.begin(), unit.end());
    footprint.insert(unit.begin(), unit.end());
  }

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

  bool promote(const RootSet& roots, const RootSet& seen) const {
    for (bool sequential : loops_) {
      if (sequential) return true;                                                // R-seq
    }
    for (const Var* r : roots) {
      if (seen.count(r) || inout_params_.count(r)) return true;                // R-prior, R-enclosing
    }
    return false;
  }

  void decide(const Node* node, const RootSet& seen, RootSet& unit) {
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
    std::vector<ArgDirection> dirs =
        all_set(*current, args->size()) ? *current : derive(program_, *callee, *args, *current, *span);
    for (size_t i = 0; i < dirs.size(); ++i) {
      const RootSet& r = roots_.of((*args)[i]);
      if (dirs[i] == ArgDirection::Out && !all_set(*current, args->size()) && promote(r, seen)) {
        dirs[i] = ArgDirection::InOut;
      }
      if (dirs[i] == ArgDirection::Out || dirs[i] == ArgDirection::InOut) unit.insert(r.begin(), r.end());
    }
    out_[node] = std::move(dirs);
  }

  const Program& program_;
  const Function& fn_;
  BufferRoots roots_;
  RootSet inout_params_;
  std::vector<bool> loops_;                            // enclosing loops, outermost first: sequential?
  CallCollector collector_;
  DirectionMap out_;
};

class DirectionRewriter : public IRMutator {
 public:
  explicit DirectionRewriter(const DirectionMap& dirs) : dirs_(dirs) {}

  ExprPtr mutate_(const Call* op, const ExprPtr& self) override {
    ExprPtr e = IRMutator::mutate_(op, self);
    auto* c = e->as<Call>();
    if (c->is_op) return e;
    auto it = dirs_.find(op);
    PYPTO_CHECK(it != dirs_.end(), "DeriveCallDirections: call to '" << c->callee << "' was not analysed");
    if (it->second == c->arg_directions) return e;
    PYPTO_CHECK(it->second.size() == c->args.size(), "DeriveCallDirections: call to '" << c->callee << "' got "
                                                         << it->second.size() << " directions for " << c->args.size() << " args");
    auto out = std::make_shared<Call>(*c);   // one copy, its dump marks and edges kept as they are
    out->arg_directions = it->second;
    return out;
  }

  ExprPtr mutate_(const Submit* op, const ExprPtr& self) override {
    ExprPtr e = IRMutator::mutate_(op, self);
    auto* s = e->as<Submit>();
    auto it = dirs_.find(op);
    PYPTO_CHECK(it != dirs_.end(), "DeriveCallDirections: submit of '" << s->callee << "' was not analysed");
    if (it->second == s->arg_directions) return e;
    auto* tt = s->type->as<TupleType>();
    PYPTO_CHECK(tt && !tt->elements.empty(), "Submit to '" << s->callee << "' is not tuple-typed");
    std::vector<TypePtr> rets(tt->elements.begin(), tt->elements.end() - 1);   // drop the TaskId
    ExprPtr out = Submit::make(s->callee, s->args, std::move(rets), s->deps, s->core_num, s->sync_start,
                               s->allow_early_resolve, s->timing_slot, s->predicate, it->second, s->span);
    if (!s->dump_vars.empty()) out = with_dump_vars(out, s->dump_vars);
    return s->compiler_manual_dep_edges.empty() ? out : with_compiler_dep_edges(out, s->compiler_manual_dep_edges);
  }

 private:
  const DirectionMap& dirs_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    DirectionMap dirs = PromotionWalker(*program, *fn).run();
    if (dirs.empty()) continue;
    DirectionRewriter rw(dirs);
    FunctionPtr nf = rw.mutate_function(fn);
    if (nf != fn) out = out->with_function(nf);
  }
  return out;
}

}  // namespace

Pass DeriveCallDirections() {
  return Pass{"DeriveCallDirections", {}, {IRProperty::CallDirectionsDerived}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
