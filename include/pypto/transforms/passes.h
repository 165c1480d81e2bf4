// The passes, one per file in src/transforms/ (file normalize_return_order.cpp = pass
// NormalizeReturnOrder). Each function returns the Pass descriptor; run it with
// `NormalizeReturnOrder().run(program)` or through a PassManager. See each file's header
// comment for what it does, its input / output invariants and why it exists.
#pragma once
#include "pypto/transforms/pass.h"

namespace pypto::transforms {

// Rewrites each return value that writes back a tensor parameter to that parameter Var.
// Produces ReturnParamsExplicit.
Pass NormalizeReturnOrder();

// Fills Call/Submit::arg_directions from the callee's ParamDirection (keeps NoDep).
// Produces CallDirectionsDerived.
Pass DeriveCallDirections();

// Wraps Orchestration bodies and their for/if bodies in AUTO RuntimeScopeStmt nodes.
// Produces RuntimeScopesMaterialized.
Pass MaterializeRuntimeScopes();

// Stamps iter_arg_rebind_<i> / iter_arg_array_size_<i> on Orchestration ForStmts.
// Requires ReturnParamsExplicit; produces IterArgCarryClassified.
Pass ClassifyIterArgCarry();

}  // namespace pypto::transforms
