// manual_phases — a MANUAL scope: no automatic tracking; phases ordered by explicit task ids
// through a dummy fan-in task.
//
//   phase 0:  [stripe 0] [stripe 1] [stripe 2] [stripe 3]
//                  \         |          |        /
//                          (dummy barrier)
//                  /         |          |        \
//   phase 1:  [stripe 0] [stripe 1] [stripe 2] [stripe 3]
#include <cstdio>
#include <vector>

#include "pto_orchestration_api.h"

static void kernel_stripe(PTO2KernelContext* ctx) {  // out[row .. row+4) += 1
  float* p = ctx->tensors[0].ptr<float>();
  const int64_t row = static_cast<int64_t>(ctx->scalars[0]);
  for (int64_t i = row; i < row + 4; ++i) p[i] += 1.0f;
}

static void orchestration(const ChipStorageTaskArgs& args) {
  Tensor out = from_tensor_arg(args.tensor(0));
  PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
    PTO2TaskId barrier = PTO2TaskId::invalid();
    for (int phase = 0; phase < 2; ++phase) {
      PTO2TaskId tids[4];
      for (int s = 0; s < 4; ++s) {
        Arg p;
        p.add_inout(out);  // not tracked in a MANUAL scope
        p.add_scalar(static_cast<uint64_t>(s * 4));
        if (barrier.is_valid()) p.set_dependencies(&barrier, 1);
        tids[s] = rt_submit_aiv_task(0, p).task_id();
      }
      Arg fence;
      fence.set_dependencies(tids, 4);
      barrier = rt_submit_dummy_task(fence).task_id();
    }
  }
}

int main() {
  std::vector<float> out(16, 0.0f);
  uint32_t shape[1] = {16};
  ChipStorageTaskArgs args;
  args.add_tensor(make_tensor_external(out.data(), shape, 1, DataType::FLOAT32));
  pto2::Runtime rt(pto2::RuntimeOptions{}.aiv_workers(4));
  rt.register_kernel(0, "kernel_stripe", pto2::CoreType::AIV, &kernel_stripe);
  pto2::RunResult r = rt.run(orchestration, args);
  if (!r.ok()) {
    std::printf("error: %s\n", r.message.c_str());
    return 1;
  }
  std::printf("out[15] = %.0f (expected 2); %llu explicit edges, %llu auto edges\n", out[15],
              static_cast<unsigned long long>(r.explicit_edges), static_cast<unsigned long long>(r.auto_edges));
  return out[15] == 2.0f ? 0 : 1;
}
