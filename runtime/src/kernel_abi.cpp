// kernel_abi.cpp — the functions kernels call (pto2/kernel.h): PTO2KernelContext::fail, the
// group flags of a mixed task (pto2_group_signal / pto2_group_wait), which let its AIC and AIV
// kernels sync, and pto2_note_access, a kernel's report of a sub-region access to the race
// checker.
#include <chrono>
#include <string>
#include <thread>

#include "engine.h"
#include "race_checker.h"

void PTO2KernelContext::fail(const char* message) const {
  auto* in = static_cast<pto2::detail::KernelCtxInternal*>(internal_);
  std::string* err = in ? in->err : nullptr;
  if (err && err->empty()) *err = (message && *message) ? message : "kernel reported failure";
}

// ---------------------------------------------------------------- group flags (mixed tasks)

static const char* side_name(uint32_t side) { return side == 0 ? "AIC" : "AIV"; }

// A flag out of range fails the kernel in every task, also one without a sibling (where the
// calls are no-ops otherwise): the kernel is wrong wherever it runs.
void pto2_group_signal(const PTO2KernelContext* ctx, uint32_t flag) {
  if (!ctx) return;
  if (flag >= pto2::detail::kGroupFlags) {
    ctx->fail(("pto2_group_signal: flag " + std::to_string(flag) + " is out of range 0..7").c_str());
    return;
  }
  auto* in = static_cast<pto2::detail::KernelCtxInternal*>(ctx->internal_);
  if (!in || !in->gflags) return;
  in->gflags->fetch_or(1u << (in->side * pto2::detail::kGroupFlags + flag), std::memory_order_acq_rel);
}

bool pto2_group_wait(const PTO2KernelContext* ctx, uint32_t flag) {
  using pto2::detail::kGroupWaitShift;
  if (!ctx) return true;
  if (flag >= pto2::detail::kGroupFlags) {
    ctx->fail(("pto2_group_wait: flag " + std::to_string(flag) + " is out of range 0..7").c_str());
    return false;
  }
  auto* in = static_cast<pto2::detail::KernelCtxInternal*>(ctx->internal_);
  if (!in || !in->gflags) return true;
  const uint32_t side = in->side, other = 1 - side;
  const uint32_t want = 1u << (other * pto2::detail::kGroupFlags + flag);
  const uint32_t gone = 1u << (pto2::detail::kGroupDoneBit + other);
  // Publish what this side waits for: a sibling waiting for a flag this side has not signalled
  // while this side waits for one of its own would wait forever (each needs the other to go on).
  // Both publish before looking, so at least one of the two sees the other's bits.
  const uint32_t my_shift = kGroupWaitShift + side * 4, other_shift = kGroupWaitShift + other * 4;
  struct Waiting {
    std::atomic<uint32_t>* f;
    uint32_t shift;
    ~Waiting() { f->fetch_and(~(0xfu << shift), std::memory_order_acq_rel); }
  } waiting{in->gflags, my_shift};
  in->gflags->fetch_or((8u | flag) << my_shift, std::memory_order_acq_rel);
  for (uint32_t spins = 0;; ++spins) {
    const uint32_t v = in->gflags->load(std::memory_order_acquire);
    if (v & want) return true;
    if (v & gone) {
      ctx->fail((std::string("pto2_group_wait: the ") + side_name(other) + " kernel of this mixed task returned without signalling flag " +
                 std::to_string(flag)).c_str());
      return false;
    }
    const uint32_t theirs = (v >> other_shift) & 0xfu;  // (a wait that succeeded finds its flag set: no stale match)
    if ((theirs & 8u) && !(v & (1u << (side * pto2::detail::kGroupFlags + (theirs & 7u))))) {
      ctx->fail((std::string("pto2_group_wait: the AIC and AIV kernels of this mixed task wait for each other: this ") +
                 side_name(side) + " kernel waits for flag " + std::to_string(flag) + " of the " + side_name(other) +
                 " kernel, which waits for flag " + std::to_string(theirs & 7u) + " of this one (signal a flag before "
                 "waiting for the sibling's)").c_str());
      return false;
    }
    if (in->engine->failed()) {
      ctx->fail((std::string("pto2_group_wait: the run failed while waiting for flag ") + std::to_string(flag) + " of the " +
                 side_name(other) + " kernel").c_str());
      return false;
    }
    if (spins < 4000) pto2::detail::cpu_relax();
    else if (spins < 20000) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// ---------------------------------------------------------------- race checker

namespace {
void note_box(const PTO2KernelContext* ctx, const Tensor& t, int rank, const int64_t* off, const int64_t* shp,
              bool write, bool atomic) {
  using namespace pto2::detail;
  if (!ctx || !ctx->internal_) return;
  const auto* in = static_cast<const KernelCtxInternal*>(ctx->internal_);
  RaceChecker* rc = in->engine ? in->engine->race() : nullptr;
  const Tensor* args = ctx->tensors;
  if (!rc || !in->raw || !args || &t < args || &t >= args + ctx->tensor_count) return;  // not an argument
  if (rank < 0 || static_cast<uint32_t>(rank) != t.ndims) return;
  Tensor box = t;
  for (int d = 0; d < rank; ++d) {
    if (off[d] < 0 || shp[d] < 0 || off[d] + shp[d] > static_cast<int64_t>(t.shapes[d])) return;  // the op fails
    box.shapes[d] = static_cast<uint32_t>(shp[d]);
    box.offset += off[d] * t.strides[d];
  }
  rc->on_kernel_access(in->raw, static_cast<uint32_t>(&t - args), Region::of(box), write, atomic);
}
}  // namespace

void pto2_note_access(const PTO2KernelContext* ctx, const Tensor& t, int rank, const int64_t* off, const int64_t* shp,
                      bool write) {
  note_box(ctx, t, rank, off, shp, write, false);
}

void pto2_note_atomic_add(const PTO2KernelContext* ctx, const Tensor& t, int rank, const int64_t* off,
                          const int64_t* shp) {
  note_box(ctx, t, rank, off, shp, true, true);
}
