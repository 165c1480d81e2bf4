// The dependency seam of the orchestration emitter: explicit task dependencies and TaskIds
// (orchestration_codegen.txt "Manual Scope and TaskId Lowering" to the end). The task,
// buffer and control-flow emitters call it at fixed points; everything about `deps=`,
// predicates, TaskId carries / arrays and dummy barriers lives here.
//
// Call order for one submission (emit_tasks.cpp):
//   Arg params_tN;  add_input/...  add_scalar/...  launch spec / timing slot / early resolve
//   DependencyEmitter::emit_task_dependencies(...)    <- PTO2TaskId params_tN_deps[K]; ... set_dependencies; set_predicate
//   [TaskOutputTensors task_N_outs = ] rt_submit_*(...);
//
// TaskId values. ResolveTaskIds decided how each TaskId is named (Function::task_ids: slots,
// fresh); resolve() pairs that stamp with the C++ text the Var is bound to: a scalar PTO2TaskId
// (fresh -> unguarded; otherwise `if (x.is_valid())`) or a `PTO2TaskId arr[N]` array (N guarded
// slots). The text is usable while the blocks declaring its identifiers are open; the pass
// already dropped compiler edges to TaskIds out of scope, and VerifyOrchestrationProgram refused
// user edges to them, so an unresolvable edge here is an internal error.
//
// Array carries: a rebound TaskId iter_arg of a pl.parallel(N) loop (ForStmt::carries[i] =
// pl.slots(N)) is `PTO2TaskId arr[N]` (broadcast or slot-copied from its init); each iteration writes
// `arr[i] = tid;`; the iter_arg is bound to the init's text (each iteration reads the value from
// before the loop), the loop's result to the array. A sequential loop whose yield is such an
// array inherits N and copies slot by slot on its yield.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pypto/ir/function.h"

namespace pypto::codegen::orchestration {

class Emitter;
struct Binding;

// A resolved TaskId: scalar (array_size == 0) or an array of array_size slots.
struct TaskIdRef {
  std::string text;                 // `tid`, `PTO2TaskId::invalid()`, `arr`
  std::vector<std::string> idents;  // declared C++ identifiers `text` mentions
  int64_t array_size = 0;
  bool always_valid = false;        // a fresh pl.submit TaskId: no is_valid() guard
};

// Stateless: every fact comes from the IR stamps and the Emitter's bindings, so each entry point
// is static (`DependencyEmitter::resolve(e, v)`), and the Emitter holds no dependency state.
class DependencyEmitter {
 public:
  // Explicit dependencies and predicate of a task (a Submit or a plain Call), emitted after the
  // Arg's slots and before the submit line. `params` is the Arg's name (`params_t3`). Edges:
  // the user's Submit::deps, then the compiler-derived compiler_manual_dep_edges field,
  // deduplicated by Var.
  static void emit_task_dependencies(Emitter& e, const ir::Expr& task, const std::string& params);
  // Declares TaskId loop carry `i` of `loop` before the loop (rebound carries only) and binds
  // its iter_arg; returns what the loop's result names after the loop (the carry's storage).
  static Binding declare_task_id_carry(Emitter& e, const ir::ForStmt& loop, size_t i);
  // The yield of TaskId loop carry `i` of `loop` (storage `target`) to `value`. Returns true when
  // it emitted the update itself (array carries: slot write or slot-by-slot copy); false = plain
  // `x = v;`.
  static bool emit_carry_yield(Emitter& e, const ir::ForStmt& loop, size_t i, const std::string& target,
                      const ir::ExprPtr& value);

  // The TaskId `v` names here (its binding and stamp), or nullopt when its text is out of scope.
  static std::optional<TaskIdRef> resolve(Emitter& e, const ir::Var* v);
  // One dependency edge and its provenance (DepEdge::user_written of the spec).
  struct DepEdge {
    ir::ExprPtr id;
    bool user_written;
  };
  // Emits `PTO2TaskId <params>_deps[K]; ... ; <params>.set_dependencies(...)` for `edges`
  // (deduplicated by Var, first provenance wins). An edge that does not resolve is a broken
  // precondition (InternalError). Returns the count variable's name ("" when there is no edge:
  // no array, no set_dependencies).
  static std::string emit_dep_array(Emitter& e, const std::string& params, const std::vector<DepEdge>& edges,
                                  const ir::Span& where);

 private:
  static void emit_predicate(Emitter& e, const ir::Submit& submit, const std::string& params);
};

}  // namespace pypto::codegen::orchestration
