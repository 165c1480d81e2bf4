// Arg::dump (pl.dump_tag / dumps=, spec anchor_features §6): the CPU runtime records which
// tensor slots are marked for the device's partial dump, writes nothing, and runs the task as usual.
#include <gtest/gtest.h>

#include "test_util.h"

TEST(Dump, RecordsMarkedSlotsOnceInMarkOrder) {
  std::vector<float> a(8, 1.f), b(8, 2.f), c(8, 3.f);
  Arg p;
  p.add_input(ext1d(a));
  p.add_input(ext1d(b));
  p.add_output(ext1d(c));
  p.dump(ext1d(c), ext1d(a), ext1d(c));
  ASSERT_EQ(p.dump_slots().size(), 2u);
  EXPECT_EQ(p.dump_slots()[0], 2u);
  EXPECT_EQ(p.dump_slots()[1], 0u);
  std::vector<float> other(8, 0.f);
  p.dump(ext1d(other));                   // not an argument of the task: nothing to dump
  EXPECT_EQ(p.dump_slots().size(), 2u);
  p.reset();
  EXPECT_TRUE(p.dump_slots().empty());
}

TEST(Dump, MarkedTaskRunsUnchanged) {
  std::vector<float> a(8, 0.f);
  sweep([&](const ChipStorageTaskArgs&) {
    std::fill(a.begin(), a.end(), 0.f);
    PTO2_SCOPE() {
      Arg p;
      p.add_output(ext1d(a));
      p.add_scalar(7);
      p.add_scalar(0);
      p.dump(ext1d(a));
      rt_submit_aiv_task(0, p);   // kernel 0: fill with s0
    }
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    for (float v : a) EXPECT_EQ(v, 7.f);
  });
}
