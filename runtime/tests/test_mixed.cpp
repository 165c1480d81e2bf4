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

// ---- group flags: pto2_group_signal / pto2_group_wait between the two kernels of a mixed task
// AIC (producer): after s1 ms writes t0[block] = s0, signals flag 0; then waits for flag 3 of
// the AIV kernel and checks the AIV kernel's t1[block] == s0 + 1 (records a mismatch in t2).
// AIV (consumer): waits for flag 0, writes t1[block] = t0[block] + 1, signals flag 3.
static void k_grp_produce(PTO2KernelContext* ctx) {
  const int32_t b = ctx->block_idx;
  const int32_t v = static_cast<int32_t>(ctx->scalars[0]);
  if (ctx->scalars[1]) sleep_ms(static_cast<int>(ctx->scalars[1]));
  ctx->tensors[0].ptr<int32_t>()[b] = v;
  pto2_group_signal(ctx, 0);
  if (!pto2_group_wait(ctx, 3)) return;
  if (ctx->tensors[1].ptr<int32_t>()[b] != v + 1) ctx->tensors[2].ptr<int32_t>()[b] += 1;
}
static void k_grp_consume(PTO2KernelContext* ctx) {
  const int32_t b = ctx->block_idx;
  if (!pto2_group_wait(ctx, 0)) return;
  ctx->tensors[1].ptr<int32_t>()[b] = ctx->tensors[0].ptr<int32_t>()[b] + 1;
  pto2_group_signal(ctx, 3);
}

TEST(Mixed, GroupFlagsOrderTheTwoKernels) {
  for (uint32_t w = 1; w <= 4; ++w) {
    Watchdog wd(60);
    pto2::Runtime rt(workers(w));
    register_std(rt);
    rt.register_kernel(0, "grp_produce", pto2::CoreType::AIC, &k_grp_produce);
    rt.register_kernel(1, "grp_consume", pto2::CoreType::AIV, &k_grp_consume);
    const int n = scaled(40);
    std::vector<int32_t> t0(w, -7), t1(w, -7), bad(w, 0);
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      for (int i = 1; i <= n; ++i) {
        MixedKernels m = {0, 1, INVALID_KERNEL_ID};
        Arg p;
        p.add_inout(ext1d(t0));  // one after another: the flags of each task start clear
        p.add_inout(ext1d(t1));
        p.add_inout(ext1d(bad));
        p.add_scalar(static_cast<uint64_t>(i * 10));
        p.add_scalar(i % 8 == 0 ? 2 : 0);  // sometimes the producer is slow
        p.launch_spec.block_num = 1 + static_cast<uint32_t>(i) % w;  // block pairs 0..w-1
        rt_submit_task(m, p);
      }
    });
    ASSERT_TRUE(r.ok()) << r.message;
    // The last task covered blocks 0..(n % w); each block pair was consistent every time.
    for (uint32_t b = 0; b < w; ++b) EXPECT_EQ(bad[b], 0) << "block " << b << " with " << w << " workers";
    const uint32_t last_blocks = 1 + static_cast<uint32_t>(n) % w;
    for (uint32_t b = 0; b < last_blocks; ++b) {
      EXPECT_EQ(t0[b], n * 10);
      EXPECT_EQ(t1[b], n * 10 + 1);
    }
  }
}

static void k_plain_sync(PTO2KernelContext* ctx) {  // alone: both calls are no-ops
  pto2_group_signal(ctx, 0);
  if (!pto2_group_wait(ctx, 0)) return;
  ctx->tensors[0].ptr<int32_t>()[0] = 5;
}

TEST(Mixed, GroupFlagsAreNoOpsOutsideAMixedTask) {
  Watchdog wd(30);
  std::vector<int32_t> v(1, 0);
  pto2::Runtime rt(workers(1));
  register_std(rt);
  rt.register_kernel(0, "plain_sync", pto2::CoreType::AIV, &k_plain_sync);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    Arg p;
    p.add_output(ext1d(v));
    rt_submit_aiv_task(0, p);
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(v[0], 5);
}

static void k_grp_fail(PTO2KernelContext* ctx) {
  sleep_ms(static_cast<int>(ctx->scalars[0]));
  ctx->fail("producer broke");
}
static void k_grp_silent(PTO2KernelContext* ctx) { sleep_ms(static_cast<int>(ctx->scalars[0])); }
static void k_grp_waiter(PTO2KernelContext* ctx) {
  if (!pto2_group_wait(ctx, 1)) return;
  ctx->tensors[0].ptr<int32_t>()[0] = 1;
}

TEST(Mixed, GroupWaitReturnsWhenTheSiblingFails) {
  for (uint32_t w = 1; w <= 4; ++w) {
    for (int delay : {0, 5}) {
      Watchdog wd(30);
      std::vector<int32_t> v(1, 0);
      pto2::Runtime rt(workers(w));
      register_std(rt);
      rt.register_kernel(0, "grp_fail", pto2::CoreType::AIC, &k_grp_fail);
      rt.register_kernel(1, "grp_waiter", pto2::CoreType::AIV, &k_grp_waiter);
      pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
        MixedKernels m = {0, 1, INVALID_KERNEL_ID};
        Arg p;
        p.add_inout(ext1d(v));
        p.add_scalar(static_cast<uint64_t>(delay));
        rt_submit_task(m, p);
      });
      ASSERT_FALSE(r.ok());
      EXPECT_NE(r.message.find("producer broke"), std::string::npos) << r.message;
      EXPECT_NE(r.message.find("grp_fail"), std::string::npos) << r.message;
      EXPECT_EQ(v[0], 0);
    }
  }
}

TEST(Mixed, GroupWaitReturnsWhenTheSiblingNeverSignals) {
  for (uint32_t w = 1; w <= 4; ++w) {
    Watchdog wd(30);
    std::vector<int32_t> v(1, 0);
    pto2::Runtime rt(workers(w));
    register_std(rt);
    rt.register_kernel(0, "grp_silent", pto2::CoreType::AIC, &k_grp_silent);
    rt.register_kernel(1, "grp_waiter", pto2::CoreType::AIV, &k_grp_waiter);
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      MixedKernels m = {0, 1, INVALID_KERNEL_ID};
      Arg p;
      p.add_inout(ext1d(v));
      p.add_scalar(2);
      rt_submit_task(m, p);
    });
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message.find("returned without signalling flag 1"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("grp_waiter"), std::string::npos) << r.message;
    EXPECT_EQ(v[0], 0);
  }
}

static void k_grp_badflag(PTO2KernelContext* ctx) { pto2_group_signal(ctx, 8); }

TEST(Mixed, GroupFlagOutOfRangeFails) {
  Watchdog wd(30);
  pto2::Runtime rt(workers(1));
  register_std(rt);
  rt.register_kernel(0, "grp_badflag", pto2::CoreType::AIC, &k_grp_badflag);
  rt.register_kernel(1, "grp_silent", pto2::CoreType::AIV, &k_grp_silent);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    MixedKernels m = {0, 1, INVALID_KERNEL_ID};
    Arg p;
    p.add_scalar(0);
    rt_submit_task(m, p);
  });
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message.find("out of range 0..7"), std::string::npos) << r.message;
}

// A flag out of range is the kernel's bug wherever it runs: also in a task of one kernel, where
// valid flags are no-ops (found by ApiFuzz.GroupFlags: it was accepted there).
TEST(Mixed, GroupFlagOutOfRangeFailsOutsideAMixedTaskToo) {
  Watchdog wd(30);
  pto2::Runtime rt(workers(1));
  rt.register_kernel(0, "grp_badflag", pto2::CoreType::AIV, &k_grp_badflag);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    Arg p;
    rt_submit_aiv_task(0, p);
  });
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message.find("pto2_group_signal: flag 8 is out of range 0..7"), std::string::npos) << r.message;
}

// Each kernel waits for a flag the other signals only after its own wait: neither can go on. The
// run fails saying so instead of hanging (found by ApiFuzz.GroupFlags).
static void k_grp_wait0_then_signal1(PTO2KernelContext* ctx) {
  if (!pto2_group_wait(ctx, 0)) return;
  pto2_group_signal(ctx, 1);
}
static void k_grp_wait1_then_signal0(PTO2KernelContext* ctx) {
  sleep_ms(static_cast<int>(ctx->scalars[0]));
  if (!pto2_group_wait(ctx, 1)) return;
  pto2_group_signal(ctx, 0);
}

TEST(Mixed, GroupWaitsForEachOtherFailInsteadOfHanging) {
  for (uint32_t w = 1; w <= 2; ++w) {
    for (int delay : {0, 5}) {
      Watchdog wd(30);
      pto2::Runtime rt(workers(w));
      rt.register_kernel(0, "wait0_then_signal1", pto2::CoreType::AIC, &k_grp_wait0_then_signal1);
      rt.register_kernel(1, "wait1_then_signal0", pto2::CoreType::AIV, &k_grp_wait1_then_signal0);
      pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
        Arg p;
        p.add_scalar(static_cast<uint64_t>(delay));
        p.launch_spec.set_block_num(w);
        rt_submit_task(MixedKernels{0, 1, INVALID_KERNEL_ID}, p);
      });
      ASSERT_FALSE(r.ok());
      EXPECT_NE(r.message.find("the AIC and AIV kernels of this mixed task wait for each other"), std::string::npos)
          << r.message;
      EXPECT_NE(r.message.find("which waits for flag"), std::string::npos) << r.message;
    }
  }
}

TEST(Mixed, ThirdKernelIsRejectedNotDropped) {
  Watchdog wd(30);
  pto2::Runtime rt(workers(2));
  register_std(rt);
  std::vector<float> x(4, 0.f);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    MixedKernels m = {12, 2, 2};  // inc_c + inc, and a third inc that would be lost
    Arg p;
    p.add_inout(ext1d(x));
    rt_submit_task(m, p);
  });
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message.find("third_kernel_id is 2"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("pass INVALID_KERNEL_ID"), std::string::npos) << r.message;
  EXPECT_EQ(r.tasks_submitted, 0u);
  EXPECT_EQ(x[0], 0.f);
}
