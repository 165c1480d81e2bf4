// engine.cpp — construction, kernels, failure and cancellation, and run(): the frame of a run
// around submission (submit.cpp), execution (workers.cpp), retirement (completion.cpp) and the
// wait for the tail (watchdog.cpp).
#include "engine.h"

#include <sched.h>

#include <algorithm>
#include <new>
#include <sstream>

#include "interrupt.h"
#include "race_checker.h"
#include "tensor_bytes.h"

namespace pto2::detail {

thread_local Engine* Engine::tl_current = nullptr;

namespace {
void check_option(uint32_t value, uint32_t max, const char* name) {
  if (value > max)
    throw std::invalid_argument(std::string("RuntimeOptions: ") + name + " " + std::to_string(value) +
                                " is out of range 0.." + std::to_string(max));
}
// `opt`, once its sizes are known to be in range (before anything is allocated).
const RuntimeOptions& checked(const RuntimeOptions& opt) {
  check_option(opt.task_ring_size_, 1u << 24, "task_ring_size");
  check_option(opt.aic_workers_, 4096, "aic_workers");
  check_option(opt.aiv_workers_, 4096, "aiv_workers");
  check_option(opt.aic_cores_, 4096, "aic_cores");
  check_option(opt.aiv_cores_, 4096, "aiv_cores");
  return opt;
}
// Gang helper threads the widest sync_start gangs may need (modelled cores beyond the workers).
uint32_t max_gang_helpers(const RuntimeOptions& opt) {
  return (std::max(opt.aic_cores_, opt.aic_workers_) - opt.aic_workers_) +
         (std::max(opt.aiv_cores_, opt.aiv_workers_) - opt.aiv_workers_);
}
}  // namespace

Engine::Engine(const RuntimeOptions& opt)
    : opt_(checked(opt)),
      kernels_(static_cast<int64_t>(opt.inline_below_ns_)),
      ring_(opt.task_ring_size_),
      workers_(opt.aic_workers_, opt.aiv_workers_, max_gang_helpers(opt), ring_.size()),
      completion_(workers_.workers() + 1 + max_gang_helpers(opt)),
      watchdog_(opt.deadlock_timeout_ms_) {
  n_cores_[0] = std::max(opt.aic_cores_, workers_.of_type(0));
  n_cores_[1] = std::max(opt.aiv_cores_, workers_.of_type(1));
  const uint32_t min_pair = std::min(workers_.of_type(0), workers_.of_type(1));
  clusters_ = opt.clusters_ == 0 ? min_pair : std::min(opt.clusters_, min_pair);
  for (int t = 0; t < 2; ++t) undeferred_on_[t] = opt.orchestrator_helps_ && !opt.trace_ && workers_.of_type(t) > 0;
  help_threshold_ = opt.help_threshold_ ? opt.help_threshold_ : 16 * std::max<uint32_t>(1, workers_.workers());
  workers_.set_help_threshold(help_threshold_);
  const uint32_t threads = workers_.workers() + 1 + max_gang_helpers(opt);
  record_.init(threads);
  workers_.start([this](int w) { worker_main(w); });
}

Engine::~Engine() {
  // Queued work (a deadlocked run's) is cancelled rather than run: destruction never waits
  // for more than the kernels running now.
  failure_.stop();
  workers_.shutdown();
}

void Engine::register_kernel(int32_t id, const std::string& name, CoreType core, PTO2KernelFn fn) {
  auto lk = between_runs("register_kernel");  // the workers read the table during a run
  kernels_.add(id, name, core, fn);
}

std::unique_lock<std::mutex> Engine::between_runs(const char* api) const {
  // From the run's own entry or a kernel the lock would never come; from another thread it
  // would come only once the run ended: refused at once in every case.
  if (tl_current == this || running_.load(std::memory_order_acquire))
    throw std::logic_error(std::string(api) +
                           ": a run of this Runtime is in progress (called from its orchestration entry, a kernel or "
                           "another thread); call it between runs");
  return std::unique_lock<std::mutex>(run_mu_);  // (a run starting meanwhile is waited for)
}

void KernelTable::add(int32_t id, const std::string& name, CoreType core, PTO2KernelFn fn) {
  check(id, name, fn, "register_kernel");
  if (static_cast<size_t>(id) >= kernels_.size()) kernels_.resize(static_cast<size_t>(id) + 1);
  kernels_[static_cast<size_t>(id)] = KernelInfo{name, core, fn};
  if (kernels_.size() > timed_size_) {
    std::unique_ptr<KernelTiming[]> grown(new KernelTiming[kernels_.size()]);
    for (size_t k = 0; k < timed_size_; ++k) grown[k].copy_from(timing_[k]);
    timing_ = std::move(grown);
    timed_size_ = kernels_.size();
  }
  timing_[static_cast<size_t>(id)].reset();
}

void KernelTable::check(int32_t id, const std::string& name, PTO2KernelFn fn, const char* api) {
  if (id < 0 || id > kMaxKernelId)
    throw std::invalid_argument(std::string(api) + ": kernel id out of range: " + std::to_string(id) + " (kernel '" + name +
                                "'; ids are 0.." + std::to_string(kMaxKernelId) + ")");
  if (!fn) throw std::invalid_argument(std::string(api) + ": null function for kernel '" + name + "'");
}

std::string KernelTable::describe(int32_t k) const {
  if (registered(k)) return "'" + kernels_[static_cast<size_t>(k)].name + "' (id " + std::to_string(k) + ")";
  return "id " + std::to_string(k);
}

// ---------------------------------------------------------------- failure and cancellation

void Engine::fail(const std::string& msg) {
  failure_.record(msg);
  watchdog_.wake();
  workers_.wake_all();
}

// Atomics and futex wakes only (no lock, no allocation): callable from a signal handler.
// run() turns the flag into the run's message.
void Engine::cancel() noexcept {
  failure_.cancel();
  watchdog_.wake();
  workers_.wake_all();
}

void Engine::run_progress(uint64_t* submitted, uint64_t* completed) const noexcept {
  sub_.progress([this] { return progress(); }, submitted, completed);
}

void Engine::abort_orchestration(const std::string& msg) {
  fail(msg);
  throw RunAborted{};
}

std::string Engine::describe_task(TaskKind kind, const int32_t* kernel, uint64_t raw) const {
  std::ostringstream os;
  os << "task #" << sub_.number(raw);
  auto kname = [&](int32_t k) { return kernels_.describe(k); };
  switch (kind) {
    case TaskKind::AIC: os << " (AIC kernel " << kname(kernel[0]) << ")"; break;
    case TaskKind::AIV: os << " (AIV kernel " << kname(kernel[1]) << ")"; break;
    case TaskKind::MIXED: os << " (mixed kernels AIC " << kname(kernel[0]) << " + AIV " << kname(kernel[1]) << ")"; break;
    case TaskKind::DUMMY: os << " (dummy)"; break;
  }
  return os.str();
}

// ---------------------------------------------------------------- run

namespace {
// Run serials, process-wide: a PTO2ScopeGuard's run is unique even across runtimes.
uint64_t next_run_serial() {
  static std::atomic<uint64_t> serial{0};
  return serial.fetch_add(1, std::memory_order_relaxed) + 1;
}
}  // namespace

RunResult Engine::run(const OrchestrationEntry& entry, const ChipStorageTaskArgs& args) {
  RunResult res;
  // A run of this engine from inside its own run would wait for itself forever.
  if (tl_current == this || (in_kernel() && running_.load(std::memory_order_acquire))) {
    res.message = "Runtime::run: called inside a run of this Runtime (from its orchestration entry or a kernel): it would "
                  "wait for itself; one run at a time per Runtime, use another Runtime for a nested run";
    return res;
  }
  std::lock_guard<std::mutex> run_lock(run_mu_);
  struct Running {  // a run is in progress until run() returns
    std::atomic<bool>& r;
    ~Running() { r.store(false, std::memory_order_release); }
  } running{running_};
  running_.store(true, std::memory_order_release);
  if (failure_.poisoned()) {
    res.message = "runtime unusable: a previous run deadlocked";
    return res;
  }
  for (size_t i = 0; i < args.tensors.size(); ++i) {
    const Tensor& t = args.tensors[i].tensor;
    if (null_data_with_elements(t.data, t.shapes, std::min<uint32_t>(t.ndims, PTO2_MAX_DIMS))) {
      res.message = "Runtime::run: tensor argument " + std::to_string(i) +
                    " has elements but a NULL data pointer (kernels would read and write through it)";
      return res;
    }
  }
  // Where the workers should not be: this thread's CPU, busy for the whole run when it runs
  // tasks too (orchestrator_helps); one that does not help sleeps while it waits.
  keep_workers_off_this_cpu();
  // First, so that the workers' wake-up overlaps everything that follows — when the last run
  // queued tasks for them (runs of a program are alike): a run that queues none (empty, or
  // all undeferred) does not pay the futex wake (~5 us on a VM).
  if (last_run_queued_) workers_.wake_for_run();
  ran_.store(true, std::memory_order_relaxed);
  run_serial_ = next_run_serial();
  failure_.reset();
  sub_.begin_run();
  linker_.begin_run(opt_.trace_);
  untracked_.clear();
  record_.begin_run(opt_.trace_);
  for (uint32_t w = 0; w < workers_.n_stats(); ++w) workers_.stats(w).undeferred = 0;
  completion_.begin_run();
  if (opt_.race_check_ == RaceCheck::Off) race_.reset();
  else if (!race_) race_.reset(new RaceChecker);
  if (race_) race_->begin_run(sub_.next_id(), args);
  // Race check: released storage is not reused (for a while), so a use after its scope is caught.
  scopes_.pool().set_quarantine(race_ != nullptr);
  scopes_.pool().reset_peak();
  register_run(this);
  record_.start(now_ns());

  // The entry runs on the calling thread (no thread is started per run): it is the
  // orchestrator thread for the run's duration.
  Engine* const outer = tl_current;  // a run started from another runtime's orchestration
  tl_current = this;
  scopes_.open_run();
  try {
    entry(args);
  } catch (RunAborted&) {
  } catch (std::bad_alloc&) {
    // A bare "std::bad_alloc" named neither what grew nor what to do (tester F #21).
    fail("the process ran out of memory during the run (race_check=, graph= and "
         "trace= keep a record of every task, about 1 KB a task with race_check=: check a shorter run, or run "
         "without them)");
  } catch (std::exception& e) {
    fail(std::string("orchestration entry threw: ") + e.what());
  } catch (...) {
    fail("orchestration entry threw an unknown exception");
  }
  if (scopes_.depth() > 1 && !failed())
    fail("misuse: " + std::to_string(scopes_.depth() - 1) + " PTO2_SCOPE(s) still open when the orchestration entry "
         "returned: a PTO2ScopeGuard outlived the entry (made with new and not deleted?); each scope closes inside it");
  while (scopes_.depth() > 1) scope_end();
  // The outermost scope's tensors are released once the run's tasks have all finished.
  scopes_.close_run();

  wait_for_tail();
  tl_current = outer;
  unregister_run(this);
  if (inflight() == 0) scopes_.release_run_allocs();  // (after a deadlock, stuck tasks may still reference them)
  drain_released();
  linker_.end_run();

  res.wall_seconds = static_cast<double>(now_ns() - record_.start_ns()) * 1e-9;
  res.tasks_submitted = sub_.submitted();
  res.tasks_dummy = sub_.dummy();
  res.auto_edges = linker_.auto_edges();
  res.explicit_edges = linker_.explicit_edges();
  for (uint32_t w = 0; w < workers_.n_stats(); ++w) {
    const uint64_t undeferred = workers_.stats(w).undeferred;
    res.tasks_executed += completion_.counts(w).executed + undeferred;  // undeferred ones ran too
    res.tasks_skipped += completion_.counts(w).skipped;
    res.tasks_undeferred += undeferred;
  }
  last_run_queued_ = res.tasks_submitted > res.tasks_undeferred + res.tasks_dummy;
  res.peak_bytes = scopes_.pool().peak_bytes();
  res.pool_bytes = scopes_.pool().pool_bytes();
  res.timing_slots = record_.slot_spans();
  res.message = failure_.message();
  if (res.message.empty() && failure_.cancelled()) res.message = FailureState::kCancelledMessage;
  if (race_) {  // the run has finished: decide its races on the recorded graph
    res.races = race_->finish(kernels_.infos(), res.race_report, &res.race_pairs);
    if (res.races && opt_.race_check_ == RaceCheck::Error)
      res.message = res.message.empty() ? res.race_report : res.message + "\n\n" + res.race_report;
  }
  if (!res.ok() && res.message.empty()) res.message = "unknown failure";
  return res;
}

}  // namespace pto2::detail
