// Short human-readable spellings of types and simple exprs, for diagnostics raised by the IR
// factories and the op type inference (the printer in printer.cpp is the full DSL printer;
// this one has no dependency on it and never throws).
//
//   describe(TensorType::make({ConstInt::make(16), M}, DataType::FP32))  -> "Tensor[[16, M], FP32]"
#pragma once
#include <string>
#include <vector>

#include "pypto/ir/expr.h"

namespace pypto::ir::detail {

std::string describe(const TypePtr& t);
std::string describe(const ExprPtr& e);
std::string describe_shape(const std::vector<ExprPtr>& shape);   // "[16, M]"

}  // namespace pypto::ir::detail
