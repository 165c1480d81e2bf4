// Escaping allocations (spec anchor_features §17): the `tensor.create` statements of a for /
// if body whose value outlives the body (a loop carry or an if-result the body yields), which
// MaterializeRuntimeScopes places before the body's AUTO runtime scope.
//
//   for i, (acc,) in pl.range(n, init_values=(t0,)):        for i, (acc,) in pl.range(...):
//       t = pl.create_tensor([m, 16], dtype=pl.FP32)  ==>       m2 = m * 2   (pure scalar, lifted)
//       m2 = m * 2   ...                                         t = pl.create_tensor([m2, 16], ...)
//       t1 = self.k(x, acc, t)                                   with pl.scope():
//       acc2 = pl.yield_(t1)                                         t1 = self.k(x, acc, t)
//                                                                    acc2 = pl.yield_(t1)
#pragma once
#include <vector>

#include "buffer_roots.h"
#include "pypto/ir/stmt.h"

namespace pypto::transforms {

struct EscapeSplit {
  std::vector<ir::StmtPtr> lifted;   // escaping creates and the pure scalar statements their shapes need
  std::vector<ir::StmtPtr> rest;     // everything else, in order (goes into the AUTO scope)
  // False when an escaping allocation sits in a nested for / if / scope of this body: the body
  // then gets no AUTO scope, so that allocation lives in the enclosing one.
  bool scope_ok = true;
};

// A `pl.submit` output the runtime allocates (a trailing Out argument left out) escapes the same
// way: the runtime would reclaim it when the body's scope ends while the carry still names it.
// It is passed explicitly, as a `pl.create_tensor` of the parameter's type placed before the scope:
//       acc2, t = pl.submit(self.k, acc)      ==>     y_out = pl.create_tensor([64, 64], dtype=pl.FP32)
//       acc3 = pl.yield_(acc2)                        with pl.scope():
//                                                         acc2, t = pl.submit(self.k, acc, y_out); ...
// (a parameter shape that is not literal leaves the body without its AUTO scope instead).
//
// Splits a for / if body's statements (`stmts`, flattened, ending with its YieldStmt if any).
// `what` names the construct for messages ("loop", "if branch"). Throws a located UserError
// when an escaping allocation's shape depends on a value computed by a task in the body.
// Example: SplitEscapingAllocations({t = create, t1 = k(t), yield t1}, roots, program, "loop")
//          == {lifted: {t = create}, rest: {t1 = k(t), yield t1}, scope_ok: true}
EscapeSplit SplitEscapingAllocations(const std::vector<ir::StmtPtr>& stmts, const BufferRoots& roots,
                                     const ir::Program& program, const char* what);

}  // namespace pypto::transforms
