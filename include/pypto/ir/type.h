// IR types. Types are immutable values shared by pointer; compare them with
// structural_equal (structural_equal.h), never by pointer.
//
//   ScalarType  pl.Scalar[pl.FP32], pl.Scalar[pl.INDEX], pl.Scalar[pl.TASK_ID], ...
//   TensorType  pl.Tensor[[M, 16], pl.FP32]  (shape = integer exprs: ConstInt or a dynamic
//               symbol Var such as `M = pl.dynamic("M")`; layout ND by default)
//   TileType    pl.Tile[[16, 16], pl.FP32]   (on-chip tile; memory space Vec by default)
//               pl.Tile[[32, 16], pl.FP32, pl.TileView(valid_shape=[n, 16])]  (valid region, §10)
//   TupleType   tuple[...]; the empty tuple is the unit type (a call returning nothing)
//   ArrayType   pl.Array[N, pl.TASK_ID]      (fixed-size array of scalars)
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "pypto/ir/enums.h"
#include "pypto/ir/node_pool.h"

namespace pypto::ir {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

enum class TypeKind : uint8_t { Scalar, Tensor, Tile, Tuple, Array };

struct Type {
  const TypeKind kind;
  explicit Type(TypeKind k) : kind(k) {}
  virtual ~Type() = default;
  template <class T> const T* as() const { return kind == T::kKind ? static_cast<const T*>(this) : nullptr; }
  template <class T> bool is() const { return kind == T::kKind; }
};
using TypePtr = std::shared_ptr<const Type>;

struct ScalarType : Type {
  static constexpr TypeKind kKind = TypeKind::Scalar;
  DataType dtype;
  explicit ScalarType(DataType d) : Type(kKind), dtype(d) {}
  // One shared object per dtype (type.cpp): a scalar constant or variable allocates no type.
  static std::shared_ptr<const ScalarType> make(DataType d);
};

struct TensorType : Type {
  static constexpr TypeKind kKind = TypeKind::Tensor;
  std::vector<ExprPtr> shape;
  DataType dtype;
  Layout layout;
  TensorType(std::vector<ExprPtr> s, DataType d, Layout l) : Type(kKind), shape(std::move(s)), dtype(d), layout(l) {}
  static std::shared_ptr<const TensorType> make(std::vector<ExprPtr> shape, DataType d, Layout l = Layout::ND) {
    return make_node<TensorType>(std::move(shape), d, l);
  }
};

struct TileType : Type {
  static constexpr TypeKind kKind = TypeKind::Tile;
  std::vector<ExprPtr> shape;
  DataType dtype;
  MemorySpace memory;
  // The valid region [0, valid_shape) an op computes (spec anchor_features §10): integer exprs,
  // possibly dynamic (`min(M - r, 32)`), one per axis. Empty = the whole tile. make() stores it
  // empty when it equals `shape`, so a full-valid tile compares equal to a plain one.
  std::vector<ExprPtr> valid_shape;
  TileType(std::vector<ExprPtr> s, DataType d, MemorySpace m, std::vector<ExprPtr> v = {})
      : Type(kKind), shape(std::move(s)), dtype(d), memory(m), valid_shape(std::move(v)) {}
  //   TileType::make({c32, c16}, DataType::FP32, MemorySpace::Vec, {n, c16})
  static std::shared_ptr<const TileType> make(std::vector<ExprPtr> shape, DataType d, MemorySpace m = MemorySpace::Vec,
                                              std::vector<ExprPtr> valid = {});
  bool has_valid_shape() const { return !valid_shape.empty(); }
  // valid_shape, or shape when the whole tile is valid.
  const std::vector<ExprPtr>& valid_or_shape() const { return valid_shape.empty() ? shape : valid_shape; }
};
// A tile type like `t` with another valid shape (empty = the whole tile); keeps shape, dtype, memory.
//   WithValidShape(*t, {n, c16})
std::shared_ptr<const TileType> WithValidShape(const TileType& t, std::vector<ExprPtr> valid);

struct TupleType : Type {
  static constexpr TypeKind kKind = TypeKind::Tuple;
  std::vector<TypePtr> elements;
  explicit TupleType(std::vector<TypePtr> e) : Type(kKind), elements(std::move(e)) {}
  static std::shared_ptr<const TupleType> make(std::vector<TypePtr> e) { return make_node<TupleType>(std::move(e)); }
  static std::shared_ptr<const TupleType> unit() { return make({}); }
};

struct ArrayType : Type {
  static constexpr TypeKind kKind = TypeKind::Array;
  int64_t size;
  DataType dtype;
  ArrayType(int64_t n, DataType d) : Type(kKind), size(n), dtype(d) {}
  static std::shared_ptr<const ArrayType> make(int64_t n, DataType d) { return make_node<ArrayType>(n, d); }
};

// Convenience predicates used everywhere.
inline bool is_task_id(const TypePtr& t) {
  auto s = t ? t->as<ScalarType>() : nullptr;
  auto a = t ? t->as<ArrayType>() : nullptr;
  return (s && s->dtype == DataType::TASK_ID) || (a && a->dtype == DataType::TASK_ID);
}

}  // namespace pypto::ir
