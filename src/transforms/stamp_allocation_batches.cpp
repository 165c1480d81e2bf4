// StampAllocationBatches
//
// What: stamps Function::batched_creates on every Orchestration function: the tensor.create
//   results the L2 generator allocates in one alloc_tensors call at the entry of their C++ block
//   (the function body, a loop or branch body, a runtime scope's body; a MANUAL scope's before
//   its PTO2_SCOPE). A create is batched when every Var its shape names is defined before the
//   block starts (a parameter, a dynamic dimension a tensor parameter declares, a loop variable
//   or iter_arg of an enclosing loop, or a value assigned earlier) and the shape is built from
//   those, integer literals and arithmetic only.
//
//     @pl.function(type=pl.FunctionType.Orchestration)   @pl.function(..., batched_creates=["c"])
//     def main(self, a, n, out):                    ==>  def main(self, a, n, out):
//         c = pl.create_tensor([16, 16], ...)               (the same body: c is batched, d is
//         m = pl.tensor.read(a, [0, 0])                      allocated where it stands, its
//         d = pl.create_tensor([m, 16], ...)                 shape reads m)
//
// Input invariants: none. Output invariants: AllocationBatchesStamped; nothing else changes.
// Why: the generator prints the batches from this stamp instead of deciding, while it prints,
//   which shapes are already computable.
#include <unordered_set>

#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/flat_stmts.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

const Call* as_create(const StmtPtr& s) {
  auto* a = s->as<AssignStmt>();
  auto* c = a ? a->value->as<Call>() : nullptr;
  return c && c->is_op && c->callee == "tensor.create" ? c : nullptr;
}

// The Vars the shapes of a body's tensor.create calls name: the only ones whose definition
// the batcher needs to track (a handful, where a long body defines 100,000 Vars).
class ShapeVars : public IRVisitor {
 public:
  ShapeVars() { statements_only_ = true; }   // creates are statements
  std::unordered_set<const Var*> vars;
  void visit_(const AssignStmt* op) override {
    if (const Call* c = op->value->as<Call>(); c && c->is_op && c->callee == "tensor.create" && !c->args.empty()) {
      if (auto* shape = c->args[0]->as<MakeTuple>()) {
        for (auto& d : shape->elements) collect(d);
      }
    }
  }

 private:
  void collect(const ExprPtr& e) {
    if (const Var* v = as_var(e)) {
      vars.insert(v);
    } else if (auto* b = e->as<BinaryExpr>()) {
      collect(b->a);
      collect(b->b);
    } else if (auto* u = e->as<UnaryExpr>()) {
      collect(u->a);
    } else if (auto* k = e->as<Cast>()) {
      collect(k->value);
    }
  }
};

class Batcher {
 public:
  explicit Batcher(const Function& fn) {
    ShapeVars shape_vars;
    shape_vars.visit_stmt(fn.body);
    tracked_ = std::move(shape_vars.vars);
    for (size_t i = 0; i < fn.params.size(); ++i) {
      define(fn.params[i].get());
      // The dynamic dimensions a tensor parameter declares (read from its shape at entry).
      if (auto* t = fn.params[i]->type->as<TensorType>()) {
        for (auto& d : t->shape) {
          if (const Var* v = as_var(d)) define(v);
        }
      }
    }
    block(fn.body);
  }
  std::vector<VarPtr> batched() const { return batched_; }

 private:
  // Whether `e` (a shape dimension) is computable at the block entry.
  bool ready(const ExprPtr& e) const {
    if (const Var* v = as_var(e)) return defined_.count(v) > 0;
    if (auto* b = e->as<BinaryExpr>()) return ready(b->a) && ready(b->b);
    if (auto* u = e->as<UnaryExpr>()) return ready(u->a);
    if (auto* k = e->as<Cast>()) return ready(k->value);
    return e->is<ConstInt>();
  }

  // The creates at the top level of `stmts` whose shapes are ready, not yet batched.
  void batch(const std::vector<StmtPtr>& stmts) {
    for_each_prefetched(stmts, [&](const StmtPtr& s) {
      const Call* c = as_create(s);
      const VarPtr& v = c ? s->as<AssignStmt>()->var : nullptr;
      if (!c || done_.count(v.get())) return;
      auto* shape = c->args.empty() ? nullptr : c->args[0]->as<MakeTuple>();
      if (!shape) return;
      bool ok = true;
      for (auto& d : shape->elements) ok = ok && ready(d);
      if (!ok) return;
      done_.insert(v.get());
      batched_.push_back(v);
    });
  }

  void block(const StmtPtr& body) {
    const FlatStmts flat(body);   // in place: no copy of a long body
    batch(flat.stmts());
    for_each_prefetched(flat.stmts(), [&](const StmtPtr& s) { stmt(s); });
  }

  // `v` is defined from here on (recorded only when a create's shape names it).
  void define(const Var* v) {
    if (tracked_.count(v)) defined_.insert(v);
  }

  void stmt(const StmtPtr& s) {
    if (auto* a = s->as<AssignStmt>()) {
      define(a->var.get());
    } else if (auto* f = s->as<ForStmt>()) {
      define(f->loop_var.get());
      for (auto& ia : f->iter_args) define(ia.get());
      block(f->body);
      for (auto& rv : f->return_vars) define(rv.get());
    } else if (auto* i = s->as<IfStmt>()) {
      block(i->then_body);
      if (i->else_body) block(i->else_body);
      for (auto& rv : i->return_vars) define(rv.get());
    } else if (auto* r = s->as<RuntimeScopeStmt>()) {
      if (r->mode == RuntimeScopeMode::Manual) batch(FlatStmts(r->body).stmts());   // before its PTO2_SCOPE
      block(r->body);
    } else if (auto* sc = s->as<ScopeStmt>()) {
      block(sc->body);
    }
  }

  std::unordered_set<const Var*> tracked_;   // ShapeVars
  std::unordered_set<const Var*> defined_;   // the tracked Vars defined so far
  std::unordered_set<const Var*> done_;
  std::vector<VarPtr> batched_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    std::vector<VarPtr> b = BatchedCreatesOf(*fn);
    if (b != fn->batched_creates) out = out->with_function(fn->with_batched_creates(std::move(b)));
  }
  return out;
}

}  // namespace

std::vector<VarPtr> BatchedCreatesOf(const Function& fn) {
  if (fn.type != FunctionType::Orchestration || !fn.body) return {};
  return Batcher(fn).batched();
}

Pass StampAllocationBatches() {
  return Pass{"StampAllocationBatches", {}, {IRProperty::AllocationBatchesStamped}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
