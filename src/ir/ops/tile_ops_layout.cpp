// Reference shape, view, creation, gather and scatter tile ops (spec/reference_ops.md §9–10, §12).
//
//   tile.transpose(x[M, N], 0, 1)            -> Tile[[N, M]]
//   tile.reshape(x[M, N], [N, M])            -> Tile[[N, M]]          (row-major reinterpretation)
//   tile.concat(a[R, C0], b[R, C1])          -> Tile[[R, C0 + C1]]
//   tile.extract(x, r, c, [h, w])            -> Tile[[h, w]]          (x[r:r+h, c:c+w])
//   tile.slice(x, [h, w], [r, c])            -> Tile[[h, w]]
//   tile.create([16, 32]) dtype=FP32         -> zero-filled Tile[[16, 32], FP32]
//   tile.ci(start, [1, 32]) dtype=INT32      -> [start, start + 1, ...]
//   tile.gather(src, idx[M, N])              -> Tile[[M, N], src.dtype]  (src.flat[idx])
//   tile.scatter(dst, src, idx)              -> type of dst           (dst.flat[idx] = src, last wins)
#include "../describe.h"
#include "pypto/ir/const_integer.h"
#include "pypto/ir/error.h"
#include "tile_op_helpers.h"

namespace pypto::ir::ops {

using namespace tile_helpers;
using detail::describe;
using detail::describe_shape;

namespace {

int64_t const_dim(const ExprPtr& d) {
  auto* c = d->as<ConstInt>();
  return c ? c->value : -1;
}

// Gather / scatter mask pattern -> column stride (1 = all columns).
int64_t mask_stride(const std::string& op, int64_t pattern, const Span& span) {
  PYPTO_USER_CHECK(pattern >= 1 && pattern <= 7, span, op << ": requires mask_pattern in range [1, 7], got " << pattern,
                   "1/2 = even/odd columns, 3..6 = columns c % 4 == 0..3, 7 = all");
  return pattern <= 2 ? 2 : pattern <= 6 ? 4 : 1;
}

// gather_mask's valid columns (spec reference_ops.md §1.5, §12): how many of the src columns
// [0, vc) the pattern selects, (vc + stride - 1 - first) / stride, folded when vc is constant.
//   vc = 5, pattern 2 (odd columns: 1, 3)  ->  2;   vc = n, pattern 1  ->  (n + 1) // 2
ExprPtr masked_valid_cols(const ExprPtr& vc, int64_t pattern, int64_t stride) {
  const int64_t first = pattern <= 2 ? pattern - 1 : pattern <= 6 ? pattern - 3 : 0, bias = stride - 1 - first;
  if (auto* c = vc->as<ConstInt>()) return ConstInt::make((c->value + bias) / stride);
  if (stride == 1) return vc;
  ExprPtr n = bias ? ExprPtr(BinaryExpr::make(BinaryOp::Add, vc, ConstInt::make(bias))) : vc;
  return BinaryExpr::make(BinaryOp::FloorDiv, n, ConstInt::make(stride));
}

void expect_dtype_in(const std::string& op, const std::string& what, DataType d, std::initializer_list<DataType> ok,
                     const Span& span) {
  for (DataType o : ok) {
    if (o == d) return;
  }
  std::string names;
  for (DataType o : ok) names += std::string(names.empty() ? "" : ", ") + to_string(o);
  throw UserError(op + ": " + what + " dtype must be one of " + names + ", got " + to_string(d), span, "");
}

}  // namespace

void register_tile_layout_ops(OpRegistry& r) {
  add_op_opt(r, "tile.transpose", {"tile", "axis1", "axis2", "tmp_tile"}, 3, {},
             "Swap two axes of a 2-D tile (a transposed copy).",
             [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
               auto* t = expect_2d("tile.transpose", "tile", args[0], span);
               int64_t a1 = expect_const_int("tile.transpose", "axis1", args[1], span);
               int64_t a2 = expect_const_int("tile.transpose", "axis2", args[2], span);
               PYPTO_USER_CHECK(a1 >= -2 && a1 < 2 && a2 >= -2 && a2 < 2, span,
                                "tile.transpose: axis out of range for a 2-D tile (axes " << a1 << ", " << a2 << ")", "");
               PYPTO_USER_CHECK((a1 + 2) % 2 != (a2 + 2) % 2, span, "tile.transpose: axis1 and axis2 must be different",
                                "");
               if (args.size() > 3) {
                 auto* tmp = expect_tile("tile.transpose", "tmp_tile", args[3], span);
                 PYPTO_USER_CHECK(tmp->dtype == t->dtype && tmp->shape.size() == 2, span,
                                  "tile.transpose: tmp_tile must have the input's dtype and rank", "");
               }
               return TileType::make({t->shape[1], t->shape[0]}, t->dtype, t->memory);
             });
  add_op(r, "tile.transpose_view", {"tile"}, {}, "Swap the last two dims of a 2-D tile (a transposed copy on the CPU).",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* t = expect_2d("tile.transpose_view", "tile", args[0], span);
           return TileType::make({t->shape[1], t->shape[0]}, t->dtype, t->memory);
         });
  add_op(r, "tile.reshape", {"tile", "shape"}, {}, "The same elements, row-major, under a new shape of rank 1 to 4.",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* t = expect_tile("tile.reshape", "tile", args[0], span);
           auto shape = expect_const_shape("tile.reshape", "shape", args[1], span, 4);   // batch tiles
           int64_t from = 1, to = 1;
           for (auto& d : t->shape) from = const_dim(d) < 0 || from < 0 ? -1 : from * const_dim(d);
           for (auto& d : shape) to *= const_dim(d);
           PYPTO_USER_CHECK(from < 0 || from == to, span,
                            "tile.reshape: cannot reshape tile of size " << from << " into shape with size " << to,
                            "the new shape must hold the same number of elements");
           PYPTO_USER_CHECK(from >= 0, span, "tile.reshape: the input tile must have a constant shape, got "
                                                 << describe_shape(t->shape), "");
           return TileType::make(std::move(shape), t->dtype, t->memory);
         });
  add_op(r, "tile.concat", {"src0", "src1"}, {}, "[src0 | src1] along columns: [R, C0] and [R, C1] give [R, C0 + C1].",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* a = expect_2d("tile.concat", "src0", args[0], span);
           auto* b = expect_2d("tile.concat", "src1", args[1], span);
           same_dtype("tile.concat", args[0], args[1], span);
           PYPTO_USER_CHECK(dim_equal(a->shape[0], b->shape[0]), span,
                            "tile.concat: row counts differ: " << describe_shape(a->shape) << " and "
                                                               << describe_shape(b->shape), "");
           int64_t c0 = const_dim(a->shape[1]), c1 = const_dim(b->shape[1]);
           PYPTO_USER_CHECK(c0 > 0 && c1 > 0, span, "tile.concat: column counts must be constants", "");
           return TileType::make({a->shape[0], ConstInt::make(c0 + c1)}, a->dtype, MemorySpace::Vec);
         });
  add_op(r, "tile.extract", {"src", "index_row", "index_col", "shape"}, {"target_memory"},
         "Copy the block src[r:r+h, c:c+w] into a new tile (in target_memory).",
         [](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
           auto* t = expect_2d("tile.extract", "src", args[0], span);
           expect_int_scalar("tile.extract", "index_row", args[1], span);
           expect_int_scalar("tile.extract", "index_col", args[2], span);
           auto shape = expect_const_shape("tile.extract", "shape", args[3], span);
           PYPTO_USER_CHECK(shape.size() == 2, span, "tile.extract: shape must be 2-D", "");
           for (int i = 0; i < 2; ++i) {
             auto* idx = args[1 + i]->as<ConstInt>();
             int64_t dim = const_dim(t->shape[i]);
             PYPTO_USER_CHECK(!idx || (idx->value >= 0 && (dim < 0 || idx->value + const_dim(shape[i]) <= dim)), span,
                              "tile.extract: block [" << idx->value << ", " << idx->value + const_dim(shape[i])
                                                      << ") of dimension " << i << " is outside the tile shape "
                                                      << describe_shape(t->shape), "");
           }
           MemorySpace mem = MemorySpace::Vec;
           attr_memory("tile.extract", attrs, span, &mem);
           return TileType::make(std::move(shape), t->dtype, mem);
         });
  // The optional valid_shape is the window's valid region (spec anchor_features §10).
  // drop_dims is checked; a 2-D window keeps its rank (a result below rank 2 gets leading 1s).
  tile_helpers::add_op_opt(r, "tile.slice", {"tile", "shape", "offset", "valid_shape"}, 3, {"pad_value", "drop_dims"},
         "A window of a 2-D tile: out[i, j] = in[o0 + i, o1 + j]; valid_shape, if given, its valid region.",
         [](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
           auto* t = expect_2d("tile.slice", "tile", args[0], span);
           check_pad_value("tile.slice", attrs, span);
           auto drop = check_drop_dims("tile.slice", attrs, expect_int_list("tile.slice", "shape", args[1], span), span);
           auto shape = expect_const_shape("tile.slice", "shape", args[1], span);
           auto off = expect_int_list("tile.slice", "offset", args[2], span);
           PYPTO_USER_CHECK(shape.size() == 2 && off.size() == 2, span,
                            "tile.slice: shape and offset must have 2 entries for a 2-D tile", "");
           for (int i = 0; i < 2; ++i) {
             const auto o = ConstIntegerValue(off[i]);   // (expect_int_list folded literal arithmetic)
             int64_t dim = const_dim(t->shape[i]);
             PYPTO_USER_CHECK(!o || (*o >= 0 && (dim < 0 || *o <= dim - const_dim(shape[i]))), span,
                              "tile.slice: window [" << *o << ", " << block_end(*o, const_dim(shape[i]))
                                                     << ") of dimension " << i << " is outside the tile shape "
                                                     << describe_shape(t->shape), "");
           }
           std::vector<ExprPtr> valid;
           if (args.size() > 3) {
             valid = expect_int_list("tile.slice", "valid_shape", args[3], span);
             PYPTO_USER_CHECK(valid.size() == shape.size(), span,
                              "tile.slice: valid_shape " << describe_shape(valid) << " has " << valid.size()
                                                         << " entries for a window of rank " << shape.size(), "");
             for (size_t i = 0; i < valid.size(); ++i) {
               auto* v = valid[i]->as<ConstInt>();
               PYPTO_USER_CHECK(!v || (v->value >= 0 && v->value <= const_dim(shape[i])), span,
                                "tile.slice: valid extent " << v->value << " of dimension " << i
                                                            << " is outside [0, " << const_dim(shape[i]) << "]",
                                "the valid region lies inside the window");
             }
           }
           if (!drop.empty()) {   // §9: the dropped axes go, a result below rank 2 gets leading 1s
             shape = without_axes(shape, drop);
             if (!valid.empty()) valid = without_axes(valid, drop);
             while (shape.size() < 2) {
               shape.insert(shape.begin(), ConstInt::make(1));
               if (!valid.empty()) valid.insert(valid.begin(), ConstInt::make(1));
             }
           }
           return TileType::make(std::move(shape), t->dtype, t->memory, std::move(valid));
         });
  add_op(r, "tile.assemble", {"target", "source", "offset"}, {},
         "A copy of target with source's valid region written at offset (2-D); the result is fully valid.",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* t = expect_2d("tile.assemble", "target", args[0], span);
           auto* s = expect_2d("tile.assemble", "source", args[1], span);
           same_dtype("tile.assemble", args[0], args[1], span);
           auto off = expect_int_list("tile.assemble", "offset", args[2], span);
           PYPTO_USER_CHECK(off.size() == 2, span, "tile.assemble: offset must have 2 entries", "");
           for (int i = 0; i < 2; ++i) {
             const auto o = ConstIntegerValue(off[i]);   // (expect_int_list folded literal arithmetic)
             int64_t dim = const_dim(t->shape[i]), sz = const_dim(s->shape[i]);
             PYPTO_USER_CHECK(!o || (*o >= 0 && (dim < 0 || sz < 0 || *o <= dim - sz)), span,
                              "tile.assemble: source " << describe_shape(s->shape) << " at offset " << *o
                                                       << " of dimension " << i << " does not fit in "
                                                       << describe_shape(t->shape), "");
           }
           return TileType::make(t->shape, t->dtype, t->memory);   // fully valid (reference_ops.md §1.5)
         });
  // fillpad / fillpad_inplace (§9): fully valid results; the frontend maps the shorthands 0, 0.0,
  // math.inf and -math.inf to "zero", "max" and "min". fillpad_inplace writes its input's buffer.
  for (const char* name : {"tile.fillpad", "tile.fillpad_inplace"}) {
    const std::string op = name;
    add_op(r, op, {"tile"}, {"pad_value"},
           op == "tile.fillpad"
               ? "Same tile, fully valid, with the elements outside the operand's valid region set to the pad value."
               : "fillpad in place: the operand's own buffer gets the pad value outside its valid region.",
           [op](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
             auto* t = expect_tile(op, "tile", args[0], span);
             auto it = attrs.find("pad_value");
             if (it != attrs.end()) {
               auto* s = std::get_if<std::string>(&it->second);
               PYPTO_USER_CHECK(s && (*s == "zero" || *s == "max" || *s == "min"), span,
                                op << ": pad_value must be PadValue.zero, .max or .min",
                                "e.g. pad_value=pl.PadValue.zero, or the shorthands 0, 0.0, math.inf, -math.inf");
             }
             return TileType::make(t->shape, t->dtype, t->memory);
           });
  }
  // set_validshape (§9): metadata only, the tile with a new valid region [valid_rows, valid_cols].
  add_op(r, "tile.set_validshape", {"tile", "valid_rows", "valid_cols"}, {},
         "The same 2-D tile with the valid region [valid_rows, valid_cols] (0 <= valid <= dim).",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* t = expect_2d("tile.set_validshape", "tile", args[0], span);
           expect_int_scalar("tile.set_validshape", "valid_rows", args[1], span);
           expect_int_scalar("tile.set_validshape", "valid_cols", args[2], span);
           for (int i = 0; i < 2; ++i) {
             auto* v = args[1 + i]->as<ConstInt>();
             const int64_t dim = const_dim(t->shape[i]);
             PYPTO_USER_CHECK(!v || (v->value >= 0 && (dim < 0 || v->value <= dim)), span,
                              "tile.set_validshape: " << (i ? "valid_cols " : "valid_rows ") << v->value
                                                      << " is outside [0, " << describe(t->shape[i]) << "]",
                              "the valid region lies inside the tile " + describe_shape(t->shape));
           }
           return TileType::make(t->shape, t->dtype, t->memory, {args[1], args[2]});
         });
  add_op(r, "tile.create", {"shape"}, {"dtype", "target_memory", "transpose"},
         "A new zero-filled tile of a static positive shape.",
         [](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
           auto shape = expect_const_shape("tile.create", "shape", args[0], span);
           DataType d = attr_dtype("tile.create", attrs, span);
           MemorySpace mem = MemorySpace::Vec;
           attr_memory("tile.create", attrs, span, &mem);
           expect_bool_attr("tile.create", attrs, "transpose", span);
           return TileType::make(std::move(shape), d, mem);
         });
  for (const char* name : {"tile.ci", "tile.arange"}) {
    const std::string op = name;
    add_op(r, op, {"start", "shape"}, {"dtype", "descending"}, "out[0, k] = start + k (start - k when descending).",
           [op](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
             expect_int_scalar(op, "start", args[0], span);
             auto shape = expect_const_shape(op, "shape", args[1], span);
             DataType d = attrs.count("dtype") ? attr_dtype(op, attrs, span) : DataType::INT32;
             expect_dtype_in(op, "result", d, {DataType::INT16, DataType::INT32, DataType::UINT16, DataType::UINT32}, span);
             // reference_ops.md §10: start's dtype must equal dtype (a literal is re-typed); a
             // start of another dtype was truncated silently (an INT64 2^33 + 5 counted from 5).
             const DataType sd = args[0]->type->as<ScalarType>()->dtype;   // (expect_int_scalar)
             const bool other_ok = sd == DataType::INT16 || sd == DataType::INT32 || sd == DataType::UINT16 ||
                                   sd == DataType::UINT32;
             PYPTO_USER_CHECK(args[0]->is<ConstInt>() || sd == d, span,
                              op << ": start is " << to_string(sd) << ", the result " << to_string(d)
                                 << ": they must be the same dtype",
                              std::string("convert the start with pl.cast(start, pl.") + to_string(d) + ")" +
                                  (other_ok ? std::string(", or give dtype=pl.") + to_string(sd) : std::string()));
             expect_bool_attr(op, attrs, "descending", span);
             PYPTO_USER_CHECK(const_dim(shape.back()) != 1, span, op << ": the last dim must not be 1", "");
             for (size_t i = 0; i + 1 < shape.size(); ++i) {
               PYPTO_USER_CHECK(const_dim(shape[i]) == 1, span, op << ": every leading dim must be 1, got "
                                                                    << describe_shape(shape), "");
             }
             return TileType::make(std::move(shape), d, MemorySpace::Vec);
           });
  }
  add_op_opt(r, "tile.gather", {"src", "indices", "tmp"}, 2, {}, "out[i, j] = src.flat[indices[i, j]] (row-major).",
             [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
               auto* s = expect_tile("tile.gather", "src", args[0], span);
               auto* i = expect_tile("tile.gather", "indices", args[1], span);
               if (args.size() > 2) {   // ISA scratch: ignored on the CPU, type-checked as the reference does
                 auto* t = expect_tile("tile.gather", "tmp", args[2], span);
                 expect_dtype_in("tile.gather", "tmp", t->dtype, {DataType::INT32}, span);
                 PYPTO_USER_CHECK(t->shape.size() == i->shape.size(), span,
                                  "tile.gather: tmp must have the indices' rank " << i->shape.size() << ", got rank "
                                                                                  << t->shape.size(),
                                  "tmp is scratch space; it may be left out");
               }
               expect_dtype_in("tile.gather", "src", s->dtype,
                               {DataType::FP16, DataType::FP32, DataType::INT16, DataType::INT32}, span);
               expect_dtype_in("tile.gather", "indices", i->dtype, {DataType::INT32}, span);
               return TileType::make(i->shape, s->dtype, MemorySpace::Vec, i->valid_shape);   // indices' valid box
             });
  add_op(r, "tile.scatter", {"dst", "src", "indexes"}, {},
         "dst.flat[indexes[i, j]] = src[i, j] in row-major order (last write wins); the result is the updated dst.",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* d = expect_2d("tile.scatter", "dst", args[0], span);
           auto* s = expect_2d("tile.scatter", "src", args[1], span);
           auto* i = expect_2d("tile.scatter", "indexes", args[2], span);
           same_dtype("tile.scatter", args[0], args[1], span);
           expect_dtype_in("tile.scatter", "dst", d->dtype,
                           {DataType::INT8, DataType::INT16, DataType::INT32, DataType::FP16, DataType::FP32,
                            DataType::BF16}, span);
           expect_dtype_in("tile.scatter", "indexes", i->dtype,
                           bit_width(d->dtype) == 32 ? std::initializer_list<DataType>{DataType::INT32}
                                                     : std::initializer_list<DataType>{DataType::INT16}, span);
           PYPTO_USER_CHECK(shape_equal(s->shape, i->shape), span,
                            "tile.scatter: indexes " << describe_shape(i->shape) << " must have src's shape "
                                                     << describe_shape(s->shape), "");
           return args[0]->type;
         });
  add_op(r, "tile.gather_mask", {"src"}, {"mask_pattern", "output_dtype"},
         "Keep the columns a mask pattern selects, packed left: 1/2 even/odd, 3..6 c % 4 == 0..3, 7 all.",
         [](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
           auto* s = expect_2d("tile.gather_mask", "src", args[0], span);
           expect_dtype_in("tile.gather_mask", "src", s->dtype,
                           {DataType::FP16, DataType::FP32, DataType::INT16, DataType::INT32}, span);
           const int64_t pattern = attr_int("tile.gather_mask", attrs, "mask_pattern", 0, span);
           int64_t stride = mask_stride("tile.gather_mask", pattern, span);
           int64_t cols = const_dim(s->shape[1]);
           PYPTO_USER_CHECK(cols > 0 && cols % stride == 0, span,
                            "tile.gather_mask: the column count must be a constant divisible by " << stride, "");
           DataType out = s->dtype;
           if (attrs.count("output_dtype")) {
             Attrs a{{"dtype", attrs.at("output_dtype")}};
             out = attr_dtype("tile.gather_mask", a, span);
             PYPTO_USER_CHECK(bit_width(out) == bit_width(s->dtype), span,
                              "tile.gather_mask: output_dtype must have src's bit width", "");
           }
           // The selected columns of src's valid box stay valid, packed left like the values.
           std::vector<ExprPtr> valid;
           if (s->has_valid_shape()) valid = {s->valid_shape[0], masked_valid_cols(s->valid_shape[1], pattern, stride)};
           return TileType::make({s->shape[0], ConstInt::make(cols / stride)}, out, MemorySpace::Vec, std::move(valid));
         });
  add_op(r, "tile.scatter_mask", {"dst", "src"}, {"mask_pattern"},
         "The inverse of gather_mask: src's k-th element of a row goes to the k-th selected dst column.",
         [](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
           auto* d = expect_2d("tile.scatter_mask", "dst", args[0], span);
           auto* s = expect_2d("tile.scatter_mask", "src", args[1], span);
           same_dtype("tile.scatter_mask", args[0], args[1], span);
           int64_t stride =
               mask_stride("tile.scatter_mask", attr_int("tile.scatter_mask", attrs, "mask_pattern", 0, span), span);
           PYPTO_USER_CHECK(dim_equal(d->shape[0], s->shape[0]) && const_dim(d->shape[1]) > 0 &&
                                const_dim(d->shape[1]) == const_dim(s->shape[1]) * stride,
                            span,
                            "tile.scatter_mask: dst " << describe_shape(d->shape) << " must have src's rows and "
                                                      << stride << "x its columns " << describe_shape(s->shape), "");
           return args[0]->type;
         });
  add_op(r, "tile.scatter_update", {"input", "index", "src"}, {"dim"},
         "input[index.flat[k], :] = src[k, :] for k < index size (2-D input, dim=-2; last write wins).",
         [](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
           PYPTO_USER_CHECK(attr_int("tile.scatter_update", attrs, "dim", -2, span) == -2, span,
                            "tile.scatter_update: only dim=-2 is currently supported", "");
           auto* in = expect_2d("tile.scatter_update", "input", args[0], span);
           auto* idx = expect_2d("tile.scatter_update", "index", args[1], span);
           auto* s = expect_2d("tile.scatter_update", "src", args[2], span);
           same_dtype("tile.scatter_update", args[0], args[2], span);
           expect_int_dtype("tile.scatter_update", "index", idx->dtype, span);
           int64_t n = const_dim(idx->shape[0]) * const_dim(idx->shape[1]);
           PYPTO_USER_CHECK(dim_equal(in->shape[1], s->shape[1]) && (n < 0 || const_dim(s->shape[0]) == n), span,
                            "tile.scatter_update: src must be [index size, d] = [" << n << ", "
                                << describe(in->shape[1]) << "], got " << describe_shape(s->shape), "");
           return args[0]->type;
         });
}

}  // namespace pypto::ir::ops
