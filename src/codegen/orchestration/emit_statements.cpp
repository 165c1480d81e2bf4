// Statement dispatch and assignments. Each IR statement maps to at most a few C++ lines:
// tasks (emit_tasks.cpp), tensor ops (op_handlers.cpp), control flow (emit_control_flow.cpp);
// Var copies, tuple elements and in-place results only rebind names.
#include <algorithm>

#include "emitter.h"
#include "op_registry.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/flat_stmts.h"

namespace pypto::codegen::orchestration {

using namespace ir;

namespace {

// A kernel Call whose C++ is one self-contained `{ }` block (emit_tasks.cpp): nothing it
// declares is used after it, so a run of them can move into a function of its own.
bool is_self_contained_task(const Stmt& s) {
  const Expr* e = nullptr;
  if (auto* ev = s.as<EvalStmt>()) e = ev->expr.get();
  if (auto* a = s.as<AssignStmt>()) {
    if (a->var->type->is<TupleType>()) return false;
    e = a->value.get();
  }
  auto* c = e ? e->as<Call>() : nullptr;
  return c && !c->is_op;
}

// Runs of at least kChunkMin such calls are emitted in chunks of at most kChunkSize, each the
// body of a lambda called in place (`[&]() PYPTO_CALL_CHUNK { ... }();`): not inlined and not
// optimised. g++ -O2 time and memory grow faster than linearly with one function's size (alias
// walks, register allocation over thousands of inlined Arg methods: 1,000 calls took 40 s and
// 500 MB); bounded, unoptimised chunks that call the optimised Arg methods build in linear
// time (3,000 calls: about 2 s) for about 10% more orchestration time per task.
constexpr size_t kChunkMin = 64;
constexpr size_t kChunkSize = 64;

}  // namespace

bool Emitter::calls_in_own_blocks() const {
  return fn_->task_statements >= static_cast<int64_t>(kChunkMin);   // CountTaskStatements
}

void Emitter::emit_block_body(const StmtPtr& body) {
  transforms::FlatStmts flat(body);   // in place: no copy of a 40,000-statement body
  const std::vector<StmtPtr>& stmts = flat.stmts();
  emit_alloc_batch(batchable_creates(stmts));
  for (size_t i = 0; i < stmts.size();) {
    size_t run = 0;
    while (i + run < stmts.size() && is_self_contained_task(*stmts[i + run])) ++run;
    if (run < kChunkMin || !calls_in_own_blocks()) {
      for (size_t end = i + std::max<size_t>(run, 1); i < end; ++i) emit_stmt(stmts[i]);
      continue;
    }
    for (size_t end = i + run; i < end;) {
      blank();
      open_block("[&]() PYPTO_CALL_CHUNK");   // (defined in the file's preamble)
      for (size_t chunk_end = std::min(end, i + kChunkSize); i < chunk_end; ++i) emit_stmt(stmts[i]);
      close_block("}();");
    }
  }
}

void Emitter::emit_stmt(const StmtPtr& s) {
  if (!s->is<SeqStmts>()) stmt_span_ = s->span;
  switch (s->kind) {
    case NodeKind::SeqStmts:
      for (auto& c : s->as<SeqStmts>()->stmts) emit_stmt(c);
      return;
    case NodeKind::AssignStmt: emit_assign(*s->as<AssignStmt>()); return;
    case NodeKind::EvalStmt: {
      const ExprPtr& e = s->as<EvalStmt>()->expr;
      auto* c = e->as<Call>();
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
