// How a Group body calls its kernels (group_calls.h): shared by KernelParamSlots and
// KernelGroupSync.
#include "group_calls.h"

#include "pypto/ir/mutator.h"

namespace pypto::transforms {

using namespace ir;

const Call* GroupStmtCall(const StmtPtr& st) {
  const Call* call = nullptr;
  if (auto* a = st->as<AssignStmt>()) call = a->value->as<Call>();
  else if (auto* e = st->as<EvalStmt>()) call = e->expr->as<Call>();
  return call && !call->is_op ? call : nullptr;
}

const Var* ResolveGroupValue(const Program& program, const Function& group, const ExprPtr& e, int depth) {
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

}  // namespace pypto::transforms
