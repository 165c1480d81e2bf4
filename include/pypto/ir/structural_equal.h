// Structural equality and hashing. Two IRs are equal when they have the same shape, ops,
// constants, types, attrs and spans aside; variables are matched by position of definition
// (a bijection built as definitions are met), not by name. Function and callee names compare
// as strings. Spans are ignored.
#pragma once
#include <cstddef>
#include <string>

#include "pypto/ir/function.h"

namespace pypto::ir {

bool structural_equal(const ProgramPtr& a, const ProgramPtr& b);
bool structural_equal(const FunctionPtr& a, const FunctionPtr& b);
bool structural_equal(const StmtPtr& a, const StmtPtr& b);
bool structural_equal(const ExprPtr& a, const ExprPtr& b);   // free vars must be the same pointer
bool structural_equal(const TypePtr& a, const TypePtr& b);

// As structural_equal, but on failure `*why` says where the first difference is.
bool structural_equal_explain(const ProgramPtr& a, const ProgramPtr& b, std::string* why);

size_t structural_hash(const ProgramPtr& p);
size_t structural_hash(const FunctionPtr& f);
size_t structural_hash(const StmtPtr& s);
size_t structural_hash(const ExprPtr& e);
size_t structural_hash(const TypePtr& t);

}  // namespace pypto::ir
