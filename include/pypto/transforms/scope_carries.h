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

// The TaskIds among `next_yield.values` defined at the top level of `scope.body` or of a scope
// nested there, at any depth (a pl.submit's TaskId element, the TaskId result of a loop or of
// an if there), in yield order: the yielded Var, or for
// a loop result that loop's iter_arg (whose C++ variable the result names), with the pl.slots(N)
// size of an array carry:
//   TaskIdsCarriedOutOfScope(*scope, *yield)  ->  {{prev_2, 0}}
std::vector<ir::ScopeTaskIdCarry> TaskIdsCarriedOutOfScope(const ir::RuntimeScopeStmt& scope,
                                                           const ir::YieldStmt& next_yield);

// Values that leave a runtime scope (issue 13): a tensor or number assigned at the top level of
// a `pl.manual_scope()` / `pl.scope()` body, rebound by a loop there (or yielded by an if there),
// that code after the block reads. Its C++ variable is declared inside the block, so the
// generators give it an exit slot declared before the block, assigned after the assignment /
// loop / if and read after the block:
//
//   with pl.manual_scope():               std::optional<Tensor> src_exit;
//       for i in pl.range(n):             PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
//           ...; src = dst; dst = tmp         Tensor src = ext_a; ...  for (...) { ... }
//   out = self.k(src, out)                    src_exit = src;
//                                         }
//                                         Tensor src_1 = *src_exit;
//
// Which results leave is the pass StampScopeExits' stamp RuntimeScopeStmt::exit_values; this is
// where one of them comes from in the scope body.
// A value from a scope nested at the top level of the body leaves through that scope's exit
// (declared after the nested block, inside this one) and then this scope's.
struct ScopeCarriedValue {
  const ir::Stmt* stmt;     // the AssignStmt, ForStmt, IfStmt or nested RuntimeScopeStmt at the top level of the scope body
  size_t index;             // its return var (for a loop, iter_arg too) index; a nested scope's exit_values index; 0
  const ir::Var* result;    // the value
  const ir::Var* carry;     // the loop's iter_arg `index`; the value itself otherwise
};

// The top-level statement of `scope.body` whose result `value` is (an entry of the scope's
// exit_values); InternalError when no top-level assignment / loop / if defines it:
//   LocateScopeExit(*scope, *src_2)  ->  {loop, 0, src_2, src_1}
ScopeCarriedValue LocateScopeExit(const ir::RuntimeScopeStmt& scope, const ir::Var& value);

// The trailing YieldStmt of a block's statements (null when the block does not end with one).
const ir::YieldStmt* TrailingYield(const std::vector<ir::StmtPtr>& stmts);

// The YieldStmt that ends `scope`'s body, directly or as the end of a scope nested last in it
// (`PTO2_SCOPE() { PTO2_SCOPE(MANUAL) { ...; yield } }`); null when there is none.
ir::StmtPtr YieldEndingScope(const ir::RuntimeScopeStmt& scope);

// The runtime scope at the end of a loop body's statements that holds the body's yield: the
// only statement, or the last one when a yield ends it (a per-iteration scope after the
// allocations placed before it); null when the yield is at the top level.
//   {t = create, with pl.scope(): {...; yield t1}}  ->  the scope
const ir::RuntimeScopeStmt* ScopeHoldingYield(const std::vector<ir::StmtPtr>& stmts);

}  // namespace pypto::transforms
