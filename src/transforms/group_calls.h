// Internal to the kernel pipeline (KernelParamSlots, KernelGroupSync): how a Group body's
// statements call its AIC / AIV kernels and which Group parameter an argument stands for.
#pragma once
#include "pypto/ir/function.h"

namespace pypto::transforms {

// The call to a program function a Group body statement makes (`c = self.mm(a, b, c)` or
// `self.mm(a, b, c)`), null for any other statement:  GroupStmtCall(stmt)->callee == "mm"
const ir::Call* GroupStmtCall(const ir::StmtPtr& st);

// The Group param a value of `group`'s body stands for: a param itself, a rebinding of one, or
// the result of a kernel call (the Out / InOut param that call returns, NormalizeReturnOrder);
// null if none:  ResolveGroupValue(*program, *group, call->args[0]) == group->params[0].get()
const ir::Var* ResolveGroupValue(const ir::Program& program, const ir::Function& group, const ir::ExprPtr& e,
                                 int depth = 0);

}  // namespace pypto::transforms
