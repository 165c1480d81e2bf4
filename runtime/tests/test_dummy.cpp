// Dummy tasks: a kernel-less fan-in point ordering its consumers after its dependencies.
#include <gtest/gtest.h>

#include "test_util.h"

TEST(Dummy, FanInBarrier) {
  std::vector<float> a(8, 0), b(8, 0), c(8, 0);
  sweep([&](const ChipStorageTaskArgs&) {
    std::fill(c.begin(), c.end(), 0.f);
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      PTO2TaskId ids[2];
      Arg pa;
      pa.add_output(ext1d(a));
      pa.add_scalar(1);
      pa.add_scalar(15);
      ids[0] = rt_submit_aiv_task(0, pa).task_id();
      Arg pb;
      pb.add_output(ext1d(b));
      pb.add_scalar(2);
      pb.add_scalar(25);
      ids[1] = rt_submit_aiv_task(0, pb).task_id();
      Arg d;
      d.set_dependencies(ids, 2);
      PTO2TaskId barrier = rt_submit_dummy_task(d).task_id();
      EXPECT_TRUE(barrier.is_valid());
      Arg pc;
      pc.add_input(ext1d(b));
      pc.add_output(ext1d(c));
      pc.add_scalar(1);
      pc.add_scalar(0);
      pc.set_dependencies(&barrier, 1);
      rt_submit_aiv_task(1, pc);
    }
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(c[0], 3.f);
    EXPECT_EQ(r.tasks_executed, 3u);
    EXPECT_EQ(r.tasks_dummy, 1u);
  });
}

TEST(Dummy, NoDepsAndLongDummyChains) {
  sweep([&](const ChipStorageTaskArgs&) {
    Arg e;
    PTO2TaskId prev = rt_submit_dummy_task(e).task_id();
    for (int i = 0; i < 50000; ++i) {
      Arg d;
      d.set_dependencies(&prev, 1);
      prev = rt_submit_dummy_task(d).task_id();
    }
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(r.tasks_submitted, 50001u);
  }, 2);
}
