// StampArrayBackings
//
// What: stamps Function::array_backings on every Orchestration function: for each pl.Array SSA
//   version stored in another Var's C array (spec anchor_features §13: arrays are updated in
//   place), that Var (transforms::ArrayBacking decides). A version absent from the stamp is its
//   own storage: an array.create result, or a phi if-result whose branches yield arrays of
//   different storage (the generator declares `T r[N];` and each branch copies into it).
//
//     w = pl.array.create(4, pl.FP32)                          @pl.function(...,
//     w_1 = pl.array.update_element(w, 0, 1.0)       ==>           array_backings={"w_1": "w", "r": "w"})
//     if c: r = pl.yield_(w_1)  else: r = pl.yield_(w)         (the same body; r is the pre-if array)
//
// Input invariants: none (run after MaterializeRuntimeScopes: a branch's yield may sit at the end
//   of a runtime scope). Output invariants: ArrayBackingsStamped; nothing else changes.
// Why: the L2 generator prints an array if-result as the pre-if array or a phi array from this
//   stamp instead of analysing the function while it prints.
#include <unordered_map>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/array_backing.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// The array Vars of a function in program order (parameters, then definitions: assignments,
// a loop's iter_args before its body and its results after, an if's results after its branches).
class ArrayDefs {
 public:
  explicit ArrayDefs(const Function& fn) {
    for (auto& p : fn.params) add(p);
    walk(fn.body);
  }
  const std::vector<VarPtr>& order() const { return order_; }
  const VarPtr& ptr(const Var* v) const {
    auto it = by_ptr_.find(v);
    PYPTO_CHECK(it != by_ptr_.end(), "StampArrayBackings: array '" << v->name << "' is not defined in the function");
    return it->second;
  }

 private:
  void add(const VarPtr& v) {
    if (!v || !v->type->is<ArrayType>() || by_ptr_.count(v.get())) return;
    by_ptr_.emplace(v.get(), v);
    order_.push_back(v);
  }
  void walk(const StmtPtr& s) {
    if (!s) return;
    if (auto* q = s->as<SeqStmts>()) {
      for_each_prefetched(q->stmts, [&](const StmtPtr& c) { walk(c); });
    } else if (auto* a = s->as<AssignStmt>()) {
      add(a->var);
    } else if (auto* f = s->as<ForStmt>()) {
      for (auto& ia : f->iter_args) add(ia);
      walk(f->body);
      for (auto& rv : f->return_vars) add(rv);
    } else if (auto* i = s->as<IfStmt>()) {
      walk(i->then_body);
      walk(i->else_body);
      for (auto& rv : i->return_vars) add(rv);
    } else if (auto* r = s->as<RuntimeScopeStmt>()) {
      walk(r->body);
    } else if (auto* sc = s->as<ScopeStmt>()) {
      walk(sc->body);
    }
  }
  std::unordered_map<const Var*, VarPtr> by_ptr_;
  std::vector<VarPtr> order_;
};

bool same(const std::vector<ArrayBackingEntry>& a, const std::vector<ArrayBackingEntry>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].version != b[i].version || a[i].backing != b[i].backing) return false;
  }
  return true;
}

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    std::vector<ArrayBackingEntry> b = ArrayBackingsOf(*fn);
    if (!same(b, fn->array_backings)) out = out->with_function(fn->with_array_backings(std::move(b)));
  }
  return out;
}

}  // namespace

std::vector<ArrayBackingEntry> ArrayBackingsOf(const Function& fn) {
  if (fn.type != FunctionType::Orchestration || !fn.body) return {};
  ArrayDefs defs(fn);
  if (defs.order().empty()) return {};
  ArrayBacking analysis(fn);
  std::vector<ArrayBackingEntry> out;
  for (const VarPtr& v : defs.order()) {
    const Var* b = analysis.Backing(v.get());
    if (b != v.get()) out.push_back(ArrayBackingEntry{v, defs.ptr(b)});
  }
  return out;
}

bool SameArrayBackings(const std::vector<ArrayBackingEntry>& a, const std::vector<ArrayBackingEntry>& b) {
  return same(a, b);
}

Pass StampArrayBackings() {
  return Pass{"StampArrayBackings", {}, {IRProperty::ArrayBackingsStamped}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
