// The printer: IR -> DSL text that `pl.parse_program` parses back to a structurally equal IR.
//
//   ProgramPtr p = ...;
//   std::string text = python_print(p);   // "import pypto.language as pl\n\n@pl.program\nclass ..."
#pragma once
#include <string>
#include <string_view>

#include "pypto/ir/function.h"

namespace pypto::ir {

std::string python_print(const ProgramPtr& p);
std::string python_print(const FunctionPtr& f);   // one function, as it would appear in the class
std::string python_print(const StmtPtr& s);
std::string python_print(const ExprPtr& e);
std::string python_print(const TypePtr& t);

// Python's hard keywords (the one list: the printer never names a Var so, the call-run scanner
// of the parser refuses them as names):  IsPythonKeyword("lambda") == true, IsPythonKeyword("x") == false
bool IsPythonKeyword(std::string_view name);

}  // namespace pypto::ir
