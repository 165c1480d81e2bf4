// A pass and the pass manager.
//
// A Pass is a named Program -> Program rewrite with a contract over IR properties
// (ir_property.h): the properties it requires, the ones it produces and the ones it
// invalidates (may break). The PassManager runs a flat list of passes in order and enforces
// the contracts:
//   - a pass whose required property is not established by the input or an earlier pass (or
//     was invalidated since) is refused;
//   - a property a pass invalidates is dropped from the established set; a pass may not both
//     produce and invalidate one property;
//   - verify mode (default on) runs the verifier of each produced property after the pass;
//   - verify_well_formed mode (PYPTO_VERIFY_PASSES=1; the test suites set it) also runs the
//     well-formedness verifier (well_formed.h) after every pass and re-verifies every
//     established property the pass did not declare invalidated, so an undeclared
//     invalidation is caught at the pass that does it.
// It can also write the printed IR (pypto::ir::python_print) after each pass:
//
//   PassManager pm(DefaultPipeline(), PassOptions::FromEnv());   // PYPTO_DUMP_IR=<dir>
//   ProgramPtr out = pm.Run(program);    // writes <dir>/00_Input.py, <dir>/01_NormalizeReturnOrder.py, ...
//
// A single pass runs on its own with RunPass(pass, program), which checks the pass's
// produced properties and well-formedness the same way (Python: pypto.ir.passes.<Name>()(program)).
#pragma once
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "pypto/ir/function.h"
#include "pypto/transforms/ir_property.h"

namespace pypto::transforms {

struct Pass {
  std::string name;                       // PascalCase, also the dump file name
  std::vector<IRProperty> required;
  std::vector<IRProperty> produced;
  std::function<ir::ProgramPtr(const ir::ProgramPtr&)> run;
  // Properties the pass may break (dropped by the manager after it runs). Last, so that a
  // `Pass{name, required, produced, run}` that invalidates nothing stays valid.
  std::vector<IRProperty> invalidated = {};
  // A verifier pass: run() itself checks its produced properties (and throws when one does
  // not hold), so verify mode does not walk the program a second time to check them again.
  bool checks_produced = false;
};

struct PassOptions {
  std::string dump_dir;            // non-empty: write the printed IR after each pass here
  bool verify = true;              // run the verifier of each produced property after its pass
  std::set<IRProperty> assumed;    // properties the input is known to have already
  // Run VerifyWellFormed after every pass and re-verify the properties it keeps.
  bool verify_well_formed = false;
  // Run AutoDeriveTaskDependencies (compile-time switch analyze_auto_scopes_for_deps; default
  // off as the spec says): compiler-derived task edges in AUTO regions.
  bool analyze_auto_scopes_for_deps = false;
  // Print each pass's CPU time (the pass and its verifiers) to stderr, to find which pass
  // grows faster than the program does.
  bool time_passes = false;
  // dump_dir from PYPTO_DUMP_IR (empty when unset); verify_well_formed from
  // PYPTO_VERIFY_PASSES and time_passes from PYPTO_TIME_PASSES (on when set to anything but
  // "" or "0").
  static PassOptions FromEnv();
};

class PassManager {
 public:
  explicit PassManager(std::vector<Pass> passes, PassOptions options = {});
  // Runs every pass in order. InternalError if a pass's requirement is missing or (verify
  // mode) a produced property does not hold afterwards.
  ir::ProgramPtr Run(const ir::ProgramPtr& program) const;
  const std::vector<Pass>& passes() const { return passes_; }

 private:
  std::vector<Pass> passes_;
  PassOptions options_;
};

// Runs one pass outside a pipeline: verifies that its required properties hold on the input
// (InternalError listing the violations otherwise), runs it, and (as the manager does)
// verifies its produced properties and, with options.verify_well_formed, well-formedness.
//   ProgramPtr out = RunPass(NormalizeReturnOrder(), program);
ir::ProgramPtr RunPass(const Pass& pass, const ir::ProgramPtr& program, const PassOptions& options = PassOptions::FromEnv());

// The default pipeline, one flat list (see pipeline.cpp): the orchestration passes, then the
// kernel pipeline.
std::vector<Pass> DefaultPipeline();
// The same with AutoDeriveTaskDependencies before MaterializeRuntimeScopes when
// `analyze_auto_scopes_for_deps` (DefaultPipeline(false) == DefaultPipeline()).
std::vector<Pass> DefaultPipeline(bool analyze_auto_scopes_for_deps);
// The kernel pipeline: the passes that analyse kernel (InCore / AIC / AIV) and Group
// functions and stamp their typed results (Function::core_type, ...). Part of DefaultPipeline.
std::vector<Pass> KernelPipeline();

// Runs DefaultPipeline() with `options` (default: PassOptions::FromEnv()).
ir::ProgramPtr RunDefaultPipeline(const ir::ProgramPtr& program);
ir::ProgramPtr RunDefaultPipeline(const ir::ProgramPtr& program, const PassOptions& options);

// The deepest nesting the recursive passes and code generators accept (far beyond what the
// DSL parser produces): statements (bodies of scopes, loops, branches, sequences) and
// expressions. PassManager::Run checks it first (check_nesting_depth.cpp).
constexpr int kMaxStmtDepth = 2000;
constexpr int kMaxExprDepth = 10000;
// Throws a UserError at the first statement / expression nested deeper than the limits above.
//   CheckNestingDepth(program);
void CheckNestingDepth(const ir::ProgramPtr& program);

}  // namespace pypto::transforms
