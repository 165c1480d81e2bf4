// Return lineage: which parameter a function's return value writes back.
//
//   kernel_add(a, b, c: Out) { t = tile.store(x, [0, 0], c); return t }
//   ReturnedParamIndices(prog, kernel_add)          == {2}   (traced: t is c's storage)
//   ExplicitReturnedParamIndices(kernel_add)        == {-1}  (t is not a param Var)
//   ... after NormalizeReturnOrder (`return c`):    == {2}
//
// ReturnedParamIndices is the interprocedural tracer used by passes that run before
// ReturnParamsExplicit holds (through Var copies, tile.store, tensor.assemble, calls to other
// functions, tuple elements, loop carries and if results). ExplicitReturnedParamIndices is
// the O(#returns) lookup codegen uses once the property holds: no SSA walk, no recursion.
#pragma once
#include <vector>

#include "pypto/ir/function.h"

namespace pypto::transforms {

// For each return position of `fn`: the index of the parameter the returned value is, by
// pointer identity, or -1.
std::vector<int> ExplicitReturnedParamIndices(const ir::Function& fn);

// For each return position of `fn`: the index of the parameter whose storage the returned
// value is (traced), or -1 when it is not a parameter's storage.
std::vector<int> ReturnedParamIndices(const ir::Program& program, const ir::Function& fn);

// The final ReturnStmt of `fn` (looking through SeqStmts and RuntimeScopeStmt), or null.
const ir::ReturnStmt* FindReturn(const ir::Function& fn);

}  // namespace pypto::transforms
