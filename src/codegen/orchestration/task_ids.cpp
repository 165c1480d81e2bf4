// TaskId values in orchestration code (orchestration_codegen.txt "TaskId sourcing", "Array
// carry for pl.parallel TaskId iter_args"):
//
//   fresh pl.submit id      PTO2TaskId tid = task_0_outs.task_id();     (emit_tasks.cpp; unguarded)
//   None seed               PTO2TaskId prev = PTO2TaskId::invalid();
//   scalar loop carry       PTO2TaskId prev = <init>;  ...  prev = tid;  (yield)
//   pl.parallel array carry PTO2TaskId prev[4];  for (k) prev[k] = <init or init[k]>;
//                           ... prev[branch] = tid;  (slot yield)
//   nested pl.parallel carry PTO2TaskId prev[4 * 3]; ... for (k) prev[o * 3 + k] = inner[k];
//                           (an inner pl.parallel(3)'s ids into outer iteration o's 3 slots)
//   outer sequential carry  PTO2TaskId prev[4]; ... for (k) prev[k] = inner[k];  (copy yield)
//   pl.array.create(4, pl.TASK_ID)   PTO2TaskId tids[4];   (every slot starts invalid)
//   tids[k] = tid                    tids[k] = tid;        (in place; the new SSA value is `tids`)
//   prev = tids[k]                   PTO2TaskId prev = tids[k];   (snapshot local)
#include <algorithm>

#include "emitter.h"
#include "op_registry.h"
#include "pypto/ir/error.h"

namespace pypto::codegen::orchestration {

using namespace ir;

std::optional<TaskIdRef> DependencyEmitter::resolve(Emitter& e, const Var* v) {
  const TaskIdInfo& stamp = e.task_id_stamps().of(v);
  if (!e.bound(v)) return std::nullopt;
  const Binding& b = e.binding_of(v);
  for (auto& id : b.idents) {
    if (!e.scopes().visible(id)) return std::nullopt;
  }
  return TaskIdRef{b.text, b.idents, stamp.slots, stamp.fresh};
}

Binding DependencyEmitter::declare_task_id_carry(Emitter& e, const ForStmt& loop, size_t i) {
  const IterArg* ia = loop.iter_args[i].get();
  const int64_t array_size = loop.carries.at(i).slots;
  const Var* init_var = as_var(ia->init);
  std::optional<TaskIdRef> init = init_var ? resolve(e, init_var) : std::nullopt;
  if (init_var) {
    PYPTO_CHECK(init, "loop-carried TaskId '" << ia->name << "' starts from an out-of-scope TaskId");
  }
  if (auto* at = ia->type->as<ArrayType>()) {
    // A TaskId array threaded through a loop: slots are updated in place, so the carry is
    // the init's storage itself.
    PYPTO_CHECK(init && init->array_size == at->size, "array carry '" << ia->name << "' has no array init");
    e.bind(ia, Binding{init->text, init->idents});
    return e.binding_of(ia);
  }
  std::string init_text = init ? init->text : e.expr(ia->init);
  if (init) {
    for (auto& id : init->idents) e.scopes().use(id);
  }
  const std::string* hoisted = e.hoisted_task_id(ia);   // declared (and bound) before its PTO2_SCOPE
  if (array_size == 0) {
    PYPTO_CHECK(!init || init->array_size == 0, "scalar TaskId carry '" << ia->name << "' starts from an array");
    std::string name = hoisted ? *hoisted : e.declare(ia);
    e.line(hoisted ? name + " = " + init_text + ";" : "PTO2TaskId " + name + " = " + init_text + ";");
    return e.binding_of(ia);
  }
  std::string arr = hoisted ? *hoisted : e.declare(ia);
  if (init && init->array_size > 0 && init->array_size != array_size) {
    // The N*M slots of nested pl.parallel loops inside a pl.range: every iteration overwrites
    // its slots, so the init (what each iteration reads) is not copied in.
    PYPTO_CHECK(loop.for_kind == ForKind::Parallel, "array carry '" << ia->name << "' starts from an array of another size");
    if (!hoisted) e.line("PTO2TaskId " + arr + "[" + std::to_string(array_size) + "];   // every iteration fills its slots");
  } else {
    e.task_ids().init_array(arr, array_size, init ? init->text : init_text, init && init->array_size > 0,
                            hoisted != nullptr);
  }
  // Inside a pl.parallel body every iteration reads the value from before the loop; a
  // sequential loop's body reads the current array.
  if (loop.for_kind == ForKind::Parallel) {
    e.bind(ia, init ? Binding{init->text, init->idents} : Binding{init_text, {}});
  }
  return Binding{arr, {arr}};
}

bool DependencyEmitter::emit_carry_yield(Emitter& e, const ForStmt& loop, size_t i, const std::string& target,
                                       const ExprPtr& value) {
  const IterArg* carry = loop.iter_args[i].get();
  if (!is_task_id(carry->type)) return false;
  auto* at = carry->type->as<ArrayType>();
  const int64_t n = at ? at->size : loop.carries.at(i).slots;
  if (n == 0) return false;
  // The carry's storage: the init's array (a pl.Array carry) or the slot array declared before the loop.
  const Binding arr = at ? e.binding_of(carry) : Binding{target, {target}};
  const Var* v = as_var(value);
  PYPTO_CHECK(v, "yield of TaskId array carry '" << carry->name << "' is not a variable");
  std::optional<TaskIdRef> r = resolve(e, v);
  PYPTO_CHECK(r, "yielded TaskId '" << v->name << "' is out of scope");
  for (auto& id : r->idents) e.scopes().use(id);
  for (auto& id : arr.idents) e.scopes().use(id);
  auto slot = [&] {
    return common::TaskIdLowering::parallel_slot(e.ref(loop.loop_var.get()), loop,
                                                 [&](const ExprPtr& x) { return e.expr(x); });
  };
  if (r->array_size > 0) {
    if (r->text == arr.text) return true;   // updated in place
    if (loop.for_kind == ForKind::Parallel && !at) {   // an inner loop's M ids: this iteration's M slots
      PYPTO_CHECK(n == std::max<int64_t>(loop.trip_count, 1) * r->array_size, "array carry size mismatch on yield of '" << carry->name << "'");
      e.task_ids().copy_slots_at(arr.text, slot(), r->text, r->array_size);
      return true;
    }
    PYPTO_CHECK(r->array_size == n, "array carry size mismatch on yield of '" << carry->name << "'");
    e.task_ids().copy_slots(arr.text, r->text, n);
    return true;
  }
  PYPTO_CHECK(loop.for_kind == ForKind::Parallel, "array carry '" << carry->name << "' yielded one TaskId");
  e.line(arr.text + "[" + slot() + "] = " + r->text + ";");
  return true;
}

void L2TaskIdWriter::line(const std::string& text) { e_.line(text); }
void L2TaskIdWriter::open_block(const std::string& header) { e_.open_block(header); }
void L2TaskIdWriter::close_block() { e_.close_block(); }
std::string L2TaskIdWriter::slot_index() {
  e_.scopes().push();
  return e_.scopes().declare("k", false);
}
void L2TaskIdWriter::release_slot_index() { e_.scopes().pop(); }

namespace {

// prev = None  ->  PTO2TaskId prev = PTO2TaskId::invalid();
void SystemTaskInvalidHandler(Emitter& e, const Var* result, const Call&) {
  std::string name = e.declare(result);
  e.line("PTO2TaskId " + name + " = PTO2TaskId::invalid();");
}

// tids = pl.array.create(4, pl.TASK_ID)  ->  PTO2TaskId tids[4];
void ArrayCreateHandler(Emitter& e, const Var* result, const Call& call) {
  auto* at = result->type->as<ArrayType>();
  PYPTO_CHECK(at, "array.create result is not an array");
  std::string name = e.declare(result);
  if (at->dtype == DataType::TASK_ID) {
    e.line("PTO2TaskId " + name + "[" + std::to_string(at->size) + "];   // every slot starts invalid");
  } else {
    e.line(common::ArrayDecl(Emitter::ctype(at->dtype), name, at->size, " = {}"));
  }
}

// `arr[k]`: the array's storage indexed by the slot expression, checked at run time unless it
// is a constant (common::CppArraySlot).
std::string slot_of(Emitter& e, const Var* arr, const Call& call) {
  auto* at = arr->type->as<ArrayType>();
  PYPTO_CHECK(at, "array operand '" << arr->name << "' is not an array");
  return e.ref(arr) + "[" + common::CppArraySlot(e.expr(call.args[1]), call.args[1], at->size, call.span) + "]";
}

// prev = tids[k]  ->  PTO2TaskId prev = tids[k];   (a snapshot: later slot writes don't change it)
void ArrayGetElementHandler(Emitter& e, const Var* result, const Call& call) {
  const Var* arr = as_var(call.args[0]);
  PYPTO_CHECK(arr, "array.get_element without an array variable");
  if (is_task_id(arr->type)) {
    std::optional<TaskIdRef> r = DependencyEmitter::resolve(e, arr);
    PYPTO_CHECK(r, "TaskId array '" << arr->name << "' is out of scope");
  }
  std::string slot = slot_of(e, arr, call);
  auto* st = result->type->as<ScalarType>();
  std::string name = e.declare(result);
  e.line(Emitter::ctype(st->dtype) + " " + name + " = " + slot + ";");
}

// tids[k] = tid  ->  tids[k] = tid;   (the new SSA array value shares the storage)
void ArrayUpdateElementHandler(Emitter& e, const Var* result, const Call& call) {
  const Var* arr = as_var(call.args[0]);
  PYPTO_CHECK(arr, "array.update_element without an array variable");
  std::string value;
  if (const Var* v = as_var(call.args[2]); v && is_task_id(v->type)) {
    std::optional<TaskIdRef> r = DependencyEmitter::resolve(e, v);
    PYPTO_CHECK(r && r->array_size == 0, "TaskId '" << v->name << "' is out of scope or an array");
    for (auto& id : r->idents) e.scopes().use(id);
    value = r->text;
  } else {
    value = e.expr(call.args[2]);
  }
  std::string slot = slot_of(e, arr, call);
  e.line(slot + " = " + value + ";");
  e.bind(result, e.binding_of(arr));
}

}  // namespace

REGISTER_ORCHESTRATION_OP("system.task_invalid", SystemTaskInvalidHandler);
REGISTER_ORCHESTRATION_OP("array.create", ArrayCreateHandler);
REGISTER_ORCHESTRATION_OP("array.get_element", ArrayGetElementHandler);
REGISTER_ORCHESTRATION_OP("array.update_element", ArrayUpdateElementHandler);

}  // namespace pypto::codegen::orchestration
