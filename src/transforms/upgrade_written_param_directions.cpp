// UpgradeWrittenParamDirections
//
// What: (1) in every kernel (InCore / AIC / AIV), a tensor parameter declared In that the body
//   writes — the destination of `tile.store`, `tensor.assemble`, `tensor.write` or
//   `tile.mscatter`, followed through assignments, loop carries, yields, if-results and views —
//   becomes Out, or InOut when the body also reads it (any other use by an op: load, read,
//   slice, ...). Declared Out / InOut never change.
//       def k(self, a: pl.Tensor[...], c: pl.Tensor[...]):        def k(self, a, c: pl.Out[...]):
//           c = pl.store(pl.load(a, ...), [0, 0], c)      ==>         (same body)
//   (2) Then, to a fixed point over the non-kernel functions (Orchestration, Group, Inline,
//   Opaque: anchor_features §16 A), a parameter declared In that is passed (directly or
//   through a view) into a callee's Out slot becomes Out, into an InOut slot InOut — an
//   Orchestration's too, as in the reference compiler: the caller's array is written (the
//   parser warns where it sees the callee's slot declared Out / InOut).
// Input invariants: callees exist; calls are not yet given directions (DeriveCallDirections
//   runs after this pass and reads the upgraded ParamDirections).
// Output invariants: no kernel writes a tensor parameter declared In (no IRProperty: the
//   directions are part of the printed signature).
// Why: a written parameter submitted with add_input is not ordered before later readers (a
//   silent race) and an In entry argument would be modified (anchor §16 A).
#include <map>

#include "buffer_roots.h"
#include "pypto/ir/error.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// The parameters a kernel body writes and reads, by root.
class KernelAccesses : public IRVisitor {
 public:
  explicit KernelAccesses(const BufferRoots& roots) : roots_(roots) {}
  RootSet written, read;

  void visit_(const Call* op) override {
    if (op->is_op) {
      int w = WrittenTensorArg(op->callee);
      for (size_t i = 0; i < op->args.size(); ++i) {
        if (!as_var(op->args[i]) || !op->args[i]->type->is<TensorType>()) continue;
        const RootSet& r = roots_.of(op->args[i]);
        (static_cast<int>(i) == w ? written : read).insert(r.begin(), r.end());
      }
    }
    IRVisitor::visit_(op);
  }

 private:
  const BufferRoots& roots_;
};

FunctionPtr with_directions(const FunctionPtr& f, std::vector<ParamDirection> dirs) {
  auto nf = Function::make(f->name, f->type, f->params, std::move(dirs), f->return_types, f->body, f->level, f->role,
                           f->attrs, f->span);
  return f->core_type == CoreType::Unknown ? nf : nf->with_core_type(f->core_type);
}

FunctionPtr upgrade_kernel(const Program& program, const FunctionPtr& fn) {
  BufferRoots roots(program, *fn, /*views_are_roots=*/false);
  KernelAccesses acc(roots);
  acc.visit_stmt(fn->body);
  std::vector<ParamDirection> dirs = fn->param_directions;
  bool changed = false;
  for (size_t i = 0; i < fn->params.size(); ++i) {
    const Var* p = fn->params[i].get();
    if (dirs[i] != ParamDirection::In || !p->type->is<TensorType>() || !acc.written.count(p)) continue;
    dirs[i] = acc.read.count(p) ? ParamDirection::InOut : ParamDirection::Out;
    changed = true;
  }
  return changed ? with_directions(fn, std::move(dirs)) : fn;
}

// Calls / submits of program functions in a body, with their callee, args and span.
// (Pointers into the body, not copies: a Span copy touches the shared text of its line.)
struct CallSite {
  const std::string* callee;
  const std::vector<ExprPtr>* args;
  const Span* span;
};
class CallSites : public IRVisitor {
 public:
  std::vector<CallSite> sites;
  // A type's shape holds no call: skip the type walk at every Var use.
  void visit_(const Var*) override {}
  void visit_(const IterArg*) override {}
  void visit_(const Call* op) override {
    if (!op->is_op) sites.push_back({&op->callee, &op->args, &op->span});
    IRVisitor::visit_(op);
  }
  void visit_(const Submit* op) override {
    sites.push_back({&op->callee, &op->args, &op->span});
    IRVisitor::visit_(op);
  }
};

// One caller step: upgrades In params that reach a callee's written slot. Returns the caller,
// possibly with new directions.
FunctionPtr propagate_to_caller(const Program& program, const FunctionPtr& fn) {
  BufferRoots roots(program, *fn, /*views_are_roots=*/false);
  CallSites cs;
  cs.visit_stmt(fn->body);
  std::vector<ParamDirection> dirs = fn->param_directions;
  bool changed = false;
  for (const CallSite& site : cs.sites) {
    FunctionPtr callee = program.get(*site.callee);
    if (!callee) continue;
    for (size_t a = 0; a < site.args->size() && a < callee->params.size(); ++a) {
      ParamDirection cd = callee->param_directions[a];
      if (cd == ParamDirection::In) continue;
      const RootSet& arg_roots = roots.of((*site.args)[a]);
      for (size_t i = 0; i < fn->params.size(); ++i) {
        if (!arg_roots.count(fn->params[i].get()) || dirs[i] == ParamDirection::InOut) continue;
        if (dirs[i] == cd) continue;
        // A declared Out passed to an InOut slot: the parser's rule (the DSL's own call check).
        if (fn->type == FunctionType::Orchestration && dirs[i] != ParamDirection::In) continue;
        dirs[i] = (dirs[i] == ParamDirection::In) ? cd : ParamDirection::InOut;
        changed = true;
      }
    }
  }
  return changed ? with_directions(fn, std::move(dirs)) : fn;
}

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (!fn->is_kernel()) continue;
    FunctionPtr nf = upgrade_kernel(*out, fn);
    if (nf != fn) out = out->with_function(nf);
  }
  for (size_t round = 0; round <= program->functions.size(); ++round) {   // a fixed point within #functions rounds
    bool changed = false;
    const std::vector<FunctionPtr> functions = out->functions;   // `out` is replaced below
    for (const FunctionPtr& fn : functions) {
      if (fn->is_kernel()) continue;
      FunctionPtr nf = propagate_to_caller(*out, fn);
      if (nf != fn) {
        out = out->with_function(nf);
        changed = true;
      }
    }
    if (!changed) break;
  }
  return out;
}

}  // namespace

Pass UpgradeWrittenParamDirections() {
  return Pass{"UpgradeWrittenParamDirections", {}, {IRProperty::WrittenParamDirectionsUpgraded}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
