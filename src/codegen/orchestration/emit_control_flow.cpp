// Control flow (ForStmt / IfStmt / YieldStmt through the hooks of common::ControlFlowPrinter):
//   RuntimeScopeStmt -> PTO2_SCOPE() { ... } / PTO2_SCOPE(PTO2ScopeMode::MANUAL) { ... }
//                       (a value assigned, loop-carried or yielded by an if there and read after
//                       the block: `std::optional<Tensor> x_exit;` before it, `x_exit = x;`
//                       after the assignment / loop / if, `Tensor x_1 =
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
#include <algorithm>
#include <cctype>
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
    scope_exits_.hoist_task_id(c.var.get(), name);
  }
  // A tensor / number the block assigns (or a loop there rebinds, or an if there yields) and
  // code after the block reads: its exit slot is declared before the block (Tensor has no public
  // default constructor, hence the std::optional), assigned after the assignment / loop / if,
  // read after the block. StampScopeExits stamped which.
  std::vector<std::pair<const Var*, std::string>> exits;   // {value, slot}
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
      line(common::ArrayDecl(ctype(at->dtype), slot, at->size, ""));
    } else {
      auto* st = rv->type->as<ScalarType>();
      slot = scopes_.declare(base_name(rv) + "_exit", true);
      line(ctype(st->dtype) + " " + slot + (st->dtype == DataType::BOOL ? " = false;" : " = 0;"));
    }
    scope_exits_.add_slot(c.stmt, c.index, slot);
    exits.emplace_back(rv, slot);
  }
  open_statement(s);   // (a function of its own in a long function: emit_statements.cpp)
  open_block(s.mode == RuntimeScopeMode::Manual ? "PTO2_SCOPE(PTO2ScopeMode::MANUAL)" : "PTO2_SCOPE()");
  emit_block_body(s.body);
  close_block();
  close_statement(s);
  for (auto& [rv, slot] : exits) {
    if (rv->type->is<TensorType>()) {
      // The value's name inside the block, declared again after it (the block's declaration
      // closed with it): the values of the block that name the same Tensor (an assemble into
      // it, StampScopeExits' AliasRoots) print that name too.
      const std::string name = binding_of(rv).text;
      const bool identifier = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                              std::all_of(name.begin(), name.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
      PYPTO_CHECK(identifier, "exit value '" << rv->name << "' is bound to '" << name << "', not a variable");
      scopes_.declare_exact(name, true);
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

CarryTarget Emitter::loop_carry(const ForStmt& f, size_t i) {
  const IterArg* ia = f.iter_args[i].get();
  PYPTO_CHECK(i < f.carries.size(), "ForStmt lacks carry " << i << " (ClassifyIterArgCarry did not run)");
  const LoopCarry& carry = f.carries[i];
  CarryTarget target{"", ia, std::nullopt, ""};
  if (!carry.rebind) {
    bind(ia, capture(ia->init));
    return target;
  }
  if (value_array(ia->type)) {   // §13: updated in place, so the carry is its init's C array
    Binding b = capture(ia->init);
    bind(ia, b);
    target.name = b.text;
    return target;
  }
  if (is_task_id(ia->type)) {
    target.result = DependencyEmitter::declare_task_id_carry(*this, f, i);
    target.name = target.result->text;
    return target;
  }
  std::string type = decl_type(ia->type);
  PYPTO_CHECK(!type.empty(), "loop-carried value '" << ia->name << "' has an unsupported type");
  std::string init = strip_parens(expr(ia->init));
  target.name = declare(ia);
  line(type + " " + target.name + " = " + init + ";");
  return target;
}

// The loop variable is declared in the loop block's name scope, opened before the header names it.
void Emitter::open_loop(const ForStmt& f, const std::vector<CarryTarget>&) {
  std::string start = strip_parens(expr(f.start)), stop = strip_parens(expr(f.stop)), step = strip_parens(expr(f.step));
  auto* st = f.step->as<ConstInt>();
  if (st && !f.counted) {   // StampCountedLoops: `i += step` cannot pass INT64_MAX
    scopes_.push();
    std::string i = scopes_.declare(base_name(f.loop_var.get()), false);
    bind(f.loop_var.get(), Binding{i, {i}});
    enter_block(common::ForHeader(i, start, common::LoopStop(f.stop, stop), step, st->value < 0));
    return;
  }
  // A step known only at run time, or one whose last `i += step` could overflow (ForStmt::counted):
  // Python's range (the sign decides the direction; the bounds and step are read once), a zero
  // step is a run-time error naming the DSL line.
  std::string base = base_name(f.loop_var.get());
  common::RangeLoopNames n;
  n.start = scopes_.declare(base + "_start", false), n.step = scopes_.declare(base + "_step", false);
  n.count = scopes_.declare(base + "_count", false);
  if (const int64_t c = f.chunk_stride) {
    // An auto_chunk loop's stride `s * C` (SplitChunkedLoops): an int64 overflow fails the run.
    auto* m = f.step->as<BinaryExpr>();
    auto* mc = m ? m->b->as<ConstInt>() : nullptr;
    PYPTO_CHECK(m && m->op == BinaryOp::Mul && mc && mc->value == c, "chunk_stride on a loop whose step is not s * " << c);
    step = "pto2_chunk_stride(" + strip_parens(expr(m->a)) + ", " + std::to_string(c) + ", " + source_site_args(f.span) + ")";
  }
  common::RangeLoopPrologue(*this, n, start, step, stop, f.span);
  scopes_.push();
  n.k = scopes_.declare(base + "_k", false);
  n.var = scopes_.declare(base, true);   // `(void)i;` when the body never reads it
  bind(f.loop_var.get(), Binding{n.var, {n.var}});
  enter_block(common::RangeLoopHeader(n));
  line(common::RangeLoopVarLine(n));
}

void Emitter::bind_loop_results(const ForStmt& f, const std::vector<CarryTarget>& carries) {
  for (size_t k = 0; k < f.return_vars.size(); ++k) {
    bind(f.return_vars[k].get(), carries[k].result ? *carries[k].result : binding_of(f.iter_args[k].get()));
  }
  assign_exit_slots(f, f.return_vars);
}

// Results read after the enclosing runtime scope: `x_exit = x;` (declared before the block).
void Emitter::assign_exit_slots(const Stmt& s, const std::vector<VarPtr>& results) {
  const ScopeExits::Slots* slots = scope_exits_.slots(&s);
  if (!slots) return;
  for (auto& [k, slot] : *slots) {
    const Var* rv = results[k].get();
    if (auto* at = rv->type->as<ArrayType>()) emit_slot_copy(slot, binding_of(array_storage(rv)).text, at->size);
    else line(slot + " = " + strip_parens(ref(rv)) + ";");
  }
}

CarryTarget Emitter::branch_result(const IfStmt& s, size_t k) {
  const VarPtr& rv = s.return_vars[k];
  CarryTarget target{"", rv.get(), std::nullopt, ""};
  if (const std::string* hoisted = hoisted_task_id(rv.get())) {   // declared before its PTO2_SCOPE
    target.name = *hoisted;
    return target;
  }
  // §13: the pre-if array (its array_backings entry: no code), or a phi array (none) with slot
  // copies (numbers, bools and TaskIds alike: a dependency on a TaskId phi array fans out over
  // its slots like any TaskId array).
  if (auto* at = rv->type->as<ArrayType>()) {
    if (array_storage(rv.get()) != rv.get()) return target;
    target.name = declare(rv.get());
    line(common::ArrayDecl(ctype(at->dtype), target.name, at->size, ""));
    return target;
  }
  std::string name = declare(rv.get());
  if (rv->type->is<TensorType>()) {
    target.tensor = name;
    target.name = scopes_.declare(name + "_slot", false);
    line("std::optional<Tensor> " + target.name + ";");
    needs_optional_header_ = true;
    return target;
  }
  const int64_t slots = task_id_stamps().slots(rv.get());   // a TaskId phi array (ResolveTaskIds)
  if (slots > 0) {
    line("PTO2TaskId " + name + "[" + std::to_string(slots) + "];");
  } else if (auto* sc = rv->type->as<ScalarType>()) {
    line(ctype(sc->dtype) + " " + name + (sc->dtype == DataType::TASK_ID ? ";" : sc->dtype == DataType::BOOL ? " = false;" : " = 0;"));
  } else {
    PYPTO_CHECK(false, "if result '" << rv->name << "' has an unsupported type");
  }
  target.name = name;
  return target;
}

void Emitter::bind_branch_results(const IfStmt& s, const std::vector<CarryTarget>& results) {
  for (const CarryTarget& r : results) {
    if (!r.tensor.empty()) line("Tensor " + r.tensor + " = *" + r.name + ";");
  }
  for (const CarryTarget& r : results) {
    if (r.name.empty()) bind(r.var, binding_of(array_storage(r.var)));   // the pre-if array
  }
  assign_exit_slots(s, s.return_vars);
}

// A number, bool, Tensor or TaskId is a move of the yield (common::ControlFlowPrinter prints
// the moves as one simultaneous assignment); arrays and TaskId phi arrays are copied here.
std::optional<common::CarryMove> Emitter::yield_value(Frame& frame, size_t i, const ExprPtr& value) {
  const CarryTarget& t = frame.targets[i];
  if (t.name.empty()) return std::nullopt;
  if (frame.loop && DependencyEmitter::emit_carry_yield(*this, *frame.loop, i, t.name, value)) return std::nullopt;   // TaskId arrays
  if (!frame.loop && is_task_id(t.var->type) && !t.var->type->is<ArrayType>()) {
    if (const int64_t n = task_id_stamps().slots(t.var); n > 0) {   // a TaskId phi array
      const Var* v = as_var(value);
      PYPTO_CHECK(v, "yield of TaskId phi array '" << t.var->name << "' is not a variable");
      std::optional<TaskIdRef> r = DependencyEmitter::resolve(*this, v);
      PYPTO_CHECK(r, "yielded TaskId '" << v->name << "' is out of scope");
      for (auto& id : r->idents) scopes_.use(id);
      if (r->array_size > 0) {
        PYPTO_CHECK(r->array_size == n, "TaskId phi array '" << t.var->name << "' gets an array of another size");
        task_ids().copy_slots(t.name, r->text, n);
      } else {
        task_ids().init_array(t.name, n, r->text, false, /*declared=*/true);   // broadcast one TaskId
      }
      return std::nullopt;
    }
  }
  Binding b = capture(value);
  mark_used(b);
  if (b.text == t.name) return std::nullopt;
  // Another array: copy it in (a loop's TaskId array carries were handled above).
  if (auto* at = t.var->type->as<ArrayType>()) {
    emit_slot_copy(t.name, b.text, at->size);
    return std::nullopt;
  }
  common::CarryMove m;
  m.target = t.name;
  m.value = strip_parens(b.text);
  m.reads = b.idents;
  if (std::string type = decl_type(t.var->type); !type.empty()) m.temp_type = type;
  return m;
}

}  // namespace pypto::codegen::orchestration
