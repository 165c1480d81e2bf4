// Stress: >= 100,000 tasks mixing auto-tracked views, explicit deps and dummies; result checked.
#include <gtest/gtest.h>

#include "test_util.h"

TEST(Stress, HundredThousandTasksStencil) {
  const int kWidth = 16, kSteps = scaled(6400);  // 102,400 tasks
  std::vector<float> a(kWidth * 4, 0), b(kWidth * 4, 0);
  sweep([&](const ChipStorageTaskArgs&) {
    std::fill(a.begin(), a.end(), 0.f);
    std::fill(b.begin(), b.end(), 0.f);
    uint32_t sh[2] = {kWidth, 4};
    Tensor ta = make_tensor_external(a.data(), sh, 2, DataType::FLOAT32);
    Tensor tb = make_tensor_external(b.data(), sh, 2, DataType::FLOAT32);
    for (int s = 0; s < kSteps; ++s) {
      const Tensor& src = (s % 2) ? tb : ta;
      const Tensor& dst = (s % 2) ? ta : tb;
      for (uint32_t i = 0; i < kWidth; ++i) {
        uint32_t rows = i == 0 ? 2 : (i == kWidth - 1 ? 2 : 3);
        uint32_t in_sh[2] = {rows, 4}, in_off[2] = {i == 0 ? 0 : i - 1, 0};
        uint32_t out_sh[2] = {1, 4}, out_off[2] = {i, 0};
        Arg p;
        p.add_input(src.view(in_sh, in_off));
        p.add_output(dst.view(out_sh, out_off));
        rt_submit_aiv_task(30, p);
      }
    }
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(r.tasks_executed, uint64_t(kWidth) * kSteps);
    // every cell counts its steps: value == kSteps in the final buffer
    const std::vector<float>& fin = (kSteps % 2) ? b : a;
    for (int i = 0; i < kWidth; ++i) EXPECT_EQ(fin[i * 4], static_cast<float>(kSteps)) << i;
  }, 4);
}

TEST(Stress, ManyIndependentTasksAndWideFanIn) {
  std::vector<float> acc(1, 0);
  sweep([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      std::vector<PTO2TaskId> ids;
      for (int i = 0; i < scaled(100000); ++i) {
        Arg p;
        ids.push_back(rt_submit_aiv_task(3, p).task_id());
      }
      Arg d;
      d.set_dependencies(ids.data() + ids.size() - 1000, 1000);
      PTO2TaskId all = rt_submit_dummy_task(d).task_id();
      Arg f;
      f.add_output(ext1d(acc));
      f.add_scalar(1);
      f.add_scalar(0);
      f.set_dependencies(&all, 1);
      rt_submit_aiv_task(0, f);
    }
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(r.tasks_executed, uint64_t(scaled(100000)) + 1);
    EXPECT_EQ(acc[0], 1.f);
  }, 4);
}

namespace {
// t0 (int32[2]): [0] counts the tasks run, [1] the ones that ran out of order (task s0 must
// find exactly s0 before it). Plain accesses: an edge lost between two of these tasks is
// also a data race for ThreadSanitizer.
void k_in_order(PTO2KernelContext* ctx) {
  int32_t* c = ctx->tensors[0].ptr<int32_t>();
  if (c[0] != static_cast<int32_t>(ctx->scalars[0])) ++c[1];
  c[0] = static_cast<int32_t>(ctx->scalars[0]) + 1;
}
}  // namespace

// Linking an edge races with the producer's retirement: with tiny kernels queued to a worker
// (no undeferred runs), each task's producers — the previous task, usually running or
// retiring right then, and the one before, usually retired — are linked while they finish.
// A lost edge runs a task out of order; a release counted twice or never leaves a task
// unrun (the count falls short) or hangs the run (the watchdog). 10^5 tasks per runtime.
TEST(Stress, ExplicitChainLinkedWhileProducersRetire) {
  const int kTasks = scaled(100000);
  for (bool helps : {false, true}) {
    for (uint32_t w = 1; w <= 3; ++w) {
      Watchdog wd(120);
      pto2::Runtime rt(workers(w).inline_below_ns(0).orchestrator_helps(helps));
      rt.register_kernel(50, "in_order", pto2::CoreType::AIV, &k_in_order);
      std::vector<int32_t> state(2, 0);
      pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
        PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
          const Tensor t = ext1d(state);
          PTO2TaskId prev[2] = {PTO2TaskId::invalid(), PTO2TaskId::invalid()};
          for (int i = 0; i < kTasks; ++i) {
            Arg p;
            p.add_inout(t);
            p.add_scalar(static_cast<uint64_t>(i));
            if (i >= 2) p.set_dependencies(prev, 2);
            else if (i == 1) p.set_dependencies(prev, 1);
            const PTO2TaskId id = rt_submit_aiv_task(50, p).task_id();
            prev[1] = prev[0];
            prev[0] = id;
          }
        }
      });
      ASSERT_TRUE(r.ok()) << r.message;
      EXPECT_EQ(r.tasks_executed, static_cast<uint64_t>(kTasks)) << w << " workers, helps " << helps;
      EXPECT_EQ(state[0], kTasks) << w << " workers, helps " << helps;
      EXPECT_EQ(state[1], 0) << "tasks out of order, " << w << " workers, helps " << helps;
    }
  }
}
