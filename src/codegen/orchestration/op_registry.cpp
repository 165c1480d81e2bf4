// OrchestrationOpRegistry (op_registry.h).
#include "op_registry.h"

#include "pypto/codegen/orchestration.h"
#include "pypto/ir/error.h"

namespace pypto::codegen::orchestration {

OrchestrationOpRegistry& OrchestrationOpRegistry::instance() {
  static OrchestrationOpRegistry r;
  return r;
}

bool OrchestrationOpRegistry::add(const std::string& op, OrchestrationOpHandler handler) {
  PYPTO_CHECK(handlers_.emplace(op, std::move(handler)).second, "orchestration op handler for '" << op << "' registered twice");
  return true;
}

const OrchestrationOpHandler* OrchestrationOpRegistry::find(const std::string& op) const {
  auto it = handlers_.find(op);
  return it == handlers_.end() ? nullptr : &it->second;
}

void LinkBuiltinOrchestrationOps();   // op_handlers.cpp: keeps its registrations linked

}  // namespace pypto::codegen::orchestration

namespace pypto::codegen {

std::vector<std::string> OrchestrationOpNames() {
  orchestration::LinkBuiltinOrchestrationOps();
  std::vector<std::string> names;
  for (const auto& [op, handler] : orchestration::OrchestrationOpRegistry::instance().handlers()) names.push_back(op);
  return names;
}

}  // namespace pypto::codegen
