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
