// Element access, lane index and barriers of the reference tile ops (spec/reference_ops.md §10,
// §13), and the cast-mode names of tile.cast.
//
//   tile.read(t, [i, j])          -> Scalar[t.dtype]           (pl.tile.read(t, [i, j]))
//   tile.write(t, [i, j], v)      -> type of t, t updated in place (v must have t's dtype)
//   tile.get_subblock_idx()       -> Scalar[INDEX], 0 on the CPU (one vector lane)
//   system.sync_src / sync_dst / bar_v / bar_m / bar_all  -> no value; no-ops on the CPU
#include "../describe.h"
#include "op_util.h"
#include "tile_op_helpers.h"
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
  return t;
}

}  // namespace

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
  add_op(r, "tile.get_subblock_idx", {}, {}, "Which vector lane runs a split kernel; always 0 on the CPU.",
         [](const Args&, const Attrs&, const Span&) -> TypePtr { return ScalarType::make(DataType::INDEX); });
  for (const char* name : {"system.sync_src", "system.sync_dst", "system.bar_v", "system.bar_m", "system.bar_all"}) {
    add_op(r, name, {}, {"set_pipe", "wait_pipe", "event_id"},
           "An intra-core pipeline barrier; a no-op on the CPU (a kernel runs in program order).",
           [](const Args&, const Attrs&, const Span&) -> TypePtr { return TupleType::unit(); });
  }
}

}  // namespace pypto::ir::ops
