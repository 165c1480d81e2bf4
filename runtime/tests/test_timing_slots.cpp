// Timing slots: one span per slot from the earliest dispatch to the latest finish.
#include <gtest/gtest.h>

#include "test_util.h"

TEST(TimingSlots, SpanCoversAllTasksOfTheSlot) {
  std::vector<float> x(8, 0), y(8, 0);
  sweep([&](const ChipStorageTaskArgs&) {
    Arg a;
    a.add_output(ext1d(x));
    a.add_scalar(1);
    a.add_scalar(20);
    a.set_task_timing_slot(3);
    rt_submit_aiv_task(0, a);
    Arg b;
    b.add_input(ext1d(x));
    b.add_output(ext1d(y));
    b.add_scalar(1);
    b.add_scalar(20);
    b.set_task_timing_slot(3);
    rt_submit_aiv_task(1, b);
    Arg c;
    c.add_output(ext1d(x));
    c.add_scalar(1);
    c.add_scalar(0);
    c.set_task_timing_slot(15);
    rt_submit_aiv_task(0, c);
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    ASSERT_EQ(r.timing_slots.size(), 2u);
    EXPECT_EQ(r.timing_slots[0].slot, 3u);
    EXPECT_EQ(r.timing_slots[0].tasks, 2u);
    EXPECT_GE(r.timing_slots[0].duration_us(), 40000.0);  // two dependent 20 ms tasks
    EXPECT_EQ(r.timing_slots[1].slot, 15u);
    EXPECT_GE(r.timing_slots[1].start_us, r.timing_slots[0].start_us);
  }, 2);
}
