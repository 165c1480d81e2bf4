// Element access, lane index and barriers of the reference tile ops (spec/reference_ops.md §10,
// §13), and the cast-mode names of tile.cast.
//
//   tile.read(t, [i, j])          -> Scalar[t.dtype]           (pl.tile.read(t, [i, j]))
//   tile.write(t, [i, j], v)      -> type of t, t updated in place (v must have t's dtype)
//   tile.get_subblock_idx()       -> Scalar[INDEX], 0 on the CPU (one vector lane)
//   system.sync_src / sync_dst / bar_v / bar_m / bar_all  -> no value; no-ops on the CPU
//   tile.mscatter(src, idx, out)  -> type of out: out.flat[idx[i, j]] = src[i, j] (last wins)
//   tile.gather_row(dst, src, [do0, do1], [so0, so1], [r, c]) -> type of dst, dst updated in place
//                                 with src[so0:so0+r, so1:so1+c] (transpose=True: placed as [c, r])
//   tile.store(..., atomic="Add") -> adds into the tensor (checked here: check_store_atomic)
#include "../describe.h"
#include "op_util.h"
#include "tile_op_helpers.h"
#include "pypto/ir/const_integer.h"
#include "pypto/ir/error.h"

namespace pypto::ir::ops {

using detail::describe;

int CastModeIndex(const std::string& mode) {
  static const char* const kModes[] = {"none", "rint", "round", "floor", "ceil", "trunc", "odd"};
  for (int i = 0; i < 7; ++i) {
    if (mode == kModes[i] || mode == std::to_string(i)) return i;
  }
  return -1;
}

namespace {

using Args = std::vector<ExprPtr>;

// The indices of tile.read / tile.write: one integer scalar per tile axis.
const TileType* check_indices(const std::string& op, const Args& args, const Span& span) {
  auto* t = expect_tile(op, "tile", args[0], span);
  auto idx = expect_int_list(op, "indices", args[1], span);
  PYPTO_USER_CHECK(idx.size() == t->shape.size(), span,
                   op << ": indices count (" << idx.size() << ") must match tile rank (" << t->shape.size() << ")",
                   "give one index per axis, e.g. [i, j] for a 2-D tile");
  expect_const_indices_inside(op, idx, t->shape, span);
  return t;
}

void dtype_in(const std::string& op, const std::string& what, DataType d, std::initializer_list<DataType> ok,
              const Span& span) {
  std::string names;
  for (DataType o : ok) {
    if (o == d) return;
    names += std::string(names.empty() ? "" : ", ") + to_string(o);
  }
  throw UserError(op + ": " + what + " dtype must be one of " + names + ", got " + to_string(d), span, "");
}

int64_t const_or(const ExprPtr& e, int64_t def) {
  auto* c = e->as<ConstInt>();
  return c ? c->value : def;
}

}  // namespace

void check_store_atomic(const Attrs& attrs, DataType dtype, const Span& span) {
  if (!attrs.count("atomic")) return;
  auto* a = attr_get<std::string>(attrs, "atomic");
  PYPTO_USER_CHECK(a && (*a == "None_" || *a == "Add"), span,
                   "tile.store: atomic must be pl.AtomicType.None_ or pl.AtomicType.Add", "");
  if (*a == "Add") {
    const bool ok = dtype == DataType::FP32 || dtype == DataType::FP16 || dtype == DataType::INT32 ||
                    dtype == DataType::INT16 || dtype == DataType::INT8;
    PYPTO_USER_CHECK(ok, span, "tile.store: atomic=Add supports FP32, FP16, INT32, INT16 and INT8, got " << to_string(dtype),
                     "store a tile of a supported dtype (pl.cast) or store without atomic=");
  }
}

void register_tile_access_ops(OpRegistry& r) {
  add_op(r, "tile.read", {"tile", "indices"}, {}, "One element of a tile as a scalar: pl.tile.read(t, [i, j]).",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           return ScalarType::make(check_indices("tile.read", args, span)->dtype);
         });
  add_op(r, "tile.write", {"tile", "indices", "value"}, {},
         "Set one element of a tile in place: pl.tile.write(t, [i, j], v); v has exactly t's dtype.",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* t = check_indices("tile.write", args, span);
           auto* v = expect_numeric_scalar("tile.write", "value", args[2], span);
           PYPTO_USER_CHECK(v->dtype == t->dtype, span,
                            "tile.write: value " << describe(args[2]->type) << " must have the tile's dtype "
                                                 << to_string(t->dtype),
                            std::string("convert it first: pl.cast(v, pl.") + to_string(t->dtype) + ")");
           return args[0]->type;
         });
  add_op(r, "tile.mscatter", {"src", "idx", "output_tensor"}, {},
         "Scatter a tile into a tensor by flat row-major index: out.flat[idx[i, j]] = src[i, j]; the result is the tensor.",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* s = expect_tile("tile.mscatter", "src", args[0], span);
           auto* i = expect_tile("tile.mscatter", "idx", args[1], span);
           auto* t = expect_tensor("tile.mscatter", "output_tensor", args[2], span);
           dtype_in("tile.mscatter", "src", s->dtype,
                                         {DataType::FP16, DataType::FP32, DataType::INT16, DataType::INT32}, span);
           dtype_in("tile.mscatter", "idx", i->dtype, {DataType::INT32}, span);
           PYPTO_USER_CHECK(shape_equal(i->shape, s->shape), span,
                            "tile.mscatter: idx " << describe(args[1]->type) << " must have src's shape", "");
           PYPTO_USER_CHECK(t->dtype == s->dtype, span,
                            "tile.mscatter: output_tensor dtype " << to_string(t->dtype) << " differs from src dtype "
                                                                 << to_string(s->dtype),
                            "convert the tile with pl.cast(tile, dtype)");
           return args[2]->type;
         });
  tile_helpers::add_op_opt(
      r, "tile.gather_row", {"dst", "src", "dst_offset", "src_offset", "shapes"}, 5, {"transpose"},
      "Copy src[so0:so0+r, so1:so1+c] of a tensor into tile dst at (do0, do1), in place ([c, r] with transpose=True).",
      [](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
        auto* d = tile_helpers::expect_2d("tile.gather_row", "dst", args[0], span);
        auto* s = expect_tensor("tile.gather_row", "src", args[1], span);
        PYPTO_USER_CHECK(s->shape.size() == 2, span, "tile.gather_row: src must be a 2-D tensor, got " << describe(args[1]->type), "");
        PYPTO_USER_CHECK(s->dtype == d->dtype, span,
                         "tile.gather_row: src dtype " << to_string(s->dtype) << " differs from dst dtype " << to_string(d->dtype), "");
        auto doff = expect_int_list("tile.gather_row", "dst_offset", args[2], span);
        auto soff = expect_int_list("tile.gather_row", "src_offset", args[3], span);
        auto shp = tile_helpers::expect_const_shape("tile.gather_row", "shapes", args[4], span);
        PYPTO_USER_CHECK(doff.size() == 2 && soff.size() == 2 && shp.size() == 2, span,
                         "tile.gather_row: dst_offset, src_offset and shapes must have 2 entries each", "");
        expect_bool_attr("tile.gather_row", attrs, "transpose", span);
        auto* tr = attr_get<bool>(attrs, "transpose");
        int64_t h = const_or(shp[0], -1), w = const_or(shp[1], -1);
        if (tr && *tr) std::swap(h, w);
        const int64_t extent[2] = {h, w};
        for (int k = 0; k < 2; ++k) {
          const int64_t o = const_or(doff[k], -1), n = const_or(d->shape[k], -1);
          PYPTO_USER_CHECK(o < 0 || n < 0 || o + extent[k] <= n, span,
                           "tile.gather_row: block [" << o << ", " << o + extent[k] << ") of dst dimension " << k
                                                      << " is outside the tile's " << n,
                           "");
        }
        // The src block [so, so + shapes) against the tensor's declared extents (a smaller run-time
        // view is clipped; one past the declared shape always fails the run).
        for (int k = 0; k < 2; ++k) {
          const auto c = ConstIntegerValue(soff[k]);   // (expect_int_list folded literal arithmetic)
          const int64_t o = c ? *c : 0, r = const_or(shp[k], -1), n = const_or(s->shape[k], -1);
          PYPTO_USER_CHECK(o >= 0 && (!c || r < 0 || n < 0 || o <= n - r), span,
                           "tile.gather_row: block [" << o << ", " << block_end(o, r) << ") of src dimension " << k
                                                      << " is outside the tensor's " << n,
                           "src_offset + shapes must stay within the src tensor's shape");
        }
        return args[0]->type;
      });
  add_op(r, "tile.get_subblock_idx", {}, {}, "Which vector lane runs a split kernel; always 0 on the CPU.",
         [](const Args&, const Attrs&, const Span&) -> TypePtr { return ScalarType::make(DataType::INDEX); });
  for (const char* name : {"system.sync_src", "system.sync_dst", "system.bar_v", "system.bar_m", "system.bar_all"}) {
    add_op(r, name, {}, {"set_pipe", "wait_pipe", "event_id"},
           "An intra-core pipeline barrier; a no-op on the CPU (a kernel runs in program order).",
           [](const Args&, const Attrs&, const Span&) -> TypePtr { return TupleType::unit(); });
  }
}

}  // namespace pypto::ir::ops
