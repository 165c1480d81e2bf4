// A task holds the runtime storages its tensors view until it retires: a scope that ends while
// the task still waits to run must not free them (the next allocation would reuse the bytes
// the task is about to write). Submission finds the storages in the Arg's tensors, or, for a
// runtime-allocated output (add_output(TensorCreateInfo)), in the task's slot, where it is made.
#include <gtest/gtest.h>

#include "test_util.h"

namespace {

// Submits, in an inner scope, a fill of a 1024-float tensor that sleeps 50 ms first, so that
// the scope ends long before the task runs; then allocates a tensor of the same size in the
// outer scope. Returns both data pointers and the run's result.
template <class Make>
pto2::RunResult fill_then_allocate(Make&& make_fill, void*& filled, void*& next) {
  pto2::Runtime rt(workers(1));
  register_std(rt);
  return rt.run([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE() { filled = make_fill(); }
    uint32_t sh[1] = {1024};
    TaskOutputTensors t = alloc_tensors(TensorCreateInfo(sh, 1, DataType::FLOAT32));
    next = t.get_ref(0).data;
  });
}

}  // namespace

TEST(TaskStorageRefs, RuntimeAllocatedOutputOutlivesItsScopeUntilTheTaskRetires) {
  Watchdog wd(30);
  void* filled = nullptr;
  void* next = nullptr;
  pto2::RunResult r = fill_then_allocate(
      [] {
        uint32_t sh[1] = {1024};
        Arg p;
        p.add_output(TensorCreateInfo(sh, 1, DataType::FLOAT32));
        p.add_scalar(to_u64(1.0f));
        p.add_scalar(50);  // sleep ms
        return rt_submit_aiv_task(0, p).get_ref(0).data;
      },
      filled, next);
  ASSERT_TRUE(r.ok()) << r.message;
  ASSERT_NE(filled, nullptr);
  EXPECT_NE(filled, next) << "the sleeping task's output was freed when its scope ended";
}

TEST(TaskStorageRefs, ScopeTensorWrittenByATaskOutlivesItsScopeUntilTheTaskRetires) {
  Watchdog wd(30);
  void* filled = nullptr;
  void* next = nullptr;
  pto2::RunResult r = fill_then_allocate(
      [] {
        uint32_t sh[1] = {1024};
        TaskOutputTensors t = alloc_tensors(TensorCreateInfo(sh, 1, DataType::FLOAT32));
        Arg p;
        p.add_output(t.get_ref(0));
        p.add_scalar(to_u64(1.0f));
        p.add_scalar(50);  // sleep ms
        rt_submit_aiv_task(0, p);
        return t.get_ref(0).data;
      },
      filled, next);
  ASSERT_TRUE(r.ok()) << r.message;
  ASSERT_NE(filled, nullptr);
  EXPECT_NE(filled, next) << "the sleeping task's output was freed when its scope ended";
}
