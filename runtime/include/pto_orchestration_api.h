// pto_orchestration_api.h — the umbrella header of libpto2, the PTO2 runtime on CPU threads.
// Generated orchestration code includes only this file. See docs/runtime.md.
#pragma once

#include <algorithm>   // std::min in the clamped shapes of pl.tensor.slice (anchor_features §18)

#include "pto2/types.h"
#include "pto2/task.h"
#include "pto2/kernel.h"
#include "pto2/orchestration.h"
#include "pto2/runtime.h"

// Orchestration integer arithmetic wraps in two's complement (reference_ops.md: "Integers wrap on
// overflow"; pypto builds generated code with -fwrapv), so a product the compiler folds to an
// overflowing constant — `2147483648 * max(a - a - 8, 4294967297)` — is the program's meaning,
// not a mistake: the warning would stop a -Werror build of correct generated code.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Winteger-overflow"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Woverflow"
#endif
