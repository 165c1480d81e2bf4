// api.cpp — the free functions generated orchestration code calls; they forward to the
// current run's Engine (thread-local, set on the orchestrator thread).
#include <stdexcept>
#include <string>

#include "engine.h"
#include "interrupt.h"
#include "race_checker.h"

using pto2::detail::Engine;
using pto2::detail::TaskKind;

namespace {
[[noreturn]] void refuse(const char* api) {
  if (Engine::in_kernel())
    throw std::logic_error(std::string(api) +
                           " called from a kernel: orchestration functions run only in the orchestration entry of "
                           "pto2::Runtime::run() (on its orchestrator thread), never inside a kernel");
  throw std::logic_error(std::string(api) +
                         " called outside a run: orchestration functions must run inside pto2::Runtime::run() "
                         "(on its orchestrator thread)");
}
Engine& engine_for(const char* api) {
  Engine* e = Engine::current_or_mark();
  if (__builtin_expect(reinterpret_cast<uintptr_t>(e) <= 1, 0)) refuse(api);  // null, or in a kernel
  return *e;
}
// Race checker (race_checker.h): a submission that got its task id, and the producers the
// runtime linked it after (none when it ran undeferred), which the checker verifies.
void note_submit(Engine& e, TaskKind kind, int32_t aic, int32_t aiv, const Arg& params, const TaskOutputTensors& out,
                 bool ran_undeferred = false) {
  const int32_t kernels[2] = {aic, aiv};
  if (pto2::detail::RaceChecker* rc = e.race()) {
    const uint64_t raw = out.task_id().raw;
    // A tensor whose runtime scope has ended: its storage was reclaimed (kept aside while the
    // race check is on, MemoryPool::set_quarantine, so the task read its old contents).
    for (uint32_t i = 0; i < params.tensor_count(); ++i) {
      const PTO2Storage* st = params.tensors()[i].storage;
      if (!st || !st->scope_closed || params.dirs()[i] == PTO2ArgDir::OUTPUT_NEW) continue;
      const char* file = params.source_file();
      e.abort_orchestration("task #" + std::to_string(e.task_number(raw)) +
                            (file ? std::string(" (submitted at ") + file + ":" + std::to_string(params.source_line()) + ")"
                                  : std::string()) +
                            " uses argument " + std::to_string(i) +
                            ", a tensor the runtime allocated in a PTO2_SCOPE that has already ended: its storage is "
                            "reclaimed at the end of that scope (reported by the race check); allocate it in a scope "
                            "that encloses every use, or pass a tensor created there as the Out argument");
    }
    rc->on_submit(raw, static_cast<int>(kind), kernels, params, out, e.in_manual_scope());
    static const std::vector<uint64_t> kNone;
    rc->on_runtime_edges(raw, ran_undeferred ? kNone : e.last_submit_deps(), [&e](uint64_t r) { return e.task_live(r); });
  }
}
// Outside a run there is nothing to wait for, but the caller (get/set_tensor_data) accesses the
// element next: indices out of range would read or write outside the tensor.
void check_element_outside_run(const Tensor& t, uint32_t ndims, const int64_t* idx, bool for_write, const char* file,
                               int32_t line) {
  // On a thread that is not the orchestrator of the run in progress the element would be read
  // or written without waiting for that run's tasks (a data race, a stale value).
  if (pto2::detail::any_run_in_progress())
    throw std::logic_error(std::string(for_write ? "set_tensor_data" : "get_tensor_data") +
                           " (pto2_wait_for_element) called on a thread that is not the orchestrator of the run in "
                           "progress: it would not wait for the run's tasks; call it in the orchestration entry, or "
                           "after run() returned");
  if (t.data && !pto2::detail::element_index_in_range(t, ndims, idx, /*in_run=*/false))
    throw std::out_of_range(pto2::detail::element_index_error(t, ndims, idx, for_write, file, line));
}
}  // namespace

TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, Arg& params) {
  Engine& e = engine_for("rt_submit_aic_task");
  TaskOutputTensors out;  // returned in place (one return statement)
  const Engine::Undeferred u = e.try_submit_undeferred(TaskKind::AIC, kernel_id, params, out);
  if (u != Engine::Undeferred::kRan)
    e.submit(TaskKind::AIC, kernel_id, -1, params, "rt_submit_aic_task", out, u == Engine::Undeferred::kMustWait);
  if (__builtin_expect(e.race() != nullptr, 0)) note_submit(e, TaskKind::AIC, kernel_id, -1, params, out, u == Engine::Undeferred::kRan);
  return out;
}

TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, Arg& params) {
  Engine& e = engine_for("rt_submit_aiv_task");
  TaskOutputTensors out;  // returned in place (one return statement)
  const Engine::Undeferred u = e.try_submit_undeferred(TaskKind::AIV, kernel_id, params, out);
  if (u != Engine::Undeferred::kRan)
    e.submit(TaskKind::AIV, -1, kernel_id, params, "rt_submit_aiv_task", out, u == Engine::Undeferred::kMustWait);
  if (__builtin_expect(e.race() != nullptr, 0)) note_submit(e, TaskKind::AIV, -1, kernel_id, params, out, u == Engine::Undeferred::kRan);
  return out;
}

TaskOutputTensors rt_submit_task(const MixedKernels& kernels, Arg& params) {
  Engine& e = engine_for("rt_submit_task");
  // A cluster here runs one AIC and one AIV kernel: a third kernel would be silently lost.
  if (kernels.third_kernel_id != INVALID_KERNEL_ID)
    e.abort_orchestration("rt_submit_task: MixedKernels.third_kernel_id is " + std::to_string(kernels.third_kernel_id) +
                          "; the CPU runtime gang-starts one AIC and one AIV kernel per cluster, so a third kernel "
                          "is not supported (pass INVALID_KERNEL_ID, or submit it as its own task)");
  TaskOutputTensors out;
  e.submit(TaskKind::MIXED, kernels.aic_kernel_id, kernels.aiv_kernel_id, params, "rt_submit_task", out);
  if (e.race()) note_submit(e, TaskKind::MIXED, kernels.aic_kernel_id, kernels.aiv_kernel_id, params, out);
  return out;
}

TaskOutputTensors rt_submit_dummy_task(Arg& params) {
  Engine& e = engine_for("rt_submit_dummy_task");
  TaskOutputTensors out;
  e.submit(TaskKind::DUMMY, -1, -1, params, "rt_submit_dummy_task", out);
  if (e.race()) note_submit(e, TaskKind::DUMMY, -1, -1, params, out);
  return out;
}

TaskOutputTensors pto2_alloc_tensors_impl(const TensorCreateInfo* const* infos, uint32_t n) {
  Engine& e = engine_for("alloc_tensors");
  TaskOutputTensors out = e.alloc_tensors(infos, n);
  if (e.race()) e.race()->on_alloc_tensors(out);
  return out;
}

void pto2_name_tensors(const TaskOutputTensors& out, std::initializer_list<const char*> names) {
  Engine& e = engine_for("pto2_name_tensors");
  if (e.race()) e.race()->on_tensor_names(out, names);
}

// Race check: an element of a tensor whose runtime scope has ended (note_submit's check).
void check_element_scope(Engine& e, const Tensor& t, bool for_write, const char* file, int32_t line) {
  if (!e.race() || !t.storage || !t.storage->scope_closed) return;
  e.abort_orchestration(std::string(for_write ? "set_tensor_data" : "get_tensor_data") +
                        (file ? std::string(" at ") + file + ":" + std::to_string(line) : std::string()) +
                        (for_write ? " writes" : " reads") +
                        " an element of a tensor the runtime allocated in a PTO2_SCOPE that has already ended: its "
                        "storage is reclaimed at the end of that scope (reported by the race check)");
}

namespace {
// PTO2_ELEMENT_SITE's file and line for the thread's next element access (nullptr: none).
thread_local const char* element_site_file = nullptr;
thread_local int32_t element_site_line = 0;

// The caller's site, else the one PTO2_ELEMENT_SITE named; either way the named one is used up.
void take_element_site(const char*& file, int32_t& line) {
  if (!file && element_site_file) {
    file = element_site_file;
    line = element_site_line;
  }
  element_site_file = nullptr;
  element_site_line = 0;
}
}  // namespace

void pto2_set_element_site(const char* file, int32_t line) {
  element_site_file = file;
  element_site_line = line;
}

void pto2_wait_for_element(const Tensor& t, uint32_t ndims, const int64_t* indices, const char* file, int32_t line) {
  take_element_site(file, line);
  if (Engine::in_kernel()) refuse("pto2_wait_for_element (get_tensor_data)");  // would not wait for the run's tasks
  Engine* e = Engine::current();
  if (!e) return check_element_outside_run(t, ndims, indices, /*for_write=*/false, file, line);
  check_element_scope(*e, t, /*for_write=*/false, file, line);
  e->wait_for_element(t, ndims, indices, /*for_write=*/false, file, line);
  if (e->race()) e->race()->on_sync(t, indices);
}

void pto2_wait_for_element_write(const Tensor& t, uint32_t ndims, const int64_t* indices, const char* file,
                                 int32_t line) {
  take_element_site(file, line);
  if (Engine::in_kernel()) refuse("pto2_wait_for_element_write (set_tensor_data)");
  Engine* e = Engine::current();
  if (!e) return check_element_outside_run(t, ndims, indices, /*for_write=*/true, file, line);
  check_element_scope(*e, t, /*for_write=*/true, file, line);
  e->wait_for_element(t, ndims, indices, /*for_write=*/true, file, line);
  if (e->race()) e->race()->on_sync(t, indices);
}

PTO2ScopeGuard::PTO2ScopeGuard() : PTO2ScopeGuard(PTO2ScopeMode::AUTO) {}

PTO2ScopeGuard::PTO2ScopeGuard(PTO2ScopeMode mode) {
  Engine& e = engine_for("PTO2_SCOPE");
  e.scope_begin(mode);
  run_ = e.run_serial();
  depth_ = e.scope_depth();
  active_ = true;
}

PTO2ScopeGuard::~PTO2ScopeGuard() {
  if (!active_) return;
  if (Engine* e = Engine::current()) e->scope_end(run_, depth_);
}
