// The entry prologue shared by L2 (src/codegen/orchestration) and HOST (src/codegen/host)
// orchestration code, and the config/entry function frame around the body (private to
// src/codegen).
//
// Both entries take `const ChipStorageTaskArgs& orch_args`: tensor parameters come from
// orch_args.tensor(i), scalar parameters from the 64-bit slots orch_args.scalar(j) (floats by
// union punning), and each dynamic-dim symbol from the extent of the first tensor parameter
// declaring it:
//
//   Tensor ext_x = from_tensor_arg(orch_args.tensor(0));
//   int64_t N = (int64_t)orch_args.tensor(0).ref().shapes[0];
//   union { uint64_t u64; float val; } alpha_conv;
//   alpha_conv.u64 = orch_args.scalar(0);
//   float alpha = alpha_conv.val;
//
// Usage: EntryPrologue p = BuildEntryPrologue(fn, naming, "HOST orchestration");
//        ... emit the body ...;  WriteOrchestrationEntry(os, "host", fn, p, used_dims, body, {});
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "pypto/codegen/orchestration.h"
#include "pypto/ir/function.h"

namespace pypto::codegen::common {

// How an emitter names (and binds) the C++ variables of the prologue. Called in declaration
// order: per tensor parameter its name, then its new dynamic-dim symbols; then per scalar
// parameter its name and, for a float, its punning union.
class EntryNaming {
 public:
  virtual ~EntryNaming() = default;
  virtual std::string tensor_param(const ir::Var* param) = 0;                 // e.g. "ext_x"
  virtual std::string dim_symbol(const ir::Var* sym, int slot, int axis) = 0;  // e.g. "N"
  virtual std::string scalar_param(const ir::Var* param) = 0;                 // e.g. "alpha"
  virtual std::string temporary(const std::string& base) = 0;                 // e.g. "alpha_conv"
};

struct DynamicDim {
  const ir::Var* sym;
  std::string name;
  int slot;    // tensor slot of the declaring parameter
  int axis;
};

struct EntryPrologue {
  std::vector<std::string> tensor_lines;   // one statement a line, no indent
  std::vector<std::string> scalar_lines;
  std::vector<DynamicDim> dims;            // every candidate; the emitter defines the used ones
  int tensor_count = 0;
  int scalar_count = 0;
};

// Names every parameter and dynamic-dim symbol of `fn` through `naming` and spells its
// definition. `who` names the code in errors ("orchestration", "HOST orchestration"):
// a TaskId parameter is refused by VerifyProgram before (an InternalError here).
EntryPrologue BuildEntryPrologue(const ir::Function& fn, EntryNaming& naming, const std::string& who);

// `int64_t N = (int64_t)orch_args.tensor(0).ref().shapes[0];`
std::string DynamicDimLine(const DynamicDim& d);

// The preamble lines defining `PYPTO_UNOPTIMISED` (noinline, not optimised: g++'s optimiser
// time grows faster than linearly with a function's size), which long L2 and HOST entries put
// on the functions they print their statements in: `[&]() PYPTO_UNOPTIMISED { ... }();`.
extern const char* const kUnoptimisedMacro;

// Writes `<prefix>_orchestration_config` and `<prefix>_orchestration_entry`: the prologue (its
// tensors, the given dynamic-dim lines and scalars, each under its comment), the already
// indented `body`, then `(void)name;` for each of `trailing_voids`, and `}  // extern "C"`.
void WriteOrchestrationEntry(std::ostream& os, const std::string& prefix, const ir::Function& fn,
                             const EntryPrologue& prologue, const std::vector<std::string>& dim_lines,
                             const std::string& body, const std::vector<std::string>& trailing_voids);

// The entry's parameters as reported to callers (OrchestrationResult / HostResult::signature):
// name, kind, DSL dtype, shape ("16" or a symbol), direction and orch_args slot.
std::vector<ParamSignature> EntrySignature(const ir::Function& fn);

}  // namespace pypto::codegen::common
