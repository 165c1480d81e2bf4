// A seeded random fuzzer of the public runtime API (the calls hand-written orchestration code
// makes): random sequences of tensor construction, views, allocation, submissions, scopes,
// get/set_tensor_data and runs, with edge values (0, -1, 2^31, 2^32, INT64_MIN/MAX, ranks 0..9,
// invalid dtype enums and kernel ids, dependencies never submitted, unbalanced scopes, options
// out of range). The oracle of every case:
//   - a call either succeeds or throws / fails the run with a non-empty message naming the call;
//   - the kernels (and get/set_tensor_data) never reach an element outside the buffer behind a
//     tensor: each buffer has guard bytes on both sides, kernels check every element address
//     they would touch against the buffer and record a violation instead of touching it;
//   - guard bytes unchanged after each run; no sanitizer report (`make fuzz-runtime-api-asan`);
//   - no hang: a per-case watchdog aborts naming the seed and case.
// PTO2_API_FUZZ_CASES (default 150: the smoke of `make test`) cases from PTO2_API_FUZZ_SEED
// (default 1); PTO2_API_FUZZ_CASE=N runs case N only (reproduction). `make fuzz-runtime-api`
// runs many more (docs/running.md, "Fuzzing").
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "api_fuzz_driver.h"
#include "test_util.h"

namespace {

constexpr size_t kGuard = 64;             // guard bytes before and after every buffer
constexpr unsigned char kGuardByte = 0xA5;
constexpr int64_t kTouchAll = 1 << 14;    // kernels touch every element of views up to this size

// ---- the buffers behind tensors, known to the kernels (a registry keyed by base address)
struct Buffer {
  std::vector<unsigned char> bytes;  // kGuard + size + kGuard
  size_t size = 0;
  unsigned char* base() { return bytes.data() + kGuard; }
};

struct Registry {
  struct Entry {
    size_t bytes;
    bool runtime;   // runtime-allocated: forgotten when its scope (or the run) ends
    size_t depth;   // the scope depth it was allocated at
  };
  std::mutex mu;
  std::map<const void*, Entry> entries;  // base -> size (external buffers and runtime allocations)
  std::vector<std::string> violations;

  void add(const void* base, size_t bytes, bool runtime = false, size_t depth = 0) {
    std::lock_guard<std::mutex> lk(mu);
    entries[base] = Entry{bytes, runtime, depth};
  }
  // A runtime tensor is registered once its submission returned: its own task may have run
  // before (unknown then: not checked). Its memory is reused after its scope: forget it then.
  void forget_runtime(size_t deeper_than) {
    std::lock_guard<std::mutex> lk(mu);
    for (auto it = entries.begin(); it != entries.end();)
      it = it->second.runtime && it->second.depth > deeper_than ? entries.erase(it) : std::next(it);
  }
  bool size_of(const void* base, size_t* bytes) {
    std::lock_guard<std::mutex> lk(mu);
    auto it = entries.find(base);
    if (it == entries.end()) return false;
    *bytes = it->second.bytes;
    return true;
  }
  void violation(const std::string& what) {
    std::lock_guard<std::mutex> lk(mu);
    if (violations.size() < 8) violations.push_back(what);
  }
};
Registry* g_reg = nullptr;

std::string describe(const Tensor& t) {
  std::ostringstream os;
  os << "tensor rank " << t.ndims << " dtype " << static_cast<int>(t.dtype) << " offset " << t.offset << " shapes [";
  for (uint32_t i = 0; i < t.ndims && i < PTO2_MAX_DIMS; ++i) os << (i ? "," : "") << t.shapes[i];
  os << "] strides [";
  for (uint32_t i = 0; i < t.ndims && i < PTO2_MAX_DIMS; ++i) os << (i ? "," : "") << t.strides[i];
  os << "]";
  return os.str();
}

// The byte range [lo, hi) the view spans (exact, in 128 bits), or false for an empty view.
bool view_bytes(const Tensor& t, __int128* lo, __int128* hi) {
  const __int128 es = static_cast<__int128>(dtype_size(t.dtype));
  __int128 a = static_cast<__int128>(t.offset), b = a;
  for (uint32_t i = 0; i < t.ndims && i < PTO2_MAX_DIMS; ++i) {
    if (t.shapes[i] == 0) return false;
    const __int128 d = static_cast<__int128>(t.shapes[i] - 1) * t.strides[i];
    if (d < 0) a += d; else b += d;
  }
  *lo = a * es;
  *hi = (b + 1) * es;
  return true;
}

// Checks that view `t` lies inside its registered buffer (tensors over unregistered memory —
// the fuzzer's deliberately fake huge external tensors — are not touched). Then, when small,
// touches (reads) every element. `where` names the caller in a violation.
void check_and_touch(const Tensor& t, const std::string& where) {
  if (!t.data || t.ndims > PTO2_MAX_DIMS) return;
  size_t size = 0;
  if (!g_reg->size_of(t.data, &size)) return;
  __int128 lo = 0, hi = 0;
  if (!view_bytes(t, &lo, &hi)) return;
  if (lo < 0 || hi > static_cast<__int128>(size)) {
    g_reg->violation(where + ": " + describe(t) + " reaches outside its buffer of " + std::to_string(size) + " bytes");
    return;
  }
  __int128 n = 1;
  for (uint32_t i = 0; i < t.ndims; ++i) n *= t.shapes[i];
  if (n > kTouchAll) return;
  const size_t es = dtype_size(t.dtype);
  unsigned char* base = static_cast<unsigned char*>(t.data);
  for_each_element(t, [&](int64_t off) {
    unsigned char* p = base + off * static_cast<int64_t>(es);
    // A read is enough for ASan to check the address. No write back: the kernel does not know
    // which of its tensors are inputs, and writing an input races with the task's fellow
    // readers (a predicate, get_tensor_data, another reader), which nothing orders. Relaxed
    // atomic: tasks the fuzzer leaves unordered (MANUAL scopes without dependencies) may read
    // a buffer another task writes, the test program's race, not the runtime's.
    (void)__atomic_load_n(p, __ATOMIC_RELAXED);
  });
}

void k_touch(PTO2KernelContext* ctx) {
  if (ctx->block_idx != 0) return;  // every block sees the same tensors
  for (uint32_t i = 0; i < ctx->tensor_count; ++i) check_and_touch(ctx->tensors[i], "kernel touch");
}
void k_nop(PTO2KernelContext*) {}
void k_fail(PTO2KernelContext* ctx) { ctx->fail("fuzz kernel failed on purpose"); }
void k_throw(PTO2KernelContext*) { throw std::runtime_error("fuzz kernel threw on purpose"); }

// ---- random edge values
struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t seed) : g(seed) {}
  uint64_t u64() { return g(); }
  uint32_t below(uint32_t n) { return n ? static_cast<uint32_t>(g() % n) : 0; }
  bool chance(uint32_t one_in) { return below(one_in) == 0; }
  int64_t edge_i64() {
    static const int64_t v[] = {0, 1, -1, 2, 3, 7, 8, 16, INT32_MAX, int64_t(1) << 31, int64_t(1) << 32,
                                (int64_t(1) << 32) - 1, INT64_MAX, INT64_MIN, -2, int64_t(1) << 62};
    return chance(3) ? static_cast<int64_t>(below(10)) : v[below(sizeof v / sizeof v[0])];
  }
  uint32_t edge_u32() {
    static const uint32_t v[] = {0, 1, 2, 3, 4, 7, 8, 15, 16, 0x7fffffffu, 0x80000000u, 0xffffffffu, 0xfffffffeu, 1u << 16};
    return chance(2) ? below(9) : v[below(sizeof v / sizeof v[0])];
  }
  // A small extent mostly, an edge value sometimes.
  uint32_t extent() { return chance(12) ? edge_u32() : below(6); }
  DataType dtype() {
    if (chance(25)) {
      static const uint8_t bad[] = {12, 13, 100, 255};
      return static_cast<DataType>(bad[below(4)]);
    }
    return static_cast<DataType>(below(12));
  }
  uint32_t rank() { return chance(15) ? 8 + below(2) : below(5); }
};

// Every message the fuzzer sees must be non-empty and name an API call or the failing task.
const char* const kNames[] = {"Tensor::view", "Tensor::transpose", "Tensor::reshape", "make_tensor_external",
                              "TensorCreateInfo", "alloc_tensors", "allocation", "rt_submit_aic_task",
                              "rt_submit_aiv_task", "rt_submit_task", "rt_submit_dummy_task", "get_tensor_data",
                              "set_tensor_data", "PTO2_SCOPE", "CoreTaskPredicate", "pto2_view_at", "slice",
                              "TaskOutputTensors::get_ref", "RuntimeOptions", "register_kernel", "task #",
                              "orchestration entry threw", "out of memory", "memory limit", "runtime unusable"};
// One case: random options, a runtime, 1..3 runs of random API sequences.
class Case {
 public:
  Case(uint64_t seed, uint64_t index) : rng_(seed * 1000003u + index), seed_(seed), index_(index) {}

  void run() {
    Registry reg;
    g_reg = &reg;
    pto2::RuntimeOptions opt = random_options();
    std::unique_ptr<pto2::Runtime> rt;
    try {
      rt.reset(new pto2::Runtime(opt));
    } catch (const std::exception& e) {
      expect_message(e.what(), "Runtime(options)");
      g_reg = nullptr;
      return;
    }
    register_kernels(*rt);
    const uint32_t runs = 1 + rng_.below(3);
    for (uint32_t r = 0; r < runs; ++r) {
      ops_ = 1 + rng_.below(rng_.chance(10) ? 200 : 30);
      pto2::RunResult res = rt->run([&](const ChipStorageTaskArgs&) { entry(); });
      if (!res.ok()) expect_message(res.message, "run " + std::to_string(r));
      open_scopes_.clear();  // unbalanced scopes: their guards end after the run
      reg.forget_runtime(0);
      check_guards();
      outside_run_reads();
    }
    for (const std::string& v : reg.violations) fail(v);
    rt.reset();
    g_reg = nullptr;
  }

 private:
  pto2::RuntimeOptions random_options() {
    pto2::RuntimeOptions o;
    o.aic_workers(rng_.below(3)).aiv_workers(rng_.chance(8) ? 0 : 1 + rng_.below(2));
    if (rng_.chance(4)) o.aic_cores(rng_.chance(4) ? rng_.edge_u32() : rng_.below(8));
    if (rng_.chance(4)) o.aiv_cores(rng_.chance(4) ? rng_.edge_u32() : rng_.below(8));
    if (rng_.chance(6)) o.clusters(rng_.edge_u32());
    if (rng_.chance(4)) o.task_ring_size(rng_.chance(3) ? rng_.edge_u32() : 1 + rng_.below(8));
    // The default limit (4 GiB) would let edge shapes allocate (and fill) gigabytes: 64 MiB at most.
    o.memory_limit(size_t(1) << 26);
    if (rng_.chance(6)) o.memory_limit(rng_.chance(2) ? std::min<size_t>(static_cast<size_t>(rng_.edge_i64()), size_t(1) << 26) : rng_.below(4096));
    if (rng_.chance(6)) o.spin_us(rng_.chance(2) ? 0 : rng_.edge_u32() % 100000);
    if (rng_.chance(6)) o.help_threshold(rng_.edge_u32());
    if (rng_.chance(6)) o.inline_below_ns(rng_.edge_u32());
    if (rng_.chance(6)) o.orchestrator_helps(false);
    if (rng_.chance(8)) o.trace(true);
    if (rng_.chance(8)) o.race_check(static_cast<pto2::RaceCheck>(rng_.below(3)));
    o.deadlock_timeout_ms(2000);
    // Huge gang-helper counts start thousands of threads: in range, but only rarely.
    if ((o.aic_cores_ > 64 || o.aiv_cores_ > 64) && !rng_.chance(50)) o.aic_cores(4).aiv_cores(4);
    return o;
  }

  void register_kernels(pto2::Runtime& rt) {
    const pto2::CoreType aic = pto2::CoreType::AIC, aiv = pto2::CoreType::AIV;
    rt.register_kernel(0, "touch", aiv, &k_touch).register_kernel(1, "touch_c", aic, &k_touch);
    rt.register_kernel(2, "nop", aiv, &k_nop).register_kernel(3, "fail", aiv, &k_fail);
    rt.register_kernel(4, "throw", aiv, &k_throw);
    // Out of range ids and a null function: refused with a message.
    const int32_t bad[] = {-1, INT32_MIN, 1000001, INT32_MAX};
    try {
      rt.register_kernel(bad[rng_.below(4)], "bad", aiv, &k_nop);
      fail("register_kernel accepted an out-of-range id");
    } catch (const std::exception& e) {
      expect_message(e.what(), "register_kernel");
    }
    if (rng_.chance(4)) {
      try {
        rt.register_kernel(5, "null", aiv, nullptr);
        fail("register_kernel accepted a null function");
      } catch (const std::exception& e) {
        expect_message(e.what(), "register_kernel");
      }
    }
  }

  // ---- tensors the entry has made (a pool the operations draw from)
  Tensor* pick() { return pool_.empty() ? nullptr : &pool_[rng_.below(static_cast<uint32_t>(pool_.size()))]; }

  void make_external() {
    const uint32_t rank = rng_.rank();
    uint32_t sh[10] = {};
    __int128 n = 1;
    for (uint32_t i = 0; i < rank && i < 10; ++i) {
      sh[i] = rng_.below(5);
      n *= sh[i];
    }
    DataType dt = rng_.dtype();
    if (rank > PTO2_MAX_DIMS) {
      unsigned char dummy[8];
      try {
        make_tensor_external(dummy, sh, rank, dt);
        fail("make_tensor_external accepted rank " + std::to_string(rank));
      } catch (const std::exception& e) {
        expect_message(e.what(), "make_tensor_external");
      }
      return;
    }
    buffers_.emplace_back(new Buffer);
    Buffer& b = *buffers_.back();
    b.size = static_cast<size_t>(n) * dtype_size(dt);
    b.bytes.assign(b.size + 2 * kGuard, kGuardByte);
    g_reg->add(b.base(), b.size);
    add_pool(make_tensor_external(b.base(), sh, rank, dt));
  }

  // Huge shapes over memory the kernels never touch (not registered): the runtime's own
  // arithmetic on them (strides, regions, tracking) must not overflow or crash.
  void make_fake_external() {
    const uint32_t rank = 1 + rng_.below(PTO2_MAX_DIMS);
    uint32_t sh[PTO2_MAX_DIMS];
    for (uint32_t i = 0; i < rank; ++i) sh[i] = rng_.chance(2) ? rng_.edge_u32() : rng_.below(4);
    static unsigned char fake[64];
    try {
      add_pool(make_tensor_external(fake + rng_.below(8), sh, rank, rng_.dtype()));
    } catch (const std::exception& e) {
      expect_message(e.what(), "make_tensor_external");
    }
  }

  // The pool remembers the scope depth each tensor was made at: a runtime-allocated tensor
  // (and its views) leaves the pool when its scope ends (its memory is then reused).
  void add_pool(const Tensor& t) {
    if (pool_.size() < 64) {
      pool_.push_back(t);
      depth_.push_back(open_scopes_.size());
    } else {
      const uint32_t i = rng_.below(64);
      pool_[i] = t;
      depth_[i] = open_scopes_.size();
    }
  }
  void drop_scope_tensors() {
    g_reg->forget_runtime(open_scopes_.size() + 1);
    for (size_t i = pool_.size(); i-- > 0;) {
      if (pool_[i].storage && depth_[i] > open_scopes_.size()) {
        pool_.erase(pool_.begin() + static_cast<std::ptrdiff_t>(i));
        depth_.erase(depth_.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
  }

  void make_view() {
    Tensor* src = pick();
    if (!src) return;
    uint32_t sh[PTO2_MAX_DIMS], off[PTO2_MAX_DIMS];
    for (uint32_t i = 0; i < src->ndims; ++i) {
      const uint32_t ext = src->shapes[i];
      switch (rng_.below(4)) {
        case 0: sh[i] = rng_.extent(); off[i] = rng_.extent(); break;
        case 1: off[i] = ext ? rng_.below(ext) : 0; sh[i] = ext - off[i]; break;
        case 2: off[i] = rng_.edge_u32(); sh[i] = rng_.edge_u32(); break;
        default: off[i] = ext; sh[i] = rng_.below(2); break;
      }
    }
    try {
      add_pool(src->view(sh, off));
    } catch (const std::exception& e) {
      expect_message(e.what(), "Tensor::view");
    }
  }

  void make_view_at() {
    Tensor* src = pick();
    if (!src) return;
    const uint32_t nd = rng_.chance(8) ? rng_.below(10) : src->ndims;
    int64_t sh[10], off[10];
    for (uint32_t i = 0; i < 10; ++i) {
      const int64_t ext = i < PTO2_MAX_DIMS ? src->shapes[i] : 0;
      sh[i] = rng_.chance(3) ? rng_.edge_i64() : ext;
      off[i] = rng_.chance(3) ? rng_.edge_i64() : 0;
    }
    try {
      add_pool(pto2_view_at(*src, nd, sh, off, "v", "fuzz.py", 7));
    } catch (const std::exception& e) {
      expect_message(e.what(), "pto2_view_at");
    }
  }

  void make_reshape_or_transpose() {
    Tensor* src = pick();
    if (!src) return;
    try {
      if (rng_.chance(2)) {
        add_pool(src->transpose(rng_.chance(4) ? rng_.edge_u32() : rng_.below(src->ndims + 1),
                                rng_.chance(4) ? rng_.edge_u32() : rng_.below(src->ndims + 1)));
      } else {
        uint32_t sh[PTO2_MAX_DIMS + 2];
        const uint32_t nd = rng_.rank();
        int64_t n = src->numel();
        for (uint32_t i = 0; i < nd; ++i) sh[i] = 1;
        if (nd && !rng_.chance(5)) sh[0] = n >= 0 && n <= UINT32_MAX ? static_cast<uint32_t>(n) : 1;
        else for (uint32_t i = 0; i < nd; ++i) sh[i] = rng_.extent();
        add_pool(src->reshape(sh, nd));
      }
    } catch (const std::exception& e) {
      expect_message(e.what(), "Tensor::");
    }
  }

  TensorCreateInfo* random_info(std::vector<std::unique_ptr<TensorCreateInfo>>& keep) {
    const uint32_t rank = rng_.rank();
    uint32_t sh[10];
    for (uint32_t i = 0; i < 10; ++i) sh[i] = rng_.chance(10) ? rng_.edge_u32() : rng_.below(5);
    try {
      keep.emplace_back(new TensorCreateInfo(sh, rank, rng_.dtype(), rng_.chance(4)));
    } catch (const std::exception& e) {
      expect_message(e.what(), "TensorCreateInfo");
      return nullptr;
    }
    if (rng_.chance(3)) keep.back()->set_initial_value(static_cast<double>(rng_.edge_i64()));
    return keep.back().get();
  }

  // Registers runtime-allocated tensors with their byte sizes (the kernels check against it).
  void note_runtime_tensor(const Tensor& t) {
    if (!t.data) return;
    int64_t n = 1;
    for (uint32_t i = 0; i < t.ndims; ++i) n *= t.shapes[i];
    g_reg->add(t.data, static_cast<size_t>(n) * dtype_size(t.dtype), true, open_scopes_.size() + 1);
    if (std::getenv("PTO2_API_FUZZ_VERBOSE")) std::fprintf(stderr, "  %s: %p %s depth %zu\n", current_.c_str(), t.data, describe(t).c_str(), open_scopes_.size());
    add_pool(t);
  }

  void alloc() {
    std::vector<std::unique_ptr<TensorCreateInfo>> keep;
    std::vector<const TensorCreateInfo*> infos;
    const uint32_t n = rng_.below(4);
    for (uint32_t i = 0; i < n; ++i)
      if (TensorCreateInfo* ci = random_info(keep)) infos.push_back(ci);
    infos.push_back(nullptr);
    current_ = "alloc_tensors";
    TaskOutputTensors out = pto2_alloc_tensors_impl(infos.data(), static_cast<uint32_t>(infos.size() - 1));
    for (uint32_t i = 0; i < out.size(); ++i) note_runtime_tensor(out.get_ref(i));
    try {
      out.get_ref(out.size() + rng_.below(3));
      fail("TaskOutputTensors::get_ref accepted an index past the end");
    } catch (const std::exception& e) {
      expect_message(e.what(), "get_ref");
    }
  }

  void submit() {
    Arg a;
    bool refused = false;  // the submission must fail the run (it may not return)
    std::vector<std::unique_ptr<TensorCreateInfo>> keep;
    const uint32_t nt = rng_.chance(10) ? rng_.below(40) : rng_.below(5);
    for (uint32_t i = 0; i < nt; ++i) {
      Tensor* t = pick();
      const uint32_t d = rng_.below(6);
      if (d == 5 || !t) {
        if (TensorCreateInfo* ci = random_info(keep)) a.add_output(*ci);
        continue;
      }
      if (d == 0) a.add_input(*t);
      else if (d == 1) a.add_output(*t);
      else if (d == 2) a.add_inout(*t);
      else a.add_no_dep(*t);
    }
    const uint32_t ns = rng_.chance(10) ? rng_.below(64) : rng_.below(4);
    for (uint32_t i = 0; i < ns; ++i) a.add_scalar(rng_.u64());
    const uint32_t nd = rng_.chance(3) ? rng_.below(4) : 0;
    for (uint32_t i = 0; i < nd; ++i) {
      PTO2TaskId id;
      switch (rng_.below(5)) {
        case 0: id = PTO2TaskId::invalid(); break;
        case 1: id.raw = rng_.edge_i64(); break;
        case 2: id.raw = last_id_.raw + 1 + rng_.below(3); break;
        default: id = ids_.empty() ? PTO2TaskId::invalid() : ids_[rng_.below(static_cast<uint32_t>(ids_.size()))];
      }
      a.add_dependency(id);
      // Surely never submitted (an id just past the last returned one may be an elided dummy's).
      refused = refused || !id.is_valid() || id.raw > last_id_.raw + 1000;
    }
    if (rng_.chance(6)) {
      int64_t bn = rng_.chance(2) ? rng_.edge_i64() : rng_.below(5);
      // Accepted counts above 64 (up to 2^31 - 1) only make a long run: refused ones are kept.
      if (bn > 64 && bn <= INT32_MAX) bn = 64;
      a.launch_spec.set_block_num(bn);
      a.launch_spec.set_require_sync_start(rng_.chance(2));
    }
    if (rng_.chance(10)) a.set_task_timing_slot(rng_.chance(2) ? rng_.edge_u32() : rng_.below(16));
    if (rng_.chance(12)) {
      size_t bytes = 0;
      Tensor* p = pick();
      // Only over real memory: a fake huge tensor's in-range element is past its 64 bytes.
      if (p && p->data && !g_reg->size_of(p->data, &bytes)) p = nullptr;
      if (p) {
        try {
          const int64_t i0 = rng_.chance(3) ? rng_.edge_i64() : 0;
          if (p->ndims == 1) a.set_predicate(CoreTaskPredicate(*p, {i0}, static_cast<PredicateOp>(rng_.below(6)), 0));
          else if (p->ndims == 0) a.set_predicate(CoreTaskPredicate(*p, {}, PredicateOp::EQ, 0));
          else a.set_predicate(CoreTaskPredicate(*p, {i0}, PredicateOp::NE, 1));
        } catch (const std::exception& e) {
          expect_message(e.what(), "CoreTaskPredicate");
        }
      }
    }
    if (rng_.chance(4)) a.set_source_site("fuzz.py", 1 + static_cast<int32_t>(rng_.below(100)));
    // The kernel: mostly the touching one; nop, failing, throwing, unknown ids sometimes.
    int32_t k = rng_.chance(8) ? 2 : 0;
    if (rng_.chance(40)) k = 3 + rng_.below(2);
    if (rng_.chance(30)) {
      const int32_t bad[] = {-1, 5, 999, INT32_MIN, INT32_MAX, 1000001};
      k = bad[rng_.below(6)];
    }
    const bool unknown_kernel = k < 0 || k > 4;
    TaskOutputTensors out;
    switch (rng_.below(8)) {
      case 0:
        current_ = "rt_submit_aic_task";
        refused = refused || unknown_kernel;
        out = rt_submit_aic_task(k == 0 ? 1 : k, a);
        break;
      case 1: {
        current_ = "rt_submit_task";
        MixedKernels m{rng_.chance(3) ? INVALID_KERNEL_ID : 1, rng_.chance(4) ? INVALID_KERNEL_ID : k,
                       rng_.chance(20) ? 7 : INVALID_KERNEL_ID};
        refused = refused || m.third_kernel_id != INVALID_KERNEL_ID ||
                  (m.aic_kernel_id == INVALID_KERNEL_ID && m.aiv_kernel_id == INVALID_KERNEL_ID) ||
                  (m.aiv_kernel_id != INVALID_KERNEL_ID && unknown_kernel);
        out = rt_submit_task(m, a);
        break;
      }
      case 2: current_ = "rt_submit_dummy_task"; out = rt_submit_dummy_task(a); break;
      default:
        current_ = "rt_submit_aiv_task";
        refused = refused || unknown_kernel;
        out = rt_submit_aiv_task(k, a);
        break;
    }
    if (refused) fail(current_ + " accepted an unknown kernel or a dependency never submitted");
    if (out.task_id().is_valid()) {
      ids_.push_back(out.task_id());
      if (out.task_id().raw > last_id_.raw) last_id_ = out.task_id();
    }
    for (uint32_t i = 0; i < out.size(); ++i) note_runtime_tensor(out.get_ref(i));
  }

  void tensor_data() {
    Tensor* t = pick();
    if (!t) return;
    int64_t idx[10];
    const uint32_t nd = rng_.chance(10) ? rng_.below(10) : t->ndims;
    for (uint32_t i = 0; i < 10; ++i) {
      const uint32_t ext = i < PTO2_MAX_DIMS ? t->shapes[i] : 0;
      idx[i] = rng_.chance(4) ? rng_.edge_i64() : (ext ? rng_.below(ext) : 0);
    }
    const bool write = rng_.chance(2);
    current_ = write ? "set_tensor_data" : "get_tensor_data";
    data_access(*t, nd, idx, write, current_);
  }

  // get/set_tensor_data at `idx`; checks (before) that an access the API lets through is inside
  // the tensor's buffer, by watching for the call to return.
  void data_access(const Tensor& t, uint32_t nd, const int64_t* idx, bool write, const std::string& api) {
    bool in_range = nd == t.ndims;
    for (uint32_t i = 0; in_range && i < nd; ++i) in_range = idx[i] >= 0 && idx[i] < static_cast<int64_t>(t.shapes[i]);
    // Only registered memory is accessed: reading a fake tensor reads arbitrary bytes.
    size_t size = 0;
    const bool known = t.data && g_reg->size_of(t.data, &size);
    if (!known && !in_range) return;  // nothing to check it against
    if (!known && t.data) return;
    if (write) set_tensor_data<double>(t, nd, idx, 1.0, rng_.chance(2) ? "fuzz.py" : nullptr, 3);
    else (void)get_tensor_data<double>(t, nd, idx, rng_.chance(2) ? "fuzz.py" : nullptr, 3);
    if (!in_range && t.data) fail(api + " accepted indices out of range of " + describe(t));
  }

  void scope() {
    if (!open_scopes_.empty() && rng_.chance(2)) {
      open_scopes_.pop_back();
      if (std::getenv("PTO2_API_FUZZ_VERBOSE")) std::fprintf(stderr, "  scope end -> %zu\n", open_scopes_.size());
      drop_scope_tensors();
      return;
    }
    current_ = "PTO2_SCOPE";
    open_scopes_.emplace_back(new PTO2ScopeGuard(rng_.chance(3) ? PTO2ScopeMode::MANUAL : PTO2ScopeMode::AUTO));
  }

  void entry() {
    pool_.clear();
    depth_.clear();
    ids_.clear();
    for (uint32_t i = 0; i < ops_; ++i) {
      current_ = "";
      try {
        switch (rng_.below(14)) {
          case 0: case 1: make_external(); break;
          case 2: make_fake_external(); break;
          case 3: case 4: make_view(); break;
          case 5: make_view_at(); break;
          case 6: make_reshape_or_transpose(); break;
          case 7: alloc(); break;
          case 8: case 9: case 10: submit(); break;
          case 11: tensor_data(); break;
          case 12: scope(); break;
          default:
            if (rng_.chance(30)) throw std::runtime_error("fuzz entry throws on purpose");
            submit();
            break;
        }
      } catch (const std::exception& e) {
        // An API error the orchestration may catch: a message naming the call.
        if (std::string(e.what()) != "fuzz entry throws on purpose") expect_message(e.what(), current_);
        if (std::string(e.what()).find("fuzz entry") != std::string::npos) throw;
      }
      // RunAborted (internal) propagates: the run reports the failure.
    }
  }

  // Guard bytes of every external buffer are intact (no write outside a tensor).
  void check_guards() {
    for (auto& b : buffers_) {
      for (size_t i = 0; i < kGuard; ++i) {
        if (b->bytes[i] != kGuardByte || b->bytes[kGuard + b->size + i] != kGuardByte) {
          fail("a guard byte of a " + std::to_string(b->size) + "-byte external buffer was overwritten");
          return;
        }
      }
    }
  }

  // get/set_tensor_data outside a run ("returns immediately") on external tensors still alive.
  void outside_run_reads() {
    for (uint32_t k = 0; k < 3 && !pool_.empty(); ++k) {
      Tensor& t = pool_[rng_.below(static_cast<uint32_t>(pool_.size()))];
      if (t.storage) continue;  // runtime storage is gone after the run
      int64_t idx[10];
      for (uint32_t i = 0; i < 10; ++i) idx[i] = rng_.chance(3) ? rng_.edge_i64() : 0;
      const bool write = rng_.chance(2);
      try {
        data_access(t, rng_.chance(6) ? rng_.below(10) : t.ndims, idx, write, "outside a run");
      } catch (const std::exception& e) {
        expect_message(e.what(), write ? "set_tensor_data" : "get_tensor_data");
      }
    }
  }

  void expect_message(const std::string& m, const std::string& call) {
    api_fuzz::expect_message(seed_, index_, m, call, kNames);
  }
  void fail(const std::string& what) { api_fuzz::fail_case(seed_, index_, what); }

  Rng rng_;
  uint64_t seed_, index_;
  uint32_t ops_ = 0;
  std::vector<Tensor> pool_;
  std::vector<size_t> depth_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::vector<std::unique_ptr<PTO2ScopeGuard>> open_scopes_;
  std::vector<PTO2TaskId> ids_;
  PTO2TaskId last_id_;
  std::string current_;
};

}  // namespace

TEST(ApiFuzz, RandomCallSequences) {
  api_fuzz::run_cases(api_fuzz::env_u64("PTO2_API_FUZZ_CASES", 150),
                      [](uint64_t seed, uint64_t i) { Case(seed, i).run(); });
}
