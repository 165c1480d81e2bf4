// The per-kernel run-time estimate that decides which kernels are tiny (run undeferred).
#include <gtest/gtest.h>

#include "../src/kernel_timing.h"

using pto2::detail::KernelTiming;

TEST(KernelTiming, UnmeasuredIsNeverTiny) {
  KernelTiming t;
  EXPECT_FALSE(t.measured());
  EXPECT_EQ(t.average_ns(), -1);
  EXPECT_FALSE(t.below(1000000));
  t.record(50, 100);
  EXPECT_TRUE(t.measured());
  EXPECT_EQ(t.average_ns(), 50);
  EXPECT_TRUE(t.below(100));
  EXPECT_FALSE(t.below(50));  // strictly below
}

TEST(KernelTiming, ASlowKernelStopsBeingTinyWithinThreeSamples) {
  for (int64_t tiny : {0, 10, 25, 40, 60, 99}) {
    KernelTiming t;
    for (int i = 0; i < 8; ++i) t.record(tiny, 100);
    ASSERT_TRUE(t.below(100));
    int samples = 0;
    while (t.below(100)) {
      t.record(200, 100);  // twice the limit (or any longer run: clipped)
      ++samples;
    }
    EXPECT_LE(samples, tiny >= 25 ? 2 : 3) << "tiny " << tiny;
  }
}

TEST(KernelTiming, OneOutlierIsToleratedAndStreaksAreForgottenFast) {
  for (int64_t tiny : {0, 25, 50}) {
    KernelTiming t;
    for (int i = 0; i < 8; ++i) t.record(tiny, 100);
    t.record(2000000, 100);  // one run preempted for 2 ms
    EXPECT_TRUE(t.below(100)) << "tiny " << tiny << ": average " << t.average_ns();
  }
  KernelTiming t;
  for (int i = 0; i < 50; ++i) t.record(5000000, 100);  // a long streak
  EXPECT_EQ(t.average_ns(), 200);                        // clipped: not 5 ms
  int samples = 0;
  while (!t.below(100)) {
    t.record(25, 100);
    ++samples;
  }
  EXPECT_LE(samples, 4);
}

TEST(KernelTiming, ResetAndCopy) {
  KernelTiming a, b;
  a.record(70, 100);
  b.copy_from(a);
  EXPECT_EQ(b.average_ns(), 70);
  a.reset();
  EXPECT_FALSE(a.measured());
  EXPECT_EQ(b.average_ns(), 70);
}
