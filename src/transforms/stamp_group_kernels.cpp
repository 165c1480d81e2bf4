// StampGroupKernels
//
// What: stamps Function::group_kernels on every Group function: the kernel it runs on the AIC
//   core and the one on the AIV core (by their stamped core types; "" for a core it leaves idle).
//
//     @pl.function(type=pl.FunctionType.Group)               @pl.function(..., group_aic="mm",
//     def grp(self, a, b, c, out):                  ==>                   group_aiv="act")
//         c = self.mm(a, b, c)          # AIC                def grp(self, a, b, c, out): ...
//         out = self.act(c, out)        # AIV
//
//   A Group that calls two kernels of one core type, a non-kernel or none at all keeps an empty
//   stamp: VerifyOrchestrationProgram reports it where the Group is submitted, with the problem
//   this pass found (GroupKernelsProblemOf). A kernel's core
//   type is its stamped one, else the one InferKernelCoreTypes will stamp (KernelCoreTypeOf), so
//   the pass runs before the kernel pipeline, which ends the default pipeline.
// Input invariants: none. Output invariants: GroupKernelsStamped; nothing else changes.
// Why: the L2 generator prints a Group's submission as `MixedKernels m = {aic_id, aiv_id, ...}`
//   from this stamp instead of walking the Group's body.
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// The callees of the calls to program functions in a Group body (through runtime scopes), in order.
void callees(const StmtPtr& body, std::vector<std::string>& out) {
  for (auto& st : flatten_stmts(body)) {
    const Expr* e = nullptr;
    if (auto* a = st->as<AssignStmt>()) e = a->value.get();
    if (auto* ev = st->as<EvalStmt>()) e = ev->expr.get();
    if (auto* c = e ? e->as<Call>() : nullptr) {
      if (!c->is_op) out.push_back(c->callee);
    }
    if (auto* rs = st->as<RuntimeScopeStmt>()) callees(rs->body, out);
  }
}

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    GroupKernels g = GroupKernelsOf(*program, *fn);
    if (g != fn->group_kernels) out = out->with_function(fn->with_group_kernels(std::move(g)));
  }
  return out;
}

}  // namespace

// The one decision (the pass and VerifyOrchestrationProgram both ask it): the Group's kernels by
// core type, or the first problem in call order.
GroupKernels GroupKernelsOf(const Program& program, const Function& fn, std::optional<GroupKernelsProblem>* problem) {
  if (fn.type != FunctionType::Group) return {};
  std::vector<std::string> order;
  callees(fn.body, order);
  GroupKernels g;
  auto refuse = [&](GroupKernelsProblem p) {
    if (problem) *problem = std::move(p);
    return GroupKernels{};
  };
  for (const std::string& name : order) {
    FunctionPtr k = program.get(name);
    if (!k || !k->is_kernel()) return refuse({GroupKernelsProblem::Kind::NotAKernel, name, "", CoreType::Unknown});
    const CoreType ct = k->core_type != CoreType::Unknown ? k->core_type : KernelCoreTypeOf(*k);
    std::string& slot = ct == CoreType::AIC ? g.aic : g.aiv;
    if (!slot.empty() && slot != name) {   // two kernels on one core
      return refuse({GroupKernelsProblem::Kind::TwoOnOneCore, name, slot, ct});
    }
    slot = name;
  }
  if (g.empty()) return refuse({GroupKernelsProblem::Kind::NoKernel, "", "", CoreType::Unknown});
  return g;
}

GroupKernels GroupKernelsOf(const Program& program, const Function& fn) { return GroupKernelsOf(program, fn, nullptr); }

std::optional<GroupKernelsProblem> GroupKernelsProblemOf(const Program& program, const Function& fn) {
  std::optional<GroupKernelsProblem> problem;
  GroupKernelsOf(program, fn, &problem);
  return problem;
}

Pass StampGroupKernels() {
  return Pass{"StampGroupKernels", {}, {IRProperty::GroupKernelsStamped}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
