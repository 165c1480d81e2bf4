// Explicit dependencies of one task, scheduling predicates, dummy barriers and TaskId
// lifetime across PTO2_SCOPE blocks (orchestration_codegen.txt "Manual Scope and TaskId
// Lowering", "Unresolvable dep edges", "Phase-fence dummy barriers"):
//
//   PTO2TaskId params_t1_deps[K];                 // K = exact edge count (an array dep counts N)
//   uint32_t params_t1_deps_count = 0;
//   params_t1_deps[params_t1_deps_count++] = tid;                          // fresh submit id
//   if (carry.is_valid()) params_t1_deps[params_t1_deps_count++] = carry;  // may be invalid
//   for (int64_t k = 0; k < 4; ++k) {                                      // array: N slots
//       if (arr[k].is_valid()) params_t1_deps[params_t1_deps_count++] = arr[k];
//   }
//   params_t1.set_dependencies(params_t1_deps, params_t1_deps_count);
//   params_t1.set_predicate(CoreTaskPredicate(ext_rc, {0, 0}, PredicateOp::GT, 0));
//
//   barrier = pl.system.task_dummy(deps=[a, b])  ->
//   Arg params_t2;  <dep array>
//   PTO2TaskId barrier = PTO2TaskId::invalid();
//   if (params_t2_deps_count > 0) barrier = rt_submit_dummy_task(params_t2).task_id();
// (a statically empty task_dummy is submitted unconditionally.)
#include <unordered_set>

#include "emitter.h"
#include "op_registry.h"
#include "pypto/ir/error.h"

namespace pypto::codegen::orchestration {

using namespace ir;

namespace {

std::string line_of(const Span& s) {
  if (!s.known()) return "an unknown line";
  return (s.file.empty() ? std::string("line ") : s.file + ":") + std::to_string(s.line);
}

const char* predicate_op(BinaryOp op, bool mirrored, const Span& span) {
  switch (op) {
    case BinaryOp::Eq: return "PredicateOp::EQ";
    case BinaryOp::Ne: return "PredicateOp::NE";
    case BinaryOp::Gt: return mirrored ? "PredicateOp::LT" : "PredicateOp::GT";
    case BinaryOp::Lt: return mirrored ? "PredicateOp::GT" : "PredicateOp::LT";
    case BinaryOp::Ge: return mirrored ? "PredicateOp::LE" : "PredicateOp::GE";
    case BinaryOp::Le: return mirrored ? "PredicateOp::GE" : "PredicateOp::LE";
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod:
    case BinaryOp::Min:
    case BinaryOp::Max:
    case BinaryOp::And:
    case BinaryOp::Or:
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
    case BinaryOp::Shl:
    case BinaryOp::Shr: break;
  }
  throw InternalError("predicate= compares with " + std::string(to_string(op)) + " at line " + std::to_string(span.line) +
                      " (VerifyOrchestrationProgram refuses it)");
}

// The tensor.read of a predicate operand (through an optional Cast), or null.
const Call* predicate_read(const ExprPtr& e) {
  const Expr* x = e.get();
  if (auto* c = x->as<Cast>()) x = c->value.get();
  auto* call = x->as<Call>();
  return (call && call->is_op && call->callee == "tensor.read") ? call : nullptr;
}

// Literal integer (ConstInt, or -ConstInt).
bool int_literal(const ExprPtr& e, int64_t* out) {
  if (auto* c = e->as<ConstInt>()) {
    *out = c->value;
    return true;
  }
  if (auto* u = e->as<UnaryExpr>(); u && u->op == UnaryOp::Neg) {
    if (auto* c = u->a->as<ConstInt>()) {
      *out = -c->value;
      return true;
    }
  }
  if (auto* k = e->as<Cast>()) return int_literal(k->value, out);
  return false;
}

}  // namespace

std::string DependencyEmitter::emit_dep_array(Emitter& e, const std::string& params, const std::vector<DepEdge>& edges,
                                            const Span& where) {
  std::vector<TaskIdRef> refs;
  std::unordered_set<const Var*> seen;
  int64_t k = 0;
  for (const DepEdge& edge : edges) {
    const Var* v = as_var(edge.id);
    PYPTO_CHECK(v, "dep edge is not a variable");
    if (!seen.insert(v).second) continue;
    std::optional<TaskIdRef> r = resolve(e, v);
    if (!r) {
      throw InternalError(std::string(edge.user_written ? "deps=" : "a compiler edge") + " names TaskId '" + v->name +
                          "' (produced at " + line_of(v->span) + "), whose scope has closed at line " +
                          std::to_string(where.line) +
                          (edge.user_written ? " (VerifyOrchestrationProgram refuses it)" : " (ResolveTaskIds drops it)"));
    }
    k += r->array_size > 0 ? r->array_size : 1;
    refs.push_back(std::move(*r));
  }
  if (refs.empty()) return "";
  std::string arr = e.scopes().declare(params + "_deps", false);
  std::string count = e.scopes().declare(params + "_deps_count", false);
  e.line("PTO2TaskId " + arr + "[" + std::to_string(k) + "];");
  e.line("uint32_t " + count + " = 0;");
  const std::string slot = arr + "[" + count + "++]";
  for (const TaskIdRef& r : refs) {
    for (auto& id : r.idents) e.scopes().use(id);
    e.task_ids().for_each_valid(r.text, r.array_size, r.always_valid,
                                [&](const std::string& t) { return slot + " = " + t + ";"; });
  }
  e.line(params + ".set_dependencies(" + arr + ", " + count + ");");
  return count;
}

void DependencyEmitter::emit_predicate(Emitter& e, const Submit& s, const std::string& params) {
  auto* cmp = s.predicate->as<BinaryExpr>();
  PYPTO_CHECK(cmp, "predicate= is not a comparison");
  int64_t target = 0;
  const Call* read = predicate_read(cmp->a);
  bool mirrored = false;
  if (read) {
    PYPTO_CHECK(int_literal(cmp->b, &target), "predicate= does not compare with an integer literal");
  } else {
    read = predicate_read(cmp->b);
    mirrored = true;
    PYPTO_CHECK(read && int_literal(cmp->a, &target), "predicate= does not compare a tensor element with a literal");
  }
  const Var* t = as_var(read->args[0]);
  PYPTO_CHECK(t && t->type->is<TensorType>(), "the predicate operand is not a named tensor");
  auto* idx = read->args.size() > 1 ? read->args[1]->as<MakeTuple>() : nullptr;
  PYPTO_CHECK(idx, "predicate tensor.read without an index list");
  std::string list;
  for (size_t i = 0; i < idx->elements.size(); ++i) list += (i ? ", " : "") + e.i64(idx->elements[i]);
  e.line(params + ".set_predicate(CoreTaskPredicate(" + e.ref(t) + ", {" + list + "}, " +
         predicate_op(cmp->op, mirrored, s.predicate->span) + ", " + common::CppIntLiteral(target) + "));");
}

void DependencyEmitter::emit_task_dependencies(Emitter& e, const Expr& task, const std::string& params) {
  std::vector<DepEdge> edges;
  const Submit* submit = task.as<Submit>();
  if (submit) {
    for (auto& d : submit->deps) edges.push_back(DepEdge{d, true});
  }
  for (auto& d : compiler_dep_edges(task)) edges.push_back(DepEdge{d, false});   // AutoDeriveTaskDependencies
  emit_dep_array(e, params, edges, task.span);
  if (submit && submit->predicate) emit_predicate(e, *submit, params);
}

namespace {

// barrier = pl.system.task_dummy(deps=[...])
void SystemTaskDummyHandler(Emitter& e, const Var* result, const Call& call) {
  PYPTO_CHECK(result, "system.task_dummy without a result");
  const int n = e.next_task();
  if (n > 0) e.blank();
  e.line("// Task " + std::to_string(n) + ": dummy barrier");
  std::string params = e.scopes().declare("params_t" + std::to_string(n), false);
  e.line("Arg " + params + ";");
  // Every barrier edge is enforced (dummy_task is not an authorship marker).
  std::vector<DependencyEmitter::DepEdge> edges;
  for (auto& d : call.manual_dep_edges) edges.push_back(DependencyEmitter::DepEdge{d, true});
  std::string count = DependencyEmitter::emit_dep_array(e, params, edges, call.span);
  std::string name = e.declare(result);
  if (count.empty()) {
    // No predecessors: still a real, ready-immediately task whose id must join its consumers
    // (ResolveTaskIds stamps it fresh).
    e.line("PTO2TaskId " + name + " = rt_submit_dummy_task(" + params + ").task_id();");
    return;
  }
  e.line("PTO2TaskId " + name + " = PTO2TaskId::invalid();");
  e.line("if (" + count + " > 0) " + name + " = rt_submit_dummy_task(" + params + ").task_id();");
}

}  // namespace

REGISTER_ORCHESTRATION_OP("system.task_dummy", SystemTaskDummyHandler);

}  // namespace pypto::codegen::orchestration
