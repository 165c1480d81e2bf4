// OrchestrationOpRegistry (op_registry.h).
#include "op_registry.h"

#include "pypto/ir/error.h"

namespace pypto::codegen::orchestration {

OrchestrationOpRegistry& OrchestrationOpRegistry::Instance() {
  static OrchestrationOpRegistry r;
  return r;
}

bool OrchestrationOpRegistry::Register(const std::string& op, OrchestrationOpHandler handler) {
  PYPTO_CHECK(handlers_.emplace(op, std::move(handler)).second, "orchestration op handler for '" << op << "' registered twice");
  return true;
}

const OrchestrationOpHandler* OrchestrationOpRegistry::Get(const std::string& op) const {
  auto it = handlers_.find(op);
  return it == handlers_.end() ? nullptr : &it->second;
}

}  // namespace pypto::codegen::orchestration
