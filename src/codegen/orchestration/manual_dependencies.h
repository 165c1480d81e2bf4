// The dependency seam of the orchestration emitter: explicit task dependencies and TaskIds
// (orchestration_codegen.txt "Manual Scope and TaskId Lowering" to the end). The task,
// buffer and control-flow emitters call it at fixed points; everything about `deps=`,
// predicates, TaskId carries / arrays and dummy barriers lives here.
//
// Call order for one submission (emit_tasks.cpp):
//   Arg params_tN;  add_input/...  add_scalar/...  launch spec / timing slot / early resolve
//   deps.EmitTaskDependencies(...)    <- PTO2TaskId params_tN_deps[K]; ... set_dependencies; set_predicate
//   [TaskOutputTensors task_N_outs = ] rt_submit_*(...);
//   deps.AfterSubmit(...)
//
// TaskId resolution. Every dep entry is a TaskId Var; Resolve() maps it to a TaskIdRef: the
// C++ text of a scalar PTO2TaskId (a fresh pl.submit id -> unguarded; anything else ->
// `if (x.is_valid())`) or of a `PTO2TaskId arr[N]` array (N guarded slots). Bindings follow
// C++ lexical scope: on leaving a PTO2_SCOPE block every TaskId defined inside it dies, except
// arrays whose backing storage is still visible (the enclosing-storage array-carry exception).
// A user edge naming a dead TaskId is refused before printing (VerifyOrchestrationProgram runs
// the same resolution on a model of the blocks); here it is an internal error.
//
// Array carries: a rebound TaskId iter_arg of a pl.parallel(N) loop (ForStmt::carries[i] =
// pl.slots(N)) is `PTO2TaskId arr[N]` (broadcast or slot-copied from its init); each iteration writes
// `arr[i] = tid;`; reads of the iter_arg inside the loop body see the pre-loop value (the
// init), reads after it see all N slots. A sequential loop whose yield is such an array
// inherits N and copies slot by slot on its yield.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pypto/ir/function.h"

namespace pypto::codegen::orchestration {

class Emitter;

// A resolved TaskId: scalar (array_size == 0) or an array of array_size slots.
struct TaskIdRef {
  std::string text;                 // `tid`, `PTO2TaskId::invalid()`, `arr`
  std::vector<std::string> idents;  // declared C++ identifiers `text` mentions
  int64_t array_size = 0;
  bool always_valid = false;        // a fresh pl.submit TaskId: no is_valid() guard
};

class DependencyEmitter {
 public:
  virtual ~DependencyEmitter() = default;
  // Explicit dependencies and predicate of a task (a Submit or a plain Call), emitted after the
  // Arg's slots and before the submit line. `params` is the Arg's name (`params_t3`). Edges:
  // the user's Submit::deps, then the compiler-derived compiler_manual_dep_edges field,
  // deduplicated by Var.
  virtual void EmitTaskDependencies(Emitter& e, const ir::Expr& task, const std::string& params);
  // After the submit line; `task_outs` names the TaskOutputTensors ("" for a plain Call).
  virtual void AfterSubmit(Emitter& e, const ir::Submit* submit, const std::string& task_outs);
  // Declares TaskId loop carry `i` of `loop` before the loop (rebound carries only);
  // `array_size` is ForStmt::carries[i].slots (0 = scalar carry).
  virtual void DeclareTaskIdCarry(Emitter& e, const ir::ForStmt& loop, size_t i, int64_t array_size);
  // The yield of loop carry `carry` to `value`. Returns true when it emitted the update
  // itself (TaskId array carries: slot write or slot-by-slot copy); false = plain `x = v;`.
  virtual bool EmitCarryYield(Emitter& e, const ir::Var* carry, const ir::ExprPtr& value);
  // Entering / leaving a PTO2_SCOPE block (TaskId bindings must not outlive their block).
  virtual void EnterScope(Emitter& e, const ir::RuntimeScopeStmt& scope) {}
  virtual void ExitScope(Emitter& e, const ir::RuntimeScopeStmt& scope);

  // ---- used by the TaskId op handlers (task_ids.cpp, manual_dependencies.cpp) ----
  // The TaskId `v` names here, or nullopt when its binding is out of scope.
  std::optional<TaskIdRef> Resolve(Emitter& e, const ir::Var* v);
  void Register(const ir::Var* v, TaskIdRef ref) { refs_[v] = std::move(ref); }
  // One dependency edge and its provenance (DepEdge::user_written of the spec).
  struct DepEdge {
    ir::ExprPtr id;
    bool user_written;
  };
  // Emits `PTO2TaskId <params>_deps[K]; ... ; <params>.set_dependencies(...)` for `edges`
  // (deduplicated by Var, first provenance wins). A user edge that does not resolve is a
  // broken precondition (InternalError; VerifyOrchestrationProgram refuses it with the user's
  // message at `where`); a compiler edge is skipped. Returns the count variable's name
  // ("" when no edge survives: no array, no set_dependencies).
  std::string EmitDepArray(Emitter& e, const std::string& params, const std::vector<DepEdge>& edges,
                           const ir::Span& where);

 private:
  void Scan(Emitter& e);
  std::optional<TaskIdRef> ResolveImpl(Emitter& e, const ir::Var* v, int depth);
  void EmitPredicate(Emitter& e, const ir::Submit& submit, const std::string& params);

  bool scanned_ = false;
  std::unordered_map<const ir::Var*, ir::ExprPtr> defs_;                              // AssignStmt values
  std::unordered_map<const ir::Var*, std::pair<const ir::ForStmt*, size_t>> for_return_;  // loop results
  std::unordered_map<const ir::Var*, std::pair<const ir::ForStmt*, size_t>> carry_loop_;  // iter_args
  std::unordered_map<const ir::Var*, TaskIdRef> refs_;         // explicit registrations
  std::unordered_map<const ir::Var*, TaskIdRef> array_carry_;  // iter_arg -> its backing array
  std::unordered_set<const ir::Var*> dead_;                    // defined in a closed scope
};

std::unique_ptr<DependencyEmitter> MakeDependencyEmitter();

}  // namespace pypto::codegen::orchestration
