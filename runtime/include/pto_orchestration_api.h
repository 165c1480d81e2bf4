// pto_orchestration_api.h — the umbrella header of libpto2, the PTO2 runtime on CPU threads.
// Generated orchestration code includes only this file. See docs/runtime.md.
#pragma once

#include <algorithm>   // std::min in the clamped shapes of pl.tensor.slice (anchor_features §18)

#include "pto2/types.h"
#include "pto2/task.h"
#include "pto2/kernel.h"
#include "pto2/orchestration.h"
#include "pto2/runtime.h"
