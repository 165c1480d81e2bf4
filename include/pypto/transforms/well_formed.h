// The well-formedness verifier: structural invariants every pass must keep, whatever it does.
//
//   - SSA: each Var (parameter, assignment target, loop var, iter_arg, return var, scope var)
//     is defined once in its function;
//   - every use of a Var is dominated by its definition (defined earlier in an enclosing block,
//     a parameter, or a pl.dynamic symbol; a value defined inside a loop or branch body is not
//     visible after it: it leaves through yield / return_vars);
//   - a ForStmt has one return var per iter_arg and, when it has iter_args, its body ends in a
//     yield of that many values; an IfStmt with return vars ends each branch (both present)
//     in a yield of that many values; a yield appears only as the last statement of a body;
//   - in a program parsed from source (its span is known), every statement has a source span
//     (diagnostics need one; IR built with the C++ API has none to keep).
//
// The PassManager runs it after every pass when PassOptions::verify_well_formed is set
// (environment PYPTO_VERIFY_PASSES=1; the test suites set it):
//
//   auto problems = VerifyWellFormed(program);
//   // {"function 'main': use of 'x' at m.py:7:5 is not dominated by its definition", ...}
#pragma once
#include <string>
#include <vector>

#include "pypto/ir/function.h"

namespace pypto::transforms {

// One message per violation (empty = well formed).
std::vector<std::string> VerifyWellFormed(const ir::ProgramPtr& program);

}  // namespace pypto::transforms
