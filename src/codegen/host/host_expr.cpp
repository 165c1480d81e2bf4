// HOST orchestration codegen: scalar expressions (loop bounds, branch conditions, scalar
// arguments of next-level tasks) and their encoding into 64-bit scalar slots — the same
// printer and slot spelling as L2 orchestration code (common/cpp_scalar_expr.h); this file
// supplies the HOST spelling: Var bindings, TaskHandle, and the error messages.
#include "host_emitter.h"
#include "pypto/ir/error.h"

namespace pypto::codegen::host {

using namespace pypto::ir;

std::string HostEmitter::ctype(DataType d) { return common::CppScalarType(d, "TaskHandle"); }

std::string HostEmitter::expr(const ExprPtr& e) { return print_scalar(e); }

std::string HostEmitter::var_text(const Var* v, const Span& span) { return ref(v, span); }

void HostEmitter::unsupported(const ExprPtr& e) {
  throw InternalError(std::string("HOST codegen: a ") + to_string(e->kind) +
                      " in a scalar expression (VerifyHostProgram refuses it)");
}

std::string HostEmitter::scalar_slot(const ExprPtr& e, DataType param_dtype, const std::string& site_args) {
  return common::CppScalarSlot(expr(e), common::ScalarDtypeOf(e), param_dtype, site_args);
}

}  // namespace pypto::codegen::host
