// api.cpp — the free functions generated orchestration code calls; they forward to the
// current run's Engine (thread-local, set on the orchestrator thread).
#include <stdexcept>
#include <string>

#include "engine.h"

using pto2::detail::Engine;
using pto2::detail::TaskKind;

namespace {
Engine& engine_for(const char* api) {
  Engine* e = Engine::current();
  if (!e)
    throw std::logic_error(std::string(api) +
                           " called outside a run: orchestration functions must run inside pto2::Runtime::run() "
                           "(on its orchestrator thread)");
  return *e;
}
}  // namespace

TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, Arg& params) {
  Engine& e = engine_for("rt_submit_aic_task");
  TaskOutputTensors out;  // returned in place (one return statement)
  const Engine::Undeferred u = e.try_submit_undeferred(TaskKind::AIC, kernel_id, params, out);
  if (u != Engine::Undeferred::kRan)
    out = e.submit(TaskKind::AIC, kernel_id, -1, params, "rt_submit_aic_task", u == Engine::Undeferred::kMustWait);
  return out;
}

TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, Arg& params) {
  Engine& e = engine_for("rt_submit_aiv_task");
  TaskOutputTensors out;  // returned in place (one return statement)
  const Engine::Undeferred u = e.try_submit_undeferred(TaskKind::AIV, kernel_id, params, out);
  if (u != Engine::Undeferred::kRan)
    out = e.submit(TaskKind::AIV, -1, kernel_id, params, "rt_submit_aiv_task", u == Engine::Undeferred::kMustWait);
  return out;
}

TaskOutputTensors rt_submit_task(const MixedKernels& kernels, Arg& params) {
  Engine& e = engine_for("rt_submit_task");
  // A cluster here runs one AIC and one AIV kernel: a third kernel would be silently lost.
  if (kernels.third_kernel_id != INVALID_KERNEL_ID)
    e.abort_orchestration("rt_submit_task: MixedKernels.third_kernel_id is " + std::to_string(kernels.third_kernel_id) +
                          "; the CPU runtime gang-starts one AIC and one AIV kernel per cluster, so a third kernel "
                          "is not supported (pass INVALID_KERNEL_ID, or submit it as its own task)");
  return e.submit(TaskKind::MIXED, kernels.aic_kernel_id, kernels.aiv_kernel_id, params, "rt_submit_task");
}

PTO2TaskId rt_submit_dummy_task(Arg& params) {
  return engine_for("rt_submit_dummy_task").submit(TaskKind::DUMMY, -1, -1, params, "rt_submit_dummy_task").task_id();
}

TaskOutputTensors pto2_alloc_tensors_impl(const TensorCreateInfo* const* infos, uint32_t n) {
  return engine_for("alloc_tensors").alloc_tensors(infos, n);
}

void pto2_wait_for_element(const Tensor& t, uint32_t ndims, const int64_t* indices) {
  Engine* e = Engine::current();
  if (e) e->wait_for_element(t, ndims, indices);
}

PTO2ScopeGuard::PTO2ScopeGuard() : PTO2ScopeGuard(PTO2ScopeMode::AUTO) {}

PTO2ScopeGuard::PTO2ScopeGuard(PTO2ScopeMode mode) {
  engine_for("PTO2_SCOPE").scope_begin(mode);
  active_ = true;
}

PTO2ScopeGuard::~PTO2ScopeGuard() {
  if (!active_) return;
  if (Engine* e = Engine::current()) e->scope_end();
}
