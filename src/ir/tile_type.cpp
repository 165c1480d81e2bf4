// TileType construction: a valid shape equal to the tile's shape is stored as "none", so that
// `pl.load(t, o, [32, 16], [32, 16])` and `pl.load(t, o, [32, 16])` have one type (spec
// anchor_features §10).
#include "pypto/ir/expr.h"
#include "pypto/ir/node_pool.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/ir/type.h"

namespace pypto::ir {

namespace {

bool SameDim(const ExprPtr& a, const ExprPtr& b) {
  auto *ca = a->as<ConstInt>(), *cb = b->as<ConstInt>();
  if (ca && cb) return ca->value == cb->value;
  return a == b || structural_equal(a, b);
}

}  // namespace

std::shared_ptr<const TileType> TileType::make(std::vector<ExprPtr> shape, DataType d, MemorySpace m,
                                               std::vector<ExprPtr> valid) {
  if (valid.size() == shape.size()) {
    bool same = true;
    for (size_t i = 0; i < shape.size() && same; ++i) same = SameDim(shape[i], valid[i]);
    if (same) valid.clear();
  }
  return make_node<TileType>(std::move(shape), d, m, std::move(valid));
}

std::shared_ptr<const TileType> WithValidShape(const TileType& t, std::vector<ExprPtr> valid) {
  return TileType::make(t.shape, t.dtype, t.memory, std::move(valid));
}

}  // namespace pypto::ir
