// Predicates are evaluated at dispatch; false retires the task but releases its consumers.
#include <gtest/gtest.h>

#include "test_util.h"

TEST(Predicates, TrueRunsFalseSkipsConsumersStillRun) {
  for (PredicateOp op : {PredicateOp::EQ, PredicateOp::NE, PredicateOp::GT, PredicateOp::LT, PredicateOp::GE, PredicateOp::LE}) {
    std::vector<int32_t> flag(4, 0);
    std::vector<float> x(8, 0), y(8, 0);
    sweep([&](const ChipStorageTaskArgs&) {
      std::fill(x.begin(), x.end(), 0.f);
      std::fill(y.begin(), y.end(), 0.f);
      // producer of the flag (slow): flag[2] = 5
      Arg f;
      f.add_output(ext1d(flag));
      rt_submit_aiv_task(20, f);
      Arg p;  // x = 1 iff flag[2] <op> 5
      p.add_output(ext1d(x));
      p.add_input(ext1d(flag));
      p.add_scalar(1);
      p.add_scalar(0);
      p.set_predicate(CoreTaskPredicate(ext1d(flag), {2}, op, 5));
      rt_submit_aiv_task(0, p);
      submit_add(ext1d(x), ext1d(y), 10);  // consumer always runs
    }, [&](const pto2::RunResult& r, uint32_t) {
      ASSERT_TRUE(r.ok()) << r.message;
      const bool expect = op == PredicateOp::EQ || op == PredicateOp::GE || op == PredicateOp::LE;
      EXPECT_EQ(x[0], expect ? 1.f : 0.f) << static_cast<int>(op);
      EXPECT_EQ(y[0], expect ? 11.f : 10.f);
      EXPECT_EQ(r.tasks_skipped, expect ? 0u : 1u);
    }, 2);
  }
}

TEST(Predicates, FloatOperandTruncates) {
  std::vector<float> v = {2.9f};
  std::vector<float> x(4, 0);
  pto2::Runtime rt(workers(1));
  register_std(rt);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    Arg p;
    p.add_output(ext1d(x));
    p.add_scalar(3);
    p.add_scalar(0);
    p.set_predicate(CoreTaskPredicate(ext1d(v), {0}, PredicateOp::EQ, 2));
    rt_submit_aiv_task(0, p);
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(x[0], 3.f);
}


TEST(Predicates, OperandIsTrackedAsARead) {
  std::vector<int32_t> flag(4, 0);
  std::vector<float> x(8, 0);
  sweep([&](const ChipStorageTaskArgs&) {
    std::fill(flag.begin(), flag.end(), 0);
    std::fill(x.begin(), x.end(), 0.f);
    Arg f;  // slow producer: flag[2] = 5
    f.add_output(ext1d(flag));
    rt_submit_aiv_task(20, f);
    Arg p;  // does not list flag as an input: the predicate alone orders it
    p.add_output(ext1d(x));
    p.add_scalar(1);
    p.add_scalar(0);
    p.set_predicate(CoreTaskPredicate(ext1d(flag), {2}, PredicateOp::EQ, 5));
    rt_submit_aiv_task(0, p);
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(x[0], 1.f);
    EXPECT_EQ(r.auto_edges, 1u);
  });
}
