// Reference matrix-multiply family beyond matmul / matmul_acc (spec/reference_ops.md §11).
//
//   tile.matmul_bias(a[M, K], b[K, N], bias[1, N])  -> Tile[[M, N], a.dtype, Acc]   (a @ b + bias row)
//   tile.gemv(a, b) / gemv_acc(acc, a, b) / gemv_bias(a, b, bias)  typed like matmul / matmul_acc / matmul_bias
//   tile.batch_matmul(a[B, M, K], b[B, K, N])      -> Tile[[B, M, N], FP32, Acc]   (batch dims broadcast)
//   tile.batch_matmul_acc(acc[B, M, N], a, b)      -> type of acc
#include <algorithm>

#include "../describe.h"
#include "pypto/ir/error.h"
#include "pypto/ir/kernel_ops.h"
#include "tile_op_helpers.h"

namespace pypto::ir::ops {

using namespace tile_helpers;
using detail::describe_shape;

namespace {

std::vector<ExprPtr> mn_shape(const std::string& op, const TileType* a, const TileType* b, const Span& span) {
  PYPTO_USER_CHECK(a->dtype == b->dtype, span,
                   op << ": dtype mismatch: lhs is " << to_string(a->dtype) << ", rhs is " << to_string(b->dtype),
                   "convert one operand with pl.cast(tile, dtype)");
  const size_t ra = a->shape.size(), rb = b->shape.size();
  PYPTO_USER_CHECK(dim_equal(a->shape[ra - 1], b->shape[rb - 2]), span,
                   op << ": inner dimensions differ: lhs is " << describe_shape(a->shape) << ", rhs is "
                      << describe_shape(b->shape),
                   "lhs must be [..., M, K] and rhs [..., K, N]");
  return {a->shape[ra - 2], b->shape[rb - 1]};
}

TypePtr bias_result(const std::string& op, const Args& args, const Span& span) {
  auto* a = expect_2d(op, "lhs", args[0], span);
  auto* b = expect_2d(op, "rhs", args[1], span);
  auto* bias = expect_2d(op, "bias", args[2], span);
  auto mn = mn_shape(op, a, b, span);
  auto* one = bias->shape[0]->as<ConstInt>();
  PYPTO_USER_CHECK(one && one->value == 1 && dim_equal(bias->shape[1], mn[1]), span,
                   op << ": requires bias to have shape [1, N] = [1, " << detail::describe(mn[1]) << "], got "
                      << describe_shape(bias->shape), "");
  PYPTO_USER_CHECK(bias->dtype == a->dtype, span,
                   op << ": dtype mismatch: bias is " << to_string(bias->dtype) << ", lhs is " << to_string(a->dtype),
                   "convert the bias with pl.cast(tile, dtype)");
  return TileType::make(std::move(mn), a->dtype, MemorySpace::Acc);
}

TypePtr matmul_acc_result(const std::string& op, const Args& args, const Span& span) {
  auto* acc = expect_2d(op, "acc", args[0], span);
  auto* a = expect_2d(op, "lhs", args[1], span);
  auto* b = expect_2d(op, "rhs", args[2], span);
  auto mn = mn_shape(op, a, b, span);
  PYPTO_USER_CHECK(shape_equal(mn, acc->shape), span,
                   op << ": acc shape " << describe_shape(acc->shape) << " does not match lhs @ rhs shape "
                      << describe_shape(mn), "");
  PYPTO_USER_CHECK(acc->dtype == matmul_dtype(a->dtype), span,
                   op << ": acc must be " << to_string(matmul_dtype(a->dtype)) << ", got " << to_string(acc->dtype), "");
  return args[0]->type;
}

// [..., M, K] x [..., K, N]: the batch dims (all but the last two) broadcast as NumPy's do
// (reference_ops.md §1.4): aligned from the right, a missing dim takes the other operand's, and two
// dims agree when equal or when one is the constant 1; rank <= 4.
std::vector<ExprPtr> batch_shape(const std::string& op, const TileType* a, const TileType* b, const Span& span) {
  PYPTO_USER_CHECK(a->shape.size() >= 2 && b->shape.size() >= 2 && a->shape.size() <= 4 && b->shape.size() <= 4,
                   span, op << ": operands must have rank 2 to 4, got " << describe_shape(a->shape) << " and "
                            << describe_shape(b->shape), "");
  auto mn = mn_shape(op, a, b, span);
  std::vector<ExprPtr> ba(a->shape.begin(), a->shape.end() - 2), bb(b->shape.begin(), b->shape.end() - 2);
  auto is_one = [](const ExprPtr& d) {
    auto* c = d->as<ConstInt>();
    return c && c->value == 1;
  };
  const size_t rank = std::max(ba.size(), bb.size());
  std::vector<ExprPtr> batch;
  for (size_t i = 0; i < rank; ++i) {
    const ExprPtr x = i + ba.size() >= rank ? ba[i + ba.size() - rank] : nullptr;
    const ExprPtr y = i + bb.size() >= rank ? bb[i + bb.size() - rank] : nullptr;
    if (!x || !y) {
      batch.push_back(x ? x : y);
    } else if (dim_equal(x, y) || is_one(y)) {
      batch.push_back(x);
    } else if (is_one(x)) {
      batch.push_back(y);
    } else {
      throw UserError(op + ": batch dims " + describe_shape(ba) + " and " + describe_shape(bb) + " do not broadcast",
                      span, "each batch dim must be equal on both sides, or 1 on one of them (NumPy broadcasting)");
    }
  }
  batch.push_back(mn[0]);
  batch.push_back(mn[1]);
  return batch;
}

}  // namespace

void register_tile_matmul_ops(OpRegistry& r) {
  add_op(r, "tile.matmul_bias", {"lhs", "rhs", "bias"}, {}, "lhs @ rhs + bias[0, :] on every row.",
         [](const Args& args, const Attrs&, const Span& span) { return bias_result("tile.matmul_bias", args, span); });
  add_op(r, "tile.gemv_bias", {"lhs", "rhs", "bias"}, {}, "lhs @ rhs + bias[0, :] (typed like matmul_bias).",
         [](const Args& args, const Attrs&, const Span& span) { return bias_result("tile.gemv_bias", args, span); });
  add_op(r, "tile.gemv", {"lhs", "rhs"}, {}, "lhs @ rhs (typed like matmul: FP32 or INT32 Acc).",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* a = expect_2d("tile.gemv", "lhs", args[0], span);
           auto* b = expect_2d("tile.gemv", "rhs", args[1], span);
           return TileType::make(mn_shape("tile.gemv", a, b, span), matmul_dtype(a->dtype), MemorySpace::Acc);
         });
  add_op(r, "tile.gemv_acc", {"acc", "lhs", "rhs"}, {}, "acc + lhs @ rhs.",
         [](const Args& args, const Attrs&, const Span& span) { return matmul_acc_result("tile.gemv_acc", args, span); });
  add_op(r, "tile.batch_matmul", {"lhs", "rhs"}, {}, "One matmul per batch index; batch dims broadcast.",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* a = expect_tile("tile.batch_matmul", "lhs", args[0], span);
           auto* b = expect_tile("tile.batch_matmul", "rhs", args[1], span);
           return TileType::make(batch_shape("tile.batch_matmul", a, b, span), matmul_dtype(a->dtype), MemorySpace::Acc);
         });
  add_op(r, "tile.batch_matmul_acc", {"acc", "lhs", "rhs"}, {}, "acc[b] += lhs[b] @ rhs[b].",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* acc = expect_tile("tile.batch_matmul_acc", "acc", args[0], span);
           auto* a = expect_tile("tile.batch_matmul_acc", "lhs", args[1], span);
           auto* b = expect_tile("tile.batch_matmul_acc", "rhs", args[2], span);
           auto s = batch_shape("tile.batch_matmul_acc", a, b, span);
           PYPTO_USER_CHECK(shape_equal(s, acc->shape), span,
                            "tile.batch_matmul_acc: acc shape " << describe_shape(acc->shape)
                                << " does not match the product's shape " << describe_shape(s), "");
           PYPTO_USER_CHECK(acc->dtype == matmul_dtype(a->dtype), span,
                            "tile.batch_matmul_acc: acc must be " << to_string(matmul_dtype(a->dtype)) << ", got "
                                                                  << to_string(acc->dtype), "");
           return args[0]->type;
         });
}

namespace {

// Accelerator-only ops of the reference (spec/reference_ops.md §13) that the CPU refuses: they
// are registered so that a program using them gets a located error saying why.
struct Refused { const char* name; const char* why; };
const std::vector<Refused>& AcceleratorOnlyOps() {
  static const std::vector<Refused> refused = {
      {"tile.tpush_to_aiv", "a cross-core pipe FIFO between cube and vector cores"},
      {"tile.tpush_to_aic", "a cross-core pipe FIFO between vector and cube cores"},
      {"tile.tpop_from_aic", "a cross-core pipe FIFO between cube and vector cores"},
      {"tile.tpop_from_aiv", "a cross-core pipe FIFO between vector and cube cores"},
      {"tile.alloc", "an on-chip allocation token of the reference's memory passes"},
      {"tile.sort32", "the hardware 32-element sort format"},
      {"tile.mrgsort_format1", "the hardware sort-list merge"},
      {"tile.mrgsort_format2", "the hardware sort-list merge"},
      {"tile.gather_compare", "the compare form of the hardware gather"},
  };
  return refused;
}

}  // namespace

void register_tile_accelerator_ops(OpRegistry& r) {
  for (const Refused& f : AcceleratorOnlyOps()) {
    const std::string name = f.name, why = f.why;
    add_op_opt(r, name, {"arg0", "arg1", "arg2", "arg3", "arg4"}, 0,
               {"split", "id", "block_len", "exhausted", "cmp_mode", "offset", "out_cols", "count_dtype"}, std::string("Accelerator-only (") + f.why + "): refused by the CPU backend.",
               [name, why](const Args&, const Attrs&, const Span& span) -> TypePtr {
                 throw UserError(name + " is an accelerator-only op (" + why + ") and has no CPU implementation", span,
                                 "see docs/kernels.md, 'Accelerator-only ops', for the CPU equivalents");
               });
  }
}

}  // namespace pypto::ir::ops

namespace pypto::ir {

bool IsAcceleratorOnlyOp(const std::string& op) {
  for (const ops::Refused& f : ops::AcceleratorOnlyOps()) if (op == f.name) return true;
  return false;
}

}  // namespace pypto::ir
