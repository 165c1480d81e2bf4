// A CppScalarExprPrinter with the default (orchestration) spellings for the codegen tests: Vars
// print by name, TaskIds as "Tid", nothing is known to be non-negative.
#pragma once
#include <string>

#include "pypto/codegen/cpp_scalar_expr.h"
#include "pypto/ir/error.h"

namespace pypto::codegen_test {

class NamePrinter : public codegen::common::CppScalarExprPrinter {
 protected:
  std::string var_text(const ir::Var* v, const ir::Span&) override { return v->name; }
  std::string scalar_type(ir::DataType d) const override { return codegen::common::CppScalarType(d, "Tid"); }
  [[noreturn]] void unsupported(const ir::ExprPtr& e) override {
    throw ir::UserError(std::string("unsupported ") + ir::to_string(e->kind), e->span, "");
  }
};

inline bool has(const std::string& code, const std::string& needle) { return code.find(needle) != std::string::npos; }

}  // namespace pypto::codegen_test
