// The API fuzzer's hand-written tensors: Tensor's fields are public (shapes, strides, offset,
// ndims, dtype, data), so a caller may write them. Each case takes a tensor the API made (over
// an external buffer with guard bytes, or runtime-allocated), overwrites some of its fields with
// edge values (ranks 0..9, 16, 2^32 - 1; strides 0, -1, 2^40, INT64_MIN/MAX; offsets likewise;
// dtype numbers that are no DataType; extents up to 2^32 - 1) and passes it to view, transpose,
// reshape, numel, element_offset, is_contiguous, get/set_tensor_data and the submissions. The
// oracle, after docs/runtime.md ("Tensors written by hand"): what the runtime can check is an
// error naming the call — a rank above PTO2_MAX_DIMS, a dtype that is no DataType, an element
// address that overflows int64 bytes, a runtime-allocated tensor's element outside its storage
// (get/set_tensor_data; a submission checks the rank and dtype only); nothing crashes or reaches outside a buffer the runtime knows (ASan/UBSan:
// `make fuzz-runtime-api-asan`). Reaching outside external memory through strides the caller
// wrote is the caller's duty (the runtime does not know that memory's size), so the kernels here
// touch nothing, and get/set_tensor_data are called only on tensors inside their buffer.
// PTO2_API_FUZZ_SEED / PTO2_API_FUZZ_CASES (as many as the main fuzzer) / PTO2_API_FUZZ_CASE.
#include <gtest/gtest.h>

#include <cinttypes>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "api_fuzz_driver.h"
#include "test_util.h"

namespace {

void k_nop(PTO2KernelContext*) {}

struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t seed) : g(seed) {}
  uint32_t below(uint32_t n) { return n ? static_cast<uint32_t>(g() % n) : 0; }
  bool chance(uint32_t one_in) { return below(one_in) == 0; }
  int64_t edge_i64() {
    static const int64_t v[] = {0, 1, -1, 2, 8, -8, INT32_MAX, int64_t(1) << 32, int64_t(1) << 40, -(int64_t(1) << 40),
                                int64_t(1) << 61, INT64_MAX, INT64_MIN, INT64_MIN + 1, INT64_MAX / 2};
    return chance(3) ? static_cast<int64_t>(below(10)) - 3 : v[below(sizeof v / sizeof v[0])];
  }
  uint32_t edge_u32() {
    static const uint32_t v[] = {0, 1, 2, 3, 0x7fffffffu, 0x80000000u, 0xffffffffu, 1u << 16};
    return chance(2) ? below(6) : v[below(sizeof v / sizeof v[0])];
  }
};

const char* const kNames[] = {"Tensor::view", "Tensor::transpose", "Tensor::reshape", "Tensor::numel",
                              "Tensor::element_offset", "Tensor::is_contiguous", "get_tensor_data",
                              "set_tensor_data", "rt_submit_aiv_task", "rt_submit_aic_task", "rt_submit_dummy_task", "task #"};
class FieldsCase {
 public:
  FieldsCase(uint64_t seed, uint64_t index) : rng_(seed * 1000003u + index + 31), seed_(seed), index_(index) {}

  void run() {
    pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(1).aiv_workers(1).deadlock_timeout_ms(2000));
    rt.register_kernel(0, "nop", pto2::CoreType::AIV, &k_nop).register_kernel(1, "nop_c", pto2::CoreType::AIC, &k_nop);
    buf_.assign(kGuard + kBytes + kGuard, 0xA5);
    pto2::RunResult res = rt.run([&](const ChipStorageTaskArgs&) {
      for (uint32_t i = 0, n = 1 + rng_.below(20); i < n; ++i) {
        current_.clear();
        try {
          one();
        } catch (const std::exception& e) {
          expect_message(e.what(), current_);
        }
      }
    });
    if (!res.ok()) expect_message(res.message, "the run");
    for (size_t i = 0; i < kGuard; ++i)
      if (buf_[i] != 0xA5 || buf_[kGuard + kBytes + i] != 0xA5) {
        fail("a guard byte of the external buffer was overwritten");
        break;
      }
  }

 private:
  static constexpr size_t kGuard = 64, kBytes = 4096;

  // A tensor the API made: external over the guarded buffer, or runtime-allocated.
  Tensor base(bool* runtime) {
    uint32_t sh[2] = {1 + rng_.below(16), 1 + rng_.below(16)};
    *runtime = rng_.chance(2);
    if (*runtime) {
      TensorCreateInfo ci(sh, 2, DataType::INT32);
      return alloc_tensors(ci).get_ref(0);
    }
    return make_tensor_external(buf_.data() + kGuard, sh, 2, DataType::INT32);  // 16 x 16 x 4 <= 4096
  }

  void scribble(Tensor& t) {
    for (uint32_t k = 0, n = 1 + rng_.below(3); k < n; ++k) {
      switch (rng_.below(6)) {
        case 0: {
          static const uint32_t ranks[] = {0, 1, 2, 3, 8, 9, 16, 0xffffffffu};
          t.ndims = rng_.chance(2) ? rng_.below(4) : ranks[rng_.below(8)];
          break;
        }
        case 1: t.shapes[rng_.below(PTO2_MAX_DIMS)] = rng_.edge_u32(); break;
        case 2: t.strides[rng_.below(PTO2_MAX_DIMS)] = rng_.edge_i64(); break;
        case 3: t.offset = rng_.edge_i64(); break;
        case 4: t.dtype = static_cast<DataType>(rng_.chance(2) ? rng_.below(12) : 12 + rng_.below(244)); break;
        default: t.manual_dep = !t.manual_dep; break;
      }
    }
  }

  void one() {
    bool runtime = false;
    current_ = "alloc_tensors";
    Tensor t = base(&runtime);
    const size_t bytes = runtime ? static_cast<size_t>(t.shapes[0]) * t.shapes[1] * 4 : kBytes;
    scribble(t);
    // Index arrays as long as any rank the fuzzer writes (the API reads ndims entries).
    uint32_t sh[PTO2_MAX_DIMS], off[PTO2_MAX_DIMS];
    int64_t idx[PTO2_MAX_DIMS];
    for (uint32_t i = 0; i < PTO2_MAX_DIMS; ++i) {
      const uint32_t ext = t.shapes[i];
      off[i] = ext ? rng_.below(ext < 4 ? ext : 4) : 0;
      sh[i] = ext > off[i] ? 1 + rng_.below(ext - off[i] < 4 ? ext - off[i] : 4) : 0;
      idx[i] = rng_.chance(8) ? rng_.edge_i64() : (ext ? rng_.below(ext < 4 ? ext : 4) : 0);
    }
    // A rank above PTO2_MAX_DIMS must be refused before the arrays are read past their 8 entries.
    switch (rng_.below(9)) {
      case 0: current_ = "Tensor::view"; (void)t.view(sh, off); break;
      case 1: current_ = "Tensor::transpose"; (void)t.transpose(rng_.below(3), rng_.below(3)); break;
      case 2: {
        current_ = "Tensor::reshape";
        uint32_t rs[1] = {static_cast<uint32_t>(rng_.below(300))};
        (void)t.reshape(rs, 1);
        break;
      }
      case 3: current_ = "Tensor::numel"; (void)t.numel(); break;
      case 4: current_ = "Tensor::element_offset"; (void)t.element_offset(idx); break;
      case 5: current_ = "Tensor::is_contiguous"; (void)t.is_contiguous(); break;
      case 6: case 7: {
        // Only where the element is inside the test's memory or the runtime must refuse it
        // (external memory reached through the caller's strides is the caller's duty).
        const bool write = rng_.chance(2);
        current_ = write ? "set_tensor_data" : "get_tensor_data";
        bool in_range = t.ndims <= PTO2_MAX_DIMS;
        for (uint32_t i = 0; in_range && i < t.ndims; ++i) {
          in_range = idx[i] >= 0 && idx[i] < static_cast<int64_t>(t.shapes[i]);
        }
        if (in_range) {
          __int128 o = t.offset;
          for (uint32_t i = 0; i < t.ndims; ++i) o += static_cast<__int128>(idx[i]) * t.strides[i];
          const __int128 es = static_cast<uint8_t>(t.dtype) <= 11 ? dtype_size(t.dtype) : 1;
          const bool mem_ok = o * es >= 0 && (o + 1) * es <= static_cast<__int128>(bytes) && static_cast<uint8_t>(t.dtype) <= 11;
          if (!mem_ok && !runtime && o * es >= INT64_MIN && (o + 1) * es <= INT64_MAX) return;  // caller's duty
        }
        if (write) set_tensor_data<int32_t>(t, t.ndims, idx, 7);
        else (void)get_tensor_data<int32_t>(t, t.ndims, idx);
        break;
      }
      default: {
        Arg a;
        const uint32_t d = rng_.below(3);
        if (d == 0) a.add_input(t);
        else if (d == 1) a.add_output(t);
        else a.add_inout(t);
        current_ = "rt_submit_aiv_task";
        // A submission checks the rank and the dtype only: a span check per tensor cost too
        // much on the submission path (docs/runtime.md, "Tensors written by hand"). A span past
        // int64 bytes is the caller's duty: not submitted (the tracker's byte arithmetic on it
        // would overflow).
        const bool ok_shape = t.ndims <= PTO2_MAX_DIMS && static_cast<uint8_t>(t.dtype) <= 11;
        if (ok_shape) {
          __int128 lo = t.offset, hi = t.offset;
          for (uint32_t i = 0; i < t.ndims; ++i) {
            if (t.shapes[i] == 0) continue;
            const __int128 ext = static_cast<__int128>(t.shapes[i] - 1) * t.strides[i];
            (ext < 0 ? lo : hi) += ext;
          }
          const __int128 es = dtype_size(t.dtype);
          const __int128 lim = static_cast<__int128>(1) << 62;  // the tracker adds and subtracts such bounds
          if (lo * es < -lim || (hi + 1) * es > lim) return;   // caller's duty
        }
        rt_submit_aiv_task(0, a);
        if (!ok_shape) {
          fail("rt_submit_aiv_task accepted rank " + std::to_string(t.ndims) + ", dtype " + std::to_string(static_cast<unsigned>(t.dtype)));
        }
        break;
      }
    }
  }

  void expect_message(const std::string& m, const std::string& call) {
    api_fuzz::expect_message(seed_, index_, m, call, kNames);
  }
  void fail(const std::string& what) { api_fuzz::fail_case(seed_, index_, what); }

  Rng rng_;
  uint64_t seed_, index_;
  std::vector<unsigned char> buf_;
  std::string current_;
};

}  // namespace

TEST(ApiFuzz, HandWrittenTensorFields) {
  api_fuzz::run_cases(api_fuzz::env_u64("PTO2_API_FUZZ_CASES", 150),
                      [](uint64_t seed, uint64_t i) { FieldsCase(seed, i).run(); });
}
