// Automatic (RaW, WaW, WaR, views) and explicit dependencies; manual scopes and opt-outs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "test_util.h"

namespace {

// A fill (t0 = s0) that starts only once `*release` (s1: a std::atomic<bool>*) is set, or after
// 30 s: the test sets it after submitting the consumer, so the producer is still unfinished at
// that submission however the threads are scheduled (a 20 ms sleep was not enough under load).
void k_fill_when_released(PTO2KernelContext* ctx) {
  auto* release = reinterpret_cast<std::atomic<bool>*>(static_cast<uintptr_t>(ctx->scalars[1]));
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!release->load(std::memory_order_acquire) && std::chrono::steady_clock::now() < give_up)
    std::this_thread::yield();
  const Tensor& o = ctx->tensors[0];   // as k_fill (whose s1 is a sleep)
  float* base = static_cast<float*>(o.data);
  const float v = static_cast<float>(ctx->scalars[0]);
  for_each_element(o, [&](int64_t off) { base[off] = v; });
}

constexpr int32_t kFillWhenReleased = 50;

void submit_fill_when_released(const Tensor& out, float v, std::atomic<bool>* release) {
  Arg p;
  p.add_output(out);
  p.add_scalar(static_cast<uint64_t>(v));
  p.add_scalar(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(release)));
  rt_submit_aiv_task(kFillWhenReleased, p);
}

// sweep() with k_fill_when_released registered too.
template <class F, class Check>
void sweep_with_release(F&& entry, Check&& check) {
  for (uint32_t w = 1; w <= 4; ++w) {
    Watchdog wd(60);
    pto2::Runtime rt(workers(w));
    register_std(rt);
    rt.register_kernel(kFillWhenReleased, "fill_when_released", pto2::CoreType::AIV, &k_fill_when_released);
    check(rt.run(entry), w);
  }
}

}  // namespace

TEST(Dependencies, ReadAfterWrite) {
  std::vector<float> x(64, 0), y(64, 0);
  std::atomic<bool> release{false};
  sweep_with_release([&](const ChipStorageTaskArgs&) {
    std::fill(x.begin(), x.end(), 0.f);
    release = false;
    submit_fill_when_released(ext1d(x), 1, &release);   // producer, unfinished until released
    submit_add(ext1d(x), ext1d(y), 1);                   // must see x == 1
    release = true;
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(y[63], 2.f);
    EXPECT_EQ(r.auto_edges, 1u);
  });
}

TEST(Dependencies, WriteAfterWrite) {
  std::vector<float> x(64, 0);
  std::atomic<bool> release{false};
  sweep_with_release([&](const ChipStorageTaskArgs&) {
    release = false;
    submit_fill_when_released(ext1d(x), 1, &release);
    submit_fill(ext1d(x), 2, 0);
    release = true;
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(x[0], 2.f);
    EXPECT_EQ(r.auto_edges, 1u);
  });
}

TEST(Dependencies, WriteAfterRead) {
  std::vector<float> x(64, 0), y(64, 0);
  sweep([&](const ChipStorageTaskArgs&) {
    std::fill(x.begin(), x.end(), 7.f);
    submit_add(ext1d(x), ext1d(y), 0, 20);  // slow reader of x
    submit_fill(ext1d(x), 100, 0);          // must wait for the reader
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(y[0], 7.f);
    EXPECT_EQ(x[0], 100.f);
  });
}

TEST(Dependencies, ViewsDisjointRunInParallelOverlappingOrder) {
  std::vector<float> m(16 * 16, 0), out(16 * 8, 0);
  uint64_t edges_disjoint = 99, edges_overlap = 99;
  for (int overlap = 0; overlap < 2; ++overlap) {
    sweep([&](const ChipStorageTaskArgs&) {
      uint32_t sh[2] = {16, 16};
      Tensor t = make_tensor_external(m.data(), sh, 2, DataType::FLOAT32);
      uint32_t vs[2] = {16, 8};
      uint32_t left[2] = {0, 0}, right[2] = {0, 8}, mid[2] = {0, 4};
      submit_fill(t.view(vs, left), 1, 10);
      submit_fill(t.view(vs, overlap ? mid : right), 2, 0);
    }, [&](const pto2::RunResult& r, uint32_t) {
      ASSERT_TRUE(r.ok()) << r.message;
      (overlap ? edges_overlap : edges_disjoint) = r.auto_edges;
      if (overlap) {
        EXPECT_EQ(m[4], 2.f);  // the later write wins on the overlap
      }
    });
  }
  EXPECT_EQ(edges_disjoint, 0u);
  EXPECT_EQ(edges_overlap, 1u);
  (void)out;
}

TEST(Dependencies, ViewOfSourceOverlapsSource) {
  std::vector<float> m(16 * 16, 0), y(16 * 16, 0);
  sweep([&](const ChipStorageTaskArgs&) {
    uint32_t sh[2] = {16, 16};
    Tensor t = make_tensor_external(m.data(), sh, 2, DataType::FLOAT32);
    Tensor ty = make_tensor_external(y.data(), sh, 2, DataType::FLOAT32);
    uint32_t vs[2] = {4, 4}, vo[2] = {8, 8};
    submit_fill(t.view(vs, vo), 3, 20);
    submit_add(t, ty, 0);  // whole tensor read sees the view write
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(y[8 * 16 + 8], 3.f);
    EXPECT_EQ(r.auto_edges, 1u);
  });
}

TEST(Dependencies, TransposedViewIsConservative) {
  std::vector<float> m(8 * 8, 0);
  sweep([&](const ChipStorageTaskArgs&) {
    uint32_t sh[2] = {8, 8};
    Tensor t = make_tensor_external(m.data(), sh, 2, DataType::FLOAT32);
    submit_fill(t, 1, 10);
    Arg p;
    p.add_inout(t.transpose(0, 1));
    rt_submit_aiv_task(2, p);
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(m[5], 2.f);
  });
}

TEST(Dependencies, ManualScopeOrdersOnlyByExplicitDeps) {
  std::vector<float> x(64, 0), y(64, 0);
  for (int with_dep = 0; with_dep < 2; ++with_dep) {
    for (uint32_t w = 1; w <= 2; ++w) {
      Watchdog wd(60);
      pto2::Runtime rt(workers(w));
      register_std(rt);
      pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      std::fill(x.begin(), x.end(), 0.f);
      std::fill(y.begin(), y.end(), -1.f);
      PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
        Arg a;
        a.add_output(ext1d(x));
        a.add_scalar(5);
        a.add_scalar(30);
        PTO2TaskId t = rt_submit_aiv_task(40, a).task_id();
        Arg b;
        b.add_input(ext1d(x));
        b.add_output(ext1d(y));
        if (with_dep) b.set_dependencies(&t, 1);
        rt_submit_aiv_task(41, b);
      }
      });
      ASSERT_TRUE(r.ok()) << r.message;
      EXPECT_EQ(r.auto_edges, 0u);
      if (with_dep) {
        EXPECT_EQ(y[0], 5.f);
        EXPECT_EQ(r.explicit_edges, 1u);
      } else if (w > 1) {
        EXPECT_EQ(y[0], 0.f);  // unordered: the reader ran while the writer slept
      }
    }
  }
}

TEST(Dependencies, ExplicitDepsAddToAuto) {
  std::vector<float> x(16, 0), y(16, 0), z(16, 0), log(16, 0);
  sweep([&](const ChipStorageTaskArgs&) {
    Arg a;
    a.add_output(ext1d(z));
    a.add_scalar(9);
    a.add_scalar(30);
    PTO2TaskId tz = rt_submit_aiv_task(0, a).task_id();  // unrelated storage, slow
    submit_fill(ext1d(x), 1, 0);
    Arg b;  // reads x (auto dep) and explicitly follows tz: sees z == 9 through a raw read
    b.add_input(ext1d(x));
    b.add_output(ext1d(y));
    b.add_scalar(0);
    b.add_scalar(0);
    b.set_dependencies(&tz, 1);
    rt_submit_aiv_task(1, b);
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(y[0], 1.f);
    EXPECT_EQ(r.explicit_edges, 1u);
    EXPECT_GE(r.auto_edges, 0u);
  });
}

TEST(Dependencies, InvalidDependencyIdFails) {
  pto2::Runtime rt(workers(1));
  register_std(rt);
  pto2::RunResult r = rt.run([](const ChipStorageTaskArgs&) {
    Arg a;
    PTO2TaskId bad = PTO2TaskId::invalid();
    a.set_dependencies(&bad, 1);
    rt_submit_aiv_task(3, a);
  });
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("invalid"), std::string::npos) << r.message;
  r = rt.run([](const ChipStorageTaskArgs&) {
    Arg a;
    PTO2TaskId future;
    future.raw = 1u << 30;
    a.set_dependencies(&future, 1);
    rt_submit_aiv_task(3, a);
  });
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("never submitted"), std::string::npos) << r.message;
}

TEST(Dependencies, FinishedTaskIdIsFine) {
  std::vector<float> x(16, 0), y(16, 0);
  sweep([&](const ChipStorageTaskArgs&) {
    Arg a;
    a.add_output(ext1d(x));
    a.add_scalar(4);
    a.add_scalar(0);
    PTO2TaskId t = rt_submit_aiv_task(0, a).task_id();
    int64_t idx[1] = {0};
    (void)get_tensor_data<float>(ext1d(x), 1, idx);  // t finished now
    for (int i = 0; i < 10000; ++i) {  // push t's slot far away
      Arg e;
      rt_submit_aiv_task(3, e);
    }
    Arg b;
    b.add_input(ext1d(x));
    b.add_output(ext1d(y));
    b.add_scalar(1);
    b.add_scalar(0);
    b.set_dependencies(&t, 1);
    rt_submit_aiv_task(1, b);
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(y[0], 5.f);
  }, 2);
}

TEST(Dependencies, ManualDepTensorAndNoDepSlotSkipTracking) {
  std::vector<float> x(16, 0);
  sweep([&](const ChipStorageTaskArgs&) {
    uint32_t sh[1] = {16};
    TensorCreateInfo ci(sh, 1, DataType::FLOAT32, /*manual_dep=*/true);
    TaskOutputTensors al = alloc_tensors(ci);
    const Tensor& m = al.get_ref(0);
    for (int v = 1; v <= 2; ++v) {  // racy by design: relaxed-atomic kernels
      Arg f;
      f.add_output(m);
      f.add_scalar(static_cast<uint64_t>(v));
      f.add_scalar(0);
      rt_submit_aiv_task(40, f);
    }
    Arg a;
    a.add_no_dep(ext1d(x));
    rt_submit_aiv_task(42, a);
    Arg b;
    b.add_no_dep(ext1d(x));
    rt_submit_aiv_task(42, b);
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(r.auto_edges, 0u);
  });
}

TEST(Dependencies, ChainThroughRuntimeTensors) {
  std::vector<float> out(32, 0);
  sweep([&](const ChipStorageTaskArgs&) {
    uint32_t sh[1] = {32};
    TensorCreateInfo ci(sh, 1, DataType::FLOAT32);
    TaskOutputTensors al = alloc_tensors(ci);
    Tensor cur = al.get_ref(0);
    submit_fill(cur, 0, 0);
    for (int i = 0; i < 200; ++i) {
      Arg p;
      p.add_input(cur);
      p.add_output(ci);
      p.add_scalar(1);
      p.add_scalar(0);
      TaskOutputTensors o = rt_submit_aiv_task(1, p);
      cur = o.get_ref(0);
    }
    submit_add(cur, ext1d(out), 0);
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(out[31], 200.f);
  });
}

namespace {
std::atomic<bool> g_gate_open{false};
// Holds its worker until the orchestration opens the gate (at most 20 s: never a hang).
void k_gate(PTO2KernelContext*) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!g_gate_open.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
}
void k_nothing(PTO2KernelContext*) {}
}  // namespace

// Repeated explicit ids are linked once, and distinct ids are each linked even when they share
// their low 6 bits (the link step filters repeats by those bits before comparing): ids 64
// apart are two producers. Every producer waits behind a closed gate, so all are live.
TEST(Dependencies, RepeatedExplicitIdsLinkOnce) {
  Watchdog wd(60);
  pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(1).orchestrator_helps(false));
  rt.register_kernel(0, "gate", pto2::CoreType::AIV, &k_gate);
  rt.register_kernel(1, "nothing", pto2::CoreType::AIV, &k_nothing);
  g_gate_open = false;
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      Arg g;
      const PTO2TaskId gate = rt_submit_aiv_task(0, g).task_id();
      std::vector<PTO2TaskId> p(70);
      for (PTO2TaskId& id : p) {
        Arg a;
        a.set_dependencies(&gate, 1);
        id = rt_submit_aiv_task(1, a).task_id();
      }
      ASSERT_EQ(p[64].raw - p[0].raw, 64u);
      const PTO2TaskId ids[6] = {p[0], p[64], p[0], p[1], p[65], p[64]};  // 4 distinct
      Arg c;
      c.set_dependencies(ids, 6);
      rt_submit_aiv_task(1, c);
      g_gate_open = true;
    }
  });
  g_gate_open = true;
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.explicit_edges, 70u + 4u);
}

// A task's automatic producers are linked once each, whatever the order of the repeats (the
// tracker deduplicates one to three inline, more out of line): reads of x, y (written by live
// tasks P and Q) in the orders below find P, Q as many times as they are read.
TEST(Dependencies, RepeatedAutoProducersLinkOnce) {
  Watchdog wd(60);
  pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(1).orchestrator_helps(false));
  rt.register_kernel(0, "gate", pto2::CoreType::AIV, &k_gate);
  rt.register_kernel(1, "nothing", pto2::CoreType::AIV, &k_nothing);
  g_gate_open = false;
  std::vector<float> x(64, 0), y(64, 0);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    Arg g;
    const PTO2TaskId gate = rt_submit_aiv_task(0, g).task_id();
    for (std::vector<float>* v : {&x, &y}) {  // P writes x, Q writes y; both wait for the gate
      Arg p;
      p.add_output(ext1d(*v));
      p.set_dependencies(&gate, 1);
      rt_submit_aiv_task(1, p);
    }
    // x x x -> P;  x y x, x x y, y x -> P, Q;  y x y x -> Q, P (four found: out of line)
    for (const char* reads : {"xxx", "xyx", "xxy", "yx", "yxyx"}) {
      Arg c;
      for (const char* k = reads; *k; ++k) c.add_input(ext1d(*k == 'x' ? x : y));
      rt_submit_aiv_task(1, c);
    }
    g_gate_open = true;
  });
  g_gate_open = true;
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.explicit_edges, 2u);
  EXPECT_EQ(r.auto_edges, 1u + 2u + 2u + 2u + 2u);
}
