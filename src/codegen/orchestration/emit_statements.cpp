// Statement dispatch and assignments. Each IR statement maps to at most a few C++ lines:
// tasks (emit_tasks.cpp), tensor ops (op_handlers.cpp), control flow (emit_control_flow.cpp);
// Var copies, tuple elements and in-place results only rebind names.
#include <algorithm>

#include "emitter.h"
#include "op_registry.h"
#include "pypto/codegen/control_flow_printer.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/flat_stmts.h"
#include "pypto/transforms/passes.h"

namespace pypto::codegen::orchestration {

using namespace ir;

namespace {

// In a block holding kCallChunkMin calls or more, each run of calls (with the values
// StampCallOperands stamped between them: Function::call_operands) is emitted in
// chunks of about kChunkSize calls, each the body of a lambda called in place
// (`[&]() PYPTO_CALL_CHUNK { ... }();`): not inlined and not optimised. g++ -O2 time and memory
// grow faster than linearly with one function's size (alias walks, register allocation over
// thousands of inlined Arg methods: 1,000 calls took 40 s and 500 MB); bounded, unoptimised
// chunks that call the optimised Arg methods build in linear time (3,000 calls: about 2 s) for
// about 10% more orchestration time per task. A chunk ends right after a call that is not one of
// Function::open_calls, where every value it declares is dead (the stamp's promise): the first
// such call from its kChunkSize-th on; or right after one of Function::cut_calls. A chunk hands
// the values it declares that are read after it (Function::carried_operands: live across a cut
// call or a statement printed between chunks, or read far on) to the chunks and statements
// after it:
//
//   auto chunk = [&]() PYPTO_CALL_CHUNK {      // ... the calls up to the cut, then
//       struct handed_on { decltype(s63) v0; };
//       return handed_on{s63};
//   }();
//   [[maybe_unused]] auto& s63 = chunk.v0;   // read by the next chunks' calls
//
// Other statements (loops, branches, creates not batched, values after their run's last call)
// print between chunks.
constexpr size_t kChunkSize = 64;

}  // namespace

bool Emitter::calls_in_own_blocks() const {
  return fn_->task_statements >= transforms::kCallChunkMin;   // CountTaskStatements
}

bool Emitter::is_open_call(const Stmt& s) const {
  auto* a = s.as<AssignStmt>();
  return a && open_calls_.count(a->var.get()) > 0;
}

bool Emitter::is_cut_call(const Stmt& s) const {
  auto* a = s.as<AssignStmt>();
  return a && cut_calls_.count(a->var.get()) > 0;
}

const Stmt& Emitter::named_stmt(const std::vector<StmtPtr>& stmts, size_t i) {
  const bool unit = transforms::TupleResult(*stmts[i]) && transforms::ElementsEnd(stmts, i) > i + 1;
  return unit ? *stmts[i + 1] : *stmts[i];
}

bool Emitter::in_call_chunk(const std::vector<StmtPtr>& stmts, size_t i) const {
  if (transforms::IsSelfContainedTask(*stmts[i])) return true;
  // A value StampCallOperands stamped, or a task with a tuple result whose first element it
  // stamped (a unit: the task and its elements). A batched create prints nothing where it
  // stands: it is part of the run (StampCallOperands reads the same stamp).
  auto* a = named_stmt(stmts, i).as<AssignStmt>();
  return a && (call_operands_.count(a->var.get()) > 0 || is_batched(a->var.get()));
}

size_t Emitter::chunk_end(const std::vector<StmtPtr>& stmts, size_t i) const {
  for (size_t calls = 0; i < stmts.size() && in_call_chunk(stmts, i);) {
    const Stmt& named = named_stmt(stmts, i);
    const bool task = transforms::IsSelfContainedTask(*stmts[i]) || transforms::TupleResult(*stmts[i]);
    i = task ? transforms::ElementsEnd(stmts, i) : i + 1;   // a unit stays whole: its elements
    if (!task) continue;                                     // read the task's TaskOutputTensors
    if (is_cut_call(named) || (++calls >= kChunkSize && !is_open_call(named))) break;
  }
  return i;
}

std::string Emitter::carried_type(const Var& v) {
  if (v.type->is<TensorType>()) return "Tensor";
  auto* st = v.type->as<ScalarType>();
  PYPTO_CHECK(st, "orchestration codegen: carried value '" << v.name << "' is neither a tensor nor a number");
  return ctype(st->dtype);
}

void Emitter::emit_call_chunk(const std::vector<StmtPtr>& stmts, size_t begin, size_t end) {
  std::vector<const Var*> carried;   // in declaration order
  for (size_t k = begin; k < end; ++k) {
    auto* a = stmts[k]->as<AssignStmt>();
    if (a && carried_operands_.count(a->var.get())) carried.push_back(a->var.get());
  }
  blank();
  const std::string handoff = carried.empty() ? "" : scopes_.declare("chunk", false);
  open_block((handoff.empty() ? "" : "auto " + handoff + " = ") + "[&]() PYPTO_CALL_CHUNK");   // (the preamble defines it)
  ++unoptimised_depth_;
  for (size_t k = begin; k < end; ++k) emit_stmt(stmts[k]);
  --unoptimised_depth_;
  if (carried.empty()) {
    close_block("}();");
    return;
  }
  // A local struct, its members typed as the values (std::tuple's instantiations cost about 0.3 s
  // of compile time per tuple type of 64 elements). A carried value declares a C++ name of its
  // own; the member holds a copy (a runtime-allocated output is a `const Tensor&` into the
  // chunk's TaskOutputTensors: its Tensor is copied out).
  const std::string type = scopes_.declare("handed_on", false);
  std::string members, values;   // members v0, v1, ...: a member named as its value would change
  for (size_t j = 0; j < carried.size(); ++j) {   // the meaning of the name in the struct
    const std::string text = ref(carried[j]);
    members += carried_type(*carried[j]) + " v" + std::to_string(j) + "; ";
    values += (values.empty() ? "" : ", ") + text;
  }
  line("struct " + type + " { " + members + "};");
  line("return " + type + "{" + values + "};");
  close_block("}();");
  for (size_t j = 0; j < carried.size(); ++j) {
    const Binding& b = binding_of(carried[j]);
    PYPTO_CHECK(b.idents.size() == 1 && b.idents[0] == b.text,
                "orchestration codegen: carried value '" << carried[j]->name << "' is not a declared name");
    scopes_.declare_exact(b.text, true);   // fresh: chosen against every enclosing block
    // (A far value may die in its own chunk, which ended after the calls that read it.)
    line("[[maybe_unused]] auto& " + b.text + " = " + handoff + ".v" + std::to_string(j) + ";");
  }
}

// In a function whose calls are in blocks of their own, a loop, if or runtime scope printed in
// the optimised entry is printed in an unoptimised function of its own, called in place (its
// carries, results and exit slots are declared before it, and bound after it, outside):
//
//   Tensor acc = t0;                          // a carry
//   [&]() PYPTO_UNOPTIMISED {
//       for (int64_t i = 0; i < 2; i += 1) { ... acc = ...; }
//   }();
//
// g++ -O2 time grows faster than linearly with one function's size, loops and scopes as well
// as calls: an unrolled program of 500 two-call loops took 66 s and 791 MB to build (1.5 s and
// 146 MB so), one of 150 two-call MANUAL scopes 6 s. The entry's outermost PTO2_SCOPE is such a
// statement, so its whole body is unoptimised (blocks share stack slots at -O0 too: the Args
// of a block's calls do not pile up), and the loops, ifs and scopes in it are in turn. Those
// nested in a loop or if, or in a chunk, print as before.
void Emitter::open_statement(const Stmt& s) {
  const bool wrap = calls_in_own_blocks() && unoptimised_depth_ == 0;
  statement_wrapped_.push_back(wrap);
  if (!wrap) return;
  open_block("[&]() PYPTO_UNOPTIMISED");   // (the preamble defines it)
  // A scope's body is a block like the entry's: its loops, ifs and scopes get functions of
  // their own in turn, which bounds each function (one -O0 function of 1,500 loops peaked at
  // 455 MB). A loop's or if's body is printed inside it.
  if (!s.is<RuntimeScopeStmt>()) ++unoptimised_depth_;
}

void Emitter::close_statement(const Stmt& s) {
  const bool wrapped = statement_wrapped_.back();
  statement_wrapped_.pop_back();
  if (!wrapped) return;
  if (!s.is<RuntimeScopeStmt>()) --unoptimised_depth_;
  close_block("}();");
}

void Emitter::emit_block_body(const StmtPtr& body) {
  transforms::FlatStmts flat(body);   // in place: no copy of a 40,000-statement body
  const std::vector<StmtPtr>& stmts = flat.stmts();
  emit_alloc_batch(batchable_creates(stmts));
  size_t calls = 0;
  if (calls_in_own_blocks()) {
    for (const StmtPtr& s : stmts) calls += transforms::IsSelfContainedTask(*s) || transforms::TupleResult(*s);
  }
  const bool chunked = calls >= static_cast<size_t>(transforms::kCallChunkMin);
  for (size_t i = 0; i < stmts.size();) {
    if (!chunked || !in_call_chunk(stmts, i)) {
      emit_stmt(stmts[i++]);
      continue;
    }
    const size_t end = chunk_end(stmts, i);
    emit_call_chunk(stmts, i, end);
    i = end;
  }
}

void Emitter::emit_stmt(const StmtPtr& s) {
  if (!s->is<SeqStmts>()) stmt_span_ = s->span;
  switch (s->kind) {
    case NodeKind::SeqStmts:
      for (auto& c : s->as<SeqStmts>()->stmts) emit_stmt(c);
      return;
    case NodeKind::AssignStmt: {
      auto* a = s->as<AssignStmt>();
      emit_assign(*a);
      if (scope_exits_.slots(a)) assign_exit_slots(*a, {a->var});   // read after its runtime scope
      return;
    }
    case NodeKind::EvalStmt: {
      const ExprPtr& e = s->as<EvalStmt>()->expr;
      auto* c = e->as<Call>();
      if (c && c->is_op && c->callee == "system.assert") {
        line("pto2_assert(" + common::CppTruthText(expr(c->args[0]), common::ScalarDtypeOf(c->args[0])) + ", " +
             common::CppAssertArgs(*c) + ");");
        return;
      }
      PYPTO_CHECK(e->is<Submit>() || (c && !c->is_op), "orchestration codegen: an expression statement that is not a task");
      emit_task(*e, nullptr);
      return;
    }
    case NodeKind::ForStmt: print_for(*s->as<ForStmt>()); return;
    case NodeKind::IfStmt: print_if(*s->as<IfStmt>()); return;
    case NodeKind::YieldStmt: print_yield(*s->as<YieldStmt>()); return;
    case NodeKind::RuntimeScopeStmt: emit_runtime_scope(*s->as<RuntimeScopeStmt>()); return;
    case NodeKind::ReturnStmt: return;   // the entry returns void; outputs are Out/InOut tensors
    case NodeKind::ScopeStmt:   // outlined by OutlineIncoreScopes / OutlineClusterScopes
#define PYPTO_EXPR_NODE(Name) case NodeKind::Name:   // no expression is a statement
#include "pypto/ir/node_kinds.def"
      PYPTO_CHECK(false, "orchestration codegen: unexpected statement " << to_string(s->kind));
  }
}

void Emitter::emit_assign(const AssignStmt& a) {
  const Var* var = a.var.get();
  const ExprPtr& value = a.value;
  if (auto* c = value->as<Call>()) {
    if (!c->is_op) {
      emit_task(*c, var);
      return;
    }
    if (c->callee == "tensor.create" && is_batched(var)) return;
    const OrchestrationOpHandler* h = OrchestrationOpRegistry::instance().find(c->callee);
    PYPTO_CHECK(h, "orchestration codegen: no handler for '" << c->callee << "' (VerifyOrchestrationProgram admits it)");
    (*h)(*this, var, *c);
    return;
  }
  if (value->is<Submit>()) {
    emit_task(*value, var);
    return;
  }
  if (auto* g = value->as<TupleGetItem>()) {
    emit_tuple_element(var, *g);
    return;
  }
  if (auto* src = as_var(value)) {
    bind(var, binding_of(src));
    return;
  }
  auto* st = var->type->as<ScalarType>();
  PYPTO_CHECK(st && !value->is<MakeTuple>(), "orchestration codegen: unsupported assignment (VerifyOrchestrationProgram admits it)");
  std::string text = strip_parens(expr(value));
  std::string name = declare(var);
  line(ctype(st->dtype) + " " + name + " = " + text + ";");
}

}  // namespace pypto::codegen::orchestration
