// KernelParamSlots (kernel pipeline)
//
// What: stamps Function::param_slots on every kernel (InCore / AIC / AIV): the task slot each
//   parameter reads — `ctx->tensors[slot]` for a tensor param, `ctx->scalars[slot]` for a scalar.
//   - A kernel no Group calls runs as its own task with its own arguments: tensors and scalars
//     are counted apart, in parameter order.
//         def k(self, a: Tensor, n: Scalar, out: Out[Tensor])     ==>  param_slots=[0, 0, 1]
//   - The AIC and AIV kernels of a Group run together as one mixed task with the *Group's*
//     arguments: param i reads the Group's slot of the Group param it is called with (a param,
//     a rebinding of one, or a kernel call's result, i.e. the Out / InOut param that call returns).
//         Group g(a, b, c, out):  c = self.mm(a, b, c)        ==>  mm:  param_slots=[0, 1, 2]
//                                 out = self.act(c, out)      ==>  act: param_slots=[2, 3]
// Input invariants: none. Output: KernelParamSlotsResolved.
// UserError when a Group passes a kernel something other than its own params, or two Groups
//   call one kernel with different arguments.
// Why: the CPU kernel backend binds each parameter to the slot stamped here; it decides nothing.
#include <map>

#include "group_calls.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// The Group slots kernel `fn` reads (param i -> slot), from the Groups that call it; empty
// when no Group calls it.
std::vector<int64_t> GroupSlots(const Program& program, const Function& fn) {
  std::vector<int64_t> slots;
  const Function* group = nullptr;
  for (auto& g : program.functions) {
    if (g->type != FunctionType::Group) continue;
    for (auto& st : flatten_stmts(g->body)) {
      const Call* call = GroupStmtCall(st);
      if (!call || call->callee != fn.name) continue;
      PYPTO_USER_CHECK(call->args.size() == fn.params.size(), call->span,
                       "call to '" << fn.name << "' passes " << call->args.size() << " arguments for "
                                   << fn.params.size() << " parameters", "");
      std::map<const Var*, int64_t> group_slot;   // slots of the Group's params
      int64_t gt = 0, gs = 0;
      for (auto& gp : g->params) group_slot[gp.get()] = gp->type->is<TensorType>() ? gt++ : gs++;
      std::vector<int64_t> mapped(fn.params.size(), -1);
      for (size_t i = 0; i < call->args.size(); ++i) {
        const Var* v = ResolveGroupValue(program, *g, call->args[i]);
        auto it = v ? group_slot.find(v) : group_slot.end();
        PYPTO_USER_CHECK(it != group_slot.end(), call->span,
                         "argument " << i << " of '" << fn.name << "' in Group '" << g->name
                                     << "' must be a parameter of the Group",
                         "a Group passes its own parameters to its AIC / AIV kernels");
        mapped[i] = it->second;
      }
      PYPTO_USER_CHECK(group == nullptr || mapped == slots, call->span,
                       "kernel '" << fn.name << "' is called with different arguments by Groups '" << group->name
                                  << "' and '" << g->name << "'",
                       "give each Group its own kernel");
      group = g.get();
      slots = mapped;
    }
  }
  return slots;
}

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    std::vector<int64_t> slots = KernelParamSlotsOf(*program, *fn);
    if (slots != fn->param_slots) out = out->with_function(fn->with_param_slots(std::move(slots)));
  }
  return out;
}

}  // namespace

std::vector<int64_t> KernelParamSlotsOf(const Program& program, const Function& fn) {
  if (!fn.is_kernel()) return {};
  std::vector<int64_t> slots = GroupSlots(program, fn);
  if (!slots.empty() || fn.params.empty()) return slots;
  int64_t tensors = 0, scalars = 0;
  for (const VarPtr& p : fn.params) slots.push_back(p->type->is<TensorType>() ? tensors++ : scalars++);
  return slots;
}

Pass KernelParamSlots() {
  return Pass{"KernelParamSlots", {}, {IRProperty::KernelParamSlotsResolved}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
