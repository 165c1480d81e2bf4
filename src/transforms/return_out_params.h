// Rule 5 of spec anchor_features §9, the caller side (private to src/transforms): a kernel that
// returned a value computed with tensor ops got new trailing pl.Out parameters; every call of it
// must pass a tensor for each.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "pypto/ir/function.h"

namespace pypto::transforms {

// A copy of `fn` with these parameters and directions (pass results kept).
//   WithParams(*k, {a, b, ret0_out}, {In, In, Out})
ir::FunctionPtr WithParams(const ir::Function& fn, std::vector<ir::VarPtr> params,
                           std::vector<ir::ParamDirection> dirs);

// `added[k]` lists the types of the parameters appended to function k. Every Call / Submit of
// such a function gets one more argument per type: in an Orchestration / Opaque caller a tensor
// created just before the statement (`ret0_out = tensor.create([16, 16], dtype=FP32)`); in any
// other caller (a Group wrapper) a new trailing Out parameter of the caller, forwarded, whose
// own callers are then threaded the same way.
//   ThreadReturnOutParams(program, {{"main_incore_0", {Tensor[[16, 16], FP32]}}})
ir::ProgramPtr ThreadReturnOutParams(const ir::ProgramPtr& program,
                                     std::map<std::string, std::vector<ir::TypePtr>> added);

}  // namespace pypto::transforms
