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
//   tensor.gather(src[4, 8], idx[2, 8])  -> Tensor[[2, 8], FP32]     (indices' shape, src's dtype)
//   tensor.arange(3, [1, 32]) dtype=INT32 -> Tensor[[1, 32], INT32]
//   tensor.col_sum(a[16, 16])            -> Tensor[[1, 16], FP32]
// The reference's other names (reference_ops.md §1.1): the tensor-only sin, cos, gather, scatter,
// scatter_update, gather_row, arange and the dispatching cmp, concat, fillpad, expands, row_prod,
// col_*, row_expand*, col_expand*, part_* are mirrored the same way. gather_row reads its `src`
// from a tensor, so that operand stays a tensor (tensor_op_keeps_tensor).
#include <algorithm>

#include "op_util.h"
#include "pypto/ir/error.h"
#include "pypto/ir/op_registry.h"

namespace pypto::ir::ops {

namespace {

// The reference names beyond §9's list (reference_ops.md §1.1): the tensor-only names, and the
// dispatching names whose tile op exists here. Their tile rule's errors are reworded for the
// tensor form (the §9 mirrors keep their historical wording).
const std::vector<std::string>& reference_mirror_names() {
  static const std::vector<std::string> names = {
      // tensor-only names
      "sin", "cos", "gather", "scatter", "scatter_update", "gather_row", "arange",
      // dispatching names (Tensor or Tile)
      "cmp", "concat", "fillpad", "expands", "row_prod", "col_sum", "col_max", "col_min", "col_prod",
      "row_expand", "row_expand_max", "row_expand_min", "row_expand_expdif", "col_expand", "col_expand_add",
      "col_expand_sub", "col_expand_mul", "col_expand_div", "col_expand_max", "col_expand_min",
      "col_expand_expdif", "part_add", "part_mul", "part_max", "part_min",
      // set_validshape (reference_ops.md §9): the tile's valid region, set on the kernel's loaded tile
      "set_validshape",
      // batch_matmul (reference_ops.md §11): batched over the leading dims (ConvertTensorToTileOps)
      "batch_matmul"};
  return names;
}

bool is_reference_mirror(const std::string& op) {
  const auto& names = reference_mirror_names();
  return std::find(names.begin(), names.end(), op) != names.end();
}

}  // namespace

const std::vector<std::string>& tensor_compute_op_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {
        "add",  "sub",  "mul",  "div",  "maximum", "minimum", "adds", "subs",    "muls",    "divs",
        "maximums", "minimums", "exp", "log", "sqrt", "rsqrt", "recip", "neg", "abs", "relu",
        "row_max", "row_sum", "row_min", "row_expand_add", "row_expand_sub", "row_expand_mul", "row_expand_div",
        "matmul", "matmul_acc", "cast", "full"};
    const auto& ref = reference_mirror_names();
    n.insert(n.end(), ref.begin(), ref.end());
    return n;
  }();
  return names;
}

bool tensor_op_keeps_tensor(const std::string& name, size_t index) { return name == "gather_row" && index == 1; }

bool is_batched_matmul_acc(const std::vector<ExprPtr>& args) {
  for (const ExprPtr& a : args) {
    auto* t = a->type->as<TensorType>();
    if (t && t->shape.size() > 2) return true;
  }
  return false;
}

namespace {

// "tile.gather: argument 'src' must be a 2-D tile, got Tile[[2, 4, 8], FP32]" ->
// "tensor.gather: argument 'src' must be a 2-D tensor, got Tensor[[2, 4, 8], FP32]".
std::string as_tensor_wording(std::string text, const std::string& op, const std::string& tensor_op = "") {
  auto replace_all = [&text](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  };
  replace_all("tile." + op, "tensor." + (tensor_op.empty() ? op : tensor_op));
  replace_all("Tile[", "Tensor[");
  replace_all("-D tile", "-D tensor");
  replace_all("pl.cast(tile,", "pl.cast(x,");
  replace_all("the tile", "the tensor");
  return text;
}

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
    // tensor.matmul_acc with an operand of rank > 2 is the batched form (reference_ops.md §11):
    // tile.batch_matmul_acc's rule, and ConvertTensorToTileOps lowers it to that op.
    decltype(OpInfo::infer) batch_infer;
    if (n == "matmul_acc") {
      const OpInfo* batch = r.get("tile.batch_matmul_acc");
      PYPTO_CHECK(batch, "tensor.matmul_acc needs tile.batch_matmul_acc, which is not registered");
      batch_infer = batch->infer;
    }
    std::string name = info.name;
    info.infer = [tile_infer, batch_infer, name](const std::vector<ExprPtr>& args, const Attrs& attrs, const Span& span) -> TypePtr {
      std::vector<ExprPtr> tiles;
      tiles.reserve(args.size());
      const std::string op = name.substr(7);
      for (size_t k = 0; k < args.size(); ++k) {
        const ExprPtr& a = args[k];
        PYPTO_USER_CHECK(!a->type->is<TileType>(), span, name << ": cannot mix Tensor and Tile arguments",
                         "load the tensor with pl.load, or use the tile form of the op");
        tiles.push_back(tensor_op_keeps_tensor(op, k) ? a : as_tile_operand(a));
      }
      const bool batched = batch_infer && is_batched_matmul_acc(args);
      TypePtr t;
      try {
        t = batched ? batch_infer(tiles, attrs, span) : tile_infer(tiles, attrs, span);
      } catch (const UserError& e) {
        if (batched) throw UserError(as_tensor_wording(e.message(), "batch_matmul_acc", op), e.span(), e.help());
        if (!is_reference_mirror(op) && op != "full") throw;   // pl.full: the reference's tensor-only fill
        throw UserError(as_tensor_wording(e.message(), op), e.span(), as_tensor_wording(e.help(), op));
      }
      auto* tt = t->as<TileType>();
      PYPTO_CHECK(tt, name << ": the tile rule returned a non-tile type");
      return TensorType::make(tt->shape, tt->dtype);
    };
    r.add(std::move(info));
  }
}

}  // namespace pypto::ir::ops
