// Helpers shared by the libpto2 tests: a watchdog, tensor builders, small kernels.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pto_orchestration_api.h"

/// Aborts the test binary if the scope does not finish within `seconds` (no hangs in CI).
class Watchdog {
 public:
  explicit Watchdog(int seconds) {
    th_ = std::thread([this, seconds] {
      std::unique_lock<std::mutex> lk(mu_);
      if (!cv_.wait_for(lk, std::chrono::seconds(seconds), [this] { return done_; })) {
        std::fprintf(stderr, "WATCHDOG: test exceeded %d s\n", seconds);
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

inline void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }
