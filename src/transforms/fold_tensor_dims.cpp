// FoldTensorDims
//
// What: in Orchestration functions, replaces `tensor.dim(t, k)` by the extent axis k of t's type
//   declares, when that extent is known at the function's entry:
//     - a literal extent -> that constant;
//     - a dynamic-dim symbol one of the function's tensor parameters declares (a bare Var in a
//       parameter's shape, read from the argument at entry) -> that Var.
//       def main(self, x: pl.Tensor[[M, 16], pl.FP32], ...):        def main(self, x: pl.Tensor[[M, 16], pl.FP32], ...):
//           n = tensor.dim(x, 0)                              ==>        n = M
//           c = tensor.dim(x, -1)                                        c = 16
//   Any other extent (an expression, a symbol no tensor parameter declares, e.g. the shape of a
//   slice of run-time size) is left as tensor.dim: the generator reads the run-time Tensor's own
//   extent. Kernel functions are left alone (the kernel backend reads its tensor arguments).
// Input invariants: kernel scopes are outlined (an Orchestration body holds orchestration code
//   only).
// Output invariants: TensorDimsFolded (running the pass again changes nothing); the program
//   means the same.
// Why: the DSL parser already folds pl.tensor.dim in orchestration code onto the declared
//   extent; IR built in C++ or with the Python IR builder reaches the pipeline unfolded. Folding
//   here gives the L2 and HOST generators one form to print, so neither answers "which
//   argument is this tensor?" from C++ names while it prints.
#include <unordered_set>

#include "pypto/ir/const_integer.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

class DimFolder : public IRMutator {
 public:
  explicit DimFolder(const Function& fn) {
    for (const VarPtr& v : TensorParamDimSymbols(fn)) entry_dims_.insert(v.get());
  }

  ExprPtr mutate_(const Call* op, const ExprPtr& self) override {
    ExprPtr r = IRMutator::mutate_(op, self);
    auto* c = r->as<Call>();
    if (!c || !c->is_op || c->callee != "tensor.dim" || c->args.size() != 2) return r;
    auto* tt = c->args[0]->type->as<TensorType>();
    const auto axis = ConstIntegerValue(c->args[1]);   // a literal, or `1 - 1`
    if (!tt || !axis) return r;   // the op's type check refuses both; nothing to fold
    const int64_t rank = static_cast<int64_t>(tt->shape.size());
    const int64_t k = *axis < 0 ? *axis + rank : *axis;
    if (k < 0 || k >= rank) return r;
    const ExprPtr& extent = tt->shape[static_cast<size_t>(k)];
    if (extent->is<ConstInt>()) return extent;
    if (const Var* v = as_var(extent); v && entry_dims_.count(v)) return extent;
    return r;
  }

 private:
  std::unordered_set<const Var*> entry_dims_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (fn->type != FunctionType::Orchestration) continue;
    DimFolder folder(*fn);
    FunctionPtr nf = folder.mutate_function(fn);
    if (nf != fn) out = out->with_function(nf);
  }
  return out;
}

}  // namespace

std::vector<VarPtr> TensorParamDimSymbols(const Function& fn) {
  std::vector<VarPtr> out;
  std::unordered_set<const Var*> seen;
  for (const VarPtr& p : fn.params) {
    auto* tt = p->type->as<TensorType>();
    if (!tt) continue;
    for (const ExprPtr& d : tt->shape) {   // as the entry prologue reads them (entry_prologue.cpp)
      VarPtr sym = as_var_ptr(d);
      if (sym && seen.insert(sym.get()).second) out.push_back(std::move(sym));
    }
  }
  return out;
}

Pass FoldTensorDims() {
  return Pass{"FoldTensorDims",
              {IRProperty::ClusterScopesOutlined, IRProperty::IncoreScopesOutlined},
              {IRProperty::TensorDimsFolded},
              Run,
              /*invalidated=*/{}};  // a dim read becomes a Var or constant: no other property changes
}

}  // namespace pypto::transforms
