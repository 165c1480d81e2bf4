// A pass and the pass manager.
//
// A Pass is a named Program -> Program rewrite with declared required / produced properties
// (ir_property.h). The PassManager runs a flat list of passes in order; it refuses a pass
// whose required properties are not established by the input or an earlier pass, can run the
// verifier of each produced property after the pass (verify mode), and can write the printed
// IR (pypto::ir::python_print) after each pass:
//
//   PassManager pm(DefaultPipeline(), PassOptions::FromEnv());   // PYPTO_DUMP_IR=<dir>
//   ProgramPtr out = pm.Run(program);    // writes <dir>/00_Input.py, <dir>/01_NormalizeReturnOrder.py, ...
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
};

struct PassOptions {
  std::string dump_dir;            // non-empty: write the printed IR after each pass here
  bool verify = true;              // run the verifier of each produced property after its pass
  std::set<IRProperty> assumed;    // properties the input is known to have already
  // dump_dir from the environment variable PYPTO_DUMP_IR (empty when unset).
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

// The default orchestration pipeline, one flat list (see pipeline.cpp).
std::vector<Pass> DefaultPipeline();

// Runs DefaultPipeline() with `options` (default: PassOptions::FromEnv()).
ir::ProgramPtr RunDefaultPipeline(const ir::ProgramPtr& program);
ir::ProgramPtr RunDefaultPipeline(const ir::ProgramPtr& program, const PassOptions& options);

}  // namespace pypto::transforms
