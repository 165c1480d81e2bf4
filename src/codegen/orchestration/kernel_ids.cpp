// Kernel ids: per callee, in order of first use (spec README decision 3). (Core types are pass
// results: Function::core_type, stamped by InferKernelCoreTypes.)
#include "emitter.h"
#include "pypto/ir/error.h"
#include "pypto/ir/visitor.h"

namespace pypto::codegen {

using namespace ir;

namespace orchestration {

int Emitter::kernel_id(const std::string& callee) {
  auto it = kernel_ids_.find(callee);
  if (it != kernel_ids_.end()) return it->second;
  int id = static_cast<int>(kernel_ids_.size());
  kernel_ids_[callee] = id;
  return id;
}

}  // namespace orchestration
}  // namespace pypto::codegen
