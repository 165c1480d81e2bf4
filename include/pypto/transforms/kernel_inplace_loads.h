// Kernel analyses the CPU kernel generator consults (src/transforms/kernel_inplace_loads.cpp).
//
//   InPlaceMatmulLoads(fn)   the tile.load calls whose tile only a matmul reads: read in place
//   VarUses(fn)              how often each var (not an IterArg) is read: a loop init read once
//                            lends its buffer to the loop carry
//
// They walk the function's IR, so they live with the passes, not in src/codegen. (Not yet a
// pass that stamps its result on the IR: the generator calls them once per kernel.)
#pragma once

#include <map>
#include <set>

#include "pypto/ir/function.h"

namespace pypto::transforms {

std::set<const ir::Call*> InPlaceMatmulLoads(const ir::Function& fn);
std::map<const ir::Var*, int> VarUses(const ir::Function& fn);

}  // namespace pypto::transforms
