// Mixed kernels: the AIC and AIV kernels of a cluster task start together and see the same args.
#include <gtest/gtest.h>

#include "test_util.h"

static std::atomic<int> g_aic{0}, g_aiv{0};
static void k_aic(PTO2KernelContext* ctx) {
  g_aic.fetch_add(1);
  const int want = static_cast<int>(ctx->scalars[0]);
  while (g_aiv.load() < want) std::this_thread::yield();  // waits for its AIV partner
  ctx->tensors[0].ptr<int32_t>()[0] += 1;
}
static void k_aiv(PTO2KernelContext* ctx) {
  g_aiv.fetch_add(1);
  const int want = static_cast<int>(ctx->scalars[0]);
  while (g_aic.load() < want) std::this_thread::yield();  // waits for its AIC partner
  ctx->tensors[0].ptr<int32_t>()[1] += 1;
}

TEST(Mixed, AicAndAivCoRun) {
  for (uint32_t w = 1; w <= 4; ++w) {
    Watchdog wd(30);
    g_aic = 0;
    g_aiv = 0;
    std::vector<int32_t> v(2, 0);
    pto2::Runtime rt(workers(w));
    register_std(rt);
    rt.register_kernel(0, "cube_part", pto2::CoreType::AIC, &k_aic);
    rt.register_kernel(1, "vec_part", pto2::CoreType::AIV, &k_aiv);
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      for (int i = 1; i <= 20; ++i) {
        Arg e;
        rt_submit_aiv_task(3, e);
        MixedKernels mixed_0 = {0, 1, INVALID_KERNEL_ID};
        Arg p;
        p.add_inout(ext1d(v));  // orders the mixed tasks one after another
        p.add_scalar(static_cast<uint64_t>(i));
        rt_submit_task(mixed_0, p);
      }
    });
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(v[0], 20);
    EXPECT_EQ(v[1], 20);
  }
}

TEST(Mixed, MixedWithOneKernelIsPlainTask) {
  Watchdog wd(30);
  std::vector<float> x(4, 0);
  pto2::Runtime rt(workers(1));
  register_std(rt);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    MixedKernels m = {INVALID_KERNEL_ID, 0, INVALID_KERNEL_ID};
    Arg p;
    p.add_output(ext1d(x));
    p.add_scalar(6);
    p.add_scalar(0);
    rt_submit_task(m, p);
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(x[0], 6.f);
}
