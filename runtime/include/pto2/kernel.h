// pto2/kernel.h — the ABI of kernels run by the CPU workers.
//
//     void kernel_add(PTO2KernelContext* ctx) {
//       const float* a = ctx->tensors[0].ptr<float>(); ...
//       if (bad) { ctx->fail("bad input"); return; }
//     }
//
// A kernel runs once per block (block_idx in 0..block_num-1). It may report an error with
// ctx->fail(msg) (then return) or throw a std::exception: the run stops with the message,
// naming the task and kernel.
#pragma once

#include <atomic>
#include <cstdint>

#include "pto2/types.h"

struct PTO2KernelContext {
  const Tensor* tensors;
  uint32_t tensor_count;
  const uint64_t* scalars;
  uint32_t scalar_count;
  int32_t block_idx;
  int32_t block_num;
  /// Reports an error: the run stops with this message naming the task/kernel. Returns.
  void fail(const char* message) const;

  void* internal_;  ///< runtime use
};

typedef void (*PTO2KernelFn)(PTO2KernelContext* ctx);

// Race checker (RuntimeOptions::race_check): kernels report the boxes they load and store, so
// that the checker compares what a kernel touched rather than its whole argument (a kernel
// given a whole tensor and an offset writes one stripe). Generated kernels call it from
// pypto_kernel::load / store; hand-written kernels may call it too (else their arguments count
// as touched entirely). `t` must be one of ctx->tensors; the box is [off, off + shp) per axis.
//
//     if (pto2_race_checking()) pto2_note_access(ctx, ctx->tensors[1], 2, off, shp, true);
namespace pto2 {
extern std::atomic<int> race_checking_runs;  ///< runs with the race checker on, process-wide
}
inline bool pto2_race_checking() { return pto2::race_checking_runs.load(std::memory_order_relaxed) != 0; }
void pto2_note_access(const PTO2KernelContext* ctx, const Tensor& t, int rank, const int64_t* off, const int64_t* shp,
                      bool write);
// An atomic read-modify-write add into the box (pl.store(..., atomic=pl.AtomicType.Add)): two
// atomic adds commute, so the checker does not report them against each other; against any
// other read or write of the box they conflict as a write does.
//
//     if (pto2_race_checking()) pto2_note_atomic_add(ctx, ctx->tensors[1], 2, off, shp);
void pto2_note_atomic_add(const PTO2KernelContext* ctx, const Tensor& t, int rank, const int64_t* off,
                          const int64_t* shp);

// Group synchronisation between the two kernels of one mixed task (MixedKernels: an AIC and
// an AIV kernel gang-started together) — the CPU equivalent of the on-chip cross-core flags:
//
//     // AIC kernel: produce c, then tell the AIV kernel
//     ...store c...; pto2_group_signal(ctx, 0);
//     // AIV kernel: wait until the AIC kernel produced c, then read it
//     if (!pto2_group_wait(ctx, 0)) return;   ...load c...
//
// Each mixed-task instance (per block: AIC block i pairs with AIV block i) has flags 0..7 per
// side, all clear when the task starts. pto2_group_signal sets flag `flag` of the calling
// kernel's side (with release semantics: writes before it are visible to the waiter).
// pto2_group_wait blocks (spins briefly, then yields, then sleeps) until the *sibling* kernel
// of the same task signalled `flag`, and returns true (acquire). It returns false — after
// reporting the failure through ctx->fail — when the sibling returned without signalling it,
// or the run failed (e.g. the sibling failed); the kernel should then return. For a task that
// is not a mixed task (a kernel submitted alone) both are no-ops and wait returns true.
// A flag outside 0..7 fails the kernel.
void pto2_group_signal(const PTO2KernelContext* ctx, uint32_t flag);
bool pto2_group_wait(const PTO2KernelContext* ctx, uint32_t flag);
