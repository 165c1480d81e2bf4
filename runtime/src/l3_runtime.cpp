// l3_runtime.cpp — the L3 (distributed HOST) runtime on CPU: next-level tasks are whole L2
// orchestration runs, executed on a pool of chip runtimes (one pto2::Runtime per chip, each
// driven by its own dispatcher thread). See runtime/include/pto_l3_api.h.
//
// Scheduling is deliberately simple (next-level tasks are coarse): one mutex + condition
// variable; a dispatcher picks the oldest pending task whose dependencies (dep-waits and the
// per-target chain predecessor) all finished. Dependencies only point to earlier tasks, so a
// pending task always becomes ready unless the run failed.
//
// Barriers (submit_barrier) share the task list and index space but never reach a chip: they
// settle under the lock, at submission or when a task finishes, once their deps are done.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "pto_l3_api.h"

namespace pto2 {

namespace {

/// Unwinds the host entry after the run failed (never escapes run()).
struct L3Abort {};

enum class L3State { kPending, kRunning, kDone };

struct L3Task {
  int32_t target_id;
  ChipStorageTaskArgs args;
  std::vector<uint64_t> deps;  // 1-based indices of earlier tasks
  L3State state = L3State::kPending;
  bool barrier = false;        // runs nothing; done once its deps are
};

std::atomic<uint64_t> g_next_run_id{1};

struct L3KernelReg {
  int32_t id;
  std::string name;
  CoreType core;
  PTO2KernelFn fn;
};

}  // namespace

struct L3Runtime::Impl {
  L3Options options;
  std::vector<std::unique_ptr<Runtime>> chips;  // shared kernels only
  std::map<int32_t, std::pair<std::string, L2Entry>> targets;
  std::vector<L3KernelReg> shared_kernels;
  std::map<int32_t, std::vector<L3KernelReg>> target_kernels;
  // (chip, target) -> runtime of a target with its own kernels; each chip's entries are only
  // touched by that chip's dispatcher thread (and by the constructor/destructor).
  std::vector<std::map<int32_t, std::unique_ptr<Runtime>>> target_chips;

  // -- state of the current run (guarded by mu) --
  std::mutex run_mu;  // one run at a time
  std::mutex mu;
  std::condition_variable cv;
  bool running = false;
  uint64_t run_id = 0;
  std::vector<L3Task> tasks;
  std::map<int32_t, uint64_t> last_of_target;
  bool host_done = false;
  std::string failure;
  L3RunResult result;
  std::chrono::steady_clock::time_point t0;

  void fail_locked(const std::string& msg) {
    if (failure.empty()) failure = msg;
    cv.notify_all();
  }

  std::string target_name(int32_t id) const {
    auto it = targets.find(id);
    return it == targets.end() ? std::string("?") : it->second.first;
  }

  bool ready_locked(const L3Task& t) const {
    for (uint64_t d : t.deps)
      if (tasks[d - 1].state != L3State::kDone) return false;
    return true;
  }

  // Marks done every pending barrier whose deps are done. Deps point to earlier tasks, so one
  // pass in index order also settles barriers that wait on barriers.
  void settle_barriers_locked() {
    for (L3Task& t : tasks)
      if (t.barrier && t.state == L3State::kPending && ready_locked(t)) t.state = L3State::kDone;
  }

  bool all_finished_locked() const {
    return std::all_of(tasks.begin(), tasks.end(), [](const L3Task& t) { return t.state == L3State::kDone; });
  }

  Runtime& runtime_for(uint32_t chip, int32_t target) {
    auto own = target_kernels.find(target);
    if (own == target_kernels.end()) return *chips[chip];
    auto& slot = target_chips[chip][target];
    if (!slot) {
      slot = std::make_unique<Runtime>(options.chip_options_);
      for (const L3KernelReg& k : shared_kernels) slot->register_kernel(k.id, k.name, k.core, k.fn);
      for (const L3KernelReg& k : own->second) slot->register_kernel(k.id, k.name, k.core, k.fn);
    }
    return *slot;
  }

  double now_us() const {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }

  void dispatcher(uint32_t chip) {
    std::unique_lock<std::mutex> lk(mu);
    for (;;) {
      if (!failure.empty()) return;
      size_t pick = tasks.size();
      for (size_t i = 0; i < tasks.size(); ++i) {
        if (!tasks[i].barrier && tasks[i].state == L3State::kPending && ready_locked(tasks[i])) {
          pick = i;
          break;
        }
      }
      if (pick == tasks.size()) {
        if (host_done && all_finished_locked()) return;
        cv.wait(lk);
        continue;
      }
      L3Task& task = tasks[pick];
      task.state = L3State::kRunning;
      const int32_t target = task.target_id;
      const L2Entry entry = targets.at(target).second;
      const ChipStorageTaskArgs args = task.args;
      lk.unlock();

      L3TaskRecord rec{pick + 1, target, chip, now_us(), 0.0, RunResult{}};
      std::string error;
      try {
        rec.result = runtime_for(chip, target).run(entry, args);
        if (!rec.result.ok()) error = rec.result.message;
      } catch (const std::exception& e) {
        error = e.what();
      } catch (...) {
        error = "unknown exception";
      }
      rec.end_us = now_us();

      lk.lock();
      tasks[pick].state = L3State::kDone;
      settle_barriers_locked();
      if (!error.empty()) {
        std::ostringstream os;
        os << "next-level task " << (pick + 1) << " (target " << target << " '" << target_name(target)
           << "') failed: " << error;
        fail_locked(os.str());
      } else {
        ++result.tasks_executed;
        result.tasks.push_back(std::move(rec));
      }
      cv.notify_all();
    }
  }

  // The deps of a new task from its valid add_dep_wait handles (fails the run on a foreign one).
  std::vector<uint64_t> wait_deps_locked(const TaskArgs& args, const char* api) {
    std::vector<uint64_t> deps;
    for (const TaskHandle& h : args.waits) {
      if (!h.is_valid()) continue;
      if (h.run_ != run_id || h.index_ == 0 || h.index_ > tasks.size()) {
        fail_locked(std::string(api) +
                    ": add_dep_wait: the TaskHandle was not returned by submit_next_level or submit_barrier in this run");
        throw L3Abort{};
      }
      if (std::find(deps.begin(), deps.end(), h.index_) == deps.end()) deps.push_back(h.index_);
    }
    return deps;
  }

  TaskHandle submit_barrier(TaskArgs& args) {
    std::lock_guard<std::mutex> lk(mu);
    if (!failure.empty()) throw L3Abort{};
    if (args.storage.tensor_count() != 0 || args.storage.scalar_count() != 0) {
      std::ostringstream os;
      os << "submit_barrier: a barrier runs nothing, so it takes only add_dep_wait handles (got "
         << args.storage.tensor_count() << " tensors, " << args.storage.scalar_count() << " scalars)";
      fail_locked(os.str());
      throw L3Abort{};
    }
    L3Task task;
    task.target_id = -1;
    task.barrier = true;
    task.deps = wait_deps_locked(args, "submit_barrier");
    if (task.deps.empty()) return TaskHandle::invalid();  // nothing to wait for
    result.wait_edges += task.deps.size();
    ++result.barriers;
    if (ready_locked(task)) task.state = L3State::kDone;
    tasks.push_back(std::move(task));
    return TaskHandle{run_id, tasks.size()};
  }

  TaskHandle submit(int32_t target_id, TaskArgs& args) {
    std::lock_guard<std::mutex> lk(mu);
    if (!failure.empty()) throw L3Abort{};
    if (targets.find(target_id) == targets.end()) {
      std::ostringstream os;
      os << "submit_next_level: no L2 entry registered under target id " << target_id << " (registered:";
      for (const auto& kv : targets) os << ' ' << kv.first << "='" << kv.second.first << "'";
      os << ")";
      fail_locked(os.str());
      throw L3Abort{};
    }
    L3Task task;
    task.target_id = target_id;
    task.args = args.storage;
    task.deps = wait_deps_locked(args, "submit_next_level");
    result.wait_edges += task.deps.size();
    auto chain = last_of_target.find(target_id);
    if (chain != last_of_target.end() &&
        std::find(task.deps.begin(), task.deps.end(), chain->second) == task.deps.end()) {
      task.deps.push_back(chain->second);
      ++result.chain_edges;
    }
    tasks.push_back(std::move(task));
    const uint64_t index = tasks.size();
    last_of_target[target_id] = index;
    ++result.tasks_submitted;
    cv.notify_all();
    return TaskHandle{run_id, index};
  }
};

namespace {
thread_local L3Runtime::Impl* t_current = nullptr;
}  // namespace

L3Runtime::L3Runtime(const L3Options& options) : impl_(new Impl) {
  impl_->options = options;
  if (impl_->options.chips_ == 0) impl_->options.chips_ = 1;
  for (uint32_t i = 0; i < impl_->options.chips_; ++i)
    impl_->chips.push_back(std::make_unique<Runtime>(impl_->options.chip_options_));
  impl_->target_chips.resize(impl_->options.chips_);
}

L3Runtime::~L3Runtime() { delete impl_; }

L3Runtime& L3Runtime::register_kernel(int32_t id, const std::string& name, CoreType core, PTO2KernelFn fn) {
  std::lock_guard<std::mutex> lk(impl_->mu);
  if (impl_->running) throw std::logic_error("register_kernel during a run");
  for (auto& chip : impl_->chips) chip->register_kernel(id, name, core, fn);
  impl_->shared_kernels.push_back(L3KernelReg{id, name, core, fn});
  for (auto& per_chip : impl_->target_chips) per_chip.clear();  // rebuilt with the new table
  return *this;
}

L3Runtime& L3Runtime::register_target_kernel(int32_t target_id, int32_t id, const std::string& name, CoreType core,
                                             PTO2KernelFn fn) {
  if (fn == nullptr) throw std::invalid_argument("register_target_kernel: null function for kernel '" + name + "'");
  std::lock_guard<std::mutex> lk(impl_->mu);
  if (impl_->running) throw std::logic_error("register_target_kernel during a run");
  impl_->target_kernels[target_id].push_back(L3KernelReg{id, name, core, fn});
  for (auto& per_chip : impl_->target_chips) per_chip.erase(target_id);  // rebuilt with the new table
  return *this;
}

L3Runtime& L3Runtime::register_target(int32_t target_id, const std::string& name, L2Entry entry) {
  if (entry == nullptr) throw std::invalid_argument("register_target: null L2 entry for '" + name + "'");
  std::lock_guard<std::mutex> lk(impl_->mu);
  if (impl_->running) throw std::logic_error("register_target during a run");
  impl_->targets[target_id] = {name, entry};
  return *this;
}

L3RunResult L3Runtime::run(HostEntry entry, const ChipStorageTaskArgs& args) {
  std::lock_guard<std::mutex> run_lock(impl_->run_mu);
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lk(s.mu);
    s.running = true;
    s.run_id = g_next_run_id.fetch_add(1);
    s.tasks.clear();
    s.last_of_target.clear();
    s.host_done = false;
    s.failure.clear();
    s.result = L3RunResult{};
    s.t0 = std::chrono::steady_clock::now();
  }
  std::vector<std::thread> dispatchers;
  for (uint32_t c = 0; c < s.chips.size(); ++c) dispatchers.emplace_back([&s, c] { s.dispatcher(c); });

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

  {
    std::lock_guard<std::mutex> lk(s.mu);
    if (!host_error.empty()) s.fail_locked(host_error);
    s.host_done = true;
    s.cv.notify_all();
  }
  for (auto& th : dispatchers) th.join();

  std::lock_guard<std::mutex> lk(s.mu);
  s.running = false;
  L3RunResult r = std::move(s.result);
  r.message = s.failure;
  std::sort(r.tasks.begin(), r.tasks.end(),
            [](const L3TaskRecord& a, const L3TaskRecord& b) { return a.index < b.index; });
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
