// interrupt.cpp — the registry of runs in progress and the SIGINT hook (see interrupt.h).
//
// The registry is a fixed array of atomic pointers: a signal handler may read it at any
// moment, so it takes no lock and allocates nothing. A run leaving the registry waits until
// no handler is between reading its pointer and cancelling it.
#include "interrupt.h"

#include <atomic>
#include <csignal>
#include <mutex>

#include "engine.h"

namespace pto2::detail {

namespace {
constexpr int kMaxRuns = 256;
std::atomic<Engine*> g_runs[kMaxRuns];
std::atomic<int> g_in_handler{0};
std::mutex g_sigint_mu;
bool g_sigint_installed = false;
struct sigaction g_previous;

void on_sigint(int sig, siginfo_t* info, void* uctx) {
  cancel_all_runs();
  // Chain: the replaced handler decides what Ctrl-C means to the program (Python raises
  // KeyboardInterrupt once the run returns).
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) g_previous.sa_sigaction(sig, info, uctx);
  } else if (g_previous.sa_handler == SIG_DFL) {
    signal(sig, SIG_DFL);
    raise(sig);
  } else if (g_previous.sa_handler != SIG_IGN && g_previous.sa_handler) {
    g_previous.sa_handler(sig);
  }
}
}  // namespace

void register_run(Engine* e) noexcept {
  for (auto& slot : g_runs) {
    Engine* none = nullptr;
    if (slot.compare_exchange_strong(none, e, std::memory_order_acq_rel)) return;
  }
  // More than kMaxRuns concurrent runs: this one cannot be cancelled by a signal (Runtime::cancel still works).
}

void unregister_run(Engine* e) noexcept {
  for (auto& slot : g_runs) {
    Engine* mine = e;
    if (slot.compare_exchange_strong(mine, nullptr, std::memory_order_acq_rel)) break;
  }
  while (g_in_handler.load(std::memory_order_acquire) > 0) cpu_relax();
}

bool any_run_in_progress() noexcept {
  for (auto& slot : g_runs)
    if (slot.load(std::memory_order_acquire)) return true;
  return false;
}

void cancel_all_runs() noexcept {
  g_in_handler.fetch_add(1, std::memory_order_acq_rel);
  for (auto& slot : g_runs)
    if (Engine* e = slot.load(std::memory_order_acquire)) e->cancel();
  g_in_handler.fetch_sub(1, std::memory_order_acq_rel);
}

bool cancel_runs_on_sigint(bool on) noexcept {
  std::lock_guard<std::mutex> lk(g_sigint_mu);
  if (on == g_sigint_installed) return true;
  if (on) {
    struct sigaction sa {};
    sa.sa_sigaction = &on_sigint;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, &g_previous) != 0) return false;
  } else {
    struct sigaction current {};
    if (sigaction(SIGINT, nullptr, &current) != 0) return false;
    // Restore only if the hook is still the handler (the program may have replaced it since).
    if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == &on_sigint &&
        sigaction(SIGINT, &g_previous, nullptr) != 0)
      return false;
  }
  g_sigint_installed = on;
  return true;
}

}  // namespace pto2::detail
