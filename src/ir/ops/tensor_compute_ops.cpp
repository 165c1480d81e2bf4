// Tensor-level compute ops (spec anchor_features §9): `tensor.<op>` mirrors `tile.<op>` for the
// ops a kernel or a CORE_GROUP `pl.at` body may write on whole tensors. The type rule is the
// tile op's, applied to the operands seen as Vec tiles of the same shape and dtype; the tile
// result becomes a tensor of that shape and dtype. ConvertTensorToTileOps lowers each call to
// its tile op after outlining (src/transforms/convert_tensor_to_tile_ops.cpp).
//
//   tensor.add(a[16, 16], b[16, 16])     -> Tensor[[16, 16], FP32]     (tile.add's rule)
//   tensor.muls(a[16, 16], 2.0)          -> Tensor[[16, 16], FP32]
//   tensor.matmul(a[16, 32], b[32, 8])   -> Tensor[[16, 8], FP32]
//   tensor.full([16, 16], 0.0) dtype=FP32 -> Tensor[[16, 16], FP32]
#include "op_util.h"
#include "pypto/ir/error.h"
#include "pypto/ir/op_registry.h"

namespace pypto::ir::ops {

const std::vector<std::string>& tensor_compute_op_names() {
  static const std::vector<std::string> names = {
      "add",  "sub",  "mul",  "div",  "maximum", "minimum", "adds", "subs",    "muls",    "divs",
      "maximums", "minimums", "exp", "log", "sqrt", "rsqrt", "recip", "neg", "abs", "relu",
      "row_max", "row_sum", "row_min", "row_expand_add", "row_expand_sub", "row_expand_mul", "row_expand_div",
      "matmul", "matmul_acc", "cast", "full"};
  return names;
}

namespace {

// `e` seen as a Vec tile when it is a tensor (a placeholder Var of the tile type), else as is.
ExprPtr as_tile_operand(const ExprPtr& e) {
  auto* t = e->type->as<TensorType>();
  if (!t) return e;
  return Var::make("tensor_operand", TileType::make(t->shape, t->dtype, MemorySpace::Vec), e->span);
}

}  // namespace

void register_tensor_compute_ops(OpRegistry& r) {
  for (const std::string& n : tensor_compute_op_names()) {
    const OpInfo* tile = r.get("tile." + n);
    PYPTO_CHECK(tile, "tensor." << n << " mirrors tile." << n << ", which is not registered");
    OpInfo info = *tile;
    info.name = "tensor." + n;
    info.doc = "Tensor form of tile." + n + " (kernels and CORE_GROUP scopes; lowered to tile." + n + "): " + tile->doc;
    auto tile_infer = tile->infer;
    std::string name = info.name;
    info.infer = [tile_infer, name](const std::vector<ExprPtr>& args, const Attrs& attrs, const Span& span) -> TypePtr {
      std::vector<ExprPtr> tiles;
      tiles.reserve(args.size());
      for (auto& a : args) {
        PYPTO_USER_CHECK(!a->type->is<TileType>(), span, name << ": cannot mix Tensor and Tile arguments",
                         "load the tensor with pl.load, or use the tile form of the op");
        tiles.push_back(as_tile_operand(a));
      }
      TypePtr t = tile_infer(tiles, attrs, span);
      auto* tt = t->as<TileType>();
      PYPTO_CHECK(tt, name << ": the tile rule returned a non-tile type");
      return TensorType::make(tt->shape, tt->dtype);
    };
    r.add(std::move(info));
  }
}

}  // namespace pypto::ir::ops
