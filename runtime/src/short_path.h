// short_path.h — the short path of submission, inlined into the rt_submit_* functions: a
// plain single-block task with nothing to wait for runs right away on the orchestrator
// thread ("undeferred"), taking no slot. Included at the end of engine.h.
#pragma once

namespace pto2::detail {

// A dependency-free single-block task run on the orchestrator thread at submission, reading
// its arguments in place. It takes no slot and is neither in the ring's count nor in any
// `completed` count: it is submitted and finished within the call, so it is never in flight.
__attribute__((always_inline)) inline void Engine::run_undeferred_inline(TaskKind kind, int32_t kernel,
                                                                         const Arg& params, uint64_t raw, int type) {
  WorkerStats& ws = workers_.orchestrator_stats();
  if (__builtin_expect(++ws.runs % kSampleEvery == 0, 0)) return run_undeferred_timed(kind, kernel, params, raw, type);
  std::string& err = sub_.undeferred_err();  // empty; reused, so no string is made per task
  // Not marked as in a kernel (as_kernel): two thread-local stores here cost 1-2 ns per task
  // (dist.py short path, 25 rounds: manual trivial x1.095, tree x1.106; auto x1.01-1.04), and a
  // check of the task id afterwards 0.3-0.5 ns (x1.00-1.02). A kernel calling orchestration
  // functions is not detected on this path (docs/runtime.md, "Threads").
  call_kernel(kernels_.fn(kernel), params.tensors().data(), params.tensor_count(),
              params.scalars().data(), params.scalars().size(), 0, 1, nullptr, static_cast<uint32_t>(type), err, raw);
  if (__builtin_expect(!err.empty(), 0)) undeferred_failed(kind, kernel, raw, type, params);
  ++ws.undeferred;
}

inline Engine::Undeferred Engine::try_submit_undeferred(TaskKind kind, int32_t kernel, const Arg& params,
                                                        TaskOutputTensors& out) {
  const int type = kind == TaskKind::AIC ? 0 : 1;
  if (!undeferred_on_[type] || !kernels_.timed(kernel) || !params.is_plain() || failed()) return Undeferred::kNotPlain;
  // Tiny, or the workers are saturated (the throttle: queueing one more only adds latency).
  // queued_at_least, not size_hint: the queue's head is the workers' line, a miss per read.
  if (!kernels_.is_tiny(kernel) && (!kernels_.is_measured(kernel) || !queued_at_least(type, help_threshold_)))
    return Undeferred::kNotPlain;
  // The tensors' rank and dtype before the tracker reads them, here rather than first: a task
  // that goes to a worker is checked once, by submit() (which also reports what it refuses).
  if (!tensors_fields_ok(params)) return Undeferred::kNotPlain;
  const auto& deps = params.dependencies();
  for (const PTO2TaskId& d : deps)
    if (!d.is_valid() || d.raw >= sub_.next_id()) return Undeferred::kNotPlain;  // submit() reports it
  // With nothing in flight, every producer and every explicit dependency has finished.
  if (!quiet() && (linker_.tensors_must_wait(ring_, params, scopes_.in_manual()) || DependencyLinker::any_live(ring_, deps)))
    return Undeferred::kMustWait;
  const uint64_t raw = sub_.take_id();
  sub_.count_submitted();
  out.id_.raw = raw;
  run_undeferred_inline(kind, kernel, params, raw, type);
  return Undeferred::kRan;
}

}  // namespace pto2::detail
