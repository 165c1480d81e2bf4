// The API fuzzer's C part: random sequences of pto2_c_api.h calls with edge values — NULL for
// every pointer taken (entry, kernels, names, functions, tensors, shapes, strides, scalars,
// options, stats, error buffers, paths, runtimes), counts that disagree with their arrays' NULL,
// worker counts at -1, 0, 4097, INT32_MIN/MAX, core types and dtypes out of range, duplicate
// kernel ids, ranks up to 9, extents above 2^32, error buffers of 0, 1 and 7 bytes. The oracle:
// no crash (and no ASan/UBSan report under `make fuzz-runtime-api-asan`); a failing call returns
// its error code with a non-empty NUL-terminated message when the buffer holds one; nothing is
// written past err_len (guard bytes); a runtime stays usable after a refused call.
// PTO2_API_FUZZ_SEED / PTO2_API_FUZZ_CASES (as many as the main part) / PTO2_API_FUZZ_CASE.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "pto2_c_api.h"
#include "api_fuzz_driver.h"
#include "test_util.h"

namespace {

void k_nop(PTO2KernelContext*) {}

// The entry: one AIV task per tensor argument (kernel 0), reading nothing.
extern "C" void fuzz_c_entry(const ChipStorageTaskArgs& args) {
  for (uint32_t i = 0; i < args.tensor_count() && i < 4; ++i) {
    Arg a;
    a.add_input(from_tensor_arg(args.tensor(i)));
    rt_submit_aiv_task(0, a);
  }
}

struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t seed) : g(seed) {}
  uint32_t below(uint32_t n) { return n ? static_cast<uint32_t>(g() % n) : 0; }
  bool chance(uint32_t one_in) { return below(one_in) == 0; }
  int32_t workers() {
    static const int32_t v[] = {-1, 0, 1, 2, 4097, INT32_MAX, INT32_MIN};
    return chance(2) ? static_cast<int32_t>(below(3)) : v[below(7)];
  }
};

class CCase {
 public:
  CCase(uint64_t seed, uint64_t index) : rng_(seed * 1000003u + index + 55), seed_(seed), index_(index) {}

  void run() {
    data_.assign(4096, 0);
    for (uint32_t i = 0, n = 1 + rng_.below(6); i < n; ++i) {
      switch (rng_.below(4)) {
        case 0: one_shot(); break;
        default: kept_runtime(); break;
      }
    }
    EXPECT_EQ(pto2_abi_version(), PTO2_ABI_VERSION);
    const int32_t dt = static_cast<int32_t>(rng_.g());
    if (dt < 0 || dt > 11) {
      EXPECT_EQ(pto2_dtype_size(dt), 0u);
    }
    pto2_runtime_cancel(nullptr);
    pto2_runtime_destroy(nullptr);
    pto2_runtime_progress(nullptr, nullptr, nullptr);
  }

 private:
  // An error buffer of a random size with guard bytes behind it.
  struct ErrBuf {
    std::vector<char> bytes;
    uint32_t len = 0;
    char* ptr() { return len || !bytes.empty() ? bytes.data() : nullptr; }
  };
  ErrBuf err_buf() {
    ErrBuf e;
    static const uint32_t sizes[] = {0, 1, 7, 512};
    if (rng_.chance(5)) return e;  // NULL
    e.len = sizes[rng_.below(4)];
    e.bytes.assign(e.len + 16, '#');
    return e;
  }
  void check_err(const ErrBuf& e, bool failed, const std::string& call) {
    if (e.bytes.empty()) return;
    for (size_t i = e.len; i < e.bytes.size(); ++i)
      if (e.bytes[i] != '#') return fail(call + ": wrote past err_len " + std::to_string(e.len));
    if (e.len == 0) return;
    if (std::memchr(e.bytes.data(), '\0', e.len) == nullptr) return fail(call + ": the message is not NUL-terminated within err_len");
    if (failed && e.len > 1 && e.bytes[0] == '\0') fail(call + ": failed with an empty message");
  }

  std::vector<pto2_kernel_desc> kernels(bool* null_array, uint32_t* n) {
    std::vector<pto2_kernel_desc> ks;
    *n = rng_.below(4);
    for (uint32_t i = 0; i < *n; ++i) {
      pto2_kernel_desc k{};
      k.id = rng_.chance(6) ? static_cast<int32_t>(rng_.g()) : static_cast<int32_t>(i == 0 ? 0 : rng_.below(3));
      k.name = rng_.chance(5) ? nullptr : "nop";
      k.core_type = rng_.chance(8) ? static_cast<int32_t>(rng_.g() % 5) - 1 : 1;
      k.fn = rng_.chance(8) ? nullptr : reinterpret_cast<void*>(&k_nop);
      ks.push_back(k);
    }
    *null_array = *n && rng_.chance(10);
    return ks;
  }

  void one_shot() {
    bool null_k = false;
    uint32_t nk = 0;
    std::vector<pto2_kernel_desc> ks = kernels(&null_k, &nk);
    std::vector<pto2_tensor_desc> ts;
    const uint32_t nt = rng_.below(4);
    for (uint32_t i = 0; i < nt; ++i) {
      pto2_tensor_desc d{};
      d.ndims = rng_.chance(6) ? rng_.below(12) : 1 + rng_.below(2);
      d.dtype = rng_.chance(6) ? static_cast<int32_t>(rng_.g() % 20) - 2 : 5;
      for (uint32_t k = 0; k < 8; ++k) d.shapes[k] = rng_.chance(10) ? (uint64_t(1) << 32) + rng_.below(3) : rng_.below(5);
      // Real memory only when the tensor fits it (the runtime cannot know external sizes).
      uint64_t bytes = 8;
      for (uint32_t k = 0; k < d.ndims && k < 8; ++k) bytes *= d.shapes[k] ? d.shapes[k] : 1;
      d.data = rng_.chance(6) ? nullptr : bytes <= data_.size() ? data_.data() : nullptr;
      ts.push_back(d);
    }
    std::vector<uint64_t> sc(rng_.below(3), 7);
    pto2_run_options o{rng_.workers(), rng_.workers(), rng_.chance(3) ? rng_.workers() : 0, nullptr};
    static const char* paths[] = {"/dev/null", "/nonexistent/dir/trace.json"};
    if (rng_.chance(5)) o.trace_path = paths[rng_.below(2)];
    pto2_run_stats st;
    ErrBuf e = err_buf();
    const bool skip = (o.aic_workers > 64 || o.aiv_workers > 64) && o.aic_workers <= 4096 && o.aiv_workers <= 4096;
    if (skip) return;  // accepted, but thousands of threads: not the point here
    const int rc = pto2_run(rng_.chance(10) ? nullptr : reinterpret_cast<void*>(&fuzz_c_entry), null_k ? nullptr : ks.data(), nk,
                            rng_.chance(10) && nt ? nullptr : ts.data(), nt, rng_.chance(10) && !sc.empty() ? nullptr : sc.data(),
                            static_cast<uint32_t>(sc.size()), rng_.chance(4) ? nullptr : &o, rng_.chance(4) ? nullptr : &st,
                            e.ptr(), e.len);
    check_err(e, rc != 0, "pto2_run");
  }

  void kept_runtime() {
    bool null_k = false;
    uint32_t nk = 0;
    std::vector<pto2_kernel_desc> ks = kernels(&null_k, &nk);
    pto2_runtime_config c{};
    c.aic_workers = static_cast<uint32_t>(rng_.workers());
    c.aiv_workers = static_cast<uint32_t>(rng_.workers());
    if (c.aic_workers > 64 && c.aic_workers <= 4096) c.aic_workers = 1;
    if (c.aiv_workers > 64 && c.aiv_workers <= 4096) c.aiv_workers = 1;
    c.clusters = rng_.chance(4) ? static_cast<uint32_t>(rng_.workers()) : 0;
    c.trace = static_cast<int32_t>(rng_.below(2));
    c.task_ring_size = rng_.chance(4) ? static_cast<uint32_t>(rng_.g()) : rng_.below(9);
    c.memory_limit = rng_.chance(4) ? rng_.g() : rng_.below(1 << 20);
    if (c.task_ring_size > (1u << 20) && c.task_ring_size <= (1u << 24)) c.task_ring_size = 8;  // in range, but big
    ErrBuf e = err_buf();
    void* rt = pto2_runtime_create(rng_.chance(10) ? nullptr : &c, null_k ? nullptr : ks.data(), nk, e.ptr(), e.len);
    check_err(e, rt == nullptr, "pto2_runtime_create");
    if (!rt) return;
    for (uint32_t i = 0, n = 1 + rng_.below(5); i < n; ++i) {
      ErrBuf r = err_buf();
      switch (rng_.below(7)) {
        case 0: case 1: case 2: {
          const uint32_t nt = rng_.below(3);
          std::vector<pto2_tensor_arg> ts(nt);
          uint32_t shapes[10] = {4, 4, 1, 1, 1, 1, 1, 1, 1, 1};
          int64_t strides[10] = {4, 1, 1, 1, 1, 1, 1, 1, 1, 1};
          for (auto& a : ts) {
            a.data = rng_.chance(8) ? nullptr : data_.data();
            a.dtype = rng_.chance(6) ? static_cast<int32_t>(rng_.g() % 20) - 2 : 5;
            a.ndims = rng_.chance(6) ? rng_.below(12) : 2;
            a.shapes = rng_.chance(8) ? nullptr : shapes;
            a.strides = rng_.chance(2) ? nullptr : strides;
          }
          if (rng_.chance(6)) strides[0] = rng_.chance(2) ? INT64_MAX : -4;  // the caller's strides (nop kernel)
          std::vector<uint64_t> sc(rng_.below(3), 1);
          pto2_stats st;
          const int ok = pto2_runtime_run(rng_.chance(12) ? nullptr : rt, rng_.chance(10) ? nullptr : reinterpret_cast<void*>(&fuzz_c_entry),
                                          rng_.chance(10) && nt ? nullptr : ts.data(), nt,
                                          rng_.chance(10) && !sc.empty() ? nullptr : sc.data(), static_cast<uint32_t>(sc.size()),
                                          rng_.chance(4) ? nullptr : &st, r.ptr(), r.len);
          check_err(r, ok == 0, "pto2_runtime_run");
          break;
        }
        case 3: {
          static const char* paths[] = {"/dev/null", "/nonexistent/dir/t.json", nullptr};
          const char* p = paths[rng_.below(3)];
          const int ok = rng_.chance(2) ? pto2_runtime_write_trace_err(rt, p, r.ptr(), r.len)
                                        : pto2_runtime_write_graph_err(rt, p, r.ptr(), r.len);
          check_err(r, ok == 0, "pto2_runtime_write_trace_err / _write_graph_err");
          if (rng_.chance(2)) (void)pto2_runtime_write_trace(rt, p);
          break;
        }
        case 4: pto2_runtime_set_race_check(rt, static_cast<int32_t>(rng_.g() % 6) - 2); break;
        case 5: {
          uint64_t s = 0, d = 0;
          const bool both = !rng_.chance(3);
          pto2_runtime_progress(rt, both || rng_.chance(2) ? &s : nullptr, both || rng_.chance(2) ? nullptr : &d);
          if (both && d > s) fail("pto2_runtime_progress: completed > submitted");
          break;
        }
        default: pto2_runtime_cancel(rt); break;  // no run in progress: the next run is not cancelled
      }
    }
    // Still usable after whatever was refused: a plain run succeeds (when kernel 0 is an AIV kernel).
    bool has_aiv0 = false;
    for (const auto& k : ks) has_aiv0 = has_aiv0 || (k.id == 0 && k.core_type == 1 && k.fn);
    if (has_aiv0 && !null_k) {
      uint32_t sh[1] = {16};
      pto2_tensor_arg a{data_.data(), 5, 1, sh, nullptr};
      char msg[256];
      if (pto2_runtime_run(rt, reinterpret_cast<void*>(&fuzz_c_entry), &a, 1, nullptr, 0, nullptr, msg, sizeof msg) != 1)
        fail(std::string("a plain pto2_runtime_run after the fuzzed calls failed: ") + msg);
    }
    pto2_runtime_destroy(rt);
  }

  void fail(const std::string& what) { api_fuzz::fail_case(seed_, index_, what); }

  Rng rng_;
  uint64_t seed_, index_;
  std::vector<unsigned char> data_;
};

}  // namespace

TEST(ApiFuzz, CApiCallSequences) {
  api_fuzz::run_cases(api_fuzz::env_u64("PTO2_API_FUZZ_CASES", 150),
                      [](uint64_t seed, uint64_t i) { CCase(seed, i).run(); });
}
