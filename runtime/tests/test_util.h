// Helpers shared by the libpto2 tests: a watchdog, tensor builders, small kernels.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pto_orchestration_api.h"

/// The message of the exception `f` throws, or "" when it throws none:
/// `EXPECT_NE(message_of([&] { rt.run(entry, args); }).find("in progress"), std::string::npos);`
inline std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

/// Aborts the test binary if the scope does not finish within `seconds` (no hangs in CI).
/// `on_timeout` runs first, on the watchdog's thread (say which case hung, dump stacks).
class Watchdog {
 public:
  explicit Watchdog(int seconds, std::function<void()> on_timeout = {}) {
    th_ = std::thread([this, seconds, on_timeout = std::move(on_timeout)] {
      std::unique_lock<std::mutex> lk(mu_);
      if (!cv_.wait_for(lk, std::chrono::seconds(seconds), [this] { return done_; })) {
        std::fprintf(stderr, "WATCHDOG: test exceeded %d s\n", seconds);
        if (on_timeout) on_timeout();
        std::fflush(stderr);
        std::abort();
      }
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      done_ = true;
    }
    cv_.notify_all();
    th_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread th_;
};

inline Tensor ext1d(std::vector<float>& v) {
  uint32_t sh[1] = {static_cast<uint32_t>(v.size())};
  return make_tensor_external(v.data(), sh, 1, DataType::FLOAT32);
}
inline Tensor ext1d(std::vector<int32_t>& v) {
  uint32_t sh[1] = {static_cast<uint32_t>(v.size())};
  return make_tensor_external(v.data(), sh, 1, DataType::INT32);
}

inline pto2::RuntimeOptions workers(uint32_t n) { return pto2::RuntimeOptions{}.aic_workers(n).aiv_workers(n); }

/// Divides iteration counts by $PTO2_TEST_SCALE (the TSan run sets 10) — never below 1.
inline int scaled(int n) {
  const char* e = std::getenv("PTO2_TEST_SCALE");
  const int d = e ? std::atoi(e) : 1;
  return d > 1 ? std::max(1, n / d) : n;
}

inline void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// ---- small kernels (scalars: s0 = value, s1 = sleep ms before acting)
/// Calls f(element offset from data) for every element of the view, in row-major order.
template <class F>
void for_each_element(const Tensor& t, F&& f) {
  int64_t idx[PTO2_MAX_DIMS] = {};
  const int64_t n = t.numel();
  for (int64_t k = 0; k < n; ++k) {
    f(t.element_offset(idx));
    for (uint32_t d = t.ndims; d-- > 0;) {
      if (++idx[d] < static_cast<int64_t>(t.shapes[d])) break;
      idx[d] = 0;
    }
  }
}
inline void k_fill(PTO2KernelContext* ctx) {  // t0 (out) = s0, any view
  if (ctx->scalar_count > 1 && ctx->scalars[1]) sleep_ms(static_cast<int>(ctx->scalars[1]));
  const Tensor& o = ctx->tensors[0];
  float* base = static_cast<float*>(o.data);
  const float v = static_cast<float>(ctx->scalars[0]);
  for_each_element(o, [&](int64_t off) { base[off] = v; });
}
inline void k_add(PTO2KernelContext* ctx) {  // t1 (out) = t0 (in) + s0, 1-d or contiguous
  if (ctx->scalar_count > 1 && ctx->scalars[1]) sleep_ms(static_cast<int>(ctx->scalars[1]));
  const Tensor& a = ctx->tensors[0];
  const Tensor& o = ctx->tensors[1];
  for (int64_t i = 0; i < o.numel(); ++i)
    o.ptr<float>()[i] = a.ptr<float>()[i] + static_cast<float>(ctx->scalars[0]);
}
inline void k_inc(PTO2KernelContext* ctx) {  // t0 (inout) += 1, any view
  const Tensor& o = ctx->tensors[0];
  float* base = static_cast<float*>(o.data);
  for_each_element(o, [&](int64_t off) { base[off] += 1.0f; });
}
inline void k_empty(PTO2KernelContext*) {}
inline void k_stencil_step(PTO2KernelContext* ctx) {  // out row (1x4) = 1 + max over input rows col 0
  const Tensor& in = ctx->tensors[0];
  const Tensor& out = ctx->tensors[1];
  float m = 0;
  for (uint32_t r = 0; r < in.shapes[0]; ++r) {
    int64_t idx[2] = {r, 0};
    m = std::max(m, *in.ptr_at<float>(idx));
  }
  for (uint32_t c = 0; c < 4; ++c) out.ptr<float>()[c] = m + 1;
}
inline void k_set_flag5(PTO2KernelContext* ctx) {  // sleep 10 ms; t0 (int32)[2] = 5
  sleep_ms(10);
  ctx->tensors[0].ptr<int32_t>()[2] = 5;
}

// Racy-by-design kernels (relaxed atomics) for tests of intentionally unordered tasks.
inline void k_fill_atomic(PTO2KernelContext* ctx) {
  sleep_ms(static_cast<int>(ctx->scalars[1]));
  float* p = ctx->tensors[0].ptr<float>();
  const float v = static_cast<float>(ctx->scalars[0]);
  for (int64_t i = 0; i < ctx->tensors[0].numel(); ++i) __atomic_store(&p[i], &v, __ATOMIC_RELAXED);
}
inline void k_copy_atomic(PTO2KernelContext* ctx) {
  float* a = ctx->tensors[0].ptr<float>();
  float* o = ctx->tensors[1].ptr<float>();
  for (int64_t i = 0; i < ctx->tensors[1].numel(); ++i) {
    float v;
    __atomic_load(&a[i], &v, __ATOMIC_RELAXED);
    o[i] = v;
  }
}

inline void k_inc_atomic(PTO2KernelContext* ctx) {
  float* p = ctx->tensors[0].ptr<float>();
  for (int64_t i = 0; i < ctx->tensors[0].numel(); ++i) {
    float v;
    __atomic_load(&p[i], &v, __ATOMIC_RELAXED);
    v += 1;
    __atomic_store(&p[i], &v, __ATOMIC_RELAXED);
  }
}

/// Registers the standard kernels: 0 fill, 1 add, 2 inc, 3 empty (AIV); 10..13 same on AIC.
inline void register_std(pto2::Runtime& rt) {
  rt.register_kernel(0, "fill", pto2::CoreType::AIV, &k_fill);
  rt.register_kernel(1, "add", pto2::CoreType::AIV, &k_add);
  rt.register_kernel(2, "inc", pto2::CoreType::AIV, &k_inc);
  rt.register_kernel(3, "empty", pto2::CoreType::AIV, &k_empty);
  rt.register_kernel(10, "fill_c", pto2::CoreType::AIC, &k_fill);
  rt.register_kernel(11, "add_c", pto2::CoreType::AIC, &k_add);
  rt.register_kernel(12, "inc_c", pto2::CoreType::AIC, &k_inc);
  rt.register_kernel(13, "empty_c", pto2::CoreType::AIC, &k_empty);
  rt.register_kernel(20, "set_flag5", pto2::CoreType::AIV, &k_set_flag5);
  rt.register_kernel(30, "stencil_step", pto2::CoreType::AIV, &k_stencil_step);
  rt.register_kernel(40, "fill_atomic", pto2::CoreType::AIV, &k_fill_atomic);
  rt.register_kernel(41, "copy_atomic", pto2::CoreType::AIV, &k_copy_atomic);
  rt.register_kernel(42, "inc_atomic", pto2::CoreType::AIV, &k_inc_atomic);
}

inline void submit_fill(const Tensor& out, float v, int sleep = 0) {
  Arg p;
  p.add_output(out);
  p.add_scalar(static_cast<uint64_t>(v));
  p.add_scalar(static_cast<uint64_t>(sleep));
  rt_submit_aiv_task(0, p);
}
inline PTO2TaskId submit_add(const Tensor& in, const Tensor& out, float v, int sleep = 0) {
  Arg p;
  p.add_input(in);
  p.add_output(out);
  p.add_scalar(static_cast<uint64_t>(v));
  p.add_scalar(static_cast<uint64_t>(sleep));
  return rt_submit_aiv_task(1, p).task_id();
}

/// Runs `entry` on runtimes with 1..4 workers of each type (each under a watchdog).
template <class F, class Check>
void sweep(F&& entry, Check&& check, uint32_t max_workers = 4) {
  for (uint32_t w = 1; w <= max_workers; ++w) {
    Watchdog wd(60);
    pto2::Runtime rt(workers(w));
    register_std(rt);
    pto2::RunResult r = rt.run(entry);
    check(r, w);
  }
}
