// tensor.* ops: orchestration-level tensor creation, element reads and views.
//
//   tensor.create([16, 16]) dtype="FP32"        -> Tensor[[16, 16], FP32]
//   tensor.read(t, [i, j])                      -> Scalar[t.dtype]
//   tensor.slice(t, [8, 16], [8, 0])            -> Tensor[[8, 16], t.dtype]
//   tensor.slice(t, [8, 16], [r, 0], [n, 16])   -> the same; valid_shape [n, 16] is metadata (§10)
//   tensor.transpose(t, 0, 1)                   -> Tensor with dims 0 and 1 swapped
//   tensor.dim(t, 0)                            -> Scalar[INDEX]
//   tensor.reshape(t[4, 64], [1, 256])          -> Tensor[[1, 256], t.dtype] (row-major view)
//   tensor.assemble(target, source, [0, 8])     -> type of target
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "../describe.h"
#include "op_util.h"
#include "pypto/ir/const_integer.h"
#include "tile_op_helpers.h"
#include "pypto/ir/error.h"

namespace pypto::ir::ops {

using detail::describe;
using detail::describe_shape;

namespace {

// The runtime's Tensor holds uint32_t shapes: a literal extent above this cannot be emitted.
constexpr int64_t kMaxViewExtent = 4294967295LL;

void expect_rank(const std::string& op, const std::string& what, size_t got, size_t rank, const TensorType* t,
                 const Span& span) {
  PYPTO_USER_CHECK(got == rank, span,
                   op << ": " << what << " has " << got << " entries but the tensor "
                      << describe(std::make_shared<TensorType>(*t)) << " has rank " << rank,
                   "give one entry per dimension");
}

int64_t normalize_axis(const std::string& op, const std::string& arg, int64_t axis, size_t rank, const Span& span) {
  int64_t r = static_cast<int64_t>(rank);
  PYPTO_USER_CHECK(axis >= -r && axis < r, span, op << ": axis " << axis << " out of range for a tensor of rank " << rank, "");
  return axis < 0 ? axis + r : axis;
}

// A tile source of tensor.assemble (a kernel stores it, anchor_features §9 rule 4): the tile's dtype,
// at most the target's rank (a [M, N] tile into a [B, M, N] tensor at [b, 0, 0]), and a constant box
// inside the target. `pl.assemble(o[4, 8], tile[8, 8], [0, 0])` -> "... does not fit ...".
void check_tile_source(const TileType* tile, const TensorType* target, const std::vector<ExprPtr>& offsets,
                       const Span& span) {
  PYPTO_USER_CHECK(tile->dtype == target->dtype, span,
                   "tensor.assemble: source dtype " << to_string(tile->dtype) << " differs from target dtype "
                                                    << to_string(target->dtype),
                   "convert the tile first with pl.cast(tile, dtype)");
  const size_t rank = target->shape.size(), trank = tile->shape.size();
  PYPTO_USER_CHECK(trank <= rank, span,
                   "tensor.assemble: a tile of rank " << trank << " " << describe_shape(tile->shape)
                                                      << " cannot be written into a tensor of rank " << rank << " "
                                                      << describe_shape(target->shape),
                   "reshape the tile (pl.reshape) to the tensor's rank or less");
  const auto& box = tile->valid_or_shape();
  for (size_t k = 0; k < rank; ++k) {
    const auto o = ConstIntegerValue(offsets[k]);   // (expect_int_list folded literal arithmetic)
    auto* d = target->shape[k]->as<ConstInt>();
    const ExprPtr size = k + trank >= rank ? box[k + trank - rank] : ExprPtr(ConstInt::make(1, DataType::INDEX, span));
    auto* sz = size->as<ConstInt>();
    if (!o || !d || !sz) continue;
    PYPTO_USER_CHECK(*o >= 0 && *o <= d->value - sz->value, span,
                     "tensor.assemble: the tile " << describe_shape(tile->shape) << " at offset " << *o
                                                  << " of dimension " << k << " does not fit in the tensor "
                                                  << describe_shape(target->shape),
                     "the offsets plus the tile's extents must lie inside the target");
  }
}

// `init_value` of tensor.create (spec anchor_features §2): a finite float64 attr, integral and
// within +-2^53 for integer dtypes, zero for FP16 / BF16 (the reference's orchestration unit has
// no half types, and generated code must compile there too).
void check_init_value(const Attrs& attrs, DataType dtype, const Span& span) {
  auto it = attrs.find("init_value");
  if (it == attrs.end()) return;
  const double* v = std::get_if<double>(&it->second);
  PYPTO_USER_CHECK(v, span, "tensor.create: init_value must be a float constant", "e.g. init_value=0.0");
  PYPTO_USER_CHECK(std::isfinite(*v), span, "tensor.create: init_value " << *v << " is not finite",
                   "use a finite number");
  if (is_integer(dtype) || dtype == DataType::BOOL) {
    PYPTO_USER_CHECK(std::fabs(*v) <= 9007199254740992.0, span,
                     "tensor.create: init_value " << *v << " is beyond +-2^53 and cannot be represented exactly", "");
    PYPTO_USER_CHECK(std::floor(*v) == *v, span,
                     "tensor.create: init_value " << *v << " is not an integer, but the dtype is " << to_string(dtype),
                     "give an integral value, or create a float tensor");
  }
  PYPTO_USER_CHECK(!(dtype == DataType::FP16 || dtype == DataType::BF16) || *v == 0.0, span,
                   "tensor.create: a non-zero init_value needs a 32-bit or integer dtype, got " << to_string(dtype),
                   "use init_value=0 for FP16 / BF16 tensors, or fill it with a pl.full kernel");
}

}  // namespace

void register_tensor_ops(OpRegistry& r) {
  register_tensor_write_op(r);
  add_op(r, "tensor.create", {"shape"}, {"dtype", "manual_dep", "layout", "init_value"},
         "Allocate a tensor of the given shape and dtype (manual_dep=True: its accesses add no automatic deps; "
         "init_value=v: the runtime fills it with v).",
         [](const std::vector<ExprPtr>& args, const Attrs& attrs, const Span& span) -> TypePtr {
           auto shape = expect_int_list("tensor.create", "shape", args[0], span);
           PYPTO_USER_CHECK(!shape.empty(), span, "tensor.create: shape must not be empty", "");
           for (auto& d : shape) {
             auto* c = d->as<ConstInt>();
             PYPTO_USER_CHECK(!c || c->value > 0, span, "tensor.create: dimension " << describe(d) << " must be positive", "");
             PYPTO_USER_CHECK(!c || c->value <= kMaxViewExtent, span,
                              "tensor.create: dimension " << c->value << " does not fit the runtime's 32-bit extent (limit "
                                                          << kMaxViewExtent << ")",
                              "a runtime tensor has fewer than 2^32 elements per dimension");
           }
           DataType dtype = attr_dtype("tensor.create", attrs, span);
           // Literal extents whose byte count passes 2^63 - 1: the runtime's byte count would
           // wrap (alloc_tensors refuses it too, but without the DSL line).
           unsigned __int128 bytes = static_cast<unsigned __int128>(byte_width(dtype));
           bool literal = true;
           for (auto& d : shape) {
             auto* c = d->as<ConstInt>();
             if (!c) { literal = false; break; }
             bytes *= static_cast<unsigned __int128>(c->value);   // < 2^63 * 2^32: no 128-bit overflow
             if (bytes > static_cast<unsigned __int128>(INT64_MAX)) break;
           }
           PYPTO_USER_CHECK(!literal || bytes <= static_cast<unsigned __int128>(INT64_MAX), span,
                            "tensor.create: a " << describe_shape(shape) << " " << to_string(dtype)
                                                << " tensor needs more than 2^63 bytes",
                            "a tensor's byte size must fit a signed 64-bit count; use smaller extents");
           expect_bool_attr("tensor.create", attrs, "manual_dep", span);
           check_init_value(attrs, dtype, span);
           Layout layout = Layout::ND;
           if (auto it = attrs.find("layout"); it != attrs.end()) {
             auto* s = std::get_if<std::string>(&it->second);
             PYPTO_USER_CHECK(s && parse_layout(*s, &layout), span, "tensor.create: layout must be ND or DN", "");
           }
           return TensorType::make(std::move(shape), dtype, layout);
         });

  add_op(r, "tensor.read", {"tensor", "indices"}, {}, "Read one element of a tensor: t[i, j].",
         [](const std::vector<ExprPtr>& args, const Attrs&, const Span& span) -> TypePtr {
           auto* t = expect_tensor("tensor.read", "tensor", args[0], span);
           auto idx = expect_int_list("tensor.read", "indices", args[1], span);
           expect_rank("tensor.read", "indices", idx.size(), t->shape.size(), t, span);
           expect_const_indices_inside("tensor.read", idx, t->shape, span);
           return ScalarType::make(t->dtype);
         });

  // The optional 4th argument valid_shape (anchor_features §10) is metadata in an orchestration:
  // rank-checked, at most the shape when static, not emitted (the view uses shapes and offsets).
  // pad_value= (pl.PadValue.*) records the pad mode of the elements outside valid_shape (no effect
  // on the view; pl.tile.fillpad writes a pad value).
  tile_helpers::add_op_opt(r, "tensor.slice", {"tensor", "shapes", "offsets", "valid_shape"}, 3, {"pad_value", "drop_dims"},
         "A view of a sub-block of a tensor: slice(t, shapes, offsets[, valid_shape]).",
         [](const std::vector<ExprPtr>& args, const Attrs& attrs, const Span& span) -> TypePtr {
           auto* t = expect_tensor("tensor.slice", "tensor", args[0], span);
           tile_helpers::check_pad_value("tensor.slice", attrs, span);
           auto shapes = expect_int_list("tensor.slice", "shapes", args[1], span);
           auto offsets = expect_int_list("tensor.slice", "offsets", args[2], span);
           expect_rank("tensor.slice", "shapes", shapes.size(), t->shape.size(), t, span);
           expect_rank("tensor.slice", "offsets", offsets.size(), t->shape.size(), t, span);
           if (args.size() > 3) {
             auto valid = expect_int_list("tensor.slice", "valid_shape", args[3], span);
             expect_rank("tensor.slice", "valid_shape", valid.size(), t->shape.size(), t, span);
             for (size_t i = 0; i < valid.size(); ++i) {
               auto *v = valid[i]->as<ConstInt>(), *s = shapes[i]->as<ConstInt>();
               PYPTO_USER_CHECK(!v || v->value >= 0, span,
                                "tensor.slice: valid_shape " << v->value << " of dimension " << i << " is negative", "");
               PYPTO_USER_CHECK(!v || !s || v->value <= s->value, span,
                                "tensor.slice: valid_shape " << v->value << " of dimension " << i
                                                             << " exceeds the slice shape " << s->value,
                                "the valid region is at most the slice's shape");
             }
           }
           for (size_t i = 0; i < shapes.size(); ++i) {
             // Constant entries (literal arithmetic too: expect_int_list folded it) are checked here.
             const auto s = ConstIntegerValue(shapes[i]), o = ConstIntegerValue(offsets[i]);
             auto* d = t->shape[i]->as<ConstInt>();
             PYPTO_USER_CHECK(!s || *s > 0, span, "tensor.slice: slice size " << *s << " must be positive", "");
             // An offset at or past the extent selects nothing: an error. A partial overhang is
             // clamped at run time (spec anchor_features §18; the frontend warns about it).
             if (o && d) {
               PYPTO_USER_CHECK(*o >= 0 && *o < d->value, span,
                                "tensor.slice: offset " << *o << " of dimension " << i
                                                        << " is at or past the end of the tensor shape "
                                                        << describe_shape(t->shape),
                                "offsets must be below the extent; a slice that runs past the end is clamped at run "
                                "time, one that starts past it selects nothing");
             }
           }
           // drop_dims (§10, kernels): the result has no such axes; the load a kernel-side slice
           // becomes reads the full-rank block.
           auto drop = tile_helpers::check_drop_dims("tensor.slice", attrs, shapes, span);
           PYPTO_USER_CHECK(drop.size() < shapes.size(), span, "tensor.slice: drop_dims drops every axis", "keep at least one axis");
           return TensorType::make(tile_helpers::without_axes(shapes, drop), t->dtype, t->layout);
         });

  add_op(r, "tensor.transpose", {"tensor", "axis1", "axis2"}, {}, "Swap two dimensions of a tensor (a view).",
         [](const std::vector<ExprPtr>& args, const Attrs&, const Span& span) -> TypePtr {
           auto* t = expect_tensor("tensor.transpose", "tensor", args[0], span);
           int64_t a = normalize_axis("tensor.transpose", "axis1",
                                      expect_const_int("tensor.transpose", "axis1", args[1], span), t->shape.size(), span);
           int64_t b = normalize_axis("tensor.transpose", "axis2",
                                      expect_const_int("tensor.transpose", "axis2", args[2], span), t->shape.size(), span);
           auto shape = t->shape;
           std::swap(shape[static_cast<size_t>(a)], shape[static_cast<size_t>(b)]);
           return TensorType::make(std::move(shape), t->dtype, t->layout);
         });

  add_op(r, "tensor.dim", {"tensor", "axis"}, {}, "The size of one dimension of a tensor, as Scalar[INDEX].",
         [](const std::vector<ExprPtr>& args, const Attrs&, const Span& span) -> TypePtr {
           auto* t = expect_tensor("tensor.dim", "tensor", args[0], span);
           normalize_axis("tensor.dim", "axis", expect_const_int("tensor.dim", "axis", args[1], span), t->shape.size(), span);
           return ScalarType::make(DataType::INDEX);
         });

  add_op(r, "tensor.reshape", {"tensor", "shape"}, {},
         "The same elements, row-major, under a new shape (a zero-copy view of a contiguous tensor).",
         [](const std::vector<ExprPtr>& args, const Attrs&, const Span& span) -> TypePtr {
           auto* t = expect_tensor("tensor.reshape", "tensor", args[0], span);
           auto shape = expect_int_list("tensor.reshape", "shape", args[1], span);
           PYPTO_USER_CHECK(!shape.empty(), span, "tensor.reshape: shape must not be empty", "");
           // Element counts must agree when both shapes are fully static.
           auto count = [](const std::vector<ExprPtr>& dims) -> int64_t {
             int64_t n = 1;
             for (auto& d : dims) {
               auto* c = d->as<ConstInt>();
               if (!c) return -1;
               n *= c->value;
             }
             return n;
           };
           for (auto& d : shape) {
             auto* c = d->as<ConstInt>();
             PYPTO_USER_CHECK(!c || c->value > 0, span, "tensor.reshape: dimension " << describe(d) << " must be positive", "");
             PYPTO_USER_CHECK(!c || c->value <= kMaxViewExtent, span,
                              "tensor.reshape: dimension " << c->value << " does not fit the runtime's 32-bit extent (limit "
                                                           << kMaxViewExtent << ")",
                              "a runtime tensor has fewer than 2^32 elements per dimension");
           }
           int64_t from = count(t->shape), to = count(shape);
           PYPTO_USER_CHECK(from < 0 || to < 0 || from == to, span,
                            "tensor.reshape: cannot reshape tensor of size " << from << " into shape with size " << to,
                            "the new shape " + describe_shape(shape) + " must hold the same number of elements as " +
                                describe_shape(t->shape));
           return TensorType::make(std::move(shape), t->dtype);
         });

  add_op(r, "tensor.assemble", {"target", "source", "offsets"}, {},
         "Write `source` into tensor `target` at `offsets`; the result is the updated target. A tile source "
         "(kernels) is stored: the tile.store of anchor_features §9 rule 4.",
         [](const std::vector<ExprPtr>& args, const Attrs&, const Span& span) -> TypePtr {
           auto* target = expect_tensor("tensor.assemble", "target", args[0], span);
           auto offsets = expect_int_list("tensor.assemble", "offsets", args[2], span);
           expect_rank("tensor.assemble", "offsets", offsets.size(), target->shape.size(), target, span);
           if (auto* tile = args[1]->type->as<TileType>()) {
             check_tile_source(tile, target, offsets, span);
             return args[0]->type;
           }
           auto* source = expect_tensor("tensor.assemble", "source", args[1], span);
           PYPTO_USER_CHECK(source->shape.size() == target->shape.size(), span,
                            "tensor.assemble: source shape " << describe_shape(source->shape) << " and target shape "
                                                             << describe_shape(target->shape) << " differ in rank",
                            "");
           PYPTO_USER_CHECK(source->dtype == target->dtype, span,
                            "tensor.assemble: source dtype " << to_string(source->dtype) << " differs from target dtype "
                                                             << to_string(target->dtype),
                            "");
           return args[0]->type;
         });
}

}  // namespace pypto::ir::ops
