// l3_runtime.cpp — the L3 (distributed HOST) scheduler: next-level tasks are whole L2
// orchestration runs, handed to a transport (in-process chip threads, or MPI ranks from
// libpto2_mpi). See runtime/include/pto_l3_api.h.
//
// Scale: every live task sits in a fixed window of slots (slot = index mod window). A task
// counts its unfinished producers (fanin) and lists its consumers (fanout), so submission
// costs O(deps) and completion O(consumers); nothing is rescanned. A finished task is
// retired at once: its slot's index is cleared, and a handle whose slot no longer holds its
// index names a finished task. Submission takes only the producers' slot locks and the ready
// queue's lock (no global lock); memory is bounded by the window (submit blocks when the slot
// it needs is still live: back-pressure). Dependencies only point to earlier tasks, so the
// oldest live task can always finish and back-pressure cannot deadlock.
//
// Barriers (submit_barrier) take indices and slots too but never reach a transport: they
// finish where their last producer finished (or at submission).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "kernel_table.h"
#include "l3_inprocess.h"
#include "options_check.h"
#include "pto_l3_api.h"

namespace pto2 {

namespace {

/// Unwinds the host entry after the run failed (never escapes run()).
struct L3Abort {};
// The L3 runtime whose next-level task this thread runs (run_local): an L3Runtime::run of it
// from an L2 entry would wait for the run that waits for this task.
thread_local const void* t_serving = nullptr;

std::atomic<uint64_t> g_next_run_id{1};

struct L3KernelReg {
  int32_t id;
  std::string name;
  CoreType core;
  PTO2KernelFn fn;
};

/// One live next-level task (or barrier).
struct L3Slot {
  std::mutex mu;                     // guards index (writes), fanout
  std::atomic<uint64_t> index{0};    // the task it holds; 0 = free (retired)
  std::atomic<int64_t> fanin{0};     // unfinished producers + 1 while being submitted
  std::atomic<int> queued{0};        // 1 once handed to the ready queue or a chip's early queue
  uint64_t after = 0;                // the producer it was queued behind on a chip (placed)
  int32_t target_id = -1;
  bool barrier = false;
  ChipStorageTaskArgs args;
  std::vector<uint64_t> deps;        // for records (traces)
  std::vector<uint64_t> fanout;      // consumers' indices
};

}  // namespace

struct L3Runtime::Impl : L3Executor {
  L3Options options;
  std::shared_ptr<L3Transport> transport;
  L3InProcessTransport* inprocess = nullptr;  // == transport.get() when in-process
  std::vector<std::unique_ptr<Runtime>> chips;  // shared kernels only
  std::map<int32_t, std::pair<std::string, L2Entry>> targets;
  std::vector<L3KernelReg> shared_kernels;
  std::map<int32_t, std::vector<L3KernelReg>> target_kernels;
  // (chip, target) -> runtime of a target with its own kernels; each chip's entries are only
  // touched by the thread serving that chip (and by the constructor/destructor).
  std::vector<std::map<int32_t, std::unique_ptr<Runtime>>> target_chips;

  std::mutex run_mu;  // one run at a time
  std::atomic<bool> running{false};  // read by registrations and run_target from any thread

  // -- the window of live tasks --
  std::vector<L3Slot> slots;
  L3Slot& slot_of(uint64_t index) { return slots[(index - 1) % slots.size()]; }

  // -- the ready queue (shared by the host thread, completions and the transport) --
  std::mutex ready_mu;
  std::condition_variable ready_cv;
  std::deque<uint64_t> ready;
  bool shutdown = false;
  uint32_t ready_waiters = 0;  // threads blocked in next() (guarded by ready_mu): no wake-up
                               // system call when nobody sleeps
  static constexpr uint32_t kNoChip = ~0u;  // finish() for a task no chip ran (a barrier)
  // Per chip: tasks queued behind a task placed on that chip (placed / next_early).
  struct EarlyQueue {
    std::mutex mu;
    std::deque<uint64_t> q;
  };
  std::vector<std::unique_ptr<EarlyQueue>> early;
  std::atomic<bool> serves_early{false};  // the transport called placed(): it asks next_early

  // -- run state --
  uint64_t run_id = 0;
  uint64_t submitted = 0;                           // host thread only
  std::unordered_map<int32_t, uint64_t> last_of_target;  // host thread only
  std::atomic<uint64_t> live{0};                    // submitted, not retired
  std::atomic<uint64_t> peak_live{0};
  std::atomic<uint64_t> dispatched{0};              // in flight on the transport
  std::atomic<bool> host_done{false};
  std::atomic<bool> failed{false};
  std::mutex state_mu;                              // failure message; wakes the host
  std::condition_variable state_cv;
  std::atomic<bool> host_waiting{false};            // the host sleeps on state_cv
  std::string failure;
  L3RunResult result;                               // counters: host thread
  std::atomic<uint64_t> executed{0};
  std::vector<std::vector<L3TaskRecord>> records;   // per chip (one serving thread each)
  const ChipStorageTaskArgs* current_args = nullptr;  // the running host entry's arguments
  std::atomic<uint64_t> bytes_to{0}, bytes_from{0}, bytes_between{0};
  std::string notes;                                // guarded by state_mu
  std::chrono::steady_clock::time_point t0;

  Impl(const L3Options& o) : options(o), slots(o.window_ == 0 ? 1 : o.window_) {}

  // ---- L3Executor ----
  double now_us() const override {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }

  const ChipStorageTaskArgs& run_args() const override { return *current_args; }

  void count_bytes(uint64_t to, uint64_t from, uint64_t between) override {
    bytes_to.fetch_add(to, std::memory_order_relaxed);
    bytes_from.fetch_add(from, std::memory_order_relaxed);
    bytes_between.fetch_add(between, std::memory_order_relaxed);
  }

  void note(const std::string& text) override {
    std::lock_guard<std::mutex> lk(state_mu);
    notes += text;
  }

  std::string target_name(int32_t id) const override {
    auto it = targets.find(id);
    return it == targets.end() ? std::string("'?'") : "'" + it->second.first + "'";
  }

  void fail(const std::string& msg) override {
    {
      std::lock_guard<std::mutex> lk(state_mu);
      if (failure.empty()) failure = msg;
      failed.store(true);
    }
    state_cv.notify_all();  // rare: always wake
    { std::lock_guard<std::mutex> lk(ready_mu); }
    ready_cv.notify_all();
  }

  bool next(L3Dispatch& out, int64_t timeout_us) override {
    uint64_t index = 0;
    {
      std::unique_lock<std::mutex> lk(ready_mu);
      auto have = [&] { return shutdown || (!ready.empty() && !failed.load()); };
      if (!have() && timeout_us != 0) {
        // A short spin first: a chip that just finished usually finds its next task queued
        // within a microsecond or two, and a sleep/wake pair costs tens.
        for (int spin = 0; spin < 64 && !have(); ++spin) {
          lk.unlock();
          std::this_thread::yield();
          lk.lock();
        }
      }
      if (!have() && timeout_us != 0) {
        ++ready_waiters;
        if (timeout_us < 0) ready_cv.wait(lk, have);
        else ready_cv.wait_for(lk, std::chrono::microseconds(timeout_us), have);
        --ready_waiters;
      }
      if (shutdown || ready.empty() || failed.load()) return false;
      index = ready.front();
      ready.pop_front();
      dispatched.fetch_add(1);
    }
    L3Slot& s = slot_of(index);
    out.index = index;
    out.target_id = s.target_id;
    out.args = &s.args;
    out.deps = s.deps;
    out.after = 0;
    return true;
  }

  void placed(uint64_t index, uint32_t chip) override {
    if (chip >= early.size()) return;
    serves_early.store(true, std::memory_order_relaxed);
    L3Slot& p = slot_of(index);
    std::vector<uint64_t> behind;
    {
      std::lock_guard<std::mutex> lk(p.mu);
      if (p.index.load() != index) return;
      for (uint64_t c : p.fanout) {
        L3Slot& cs = slot_of(c);
        // fanin 1: `index` is its only unfinished producer (and its submission is complete).
        if (cs.barrier || cs.fanin.load() != 1) continue;
        int expected = 0;
        if (!cs.queued.compare_exchange_strong(expected, 1)) continue;
        cs.after = index;
        behind.push_back(c);
      }
    }
    if (behind.empty()) return;
    EarlyQueue& e = *early[chip];
    std::lock_guard<std::mutex> lk(e.mu);
    e.q.insert(e.q.end(), behind.begin(), behind.end());
  }

  bool next_early(uint32_t chip, L3Dispatch& out) override {
    if (chip >= early.size() || failed.load()) return false;
    uint64_t index;
    {
      EarlyQueue& e = *early[chip];
      std::lock_guard<std::mutex> lk(e.mu);
      if (e.q.empty()) return false;
      index = e.q.front();
      e.q.pop_front();
    }
    dispatched.fetch_add(1);
    L3Slot& s = slot_of(index);
    out.index = index;
    out.target_id = s.target_id;
    out.args = &s.args;
    out.deps = s.deps;
    out.after = s.after;
    return true;
  }

  void complete(L3Completion&& done) override {
    L3Slot& s = slot_of(done.index);
    const int32_t target = s.target_id;
    if (!done.error.empty()) {
      std::ostringstream os;
      os << "next-level task " << done.index << " (target " << target << " " << target_name(target) << ") failed on "
         << transport->where(done.chip) << ": " << done.error;
      fail(os.str());
    } else {
      executed.fetch_add(1);
      if (options.record_tasks_) {
        records[done.chip].push_back(L3TaskRecord{done.index, target, done.chip, done.start_us, done.end_us,
                                                  std::move(done.result), s.deps});
      }
    }
    finish(done.index, done.chip);
    dispatched.fetch_sub(1);
    wake_host();
  }

  bool run_over() const override {
    if (dispatched.load() != 0) return false;
    return failed.load() || (host_done.load() && live.load() == 0);
  }

  uint64_t in_flight() const override { return dispatched.load(); }

  RunResult run_local(uint32_t chip, int32_t target, const ChipStorageTaskArgs& args) override {
    auto it = targets.find(target);
    if (it == targets.end()) throw std::runtime_error("no L2 entry registered under target id " + std::to_string(target));
    struct Serving {
      const void* was;
      ~Serving() { t_serving = was; }
    } serving{t_serving};
    t_serving = this;
    return runtime_for(chip, target).run(it->second.second, args);
  }

  // ---- scheduling ----
  void wake_host() {
    if (!host_waiting.load()) return;
    { std::lock_guard<std::mutex> lk(state_mu); }
    state_cv.notify_all();
  }

  // The host thread sleeps until `pred` holds (predicates read atomics that finish()/fail()
  // update before calling wake_host, so no wake-up is lost).
  template <class Pred>
  void host_wait(Pred pred) {
    for (int spin = 0; spin < 64; ++spin) {  // a full window frees a slot within microseconds
      if (pred()) return;
      std::this_thread::yield();
    }
    std::unique_lock<std::mutex> lk(state_mu);
    host_waiting.store(true);
    state_cv.wait(lk, pred);
    host_waiting.store(false);
  }

  // Retires task `index` and releases its consumers; barriers that become ready finish here
  // too (iteratively: a chain of barriers does not recurse). The first task the finished one
  // releases itself follows it on `chip` (its early queue: the chip's thread asks there
  // first), so a chain whose next task was submitted after placed() still stays on its chip
  // without racing the other chips for the shared queue.
  void finish(uint64_t index, uint32_t chip = kNoChip) {
    std::vector<uint64_t> todo{index};
    // Only for a transport that serves early queues (it calls placed(); the API makes that optional).
    bool follow = chip < early.size() && serves_early.load(std::memory_order_relaxed) && !failed.load();
    while (!todo.empty()) {
      const uint64_t i = todo.back();
      todo.pop_back();
      L3Slot& s = slot_of(i);
      std::vector<uint64_t> consumers;
      {
        std::lock_guard<std::mutex> lk(s.mu);
        consumers.swap(s.fanout);
        // Counted out before the slot is freed (the host may fill it at once: live <= window),
        // under the slot's lock, so a publish into this slot waits for both.
        live.fetch_sub(1);
        s.index.store(0);  // retired: handles of `i` now read as finished
      }
      for (uint64_t c : consumers) {
        if (slot_of(c).fanin.fetch_sub(1) == 1) {
          if (slot_of(c).barrier) todo.push_back(c);
          else if (follow && i == index) follow = !queue_early(c, chip);
          else make_ready(c);
        }
      }
    }
    // The host may be blocked on a full window, or waiting for the end.
    wake_host();
  }

  // Queues `index` on `chip`'s early queue unless it is already queued; returns whether it was.
  bool queue_early(uint64_t index, uint32_t chip) {
    int expected = 0;
    if (!slot_of(index).queued.compare_exchange_strong(expected, 1)) return false;
    EarlyQueue& e = *early[chip];
    std::lock_guard<std::mutex> lk(e.mu);
    e.q.push_back(index);
    return true;
  }

  void make_ready(uint64_t index) {
    int expected = 0;  // already queued behind its last producer on a chip (placed)
    if (!slot_of(index).queued.compare_exchange_strong(expected, 1)) return;
    bool sleeping;
    {
      std::lock_guard<std::mutex> lk(ready_mu);
      ready.push_back(index);
      sleeping = ready_waiters != 0;
    }
    if (sleeping) ready_cv.notify_one();
  }

  // Adds the edge producer -> consumer unless the producer already finished. Returns whether
  // an edge was added.
  bool link(uint64_t producer, uint64_t consumer) {
    L3Slot& p = slot_of(producer);
    if (p.index.load() != producer) return false;
    std::lock_guard<std::mutex> lk(p.mu);
    if (p.index.load() != producer) return false;
    slot_of(consumer).fanin.fetch_add(1);
    p.fanout.push_back(consumer);
    return true;
  }

  // Waits until task `index`'s slot is free (back-pressure); throws L3Abort if the run failed.
  L3Slot& claim(uint64_t index) {
    L3Slot& s = slot_of(index);
    if (s.index.load() != 0) host_wait([&] { return s.index.load() == 0 || failed.load(); });
    if (failed.load()) throw L3Abort{};
    return s;
  }

  // The valid add_dep_wait handles of `args`, deduplicated (fails the run on a foreign one).
  std::vector<uint64_t> wait_deps(const TaskArgs& args, const char* api) {
    std::vector<uint64_t> deps;
    for (const TaskHandle& h : args.waits) {
      if (!h.is_valid()) continue;
      if (h.run_ != run_id || h.index_ == 0 || h.index_ > submitted) {
        fail(std::string(api) +
             ": add_dep_wait: the TaskHandle was not returned by submit_next_level or submit_barrier in this run");
        throw L3Abort{};
      }
      if (std::find(deps.begin(), deps.end(), h.index_) == deps.end()) deps.push_back(h.index_);
    }
    return deps;
  }

  // Publishes task `index` in its slot with `deps` as producers; queues it (or finishes a
  // barrier) when they all finished already.
  void publish(uint64_t index, L3Slot& s, std::vector<uint64_t>&& deps) {
    s.fanin.store(1);  // held until every edge is linked
    s.queued.store(0);
    s.after = 0;
    {
      std::lock_guard<std::mutex> lk(s.mu);
      s.fanout.clear();
      s.index.store(index);
    }
    const uint64_t now_live = live.fetch_add(1) + 1;
    if (now_live > peak_live.load()) peak_live.store(now_live);
    for (uint64_t d : deps) link(d, index);
    s.deps = std::move(deps);
    if (s.fanin.fetch_sub(1) == 1) {
      if (s.barrier) finish(index);
      else make_ready(index);
    }
  }

  TaskHandle submit_barrier(TaskArgs& args) {
    if (failed.load()) throw L3Abort{};
    if (args.storage.tensor_count() != 0 || args.storage.scalar_count() != 0) {
      std::ostringstream os;
      os << "submit_barrier: a barrier runs nothing, so it takes only add_dep_wait handles (got "
         << args.storage.tensor_count() << " tensors, " << args.storage.scalar_count() << " scalars)";
      fail(os.str());
      throw L3Abort{};
    }
    std::vector<uint64_t> deps = wait_deps(args, "submit_barrier");
    if (deps.empty()) return TaskHandle::invalid();  // nothing to wait for
    result.wait_edges += deps.size();
    ++result.barriers;
    const uint64_t index = submitted + 1;
    L3Slot& s = claim(index);
    submitted = index;
    s.target_id = -1;
    s.barrier = true;
    s.args = ChipStorageTaskArgs{};
    if (options.record_tasks_) result.barrier_deps.emplace_back(index, deps);
    publish(index, s, std::move(deps));
    return TaskHandle{run_id, index};
  }

  TaskHandle submit(int32_t target_id, TaskArgs& args) {
    if (failed.load()) throw L3Abort{};
    if (targets.find(target_id) == targets.end()) {
      std::ostringstream os;
      os << "submit_next_level: no L2 entry registered under target id " << target_id << " (registered:";
      for (const auto& kv : targets) os << ' ' << kv.first << "='" << kv.second.first << "'";
      os << ")";
      fail(os.str());
      throw L3Abort{};
    }
    std::vector<uint64_t> deps = wait_deps(args, "submit_next_level");
    result.wait_edges += deps.size();
    auto chain = last_of_target.find(target_id);
    if (chain != last_of_target.end() && std::find(deps.begin(), deps.end(), chain->second) == deps.end()) {
      deps.push_back(chain->second);
      ++result.chain_edges;
    }
    const uint64_t index = submitted + 1;
    L3Slot& s = claim(index);
    submitted = index;
    s.target_id = target_id;
    s.barrier = false;
    s.args = args.storage;
    last_of_target[target_id] = index;
    ++result.tasks_submitted;
    publish(index, s, std::move(deps));
    return TaskHandle{run_id, index};
  }

  Runtime& runtime_for(uint32_t chip, int32_t target) {
    auto own = target_kernels.find(target);
    if (own == target_kernels.end()) {
      if (!chips[chip]) {  // created on first use: a coordinating MPI rank 0 never needs one
        chips[chip] = std::make_unique<Runtime>(options.chip_options_);
        for (const L3KernelReg& k : shared_kernels) chips[chip]->register_kernel(k.id, k.name, k.core, k.fn);
      }
      return *chips[chip];
    }
    auto& slot = target_chips[chip][target];
    if (!slot) {
      slot = std::make_unique<Runtime>(options.chip_options_);
      for (const L3KernelReg& k : shared_kernels) slot->register_kernel(k.id, k.name, k.core, k.fn);
      for (const L3KernelReg& k : own->second) slot->register_kernel(k.id, k.name, k.core, k.fn);
    }
    return *slot;
  }

  // After a failure: forget every task still in the window (none is in flight any more).
  void reset_window() {
    for (L3Slot& s : slots) {
      std::lock_guard<std::mutex> lk(s.mu);
      s.index.store(0);
      s.fanout.clear();
      s.fanin.store(0);
    }
    for (auto& e : early) {
      std::lock_guard<std::mutex> lk(e->mu);
      e->q.clear();
    }
    std::lock_guard<std::mutex> lk(ready_mu);
    ready.clear();
  }

  void stop_threads() {
    {
      std::lock_guard<std::mutex> lk(ready_mu);
      shutdown = true;
    }
    ready_cv.notify_all();
    if (inprocess) inprocess->stop(*this);
  }
};

namespace {
thread_local L3Runtime::Impl* t_current = nullptr;

std::string during_run(const char* api) {
  return std::string(api) + ": a run of this L3Runtime is in progress; call it between runs";
}

const L3Options& checked_options(const L3Options& o) {
  detail::check_clusters(o.chip_options_, "L3Options::chip_options");
  if (!o.transport_) detail::check_inprocess_chips(o.chips_);
  return o;
}
}  // namespace

L3Runtime::L3Runtime(const L3Options& options) : impl_(new Impl(checked_options(options))) {
  Impl& s = *impl_;
  if (s.options.transport_) {
    s.transport = s.options.transport_;
  } else {
    auto in = std::make_shared<L3InProcessTransport>(s.options.chips_);
    s.inprocess = in.get();
    s.transport = in;
  }
  // Chip runtimes of this process: the in-process transport's chips, or (under MPI) one per
  // rank-local chip, created on demand by run_target.
  const uint32_t local = s.inprocess ? s.transport->chips() : std::max<uint32_t>(1, s.options.chips_);
  s.options.chips_ = local;
  s.chips.resize(local);
  s.target_chips.resize(local);
  for (uint32_t c = 0; c < s.transport->chips(); ++c) s.early.push_back(std::make_unique<Impl::EarlyQueue>());
}

L3Runtime::~L3Runtime() {
  impl_->stop_threads();
  delete impl_;
}

uint32_t L3Runtime::local_chips() const { return static_cast<uint32_t>(impl_->chips.size()); }

L3Runtime& L3Runtime::register_kernel(int32_t id, const std::string& name, CoreType core, PTO2KernelFn fn) {
  if (impl_->running) throw std::logic_error(during_run("L3Runtime::register_kernel"));
  // Checked here: the chip runtimes that would refuse it are created later, during a run.
  detail::KernelTable::check(id, name, fn, "L3Runtime::register_kernel");
  for (auto& chip : impl_->chips)
    if (chip) chip->register_kernel(id, name, core, fn);
  impl_->shared_kernels.push_back(L3KernelReg{id, name, core, fn});
  for (auto& per_chip : impl_->target_chips) per_chip.clear();  // rebuilt with the new table
  return *this;
}

L3Runtime& L3Runtime::register_target_kernel(int32_t target_id, int32_t id, const std::string& name, CoreType core,
                                             PTO2KernelFn fn) {
  detail::KernelTable::check(id, name, fn, "L3Runtime::register_target_kernel");
  if (impl_->running) throw std::logic_error(during_run("L3Runtime::register_target_kernel"));
  impl_->target_kernels[target_id].push_back(L3KernelReg{id, name, core, fn});
  for (auto& per_chip : impl_->target_chips) per_chip.erase(target_id);  // rebuilt with the new table
  return *this;
}

L3Runtime& L3Runtime::register_target(int32_t target_id, const std::string& name, L2Entry entry) {
  if (entry == nullptr) throw std::invalid_argument("register_target: null L2 entry for '" + name + "'");
  if (impl_->running) throw std::logic_error(during_run("L3Runtime::register_target"));
  impl_->targets[target_id] = {name, entry};
  return *this;
}

RunResult L3Runtime::run_target(uint32_t chip, int32_t target_id, const ChipStorageTaskArgs& args) {
  if (impl_->running) throw std::logic_error(during_run("L3Runtime::run_target"));  // its chips are in use
  if (chip >= impl_->chips.size())
    throw std::out_of_range("run_target: chip " + std::to_string(chip) + " of " + std::to_string(impl_->chips.size()));
  return impl_->run_local(chip, target_id, args);
}

L3RunResult L3Runtime::run(HostEntry entry, const ChipStorageTaskArgs& args) {
  if (t_current == impl_ || t_serving == impl_) {  // the lock would never come
    L3RunResult r;
    r.message = std::string("L3Runtime::run: called from ") + (t_current == impl_ ? "the host entry" : "an L2 entry (a next-level task)") +
                " of a run of this L3Runtime in progress (it would wait for itself): one run at a time per L3Runtime";
    return r;
  }
  std::lock_guard<std::mutex> run_lock(impl_->run_mu);
  Impl& s = *impl_;
  s.running = true;
  s.run_id = g_next_run_id.fetch_add(1);
  s.submitted = 0;
  s.last_of_target.clear();
  s.live.store(0);
  s.peak_live.store(0);
  s.dispatched.store(0);
  s.executed.store(0);
  s.host_done.store(false);
  s.failed.store(false);
  s.failure.clear();
  s.result = L3RunResult{};
  s.records.assign(s.transport->chips(), {});
  s.current_args = &args;
  s.bytes_to.store(0);
  s.bytes_from.store(0);
  s.bytes_between.store(0);
  {
    std::lock_guard<std::mutex> lk(s.state_mu);
    s.notes.clear();
  }
  s.t0 = std::chrono::steady_clock::now();
  s.transport->begin(s);

  L3Runtime::Impl* saved = t_current;
  t_current = &s;
  std::string host_error;
  try {
    if (entry == nullptr) throw std::invalid_argument("L3Runtime::run: null host entry");
    entry(args);
  } catch (const L3Abort&) {
  } catch (const std::exception& e) {
    host_error = std::string("host orchestration entry threw: ") + e.what();
  } catch (...) {
    host_error = "host orchestration entry threw an unknown exception";
  }
  t_current = saved;
  if (!host_error.empty()) s.fail(host_error);
  s.host_done.store(true);
  s.host_wait([&] { return s.run_over(); });
  s.transport->end();
  if (s.failed.load()) s.reset_window();

  L3RunResult r = std::move(s.result);
  {
    std::lock_guard<std::mutex> lk(s.state_mu);
    r.message = s.failure;
  }
  r.tasks_executed = s.executed.load();
  if (!r.message.empty()) {
    // Say what the output arrays hold: nothing is silently half-written.
    std::ostringstream os;
    os << " [the run stopped: " << r.tasks_executed << " of " << r.tasks_submitted
       << " submitted next-level tasks completed and their writes are in the output arrays; a failed task's "
          "partial writes are too on the in-process transport, and are dropped under MPI]";
    r.message += os.str();
    std::lock_guard<std::mutex> lk(s.state_mu);
    r.message += s.notes;
  }
  r.bytes_to_chips = s.bytes_to.load();
  r.bytes_from_chips = s.bytes_from.load();
  r.bytes_between_chips = s.bytes_between.load();
  r.peak_live_tasks = s.peak_live.load();
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.t0).count();
  if (s.options.record_tasks_) {
    for (auto& per_chip : s.records)
      for (L3TaskRecord& rec : per_chip) r.tasks.push_back(std::move(rec));
    std::sort(r.tasks.begin(), r.tasks.end(),
              [](const L3TaskRecord& a, const L3TaskRecord& b) { return a.index < b.index; });
  }
  s.records.clear();
  s.running = false;
  return r;
}

}  // namespace pto2

TaskHandle submit_next_level(int32_t target_id, TaskArgs& args) {
  if (pto2::t_current == nullptr)
    throw std::logic_error("submit_next_level called outside pto2::L3Runtime::run (or on another thread)");
  return pto2::t_current->submit(target_id, args);
}

TaskHandle submit_barrier(TaskArgs& args) {
  if (pto2::t_current == nullptr)
    throw std::logic_error("submit_barrier called outside pto2::L3Runtime::run (or on another thread)");
  return pto2::t_current->submit_barrier(args);
}
