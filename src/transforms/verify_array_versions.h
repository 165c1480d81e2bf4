// VerifyArrayVersions (spec anchor_features §13): `pl.Array` values are updated in place, so
// once `w_1 = pl.array.update_element(w, k, v)` (written `w[k] = v`) has run, the older SSA
// version `w` no longer exists as a separate value. A later read of it is refused:
//
//   w = pl.array.create(4, pl.FP32)
//   w[0] = 1.0                  # w_1 = update_element(w, 0, 1.0): w's storage now holds w_1
//   x = old_w[0]                # a read of the pre-update version -> located UserError
//
// Arrays of every dtype. For a TaskId array the read may be a dependency: deps=[old] after
// `tids[0] = t` would wait for t instead of the slot's old task, so it is refused too
// ("TaskId array 'old' is read after an in-place update ..."). Compiler-derived edges are not
// checked (best effort; ResolveTaskIds drops the ones it cannot honour).
#pragma once
#include "pypto/ir/function.h"

namespace pypto::transforms {

// Throws ir::UserError at the first statement (in program order) that reads an array version
// an in-place update superseded. Example: see above.
void VerifyArrayVersions(const ir::Function& fn);

}  // namespace pypto::transforms
