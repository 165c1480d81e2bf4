// TaskIds carried out of a runtime scope by the yield that follows it (orchestration_codegen.txt
// "lexical-scope lifetime": a TaskId lives in the PTO2_SCOPE it is produced in, but loop
// carries survive the body's scope, issue #1811).
//
//   for n in pl.range(3):                      PTO2TaskId prev_2 = PTO2TaskId::invalid();
//       with pl.manual_scope():         ==>    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
//           out, prev = pl.submit(...)             prev_2 = task_0_outs.task_id();
//       (yield prev)                           }
//                                              prev_1 = prev_2;
//
// ResolveTaskIds stamps these on the scope (RuntimeScopeStmt::carried_task_ids); the code
// generator and VerifyOrchestrationProgram declare their C++ variables in the block enclosing
// the PTO2_SCOPE, so the yield after the block can still name them.
#pragma once
#include <vector>

#include "pypto/ir/function.h"

namespace pypto::transforms {

// The TaskIds among `next_yield.values` defined at the top level of `scope.body` (a pl.submit's
// TaskId element, or the TaskId result of a loop there), in yield order: the yielded Var, or for
// a loop result that loop's iter_arg (whose C++ variable the result names), with the pl.slots(N)
// size of an array carry:
//   TaskIdsCarriedOutOfScope(*scope, *yield)  ->  {{prev_2, 0}}
std::vector<ir::ScopeTaskIdCarry> TaskIdsCarriedOutOfScope(const ir::RuntimeScopeStmt& scope,
                                                           const ir::YieldStmt& next_yield);

// The trailing YieldStmt of a block's statements (null when the block does not end with one).
const ir::YieldStmt* TrailingYield(const std::vector<ir::StmtPtr>& stmts);

}  // namespace pypto::transforms
