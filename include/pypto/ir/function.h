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

// How a kernel called from a Group binds to the Group's mixed task (pass KernelGroupSync):
// kernel param i reads the Group's tensor / scalar slot `slots[i]`; the kernel waits for the
// group flags `waits` before its body and signals `signals` after it. Empty for a kernel no
// Group calls. Printed as @pl.function options: group_slots=[0, 1], group_waits=[0], group_signals=[].
struct GroupSync {
  std::vector<int64_t> slots;
  std::vector<int64_t> waits;
  std::vector<int64_t> signals;
  bool empty() const { return slots.empty() && waits.empty() && signals.empty(); }
  bool operator==(const GroupSync& o) const { return slots == o.slots && waits == o.waits && signals == o.signals; }
  bool operator!=(const GroupSync& o) const { return !(*this == o); }
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

  static std::shared_ptr<const Function> make(std::string name, FunctionType type, std::vector<VarPtr> params,
                                              std::vector<ParamDirection> dirs, std::vector<TypePtr> return_types,
                                              StmtPtr body, Level level = Level::None, Role role = Role::None,
                                              Attrs attrs = {}, Span span = {});
  // A copy with core_type set: `fn->with_core_type(CoreType::AIV)`.
  std::shared_ptr<const Function> with_core_type(CoreType t) const;
  // A copy with group_sync set: `fn->with_group_sync({{0, 1}, {}, {0}})`.
  std::shared_ptr<const Function> with_group_sync(GroupSync g) const;
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
