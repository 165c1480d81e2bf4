// scopes.cpp — the Engine's use of its ScopeStack (scope_stack.h): PTO2_SCOPE nesting,
// alloc_tensors and the memory limit (allocation waits for released storage while tasks are
// in flight).
#include "engine.h"
#include "race_checker.h"
#include "tensor_bytes.h"

namespace pto2::detail {

void Engine::drain_released() {
  scopes_.pool().drain([this](void* data) { linker_.forget(data); });
}

PTO2Storage* Engine::alloc_storage(size_t bytes) {
  drain_released();
  if (bytes > opt_.memory_limit_)
    abort_orchestration("allocation of " + std::to_string(bytes) + " bytes exceeds the memory limit of " +
                        std::to_string(opt_.memory_limit_) + " bytes");
  MemoryPool& pool = scopes_.pool();
  PTO2Storage* s = pool.try_alloc(bytes, opt_.memory_limit_);
  while (!s) {
    if (inflight() == 0 && !pool.has_released())
      abort_orchestration("out of memory: " + std::to_string(pool.live_bytes()) +
                          " bytes of runtime tensors are held by open scopes; the limit is " +
                          std::to_string(opt_.memory_limit_) + " bytes (allocating " + std::to_string(bytes) + ")");
    orchestrator_wait([&] { return pool.has_released() || inflight() == 0; },
                      "memory (runtime tensors)");
    drain_released();
    s = pool.try_alloc(bytes, opt_.memory_limit_);
  }
  s->run_scoped = scopes_.at_run_level();
  if (race_) race_->on_alloc(s->data);
  return s;
}

void Engine::scope_begin(PTO2ScopeMode mode) {
  if (failed()) throw RunAborted{};
  if (mode == PTO2ScopeMode::AUTO && scopes_.depth() > 0 && scopes_.in_manual())
    abort_orchestration(
        "misuse: PTO2_SCOPE() (AUTO) opened inside a PTO2_SCOPE(PTO2ScopeMode::MANUAL) scope; an AUTO scope cannot "
        "nest in a MANUAL one (next task would be #" + std::to_string(sub_.next_id()) + ")");
  scopes_.begin(mode, opt_.trace_ ? now_ns() : 0);
}

void Engine::scope_end() noexcept {
  if (scopes_.depth() == 0) return;
  // The run's outermost scope is not a PTO2_SCOPE: no span.
  if (opt_.trace_ && scopes_.depth() > 1) {
    try {
      record_.scope(scopes_.innermost().mode, scopes_.innermost().start_ns, now_ns());
    } catch (...) {  // out of memory: the trace loses a span, the run goes on
    }
  }
  scopes_.end();
}

void Engine::scope_end(uint64_t run, uint32_t depth) noexcept {
  if (run != run_serial_) return;
  if (depth != scopes_.depth()) {
    try {
      fail("misuse: a PTO2_SCOPE closed while a scope opened inside it was still open (its PTO2ScopeGuard was "
           "destroyed before the inner one's: destroy guards in the reverse order of their creation)");
    } catch (...) {  // out of memory for the message: the run still fails at its end
    }
    return;
  }
  scope_end();
}

TaskOutputTensors Engine::alloc_tensors(const TensorCreateInfo* const* infos, uint32_t n) {
  if (failed()) throw RunAborted{};
  TaskOutputTensors out;
  out.tensors_.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const TensorCreateInfo& ci = *infos[i];
    size_t bytes = 0;
    if (!checked_tensor_bytes(ci.shapes, ci.ndims, ci.dtype, &bytes))
      abort_orchestration(too_large_tensor(ci.shapes, ci.ndims, ci.dtype, opt_.memory_limit_));
    Tensor t = pto2::TensorFactory::blank();
    t.ndims = ci.ndims;
    for (uint32_t d = 0; d < ci.ndims; ++d) t.shapes[d] = ci.shapes[d];
    pto2_row_major_strides(t.shapes, t.ndims, t.strides);
    t.dtype = ci.dtype;
    t.manual_dep = ci.manual_dep;
    PTO2Storage* s = alloc_storage(bytes);
    t.data = s->data;
    t.storage = s;
    scopes_.adopt(s);
    if (ci.has_initial_value) pto2::fill_elements(t.data, static_cast<size_t>(t.numel()), t.dtype, ci.initial_value);
    out.tensors_.push_back(t);
  }
  return out;
}

}  // namespace pto2::detail
