// spmd_blocks — one task, N blocks: each block handles its share of a vector, selected by
// block_idx; with sync_start all blocks start together and may wait for each other.
//
//   [scale: block 0] [scale: block 1] [scale: block 2] [scale: block 3]   (one task)
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "pto_orchestration_api.h"

static std::atomic<int> g_started{0};

static void kernel_scale(PTO2KernelContext* ctx) {
  g_started.fetch_add(1);
  while (g_started.load() < ctx->block_num) std::this_thread::yield();  // safe: sync_start
  const Tensor& t = ctx->tensors[0];
  const int64_t n = t.numel(), per = n / ctx->block_num;
  float* p = t.ptr<float>();
  for (int64_t i = ctx->block_idx * per; i < (ctx->block_idx + 1) * per; ++i) p[i] *= 2.0f;
}

int main() {
  std::vector<float> v(64, 1.0f);
  uint32_t shape[1] = {64};
  pto2::Runtime rt(pto2::RuntimeOptions{}.aiv_workers(4));
  rt.register_kernel(0, "kernel_scale", pto2::CoreType::AIV, &kernel_scale);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    Arg p;
    p.add_inout(make_tensor_external(v.data(), shape, 1, DataType::FLOAT32));
    p.launch_spec.set_block_num(4);
    p.launch_spec.set_require_sync_start(true);
    rt_submit_aiv_task(0, p);
  });
  if (!r.ok()) {
    std::printf("error: %s\n", r.message.c_str());
    return 1;
  }
  std::printf("v[0] = %.0f, v[63] = %.0f (expected 2, 2)\n", v[0], v[63]);
  return v[0] == 2.0f && v[63] == 2.0f ? 0 : 1;
}
