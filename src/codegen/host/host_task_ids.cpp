// HOST orchestration codegen: TaskId values against the L3 runtime (pto_l3_api.h).
//
//   deps=[t, prev, tids]              args_t1.add_dep_wait(t);                   (fresh submit: valid)
//                                     if (prev.is_valid()) args_t1.add_dep_wait(prev);
//                                     for (int64_t k = 0; k < 4; ++k) {
//                                         if (tids[k].is_valid()) args_t1.add_dep_wait(tids[k]);
//                                     }
//   b = pl.system.task_dummy(deps=[..])   TaskArgs args_t2;  <dep waits>
//                                     TaskHandle b = submit_barrier(args_t2);  (invalid if no wait)
//   tids = pl.array.create(4, pl.TASK_ID)   TaskHandle tids[4] = {};           (every slot invalid)
//   tids[k] = t                       tids[k] = t;        (in place: the new SSA array shares it)
//   prev = tids[k]                    TaskHandle prev = tids[k];   (a snapshot)
//   pl.parallel(4) TaskId carry       TaskHandle prev_1[4];  for (k) prev_1[k] = prev;
//                                     ... prev_1[i] = t;  (each iteration its slot; the body
//                                     sees the value from before the loop; consumers wait on all)
//   nested pl.parallel(4) > (3)   TaskHandle prev_1[12];  ... for (k) prev_1[o * 3 + k] = prev_2[k];
//                                     (an inner fence's handles into outer iteration o's 3 slots)
//   if-result of such a fence         TaskHandle prev_5[4];  if (c) { for (k) prev_5[k] = prev_4[k]; }
//                                     else { for (k) prev_5[k] = prev_1; }  (one TaskId: broadcast)
//
// The same forms as L2 orchestration, printed by the one shared TaskId lowering
// (src/codegen/common/task_id_lowering.h) with TaskHandle for PTO2TaskId and submit_barrier
// for rt_submit_dummy_task.
#include <algorithm>

#include "host_emitter.h"
#include "pypto/ir/attrs.h"
#include "pypto/ir/error.h"
#include "pypto/ir/type.h"

namespace pypto::codegen::host {

using namespace pypto::ir;

void HostEmitter::emit_dep_waits(const std::string& args, const std::vector<ExprPtr>& deps) {
  for (auto& d : deps) {
    auto* dv = as_var(d);
    PYPTO_CHECK(dv && is_task_id(d->type), "HOST codegen: a deps= entry that is not a TaskId");
    std::string h = ref(dv, d->span);
    const TaskIdInfo& stamp = stamps_.of(dv);
    if (stamp.slots == 0 && h == task_ids_.spelling().invalid) continue;  // a None seed: no edge
    task_ids_.for_each_valid(h, stamp.slots, stamp.fresh,
                             [&](const std::string& t) { return args + ".add_dep_wait(" + t + ");"; });
  }
}

void HostEmitter::emit_task_dummy(const Var* result, const Call& call) {
  const int n = task_count_++;
  if (!block_just_opened()) line("");
  line("// Task " + std::to_string(n) + ": dependency-only barrier");
  const std::string a = fresh("args_t" + std::to_string(n));
  line("TaskArgs " + a + ";");
  emit_dep_waits(a, call.manual_dep_edges);
  std::string h = fresh(GetSSABaseName(result->name));
  line("TaskHandle " + h + " = submit_barrier(" + a + ");");
  if (!stamps_.of(result).read) line("(void)" + h + ";");
  bind(result, h);
}

void HostEmitter::emit_array_create(const Var* result) {
  auto* at = result->type->as<ArrayType>();
  PYPTO_CHECK(at, "HOST codegen: array.create result is not an array");
  std::string name = fresh(GetSSABaseName(result->name));
  const std::string n = std::to_string(at->size);
  // An array nothing names afterwards (created, then created again) made g++ -Wall warn of an
  // unused variable: ResolveTaskIds stamps whether a TaskId array is read; scalar arrays have no
  // stamp, so their declaration says it may go unused.
  if (at->dtype == DataType::TASK_ID) {
    line("TaskHandle " + name + "[" + n + "] = {};   // every slot starts invalid");
    if (!stamps_.of(result).read) line("(void)" + name + ";");
  } else {
    line(common::ArrayDecl(ctype(at->dtype), name, at->size, " = {}"));
  }
  bind(result, name);
}

namespace {

const Var* array_operand(const Call& call) {
  const Var* arr = as_var(call.args.at(0));
  PYPTO_CHECK(arr && arr->type && arr->type->is<ArrayType>(), call.callee << " without an array variable");
  return arr;
}

// The slot index of array op `call` on `arr`, checked at run time unless it is a constant
// (common::CppArraySlot).
std::string array_slot(HostEmitter& e, const Var* arr, const Call& call) {
  return common::CppArraySlot(e.expr(call.args.at(1)), call.args.at(1), arr->type->as<ArrayType>()->size, call.span);
}

}  // namespace

void HostEmitter::emit_array_get(const Var* result, const Call& call) {
  const Var* arr = array_operand(call);
  const std::string slot = ref(arr, call.span) + "[" + array_slot(*this, arr, call) + "]";
  auto* st = result->type->as<ScalarType>();
  PYPTO_CHECK(st, "HOST codegen: array.get_element result is not a scalar");
  std::string name = fresh(GetSSABaseName(result->name));
  line(ctype(st->dtype) + " " + name + " = " + slot + ";");
  if (st->dtype != DataType::TASK_ID || !stamps_.of(result).read) line("(void)" + name + ";");
  bind(result, name);
}

void HostEmitter::emit_array_update(const Var* result, const Call& call) {
  const Var* arr = array_operand(call);
  const std::string storage = ref(arr, call.span);
  const ExprPtr& value = call.args.at(2);
  std::string text;
  if (auto* v = as_var(value); v && is_task_id(v->type)) {
    PYPTO_CHECK(handle_array_size(v) == 0, "TaskId array slot given the array '" << v->name << "'");
    text = ref(v, value->span);
  } else {
    text = expr(value);
  }
  line(storage + "[" + array_slot(*this, arr, call) + "] = " + text + ";");
  bind(result, storage);
}

HostCarry HostEmitter::declare_fence(const ForStmt& f, size_t i, int64_t n) {
  const IterArg* ia = f.iter_args[i].get();
  const Var* init_var = as_var(ia->init);
  const int64_t init_n = init_var ? handle_array_size(init_var) : 0;
  const std::string init = expr(ia->init);
  std::string arr = fresh(GetSSABaseName(ia->name));
  if (init_n > 0 && init_n != n) {
    // The N*M slots of nested pl.parallel loops inside a pl.range: every iteration overwrites
    // its slots, so the init (what each iteration reads) is not copied in.
    PYPTO_CHECK(f.for_kind == ForKind::Parallel, "fence '" << ia->name << "' of " << n << " slots starts from " << init_n);
    line("TaskHandle " + arr + "[" + std::to_string(n) + "] = {};   // every iteration fills its slots");
  } else {
    task_ids_.init_array(arr, n, init, init_n > 0, false);
  }
  // Every pl.parallel iteration sees the value from before the loop; a sequential loop (one
  // whose yield is such a fence's result) sees the current array.
  // (ResolveTaskIds stamps the iter_arg with the init's slots or N, the loop's result with N.)
  bind(ia, f.for_kind == ForKind::Parallel ? init : arr);
  return HostCarry{arr, n, f.for_kind == ForKind::Parallel ? &f : nullptr};
}

// Every value is a move of the yield, printed in yield order (common::ControlFlowPrinter; a
// value that reads a carry the same yield reassigns first goes through a temporary): a scalar,
// Tensor or TaskId as `carry = value;`, an array slot by slot, one TaskId into a fence slot.
std::optional<common::CarryMove> HostEmitter::yield_value(Frame& frame, size_t i, const ExprPtr& value) {
  const HostCarry& target = frame.targets[i];
  const Var* v = as_var(value);
  const int64_t value_n = v ? handle_array_size(v) : 0;
  const bool value_is_array = value_n > 0 || (v && v->type && v->type->is<ArrayType>());
  common::CarryMove m;
  m.target = target.text;
  m.value = expr(value);
  if (target.array_size == 0) {
    PYPTO_CHECK(!value_is_array, "HOST codegen: an array yielded to a scalar TaskId carry");
    m.reads = common::CppIdentifiers(m.value);
    return m;
  }
  auto slot = [&](const ForStmt& f) {
    return common::TaskIdLowering::parallel_slot(ref(f.loop_var.get(), f.span), f,
                                                 [&](const ExprPtr& x) { return expr(x); });
  };
  if (value_is_array) {
    if (m.value == target.text) return std::nullopt;  // updated in place
    if (target.fence_loop && value_n > 0) {   // an inner pl.parallel's handles: this iteration's slots
      PYPTO_CHECK(target.array_size == std::max<int64_t>(target.fence_loop->trip_count, 1) * value_n,
                  "HOST codegen: a fence of " << target.array_size << " slots given an array of " << value_n);
      m.print = [this, dst = target.text, it = slot(*target.fence_loop), src = m.value, n = value_n] {
        task_ids_.copy_slots_at(dst, it, src, n);
      };
      return m;
    }
    m.print = [this, dst = target.text, src = m.value, n = target.array_size] { task_ids_.copy_slots(dst, src, n); };
    return m;
  }
  if (target.phi) {   // one TaskId into a TaskId phi array: every slot waits on it
    m.print = [this, dst = target.text, src = m.value, n = target.array_size] {
      task_ids_.init_array(dst, n, src, false, /*declared=*/true);
    };
    return m;
  }
  PYPTO_CHECK(target.fence_loop, "HOST codegen: one TaskId yielded to an array carry");
  m.print = [this, write = target.text + "[" + slot(*target.fence_loop) + "] = " + m.value + ";"] { line(write); };
  return m;
}

void HostTaskIdWriter::line(const std::string& text) { e_.line(text); }
void HostTaskIdWriter::open_block(const std::string& header) { e_.open_block(header); }
void HostTaskIdWriter::close_block() { e_.close_block(); }
std::string HostTaskIdWriter::slot_index() { return e_.fresh("k"); }

}  // namespace pypto::codegen::host
