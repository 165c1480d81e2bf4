// Functions and programs.
//
// A Function has typed params, each with a ParamDirection (tensors: In / Out / InOut; scalars
// are always In), return types, and a body ending in a ReturnStmt (or none for no returns).
// A Program holds functions by name, in definition order; calls name their callee.
// Dynamic-dim symbols (`pl.dynamic("M")`) are Vars of type Scalar[INDEX] shared by pointer
// across every type that mentions them; Program::dynamic_dims lists them in definition order.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pypto/ir/stmt.h"

namespace pypto::ir {

// How a kernel called from a Group synchronises inside the Group's mixed task (pass
// KernelGroupSync): the kernel waits for the group flags `waits` before its body and signals
// `signals` after it. Empty for a kernel no Group calls (its parameter slots are
// Function::param_slots). Printed as @pl.function options: group_waits=[0], group_signals=[1].
struct GroupSync {
  std::vector<int64_t> waits;
  std::vector<int64_t> signals;
  bool empty() const { return waits.empty() && signals.empty(); }
  bool operator==(const GroupSync& o) const { return waits == o.waits && signals == o.signals; }
  bool operator!=(const GroupSync& o) const { return !(*this == o); }
};

// The two kernels a Group runs as one mixed task (pass StampGroupKernels): the AIC one and the
// AIV one by stamped core type, "" for a core it leaves idle. Empty for every other function.
// Printed as @pl.function options group_aic="mm", group_aiv="act".
struct GroupKernels {
  std::string aic;
  std::string aiv;
  bool empty() const { return aic.empty() && aiv.empty(); }
  bool operator==(const GroupKernels& o) const { return aic == o.aic && aiv == o.aiv; }
  bool operator!=(const GroupKernels& o) const { return !(*this == o); }
};

// What ResolveTaskIds decided about one TaskId value of an orchestration function: how the
// generated code names it. Printed as the @pl.function option
// `task_ids={"t": pl.task_id(fresh=True, read=True), "prev_1": pl.task_id(slots=4)}`.
//   slots  0: one TaskId; N: the value names an array of N TaskId slots (a pl.Array[N, TASK_ID],
//          or a pl.parallel TaskId carry held as pl.slots(N) and the results that share it)
//   fresh  always valid (straight from a submission): a dependency on it needs no is_valid() guard
//   read   a statement names it (deps=, a carry init, a yield, an array op, a copy): HOST code
//          prints `(void)h;` after the declaration of a handle nothing reads
//   submit the result tuple of the pl.submit whose TaskId this Var unpacks (`out, t = pl.submit(...)`:
//          the first unpacking of its last element in the submission's statement list), else null:
//          HOST declares the handle at the submission (`TaskHandle t = submit_next_level(...);`).
//          Printed `at_submit=True`; the parser finds the tuple from the Var's definition.
// Where one pl.Array SSA version lives (pass StampArrayBackings, spec anchor_features §13):
// arrays are updated in place, so `version` is stored in the C array of `backing` (an
// array.create result, a phi if-result or a parameter). Printed as the @pl.function option
// `array_backings={"w_1": "w", "r": "w"}`.
struct ArrayBackingEntry {
  VarPtr version;
  VarPtr backing;
};

struct TaskIdInfo {
  VarPtr var;
  int64_t slots = 0;
  bool fresh = false;
  bool read = false;
  VarPtr submit;
  bool same_facts(const TaskIdInfo& o) const {
    return slots == o.slots && fresh == o.fresh && read == o.read && (submit == nullptr) == (o.submit == nullptr);
  }
};

struct Function {
  std::string name;
  FunctionType type = FunctionType::Opaque;
  Level level = Level::None;
  Role role = Role::None;
  std::vector<VarPtr> params;
  std::vector<ParamDirection> param_directions;   // one per param
  std::vector<TypePtr> return_types;
  StmtPtr body;
  Attrs attrs;
  Span span;
  // Pass results (typed, printed as @pl.function options, compared by structural equality).
  CoreType core_type = CoreType::Unknown;   // InferKernelCoreTypes; Unknown before it runs
  GroupSync group_sync;                     // KernelGroupSync; empty before it runs
  // KernelParamSlots: kernel param i reads the task's tensor slot (a tensor param) or scalar slot
  // (a scalar param) `param_slots[i]`: the Group's slot of the argument for a kernel a Group
  // calls, else tensors and scalars counted apart in parameter order. Empty before it runs and
  // for non-kernels. Printed as the @pl.function option `param_slots=[0, 1, 0]`.
  std::vector<int64_t> param_slots;
  // ResolveTaskIds: one entry per TaskId Var the body defines, in definition order (empty before
  // it runs, and for functions without TaskIds).
  std::vector<TaskIdInfo> task_ids;
  // StampReturnedParams: for each return value, the index of the parameter it writes back (the
  // caller's result aliases the argument passed there), or -1. Empty before it runs and for
  // functions without a return. Printed as the @pl.function option `returned_params=[2]`.
  std::vector<int64_t> returned_params;
  // StampGroupKernels: a Group's AIC and AIV kernels (empty for other functions).
  GroupKernels group_kernels;
  // CountTaskStatements: an Orchestration function's task statements (kernel / Group calls with a
  // non-tuple result and pl.submits, each once, through loops, branches and scopes); 0 for other
  // functions. Printed as the @pl.function option `task_statements=3` (when non-zero).
  int64_t task_statements = 0;
  // StampAllocationBatches: the tensor.create results of an Orchestration function the L2
  // generator allocates in one alloc_tensors call at their block's entry, in program order.
  // Printed as the @pl.function option `batched_creates=["c", "d"]` (when non-empty).
  std::vector<VarPtr> batched_creates;
  // StampArrayBackings: for each pl.Array version of an Orchestration function stored in another
  // Var's C array, that Var, in program order (a version absent here is its own storage: an
  // array.create result, a phi if-result). Printed as the @pl.function option
  // `array_backings={"w_1": "w"}` (when non-empty).
  std::vector<ArrayBackingEntry> array_backings;
  // StampNonNegativeVars: the scalar Vars of an Orchestration function known to be >= 0 (its
  // tensor parameters' dynamic-dim symbols, then the loop variables of loops with a literal
  // start >= 0 and a literal step > 0, in program order), so the L2 generator prints `//` and `%`
  // over them as the plain C++ operators. Printed as the @pl.function option
  // `non_negative_vars=["M", "i"]` (when non-empty).
  std::vector<VarPtr> non_negative_vars;
  // StampCallOperands: the values of an Orchestration function computed between kernel calls
  // (slices, views, scalar expressions, copies, in-place assembles) that the L2 generator may
  // print inside a chunk of calls, and the elements of the tasks with a tuple result it may
  // (`out, tid = pl.submit(...)`: `out`, `tid`), in program order. Printed as the @pl.function
  // option `call_operands=["s0", "s1"]` (when non-empty).
  std::vector<VarPtr> call_operands;
  // StampCallOperands: the results of the kernel calls after which one of call_operands is
  // still read (a chunk of calls must not end there), in program order; a task with a tuple
  // result is named by its first element. Printed as the @pl.function option
  // `open_calls=["t3"]` (when non-empty).
  std::vector<VarPtr> open_calls;
  // StampCallOperands: the results of the calls after which a chunk of calls must end (every
  // 64th call of a run that a value of call_operands is live across), in program order. Printed
  // as the @pl.function option `cut_calls=["t63"]` (when non-empty).
  std::vector<VarPtr> cut_calls;
  // StampCallOperands: the values of call_operands live across one of cut_calls, which the
  // chunk declaring them hands to the next one, in program order. Printed as the @pl.function
  // option `carried_operands=["s63"]` (when non-empty).
  std::vector<VarPtr> carried_operands;

  static std::shared_ptr<const Function> make(std::string name, FunctionType type, std::vector<VarPtr> params,
                                              std::vector<ParamDirection> dirs, std::vector<TypePtr> return_types,
                                              StmtPtr body, Level level = Level::None, Role role = Role::None,
                                              Attrs attrs = {}, Span span = {});
  // A copy with core_type set: `fn->with_core_type(CoreType::AIV)`.
  std::shared_ptr<const Function> with_core_type(CoreType t) const;
  // A copy with group_sync set: `fn->with_group_sync({{}, {0}})`.
  std::shared_ptr<const Function> with_group_sync(GroupSync g) const;
  // A copy with param_slots set: `fn->with_param_slots({0, 1, 0})`.
  std::shared_ptr<const Function> with_param_slots(std::vector<int64_t> slots) const;
  // A copy with task_ids set (each entry's var a TaskId defined in the body):
  // `fn->with_task_ids({{tid, 0, true, true}})`.
  std::shared_ptr<const Function> with_task_ids(std::vector<TaskIdInfo> ids) const;
  // A copy with returned_params set: `fn->with_returned_params({2})`.
  std::shared_ptr<const Function> with_returned_params(std::vector<int64_t> params) const;
  // A copy with group_kernels set: `fn->with_group_kernels({"mm", "act"})`.
  std::shared_ptr<const Function> with_group_kernels(GroupKernels kernels) const;
  // A copy with task_statements set: `fn->with_task_statements(3)`.
  std::shared_ptr<const Function> with_task_statements(int64_t n) const;
  // A copy with batched_creates set (each a Var the body assigns): `fn->with_batched_creates({c})`.
  std::shared_ptr<const Function> with_batched_creates(std::vector<VarPtr> vars) const;
  // A copy with array_backings set (each pair two array Vars): `fn->with_array_backings({{w_1, w}})`.
  std::shared_ptr<const Function> with_array_backings(std::vector<ArrayBackingEntry> entries) const;
  // A copy with non_negative_vars set (each a scalar Var): `fn->with_non_negative_vars({m, i})`.
  std::shared_ptr<const Function> with_non_negative_vars(std::vector<VarPtr> vars) const;
  // A copy with call_operands set (each a Var the body assigns): `fn->with_call_operands({s0, s1})`.
  std::shared_ptr<const Function> with_call_operands(std::vector<VarPtr> vars) const;
  // A copy with open_calls set (each a Var the body assigns): `fn->with_open_calls({t3})`.
  std::shared_ptr<const Function> with_open_calls(std::vector<VarPtr> vars) const;
  // A copy with cut_calls set (each a Var the body assigns): `fn->with_cut_calls({t63})`.
  std::shared_ptr<const Function> with_cut_calls(std::vector<VarPtr> vars) const;
  // A copy with carried_operands set (each a Var the body assigns): `fn->with_carried_operands({s63})`.
  std::shared_ptr<const Function> with_carried_operands(std::vector<VarPtr> vars) const;
  // The Var whose C array the pl.Array version `v` lives in: its array_backings entry, else `v`
  // itself (`fn.array_backing_of(w_1) == w`).
  const Var* array_backing_of(const Var* v) const;
  // The entry of TaskId `v` (null when ResolveTaskIds did not stamp it): `fn.task_id_info(tid)->fresh`.
  const TaskIdInfo* task_id_info(const Var* v) const;
  // Type of a call to this function: the single return type, a TupleType of several, or unit.
  TypePtr call_result_type() const;
  bool is_kernel() const { return type == FunctionType::InCore || type == FunctionType::AIC || type == FunctionType::AIV; }
};
using FunctionPtr = std::shared_ptr<const Function>;

struct Program {
  std::string name;
  std::vector<FunctionPtr> functions;   // definition order
  std::vector<VarPtr> dynamic_dims;     // pl.dynamic symbols, definition order
  Span span;

  static std::shared_ptr<const Program> make(std::string name, std::vector<FunctionPtr> functions,
                                             std::vector<VarPtr> dynamic_dims = {}, Span span = {});
  FunctionPtr get(const std::string& name) const;   // null if absent
  // A copy with `fn` replacing the function of the same name (or appended if new).
  std::shared_ptr<const Program> with_function(FunctionPtr fn) const;
};
using ProgramPtr = std::shared_ptr<const Program>;

}  // namespace pypto::ir
