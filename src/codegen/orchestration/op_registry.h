// Registry of orchestration codegen handlers for tensor ops (spec "Operation Registry").
// A handler emits the C++ for `result = op(args...)` and binds `result`:
//
//   void TensorTransposeHandler(Emitter& e, const ir::Var* result, const ir::Call& call);
//   REGISTER_ORCHESTRATION_OP("tensor.transpose", TensorTransposeHandler);
//
// New ops are added by registering a handler; the statement visitor is not touched.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "pypto/ir/function.h"

namespace pypto::codegen::orchestration {

class Emitter;
using OrchestrationOpHandler = std::function<void(Emitter&, const ir::Var* result, const ir::Call& call)>;

class OrchestrationOpRegistry {
 public:
  static OrchestrationOpRegistry& instance();
  bool add(const std::string& op, OrchestrationOpHandler handler);   // InternalError on a duplicate
  const OrchestrationOpHandler* find(const std::string& op) const;        // null if none
  const std::map<std::string, OrchestrationOpHandler>& handlers() const { return handlers_; }
 private:
  std::map<std::string, OrchestrationOpHandler> handlers_;
};

}  // namespace pypto::codegen::orchestration

#define PYPTO_ORCH_OP_CAT2(a, b) a##b
#define PYPTO_ORCH_OP_CAT(a, b) PYPTO_ORCH_OP_CAT2(a, b)
#define REGISTER_ORCHESTRATION_OP(op, handler)                                                   \
  static const bool PYPTO_ORCH_OP_CAT(pypto_orch_op_registered_, __COUNTER__) =                  \
      ::pypto::codegen::orchestration::OrchestrationOpRegistry::instance().add(op, handler)
