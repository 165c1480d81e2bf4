// interrupt.h — the runs in progress in this process, so that a signal handler (Ctrl-C) can
// cancel them; and the optional SIGINT hook that does so (pto2_cancel_runs_on_sigint).
#pragma once

namespace pto2::detail {

class Engine;

/// Registers a run in progress (run() calls it on entry, then unregister_run on exit).
void register_run(Engine* e) noexcept;
/// Unregisters; returns once no signal handler can still be using `e`.
void unregister_run(Engine* e) noexcept;
/// Some run is in progress in this process (a scan of the registry: not for hot paths).
bool any_run_in_progress() noexcept;
/// Cancels every run in progress. Async-signal-safe.
void cancel_all_runs() noexcept;
/// Installs (on) or removes (off) a SIGINT handler that cancels every run in progress, then
/// calls the handler it replaced (Python's, which raises KeyboardInterrupt). Returns false if
/// sigaction failed.
bool cancel_runs_on_sigint(bool on) noexcept;

}  // namespace pto2::detail
