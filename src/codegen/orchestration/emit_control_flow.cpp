// Control flow:
//   RuntimeScopeStmt -> PTO2_SCOPE() { ... } / PTO2_SCOPE(PTO2ScopeMode::MANUAL) { ... }
//                       (a loop carry / if result read after the block: `std::optional<Tensor>
//                       x_exit;` before it, `x_exit = x;` after the loop / if, `Tensor x_1 =
//                       *x_exit;` after the block; a value leaving a nested block too goes on
//                       into the outer block's slot right after the nested block)
//   ForStmt          -> carries declared before the loop (ForStmt::carries rebind only),
//                       for (int64_t i = start; i < stop; i += step) { ... yields ... }
//                       (a run-time step: pto2_range_count gives Python's trip count, a zero
//                       step fails the run; the body computes i from the iteration number)
//   IfStmt           -> return vars declared before the if, assigned by each branch's yield;
//                       a Tensor result goes through `std::optional<Tensor> c_slot;` and
//                       `Tensor c = *c_slot;` after the if (Tensor has no public default
//                       constructor in the real PTO2 runtime, so `Tensor c;` does not compile);
//                       an array result (any dtype, TaskIds too) is the pre-if array when both
//                       branches yield it, else a phi `T r[N];` each branch copies into
//                       (Function::array_backings, stamped by StampArrayBackings)
//   YieldStmt        -> `carry = value;` (simultaneous: temporaries when a value reads a carry
//                       already reassigned by the same yield)
#include <functional>
#include <optional>

#include "emitter.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/flat_stmts.h"
#include "pypto/transforms/scope_carries.h"

namespace pypto::codegen::orchestration {

using namespace ir;

namespace {

std::string decl_type(const TypePtr& t) {
  if (t->is<TensorType>()) return "Tensor";
  if (auto* s = t->as<ScalarType>()) return Emitter::ctype(s->dtype);
  return "";
}

// A pl.Array of numbers or bools (TaskId arrays go through the DependencyEmitter).
const ArrayType* value_array(const TypePtr& t) {
  auto* a = t ? t->as<ArrayType>() : nullptr;
  return a && a->dtype != DataType::TASK_ID ? a : nullptr;
}

}  // namespace

const Var* Emitter::array_storage(const Var* v) const {
  auto it = array_backings_.find(v);
  return it == array_backings_.end() ? v : it->second;
}

// Arrays are updated in place; a yield of another array copies it slot by slot.
void Emitter::emit_slot_copy(const std::string& dst, const std::string& src, int64_t n) {
  scopes_.push();
  std::string k = scopes_.declare("k", false);
  line("for (int64_t " + k + " = 0; " + k + " < " + std::to_string(n) + "; ++" + k + ") " + dst + "[" + k +
       "] = " + src + "[" + k + "];");
  scopes_.pop();
}

void Emitter::emit_runtime_scope(const RuntimeScopeStmt& s) {
  // Allocation hoisting: a MANUAL scope is a scheduling region, not a storage scope; its
  // buffers are declared before the block so tasks after it can name them.
  if (s.mode == RuntimeScopeMode::Manual) emit_alloc_batch(batchable_creates(transforms::FlatStmts(s.body).stmts()));
  // Lexical-scope lifetime: a TaskId the following yield carries out of the block is declared
  // before it (its value is assigned inside); ResolveTaskIds stamped which.
  for (const ScopeTaskIdCarry& c : s.carried_task_ids) {
    std::string name = declare(c.var.get());
    if (c.slots > 0) line("PTO2TaskId " + name + "[" + std::to_string(c.slots) + "];");
    else line("PTO2TaskId " + name + " = PTO2TaskId::invalid();");
    hoisted_task_ids_[c.var.get()] = name;
  }
  // A tensor / number a loop in the block rebinds (or an if there yields) and code after the
  // block reads: its exit slot is declared before the block (Tensor has no public default
  // constructor, hence the std::optional), assigned after the loop / if, read after the block.
  // StampScopeExits stamped which.
  std::vector<std::pair<const Var*, std::string>> exits;   // {loop / if result, slot}
  for (const VarPtr& value : s.exit_values) {
    const transforms::ScopeCarriedValue c = transforms::LocateScopeExit(s, *value);
    const Var* rv = c.result;
    std::string slot;
    if (rv->type->is<TensorType>()) {
      slot = scopes_.declare(base_name(rv) + "_exit", false);
      line("std::optional<Tensor> " + slot + ";");
      needs_optional_header_ = true;
    } else if (auto* at = rv->type->as<ArrayType>()) {   // copied slot by slot after the if
      slot = scopes_.declare(base_name(rv) + "_exit", false);
      line(ctype(at->dtype) + " " + slot + "[" + std::to_string(at->size) + "];");
    } else {
      auto* st = rv->type->as<ScalarType>();
      slot = scopes_.declare(base_name(rv) + "_exit", true);
      line(ctype(st->dtype) + " " + slot + (st->dtype == DataType::BOOL ? " = false;" : " = 0;"));
    }
    exit_slots_[c.stmt].emplace_back(c.index, slot);
    exits.emplace_back(rv, slot);
  }
  open_block(s.mode == RuntimeScopeMode::Manual ? "PTO2_SCOPE(PTO2ScopeMode::MANUAL)" : "PTO2_SCOPE()");
  emit_block_body(s.body);
  close_block();
  for (auto& [rv, slot] : exits) {
    if (rv->type->is<TensorType>()) {
      std::string name = declare(rv);
      line("Tensor " + name + " = *" + slot + ";");
    } else {
      bind(rv, Binding{slot, {slot}});
      // An array's versions after the block (updated in place) live in the slot now.
      if (rv->type->is<ArrayType>()) bind(array_storage(rv), Binding{slot, {slot}});
    }
  }
  // Values that leave the enclosing block too (a nested scope's exits): into its slots.
  assign_exit_slots(s, s.exit_values);
}

void Emitter::emit_for(const ForStmt& f) {
  YieldTarget target;
  target.loop = &f;
  std::vector<std::optional<Binding>> results(f.iter_args.size());   // what each loop result names
  for (size_t i = 0; i < f.iter_args.size(); ++i) {
    const IterArg* ia = f.iter_args[i].get();
    PYPTO_CHECK(i < f.carries.size(), "ForStmt lacks carry " << i << " (ClassifyIterArgCarry did not run)");
    const LoopCarry& carry = f.carries[i];
    target.carries.push_back(ia);
    if (!carry.rebind) {
      bind(ia, capture(ia->init));
      target.names.push_back("");
      continue;
    }
    if (value_array(ia->type)) {   // §13: updated in place, so the carry is its init's C array
      Binding b = capture(ia->init);
      bind(ia, b);
      target.names.push_back(b.text);
      continue;
    }
    if (is_task_id(ia->type)) {
      results[i] = DependencyEmitter::declare_task_id_carry(*this, f, i);
      target.names.push_back(results[i]->text);
      continue;
    }
    std::string type = decl_type(ia->type);
    PYPTO_CHECK(!type.empty(), "loop-carried value '" << ia->name << "' has an unsupported type");
    std::string init = strip_parens(expr(ia->init));
    std::string name = declare(ia);
    line(type + " " + name + " = " + init + ";");
    target.names.push_back(name);
  }
  std::string start = strip_parens(expr(f.start)), stop = strip_parens(expr(f.stop)), step = strip_parens(expr(f.step));
  auto* st = f.step->as<ConstInt>();
  const char* cmp = (st && st->value < 0) ? " > " : " < ";
  if (st) {
    scopes_.push();
    std::string i = scopes_.declare(base_name(f.loop_var.get()), false);
    bind(f.loop_var.get(), Binding{i, {i}});
    line("for (int64_t " + i + " = " + start + "; " + i + cmp + stop + "; " + i + " += " + step + ") {");
    ++indent_;
  } else {
    // A step known only at run time: Python's range (the sign decides the direction; the
    // bounds and step are read once), a zero step is a run-time error naming the DSL line.
    std::string base = base_name(f.loop_var.get());
    std::string vs = scopes_.declare(base + "_start", false), vp = scopes_.declare(base + "_step", false);
    std::string vn = scopes_.declare(base + "_count", false);
    line("const int64_t " + vs + " = " + start + ";");
    if (const int64_t* c = attr_get<int64_t>(f.attrs, "chunk_stride")) {
      // An auto_chunk loop's stride `s * C` (SplitChunkedLoops): an int64 overflow fails the run.
      auto* m = f.step->as<BinaryExpr>();
      auto* mc = m ? m->b->as<ConstInt>() : nullptr;
      PYPTO_CHECK(m && m->op == BinaryOp::Mul && mc && mc->value == *c, "chunk_stride on a loop whose step is not s * " << *c);
      step = "pto2_chunk_stride(" + strip_parens(expr(m->a)) + ", " + std::to_string(*c) + ", " + source_site_args(f.span) + ")";
    }
    line("const int64_t " + vp + " = " + step + ";");
    line("const uint64_t " + vn + " = pto2_range_count(" + vs + ", " + stop + ", " + vp + ", " + source_site_args(f.span) + ");");
    scopes_.push();
    std::string k = scopes_.declare(base + "_k", false);
    std::string i = scopes_.declare(base, true);   // `(void)i;` when the body never reads it
    bind(f.loop_var.get(), Binding{i, {i}});
    line("for (uint64_t " + k + " = 0; " + k + " < " + vn + "; ++" + k + ") {");
    ++indent_;
    line("const int64_t " + i + " = (int64_t)((uint64_t)" + vs + " + " + k + " * (uint64_t)" + vp + ");");
  }
  yield_targets_.push_back(target);
  emit_block_body(f.body);
  yield_targets_.pop_back();
  close_block();
  for (size_t k = 0; k < f.return_vars.size(); ++k) {
    bind(f.return_vars[k].get(), results[k] ? *results[k] : binding_of(f.iter_args[k].get()));
  }
  assign_exit_slots(f, f.return_vars);
}

// Results read after the enclosing runtime scope: `x_exit = x;` (declared before the block).
void Emitter::assign_exit_slots(const Stmt& s, const std::vector<VarPtr>& results) {
  auto it = exit_slots_.find(&s);
  if (it == exit_slots_.end()) return;
  for (auto& [k, slot] : it->second) {
    const Var* rv = results[k].get();
    if (auto* at = rv->type->as<ArrayType>()) emit_slot_copy(slot, binding_of(array_storage(rv)).text, at->size);
    else line(slot + " = " + strip_parens(ref(rv)) + ";");
  }
}

void Emitter::emit_if(const IfStmt& s) {
  YieldTarget target;
  std::vector<std::pair<std::string, std::string>> tensor_results;   // {name, optional slot}
  std::vector<const Var*> shared_arrays;   // array results that are the pre-if array (no code)
  for (size_t k = 0; k < s.return_vars.size(); ++k) {
    const VarPtr& rv = s.return_vars[k];
    target.carries.push_back(rv.get());
    // §13: the pre-if array (its array_backings entry), or a phi array (none) with slot copies (numbers, bools and TaskIds alike:
    // a dependency on a TaskId phi array fans out over its slots like any TaskId array).
    if (auto* at = rv->type->as<ArrayType>()) {
      const bool phi = array_storage(rv.get()) == rv.get();
      if (!phi) {
        shared_arrays.push_back(rv.get());
        target.names.push_back("");
        continue;
      }
      std::string name = declare(rv.get());
      line(ctype(at->dtype) + " " + name + "[" + std::to_string(at->size) + "];");
      target.names.push_back(name);
      continue;
    }
    std::string name = declare(rv.get());
    if (rv->type->is<TensorType>()) {
      std::string slot = scopes_.declare(name + "_slot", false);
      line("std::optional<Tensor> " + slot + ";");
      needs_optional_header_ = true;
      tensor_results.emplace_back(name, slot);
      target.names.push_back(slot);
      continue;
    }
    const int64_t slots = task_id_stamps().slots(rv.get());   // a TaskId phi array (ResolveTaskIds)
    if (slots > 0) {
      line("PTO2TaskId " + name + "[" + std::to_string(slots) + "];");
    } else if (auto* sc = rv->type->as<ScalarType>()) {
      line(ctype(sc->dtype) + " " + name + (sc->dtype == DataType::TASK_ID ? ";" : sc->dtype == DataType::BOOL ? " = false;" : " = 0;"));
    } else {
      PYPTO_CHECK(false, "if result '" << rv->name << "' has an unsupported type");
    }
    target.names.push_back(name);
  }
  std::string cond = strip_parens(expr(s.cond));
  open_block("if (" + cond + ")");
  yield_targets_.push_back(target);
  emit_block_body(s.then_body);
  if (s.else_body) {
    close_block("} else {");
    reopen_block();
    emit_block_body(s.else_body);
  }
  yield_targets_.pop_back();
  close_block();
  for (auto& [name, slot] : tensor_results) line("Tensor " + name + " = *" + slot + ";");
  for (const Var* rv : shared_arrays) bind(rv, binding_of(array_storage(rv)));
  assign_exit_slots(s, s.return_vars);
}

void Emitter::emit_yield(const YieldStmt& y) {
  PYPTO_CHECK(!yield_targets_.empty(), "yield outside a loop or if");
  YieldTarget t = yield_targets_.back();
  PYPTO_CHECK(t.names.size() == y.values.size(), "yield has " << y.values.size() << " values for " << t.names.size() << " targets");
  struct Assign {
    std::string target, value;
    std::vector<std::string> reads;
  };
  std::vector<Assign> assigns;
  for (size_t i = 0; i < y.values.size(); ++i) {
    if (t.names[i].empty()) continue;
    if (t.loop && DependencyEmitter::emit_carry_yield(*this, *t.loop, i, t.names[i], y.values[i])) continue;   // TaskId arrays
    if (!t.loop && i < t.carries.size() && is_task_id(t.carries[i]->type) && !t.carries[i]->type->is<ArrayType>()) {
      if (const int64_t n = task_id_stamps().slots(t.carries[i]); n > 0) {   // a TaskId phi array
        const Var* v = as_var(y.values[i]);
        PYPTO_CHECK(v, "yield of TaskId phi array '" << t.carries[i]->name << "' is not a variable");
        std::optional<TaskIdRef> r = DependencyEmitter::resolve(*this, v);
        PYPTO_CHECK(r, "yielded TaskId '" << v->name << "' is out of scope");
        for (auto& id : r->idents) scopes_.use(id);
        if (r->array_size > 0) {
          PYPTO_CHECK(r->array_size == n, "TaskId phi array '" << t.carries[i]->name << "' gets an array of another size");
          task_ids().copy_slots(t.names[i], r->text, n);
        } else {
          task_ids().init_array(t.names[i], n, r->text, false, /*declared=*/true);   // broadcast one TaskId
        }
        continue;
      }
    }
    Binding b = capture(y.values[i]);
    mark_used(b);
    if (b.text == t.names[i]) continue;
    // Another array: copy it in (a loop's TaskId array carries were handled above).
    if (auto* at = i < t.carries.size() ? t.carries[i]->type->as<ArrayType>() : nullptr) {
      emit_slot_copy(t.names[i], b.text, at->size);
      continue;
    }
    assigns.push_back(Assign{t.names[i], strip_parens(b.text), b.idents});
  }
  bool hazard = false;
  for (size_t j = 0; j < assigns.size(); ++j) {
    for (size_t k = 0; k < j; ++k) {
      for (auto& r : assigns[j].reads) hazard = hazard || r == assigns[k].target;
    }
  }
  if (!hazard) {
    for (auto& a : assigns) line(a.target + " = " + a.value + ";");
    return;
  }
  std::vector<std::string> temps;
  for (size_t j = 0; j < assigns.size(); ++j) {
    const Var* carry = nullptr;
    for (size_t i = 0; i < t.names.size(); ++i) {
      if (t.names[i] == assigns[j].target && i < t.carries.size()) carry = t.carries[i];
    }
    std::string type = carry ? decl_type(carry->type) : "";
    if (type.empty()) type = "auto";
    temps.push_back(scopes_.declare(assigns[j].target + "_next", false));
    line(type + " " + temps.back() + " = " + assigns[j].value + ";");
  }
  for (size_t j = 0; j < assigns.size(); ++j) line(assigns[j].target + " = " + temps[j] + ";");
}

}  // namespace pypto::codegen::orchestration
