// KernelGroupSync (kernel pipeline)
//
// What: stamps Function::group_sync on every kernel a Group calls. The AIC and AIV kernels of
//   a Group run together as one mixed task with the *Group's* arguments, so
//   - slots: kernel param i reads the Group's tensor / scalar slot of the Group param it is
//     called with (a param, a rebinding of one, or a kernel call's result, i.e. the Out /
//     InOut param that call returns);
//   - waits / signals: every pair of kernel calls (earlier i, later j, on different core
//     types) whose tensor accesses conflict through the Group's params (i writes what j reads
//     or writes, or i reads what j writes) gets its own group flag (0..7, in body order):
//     i signals it after its body, j waits for it before its body (pto2/kernel.h).
//       Group body:   c = self.mm(a, b, c)     # AIC      ==>  mm:  group_slots=[0, 1, 2], group_signals=[0]
//                     out = self.act(c, out)   # AIV      ==>  act: group_slots=[2, 3], group_waits=[0]
// Input invariants: KernelCoreTypesInferred. Output: KernelGroupSyncResolved.
// UserError when a Group passes a kernel something other than its own params, needs more than
//   8 flags, or two Groups call one kernel with different arguments or synchronisation.
// Why: the CPU kernel backend prints the slots and flags; it decides nothing.
#include <map>
#include <set>
#include <sstream>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

constexpr int64_t kMaxGroupFlags = 8;  // flags 0..7 per mixed task (pto2/kernel.h)

// The calls to program functions among a Group body's top-level statements.
const Call* CallOf(const StmtPtr& st) {
  const Call* call = nullptr;
  if (auto* a = st->as<AssignStmt>()) call = a->value->as<Call>();
  else if (auto* e = st->as<EvalStmt>()) call = e->expr->as<Call>();
  return call && !call->is_op ? call : nullptr;
}

// The Group param a value of a Group body stands for: a param itself, a rebinding of one, or
// the result of a kernel call (which is the Out / InOut param that call returns,
// NormalizeReturnOrder); null if none.
const Var* ResolveGroupValue(const Program& program, const Function& group, const ExprPtr& e, int depth = 0) {
  if (!e || depth > 64) return nullptr;
  const Var* v = as_var(e);
  int tuple_index = 0;
  if (auto* tg = e->as<TupleGetItem>()) {
    v = as_var(tg->tuple);
    tuple_index = tg->index;
  }
  if (!v) return nullptr;
  for (auto& gp : group.params) if (gp.get() == v && !e->is<TupleGetItem>()) return v;
  for (auto& st : flatten_stmts(group.body)) {
    auto* a = st->as<AssignStmt>();
    if (!a || a->var.get() != v) continue;
    if (as_var(a->value) || a->value->is<TupleGetItem>()) return ResolveGroupValue(program, group, a->value, depth + 1);
    auto* call = a->value->as<Call>();
    if (!call || call->is_op) return nullptr;
    FunctionPtr callee = program.get(call->callee);
    if (!callee) return nullptr;
    for (auto& cs : flatten_stmts(callee->body)) {
      auto* ret = cs->as<ReturnStmt>();
      if (!ret || tuple_index >= static_cast<int>(ret->values.size())) continue;
      const Var* rv = as_var(ret->values[tuple_index]);
      for (size_t k = 0; k < callee->params.size() && k < call->args.size(); ++k) {
        if (callee->params[k].get() == rv) return ResolveGroupValue(program, group, call->args[k], depth + 1);
      }
    }
    return nullptr;
  }
  return nullptr;
}

// The Group slots kernel `fn` reads (param i -> slot), from the Groups that call it; empty
// when no Group calls it.
std::vector<int64_t> ParamSlots(const Program& program, const Function& fn) {
  std::vector<int64_t> slots;
  const Function* group = nullptr;
  for (auto& g : program.functions) {
    if (g->type != FunctionType::Group) continue;
    for (auto& st : flatten_stmts(g->body)) {
      const Call* call = CallOf(st);
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
    const Call* call = CallOf(st);
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
  g.slots = ParamSlots(program, fn);
  Flags(program, fn, &g);
  return g;
}

bool CalledFromGroup(const Program& program, const Function& fn) {
  for (auto& g : program.functions) {
    if (g->type != FunctionType::Group) continue;
    for (auto& st : flatten_stmts(g->body)) {
      if (const Call* call = CallOf(st); call && call->callee == fn.name) return true;
    }
  }
  return false;
}

Pass KernelGroupSync() {
  return Pass{"KernelGroupSync", {IRProperty::KernelCoreTypesInferred}, {IRProperty::KernelGroupSyncResolved}, Run,
              /*invalidated=*/{}};
}

}  // namespace pypto::transforms
