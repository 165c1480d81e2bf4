// DeriveCallDirections
//
// What: fills Call::arg_directions / Submit::arg_directions of every call to a program
//   function from the callee's declared parameters: a tensor parameter declared In / Out /
//   InOut gives ArgDirection In / Out / InOut, a scalar parameter gives Scalar. An entry the
//   parser already set to NoDep (`pl.no_dep(x)`, `no_dep_args=`) is kept. Op calls are left
//   alone.
// Input invariants: callees exist and each call has one argument per callee parameter
//   (the parser checks both).
// Output invariants: CallDirectionsDerived — every function Call/Submit has exactly one
//   direction per argument and none is Unset.
// Why: the direction of an argument is a property of the call site (a no_dep override is
//   per call), so codegen reads `add_input/add_output/add_inout/add_no_dep/add_scalar`
//   straight off the call instead of looking the callee up.
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
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

class DirectionRewriter : public IRMutator {
 public:
  explicit DirectionRewriter(const Program& p) : program_(p) {}

  ExprPtr mutate_(const Call* op, const ExprPtr& self) override {
    ExprPtr e = IRMutator::mutate_(op, self);
    auto* c = e->as<Call>();
    if (c->is_op) return e;
    auto dirs = derive(program_, c->callee, c->args, c->arg_directions, c->span);
    if (dirs == c->arg_directions) return e;
    ExprPtr out = Call::make_func(c->callee, c->args, c->type, std::move(dirs), c->span, c->attrs);
    return c->compiler_manual_dep_edges.empty() ? out : with_compiler_dep_edges(out, c->compiler_manual_dep_edges);
  }

  ExprPtr mutate_(const Submit* op, const ExprPtr& self) override {
    ExprPtr e = IRMutator::mutate_(op, self);
    auto* s = e->as<Submit>();
    auto dirs = derive(program_, s->callee, s->args, s->arg_directions, s->span);
    if (dirs == s->arg_directions) return e;
    auto* tt = s->type->as<TupleType>();
    PYPTO_CHECK(tt && !tt->elements.empty(), "Submit to '" << s->callee << "' is not tuple-typed");
    std::vector<TypePtr> rets(tt->elements.begin(), tt->elements.end() - 1);   // drop the TaskId
    ExprPtr out = Submit::make(s->callee, s->args, std::move(rets), s->deps, s->core_num, s->sync_start,
                               s->allow_early_resolve, s->timing_slot, s->predicate, std::move(dirs), s->span);
    return s->compiler_manual_dep_edges.empty() ? out : with_compiler_dep_edges(out, s->compiler_manual_dep_edges);
  }

 private:
  const Program& program_;
};

ProgramPtr Run(const ProgramPtr& program) {
  DirectionRewriter rw(*program);
  return rw.mutate_program(program);
}

}  // namespace

Pass DeriveCallDirections() {
  return Pass{"DeriveCallDirections", {}, {IRProperty::CallDirectionsDerived}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
