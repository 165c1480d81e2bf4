// The kernel table (KernelTable -> KernelTableResult), the generator's output besides the text:
// kernel ids per callee in order of first use (spec README decision 3), core types (pass results:
// Function::core_type, stamped by InferKernelCoreTypes) and signatures as first submitted.
#include "emitter.h"
#include "pypto/ir/error.h"
#include "pypto/ir/visitor.h"

namespace pypto::codegen {

using namespace ir;

namespace orchestration {

void KernelTable::set_core_type(const std::string& callee, CoreType core) { result_.core_types[callee] = core; }

int KernelTable::submit(const std::string& kernel, CoreType core, const std::vector<std::string>& signature) {
  set_core_type(kernel, core);
  result_.kernel_signatures.emplace(kernel, signature);   // the first submission's
  auto it = result_.kernel_ids.find(kernel);
  if (it != result_.kernel_ids.end()) return it->second;
  int id = static_cast<int>(result_.kernel_ids.size());
  result_.kernel_ids[kernel] = id;
  return id;
}

}  // namespace orchestration
}  // namespace pypto::codegen
