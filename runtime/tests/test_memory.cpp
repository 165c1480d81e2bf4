// Runtime tensors are reused after their scope ended and their users finished; slot and
// memory exhaustion block submission (back-pressure) instead of failing.
#include <gtest/gtest.h>

#include "test_util.h"

TEST(Memory, LongLoopRunsInBoundedMemory) {
  std::vector<float> out(1024, 0);
  sweep([&](const ChipStorageTaskArgs&) {
    for (int i = 0; i < scaled(100000); ++i) {
      PTO2_SCOPE() {
        uint32_t sh[1] = {1024};
        TensorCreateInfo ci(sh, 1, DataType::FLOAT32);
        TaskOutputTensors tmp = alloc_tensors(ci);
        const Tensor& t = tmp.get_ref(0);
        submit_fill(t, static_cast<float>(i % 7), 0);
        Arg p;  // runtime-allocated output as well
        p.add_input(t);
        p.add_output(ci);
        p.add_scalar(1);
        p.add_scalar(0);
        rt_submit_aiv_task(1, p);
      }
    }
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(r.tasks_submitted, 2u * scaled(100000));
    // 4 KiB tensors, two per iteration: the pool stays far below 100000 * 8 KiB
    EXPECT_LT(r.peak_bytes, size_t(64) << 20) << r.peak_bytes;
    EXPECT_LT(r.pool_bytes, size_t(64) << 20) << r.pool_bytes;
  }, 2);
}

TEST(Memory, MemoryLimitBackPressure) {
  for (uint32_t w = 1; w <= 4; ++w) {
    Watchdog wd(60);
    pto2::Runtime rt(workers(w).memory_limit(64 * 1024));
    register_std(rt);
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      for (int i = 0; i < 2000; ++i) {
        PTO2_SCOPE() {
          uint32_t sh[1] = {4096};  // 16 KiB: at most 4 live
          TensorCreateInfo ci(sh, 1, DataType::FLOAT32);
          TaskOutputTensors tmp = alloc_tensors(ci);
          submit_fill(tmp.get_ref(0), 1, 0);
        }
      }
    });
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_LE(r.peak_bytes, size_t(64 * 1024));
  }
}

TEST(Memory, ScopeHoldingTooMuchFailsClearly) {
  Watchdog wd(30);
  pto2::Runtime rt(workers(1).memory_limit(64 * 1024));
  register_std(rt);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    uint32_t sh[1] = {4096};
    TensorCreateInfo ci(sh, 1, DataType::FLOAT32);
    for (int i = 0; i < 10; ++i) alloc_tensors(ci);
  });
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("out of memory"), std::string::npos) << r.message;
}

TEST(Memory, TinyTaskRingBackPressure) {
  std::vector<float> x(16, 0);
  for (uint32_t w = 1; w <= 4; ++w) {
    Watchdog wd(60);
    pto2::Runtime rt(workers(w).task_ring_size(8));
    register_std(rt);
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      std::fill(x.begin(), x.end(), 0.f);
      for (int i = 0; i < 5000; ++i) {
        Arg p;
        p.add_inout(ext1d(x));
        rt_submit_aiv_task(2, p);
      }
    });
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(x[0], 5000.f);
  }
}

TEST(Memory, OversizedRuntimeOutputFailsWithoutHanging) {
  for (uint32_t w = 1; w <= 2; ++w) {
    Watchdog wd(30);
    pto2::Runtime rt(workers(w).memory_limit(64 * 1024));
    register_std(rt);
    std::vector<float> x(16, 0);
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      submit_fill(ext1d(x), 1, 5);
      uint32_t sh[1] = {1 << 20};  // 4 MiB > limit
      TensorCreateInfo ci(sh, 1, DataType::FLOAT32);
      Arg p;
      p.add_input(ext1d(x));
      p.add_output(ci);
      p.add_scalar(0);
      p.add_scalar(0);
      rt_submit_aiv_task(1, p);
    });
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.message.find("exceeds the memory limit"), std::string::npos) << r.message;
    pto2::RunResult ok = rt.run([&](const ChipStorageTaskArgs&) { submit_fill(ext1d(x), 2, 0); });
    EXPECT_TRUE(ok.ok()) << ok.message;
  }
}

// alloc_tensors of a shape whose byte count passes 2^63 - 1 is an error naming the shape: the
// unchecked Tensor::nbytes() wrapped [2^31, 2^31] FP32 (2^64 bytes) to 0, a zero-byte buffer the
// tasks then wrote through; (2^32 - 1)^3 FP32 was reported as a 51539607548-byte allocation.
TEST(Memory, TensorWhoseByteCountOverflowsIsRefused) {
  pto2::Runtime rt(workers(1));
  register_std(rt);
  const std::vector<std::vector<uint32_t>> shapes = {{2147483648u, 2147483648u}, {4294967295u, 4294967295u, 4294967295u}};
  for (const auto& sh : shapes) {
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      TensorCreateInfo ci(sh.data(), static_cast<uint32_t>(sh.size()), DataType::FLOAT32);
      TaskOutputTensors t = alloc_tensors(ci);
      submit_fill(t.get_ref(0), 1, 0);
    });
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.message.find("needs more than 2^63 bytes"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find(std::to_string(sh[0]) + ", " + std::to_string(sh[1])), std::string::npos) << r.message;
  }
  std::vector<float> x(16, 0);
  pto2::RunResult ok = rt.run([&](const ChipStorageTaskArgs&) { submit_fill(ext1d(x), 2, 0); });
  EXPECT_TRUE(ok.ok()) << ok.message;
}

// The same through a task's own new output (Arg::add_output(TensorCreateInfo)): the runtime
// allocates it at submission, and a wrapped byte count gave the kernel a buffer smaller than
// the tensor it writes.
TEST(Memory, NewOutputWhoseByteCountOverflowsIsRefused) {
  pto2::Runtime rt(workers(1));
  register_std(rt);
  const uint32_t sh[2] = {2147483648u, 2147483648u};
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    Arg a;
    a.add_output(TensorCreateInfo(sh, 2, DataType::FLOAT32));
    a.add_scalar(1);
    rt_submit_aiv_task(0, a);
  });
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("[2147483648, 2147483648] float32 needs more than 2^63 bytes"), std::string::npos) << r.message;
  std::vector<float> x(16, 0);
  pto2::RunResult ok = rt.run([&](const ChipStorageTaskArgs&) { submit_fill(ext1d(x), 2, 0); });
  EXPECT_TRUE(ok.ok()) << ok.message;
}

TEST(Memory, OutermostScopeTensorsOutliveTheEntryAndAreReusedByTheNextRun) {
  // Tensors of the run's outermost scope take no per-task references: they must stay valid
  // for tasks still running after the entry returned, and be free for the next run.
  for (uint32_t w = 1; w <= 4; ++w) {
    Watchdog wd(60);
    pto2::Runtime rt(workers(w));
    register_std(rt);
    std::vector<float> out(256, 0.f);
    for (int run = 0; run < 3; ++run) {
      pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
        uint32_t sh[1] = {256};
        TensorCreateInfo ci(sh, 1, DataType::FLOAT32);
        TaskOutputTensors t = alloc_tensors(ci);
        submit_fill(t.get_ref(0), static_cast<float>(run + 1), 30);  // still running at return
        submit_add(t.get_ref(0), ext1d(out), 10.f);
      });
      ASSERT_TRUE(r.ok()) << r.message;
      EXPECT_EQ(out[255], static_cast<float>(run + 11));
      EXPECT_EQ(r.pool_bytes, 1024u);  // one block, reused by every run
    }
  }
}
