// hello_add — the smallest libpto2 program: c = a + b, then d = c + b, on CPU workers.
//
//   a ─┐
//      ├─▶ [kernel_add] ─▶ c ─┐
//   b ─┘                      ├─▶ [kernel_add] ─▶ d
//   b ────────────────────────┘
//
// The second task depends on the first automatically (it reads c, which the first writes).
#include <cstdio>
#include <vector>

#include "pto_orchestration_api.h"

static void kernel_add(PTO2KernelContext* ctx) {
  const Tensor& a = ctx->tensors[0];
  const Tensor& b = ctx->tensors[1];
  const Tensor& out = ctx->tensors[2];
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) out.ptr<float>()[i] = a.ptr<float>()[i] + b.ptr<float>()[i];
}

// What the code generator emits for a two-task program.
static void orchestration(const ChipStorageTaskArgs& orch_args) {
  Tensor ext_a = from_tensor_arg(orch_args.tensor(0));
  Tensor ext_b = from_tensor_arg(orch_args.tensor(1));
  Tensor ext_d = from_tensor_arg(orch_args.tensor(2));
  PTO2_SCOPE() {
    uint32_t c_shapes[2] = {16, 16};
    TensorCreateInfo c_ci(c_shapes, 2, DataType::FLOAT32);
    TaskOutputTensors alloc_0 = alloc_tensors(c_ci);
    const Tensor& c = alloc_0.get_ref(0);

    Arg t0;
    t0.add_input(ext_a);
    t0.add_input(ext_b);
    t0.add_output(c);
    rt_submit_aiv_task(0, t0);

    Arg t1;
    t1.add_input(c);
    t1.add_input(ext_b);
    t1.add_output(ext_d);
    rt_submit_aiv_task(0, t1);
  }
}

int main() {
  std::vector<float> a(256, 1.0f), b(256, 2.0f), d(256, 0.0f);
  uint32_t shape[2] = {16, 16};
  ChipStorageTaskArgs args;
  args.add_tensor(make_tensor_external(a.data(), shape, 2, DataType::FLOAT32));
  args.add_tensor(make_tensor_external(b.data(), shape, 2, DataType::FLOAT32));
  args.add_tensor(make_tensor_external(d.data(), shape, 2, DataType::FLOAT32));

  pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(1).aiv_workers(2).trace(true));
  rt.register_kernel(0, "kernel_add", pto2::CoreType::AIV, &kernel_add);
  pto2::RunResult r = rt.run(orchestration, args);
  if (!r.ok()) {
    std::printf("error: %s\n", r.message.c_str());
    return 1;
  }
  rt.write_trace("hello_add_trace.json");
  std::printf("d[0] = %.1f (expected 5.0); %llu tasks, %llu auto edges, %.3f ms\n", d[0],
              static_cast<unsigned long long>(r.tasks_executed), static_cast<unsigned long long>(r.auto_edges),
              r.wall_seconds * 1e3);
  return d[0] == 5.0f ? 0 : 1;
}
