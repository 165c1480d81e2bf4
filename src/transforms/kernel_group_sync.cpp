// KernelGroupSync (kernel pipeline)
//
// What: stamps Function::group_sync on every kernel a Group calls. The AIC and AIV kernels of
//   a Group run together as one mixed task (each parameter reads the Group's slot stamped by
//   KernelParamSlots); every pair of kernel calls (earlier i, later j, on different core types)
//   whose tensor accesses conflict through the Group's params (i writes what j reads or writes,
//   or i reads what j writes) gets its own group flag (0..7, in body order): i signals it after
//   its body, j waits for it before its body (pto2/kernel.h).
//       Group body:   c = self.mm(a, b, c)     # AIC      ==>  mm:  group_signals=[0]
//                     out = self.act(c, out)   # AIV      ==>  act: group_waits=[0]
// Input invariants: KernelCoreTypesInferred. Output: KernelGroupSyncResolved.
// UserError when a Group needs more than 8 flags, or two Groups call one kernel with different
//   synchronisation.
// Why: the CPU kernel backend prints the flags; it decides nothing.
#include <set>
#include <sstream>

#include "group_calls.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

constexpr int64_t kMaxGroupFlags = 8;  // flags 0..7 per mixed task (pto2/kernel.h)

struct KernelCall {
  const Call* call;
  FunctionPtr callee;
  CoreType core;                       // stamped by InferKernelCoreTypes
  std::set<const Var*> reads, writes;  // Group params
};

// The kernel calls of a Group body in order, with the Group params each reads / writes.
std::vector<KernelCall> KernelCalls(const Program& program, const Function& group) {
  std::vector<KernelCall> calls;
  for (auto& st : flatten_stmts(group.body)) {
    const Call* call = GroupStmtCall(st);
    if (!call) continue;
    FunctionPtr callee = program.get(call->callee);
    if (!callee || !callee->is_kernel()) continue;
    KernelCall kc{call, callee, StampedCoreType(*callee), {}, {}};
    for (size_t k = 0; k < call->args.size() && k < callee->params.size(); ++k) {
      if (!callee->params[k]->type->is<TensorType>()) continue;
      const Var* v = ResolveGroupValue(program, group, call->args[k]);
      if (!v) continue;
      const ParamDirection d = k < callee->param_directions.size() ? callee->param_directions[k] : ParamDirection::In;
      if (d != ParamDirection::Out) kc.reads.insert(v);
      if (d != ParamDirection::In) kc.writes.insert(v);
    }
    calls.push_back(std::move(kc));
  }
  return calls;
}

bool Intersects(const std::set<const Var*>& a, const std::set<const Var*>& b) {
  for (const Var* v : a) if (b.count(v)) return true;
  return false;
}

// The group flags kernel `fn` waits for / signals, from the Groups that call it.
void Flags(const Program& program, const Function& fn, GroupSync* out) {
  const Function* seen_in = nullptr;
  for (auto& g : program.functions) {
    if (g->type != FunctionType::Group) continue;
    std::vector<KernelCall> calls = KernelCalls(program, *g);
    bool calls_fn = false;
    for (auto& c : calls) calls_fn = calls_fn || c.callee->name == fn.name;
    if (!calls_fn) continue;
    std::vector<int64_t> waits, signals;
    int64_t next_flag = 0;
    for (size_t j = 0; j < calls.size(); ++j) {
      for (size_t i = 0; i < j; ++i) {
        const KernelCall& p = calls[i];
        const KernelCall& c = calls[j];
        if (p.core == c.core) continue;  // same core: one kernel's program order
        const bool conflict = Intersects(p.writes, c.reads) || Intersects(p.writes, c.writes) || Intersects(p.reads, c.writes);
        if (!conflict) continue;
        PYPTO_USER_CHECK(next_flag < kMaxGroupFlags, c.call->span,
                         "Group '" << g->name << "' needs more than " << kMaxGroupFlags
                                   << " synchronisation flags between its kernels",
                         "split the Group: a mixed task has 8 group flags");
        const int64_t flag = next_flag++;
        if (p.callee->name == fn.name) signals.push_back(flag);
        if (c.callee->name == fn.name) waits.push_back(flag);
      }
    }
    PYPTO_USER_CHECK(seen_in == nullptr || (waits == out->waits && signals == out->signals), g->span,
                     "kernel '" << fn.name << "' needs different synchronisation in Groups '" << seen_in->name << "' and '"
                                << g->name << "'",
                     "give each Group its own kernel");
    seen_in = g.get();
    out->waits = waits;
    out->signals = signals;
  }
}

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (!fn->is_kernel()) continue;
    GroupSync g = KernelGroupSyncOf(*program, *fn);
    if (g != fn->group_sync) out = out->with_function(fn->with_group_sync(std::move(g)));
  }
  return out;
}

}  // namespace

GroupSync KernelGroupSyncOf(const Program& program, const Function& fn) {
  GroupSync g;
  Flags(program, fn, &g);
  return g;
}

Pass KernelGroupSync() {
  return Pass{"KernelGroupSync", {IRProperty::KernelCoreTypesInferred}, {IRProperty::KernelGroupSyncResolved}, Run,
              /*invalidated=*/{}};
}

}  // namespace pypto::transforms
