// Intra-Group data flow → group flags of the Group's kernels (see kernel_group_sync.h).
#include "kernel_group_sync.h"

#include <set>
#include <sstream>
#include <string>

#include "pypto/codegen/kernel_cpu.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"

namespace pypto::codegen::kernel_cpu {

using namespace ir;

namespace {

constexpr uint32_t kMaxGroupFlags = 8;  // flags 0..7 per mixed task (pto2/kernel.h)

struct KernelCall {
  const Call* call;
  FunctionPtr callee;
  CoreType core;                   // stamped by InferKernelCoreTypes
  std::set<const Var*> reads, writes;  // Group params
};

// The kernel calls of a Group body in order, with the Group params each reads / writes.
std::vector<KernelCall> KernelCalls(const Program& program, const Function& group) {
  std::vector<KernelCall> calls;
  for (auto& st : flatten_stmts(group.body)) {
    const Call* call = nullptr;
    if (auto* a = st->as<AssignStmt>()) call = a->value->as<Call>();
    else if (auto* e = st->as<EvalStmt>()) call = e->expr->as<Call>();
    if (!call || call->is_op) continue;
    FunctionPtr callee = program.get(call->callee);
    if (!callee || !callee->is_kernel()) continue;
    KernelCall kc{call, callee, transforms::StampedCoreType(*callee), {}, {}};
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

}  // namespace

GroupSync GroupSyncOf(const Program& program, const Function& fn) {
  GroupSync result;
  const Function* seen_in = nullptr;
  for (auto& g : program.functions) {
    if (g->type != FunctionType::Group) continue;
    std::vector<KernelCall> calls = KernelCalls(program, *g);
    bool calls_fn = false;
    for (auto& c : calls) calls_fn = calls_fn || c.callee->name == fn.name;
    if (!calls_fn) continue;
    GroupSync mine;
    uint32_t next_flag = 0;
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
        const uint32_t flag = next_flag++;
        if (p.callee->name == fn.name) mine.signals.push_back(flag);
        if (c.callee->name == fn.name) mine.waits.push_back(flag);
      }
    }
    PYPTO_USER_CHECK(seen_in == nullptr || (mine.waits == result.waits && mine.signals == result.signals), g->span,
                     "kernel '" << fn.name << "' needs different synchronisation in Groups '" << seen_in->name << "' and '"
                                << g->name << "'",
                     "give each Group its own kernel");
    seen_in = g.get();
    result = mine;
  }
  return result;
}

}  // namespace pypto::codegen::kernel_cpu
