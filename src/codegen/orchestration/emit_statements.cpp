// Statement dispatch and assignments. Each IR statement maps to at most a few C++ lines:
// tasks (emit_tasks.cpp), tensor ops (op_handlers.cpp), control flow (emit_control_flow.cpp);
// Var copies, tuple elements and in-place results only rebind names.
#include "emitter.h"
#include "op_registry.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/scope_carries.h"

namespace pypto::codegen::orchestration {

using namespace ir;

void Emitter::emit_block_body(const StmtPtr& body) {
  std::vector<StmtPtr> stmts = flatten_stmts(body);
  emit_alloc_batch(batchable_creates(stmts));
  const YieldStmt* outer_yield = block_yield_;
  block_yield_ = transforms::TrailingYield(stmts);
  for (auto& s : stmts) emit_stmt(s);
  block_yield_ = outer_yield;
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
    case NodeKind::ForStmt: emit_for(*s->as<ForStmt>()); return;
    case NodeKind::IfStmt: emit_if(*s->as<IfStmt>()); return;
    case NodeKind::YieldStmt: emit_yield(*s->as<YieldStmt>()); return;
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
    const OrchestrationOpHandler* h = OrchestrationOpRegistry::Instance().Get(c->callee);
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
