// VerifyKernelOutParamsWritten (part of VerifyKernelFunction; verify_program.h): a kernel
// parameter declared pl.Out that no store of the body writes is refused at the parameter.
//
//   @pl.function(type=pl.FunctionType.InCore)
//   def k(self, a: pl.Tensor[[16], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]]):
//       t = pl.add(pl.load(a, [0], [16]), 1.0)        # the pl.store into c was forgotten
//       return c                                       # error at 'c: pl.Out[...]'
//
// "Written" is what UpgradeWrittenParamDirections counts: the destination of `tile.store`,
// `tile.mscatter`, `tensor.assemble` or `tensor.write`, followed through assignments, loop
// carries, yields, if-results and views (BufferRoots), anywhere in the body, in any branch.
// A kernel a Group calls sees the Group's whole signature and writes only its part: the Group's
// pl.Out parameters are checked instead (one of its kernels writes each, examples/group_mixed.py).
// Why: the runtime hands the kernel the caller's buffer for a pl.Out and orders its readers
// after the task; a kernel that never writes it leaves the caller's array as it was (zeros, or
// whatever an omitted pl.Out's allocation held) and the run reports success: a wrong result,
// with no error. No example, spec program or golden test has such a kernel or Group.
#include <string>
#include <vector>

#include "buffer_roots.h"
#include "pypto/ir/error.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/verify_program.h"

namespace pypto::transforms {

using namespace ir;

namespace {

class WrittenRoots : public IRVisitor {
 public:
  explicit WrittenRoots(const BufferRoots& roots) : roots_(roots) {}
  RootSet written;

  void visit_(const Call* op) override {
    if (op->is_op) {
      const int w = WrittenTensorArg(op->callee);
      if (w >= 0 && static_cast<size_t>(w) < op->args.size()) {
        const RootSet& r = roots_.of(op->args[w]);
        written.insert(r.begin(), r.end());
      }
    }
    IRVisitor::visit_(op);
  }

 private:
  const BufferRoots& roots_;
};

// The tensor parameters of `fn` some write in its body reaches.
RootSet WrittenParams(const Program& program, const Function& fn) {
  BufferRoots roots(program, fn, /*views_are_roots=*/false);
  WrittenRoots w(roots);
  w.visit_stmt(fn.body);
  return w.written;
}

// The calls of program functions in a body (a Group's calls of its kernels), in order.
class FunctionCalls : public IRVisitor {
 public:
  std::vector<const Call*> calls;
  void visit_(const Call* op) override {
    if (!op->is_op) calls.push_back(op);
    IRVisitor::visit_(op);
  }
};

[[noreturn]] void Refuse(const std::string& who, const VarPtr& p, const std::string& why) {
  throw UserError(who + " never stores to its pl.Out parameter '" + p->name + "'" + why +
                      ": the caller's tensor would keep whatever it held, with no error",
                  p->span,
                  "write it with " + p->name + " = pl.store(tile, offsets, " + p->name +
                      ") (in every path that should produce it), or declare it pl.Tensor[...] if it is only read");
}

// A Group's kernels see the Group's whole signature, each writing its own part (an AIC kernel
// its matmul result, the AIV kernel its vector result): a Group pl.Out parameter needs a write
// by one of them, through the argument the Group passes it as.
void CheckGroup(const Program& program, const Function& group) {
  BufferRoots roots(program, group, /*views_are_roots=*/false);
  FunctionCalls fc;
  fc.visit_stmt(group.body);
  RootSet written;
  std::string kernels;
  for (const Call* c : fc.calls) {
    FunctionPtr k = program.get(c->callee);
    if (!k) continue;
    kernels += (kernels.empty() ? "'" : ", '") + k->name + "'";
    const RootSet kw = WrittenParams(program, *k);
    for (size_t j = 0; j < k->params.size() && j < c->args.size(); ++j) {
      if (!kw.count(k->params[j].get())) continue;
      const RootSet& r = roots.of(c->args[j]);
      written.insert(r.begin(), r.end());
    }
  }
  for (size_t i = 0; i < group.params.size(); ++i) {
    const VarPtr& p = group.params[i];
    if (group.param_directions[i] == ParamDirection::Out && p->type->is<TensorType>() && !written.count(p.get())) {
      Refuse("Group '" + group.name + "'", p, " (none of its kernels " + kernels + " writes it)");
    }
  }
}

}  // namespace

void VerifyKernelOutParamsWritten(const Program& program, const Function& fn) {
  bool any_out = false;
  for (size_t i = 0; i < fn.params.size(); ++i) any_out |= fn.param_directions[i] == ParamDirection::Out;
  if (!any_out) return;   // the common In / InOut kernel pays no analysis
  bool in_group = false;
  for (const FunctionPtr& g : program.functions) {
    if (g->type != FunctionType::Group) continue;
    FunctionCalls fc;
    fc.visit_stmt(g->body);
    for (const Call* c : fc.calls) {
      if (c->callee != fn.name) continue;
      in_group = true;
      CheckGroup(program, *g);
      break;
    }
  }
  if (in_group) return;   // checked as part of its Group
  const RootSet written = WrittenParams(program, fn);
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const VarPtr& p = fn.params[i];
    if (fn.param_directions[i] == ParamDirection::Out && p->type->is<TensorType>() && !written.count(p.get())) {
      Refuse("kernel '" + fn.name + "'", p, "");
    }
  }
}

}  // namespace pypto::transforms
