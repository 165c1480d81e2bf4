// CPU kernel code generation for the reference tile op families (spec/reference_ops.md): each
// handler emits one call to a helper of pypto_kernel_ops.h. Operands were checked by the op's
// type inference when the IR was built, so handlers only translate.
//
//   tile.rem(a, b)            binary_bcast<S>(dst, a, ar, ac, b, br, bc, m, n, Rem{})
//   tile.adds(a, s)           binary_scalar<S>(dst, a, (C)(s), n, Add{})
//   tile.cmp(a, b) cmp_type   cmp_mask(dst, a, ar, ac, b, br, bc, m, n, mask_cols, mode)
//   tile.col_sum(a)           col_reduce<S>(dst, a, m, n, Add{})
//   tile.gather(src, idx)     if (!gather(ctx, dst, src, src_n, idx, n, "gather from tile 'src' with indices from tile 'idx'")) return;
//   tile.part_add(a, b)       part_binary<S>(dst, a, ar, ac, avr, avc, b, ..., m, n, Add{})  (valid operands)
#include "kernel_ops_util.h"

#include "pypto/ir/attrs.h"

namespace pypto::codegen::kernel_cpu {

using namespace ir;

namespace {

std::string Fn(const std::string& f) { return "pypto_kernel::" + f + "{}"; }

// Tile x tile with 2-D broadcasting into dst.
TileOpHandler TileTile(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]), b = em.tile(call.args[1]);
    em.line("pypto_kernel::binary_bcast" + Tpl(dst) + "(" + dst.buf + ", " + View(a) + ", " + View(b) + ", " +
            dst.rows() + ", " + dst.cols() + ", " + Fn(functor) + ");");
  };
}

// shl / shr: the result has the shifted tile's dtype (reference_ops.md §3); a count tile of
// another integer dtype is converted first, clamped (shift_counts_as: the same result).
TileOpHandler Shift(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef b = em.tile(call.args[1]);
    if (b.dtype != dst.dtype) {
      auto* bt = call.args[1]->type->as<TileType>();
      TypePtr ct = TileType::make(bt->shape, dst.dtype, bt->memory);
      TileRef c = em.declare_tile("counts", *ct->as<TileType>(), call.args[1]->span);
      em.line("pypto_kernel::shift_counts_as(" + c.buf + ", " + b.buf + ", " + b.numel() + ");");
      b = c;
    }
    TileRef a = em.tile(call.args[0]);
    em.line("pypto_kernel::binary_bcast" + Tpl(dst) + "(" + dst.buf + ", " + View(a) + ", " + View(b) + ", " +
            dst.rows() + ", " + dst.cols() + ", " + Fn(functor) + ");");
  };
}

// Tile x scalar (the scalar converted to the tile's compute type first).
TileOpHandler TileScalar(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]);
    em.line("pypto_kernel::binary_scalar" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " +
            em.scalar_as(call.args[1], dst.dtype) + ", " + dst.numel() + ", " + Fn(functor) + ");");
  };
}

// part_* (§3): op where both operands are valid, the valid one's value where just one is, 0 where
// neither is. Operands without a valid shape are plain broadcast ops.
TileOpHandler PartOp(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]), b = em.tile(call.args[1]);
    if (!a.has_valid() && !b.has_valid()) {
      TileTile(functor)(em, call, dst);
      return;
    }
    em.line("pypto_kernel::part_binary" + Tpl(dst) + "(" + dst.buf + ", " + View(a) + ", " + a.valid_rows() + ", " +
            a.valid_cols() + ", " + View(b) + ", " + b.valid_rows() + ", " + b.valid_cols() + ", " + dst.rows() + ", " +
            dst.cols() + ", " + Fn(functor) + ");");
  };
}

TileOpHandler Ternary(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]), b = em.tile(call.args[1]), c = em.tile(call.args[2]);
    em.line("pypto_kernel::ternary_bcast" + Tpl(dst) + "(" + dst.buf + ", " + View(a) + ", " + View(b) + ", " +
            View(c) + ", " + dst.rows() + ", " + dst.cols() + ", " + Fn(functor) + ");");
  };
}

TileOpHandler ScalarTile(const std::string& functor) {   // addsc / subsc
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]), c = em.tile(call.args[2]);
    em.line("pypto_kernel::binary_scalar_tile" + Tpl(dst) + "(" + dst.buf + ", " + View(a) + ", " + em.scalar_as(call.args[1], dst.dtype) + ", " + View(c) + ", " +
            dst.rows() + ", " + dst.cols() + ", " + Fn(functor) + ");");
  };
}

TileOpHandler UnaryOp(const std::string& functor, bool via_float) {
  return [functor, via_float](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]);
    em.line(std::string("pypto_kernel::") + (via_float ? "unary_float" : "unary") + Tpl(dst) + "(" + dst.buf + ", " +
            a.buf + ", " + dst.numel() + ", " + Fn(functor) + ");");
  };
}

// cmp / cmps: a packed UINT8 mask of the broadcast operands.
TileOpHandler Compare() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]);
    const std::string ct = CType(a.dtype);
    std::string b_view;
    if (IsTile(call.args[1])) {
      b_view = View(em.tile(call.args[1]));
    } else {
      // The scalar is converted to the tile's dtype, as the ISA's TCMPS takes it (and every
      // tile-dtype scalar op, reference_ops.md §1.2): an FP16 / BF16 tile's scalar is rounded to
      // its precision (FP16 `t <= 3.4e38` compares with inf; found by the tile fuzzer, seed 791).
      const bool half = a.dtype == ir::DataType::FP16 || a.dtype == ir::DataType::BF16;
      const std::string s = em.fresh("cmp_rhs");
      const std::string value = em.scalar_as(call.args[1], a.dtype);
      em.line("const " + ct + " " + s + " = " + (half ? "pypto_kernel::scalar_as" + Tpl(a) + "(" + value + ")" : value) +
              ";");
      b_view = "&" + s + ", 1, 1";
    }
    const std::string cols = em.fresh("cmp_cols");
    // The result's column count: the wider operand's (1 broadcasts).
    em.line("const int64_t " + cols + " = std::max<int64_t>(" + a.cols() + ", " +
            (IsTile(call.args[1]) ? em.tile(call.args[1]).cols() : std::string("1")) + ");");
    em.line("pypto_kernel::cmp_mask(" + dst.buf + ", " + View(a) + ", " + b_view + ", " + dst.rows() + ", " + cols +
            ", " + dst.cols() + ", " + std::to_string(IntAttr(call, "cmp_type", 0)) + ");");
  };
}

TileOpHandler Select() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef m = em.tile(call.args[0]), a = em.tile(call.args[1]), b = em.tile(call.args[2]);
    em.line("pypto_kernel::select_mask" + Tpl(dst) + "(" + dst.buf + ", " + m.buf + ", " + m.cols() + ", " + View(a) +
            ", " + View(b) + ", " + dst.rows() + ", " + dst.cols() + ");");
  };
}

TileOpHandler SelectWhole() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]), b = em.tile(call.args[1]);
    em.line("pypto_kernel::binary_bcast" + Tpl(dst) + "(" + dst.buf + ", " + View(a) + ", " + View(b) + ", " +
            dst.rows() + ", " + dst.cols() + ", pypto_kernel::Pick{(" + em.scalar(call.args[2]) + ") == 1});");
  };
}

TileOpHandler Expands() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    em.line("pypto_kernel::fill" + Tpl(dst) + "(" + dst.buf + ", " + dst.numel() + ", static_cast<" + CType(dst.dtype) +
            ">(" + em.scalar(call.args[1]) + "));");
  };
}

// Row reductions read the valid box only (§1.5, §6).
TileOpHandler RowReduceOp(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]);
    if (a.has_valid()) {
      em.line("pypto_kernel::row_reduce_valid" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + a.valid_rows() + ", " +
              a.valid_cols() + ", " + a.rows() + ", " + a.cols() + ", " + Fn(functor) + ");");
      return;
    }
    em.line("pypto_kernel::row_reduce" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + a.rows() + ", " + a.cols() +
            ", " + Fn(functor) + ");");
  };
}

TileOpHandler RowExpandOp(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]), r = em.tile(call.args[1]);
    em.line("pypto_kernel::row_expand" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + r.buf + ", " +
            dst.valid_rows() + ", " + a.cols() + ", " + Fn(functor) + ");");   // the valid rows (§1.5)
  };
}

TileOpHandler ColReduce(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]);
    // Only the valid rows are reduced (§1.5); whole rows keep the loop vectorisable, and the
    // columns past the valid ones land outside the result's valid box.
    em.line("pypto_kernel::col_reduce" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + a.valid_rows() + ", " +
            a.cols() + ", " + Fn(functor) + ");");
  };
}

// tile.sum / max / min with an axis: the last axis is a row reduction, axis 0 of a 2-D tile a
// column reduction.
TileOpHandler AxisReduce(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]);
    const int64_t rank = static_cast<int64_t>(a.dims.size());
    const int64_t axis = (IntAttr(call, "axis", 0) + rank) % rank;
    const bool rows = axis == rank - 1;
    if (!rows) {   // the valid rows only (§1.5)
      em.line("pypto_kernel::col_reduce" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + a.valid_rows() + ", " +
              a.cols() + ", " + Fn(functor) + ");");
      return;
    }
    std::string fn = functor == "Add" ? "row_sum" : "row_reduce";
    std::string extents = a.rows() + ", " + a.cols();
    if (a.has_valid()) {   // the valid box only (§1.5)
      fn += "_valid";
      extents = a.valid_rows() + ", " + a.valid_cols() + ", " + a.rows() + ", " + a.cols();
    }
    em.line("pypto_kernel::" + fn + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + extents +
            (functor == "Add" ? std::string("") : ", " + Fn(functor)) + ");");
  };
}

TileOpHandler ColExpand(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]), c = em.tile(call.args[1]);
    em.line("pypto_kernel::col_expand" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + c.buf + ", " +
            dst.valid_rows() + ", " + a.cols() + ", " + Fn(functor) + ");");   // the valid rows (§1.5)
  };
}

TileOpHandler Transpose() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]);
    em.line("pypto_kernel::transpose(" + dst.buf + ", " + View(a) + ");");
  };
}

TileOpHandler CopyOp() {   // reshape: the same elements in row-major order
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]);
    em.line("pypto_kernel::copy(" + dst.buf + ", " + a.buf + ", " + dst.numel() + ");");
  };
}

}  // namespace

void EmitPadOutsideValid(KernelEmitter& em, const Call& call, const TileRef& t, bool zero_filled) {
  auto* pad = attr_get<std::string>(call.attrs, "pad_value");
  if (!t.has_valid() || !pad || *pad == "null" || (zero_filled && *pad == "zero")) return;
  const int mode = *pad == "zero" ? 0 : *pad == "max" ? 1 : 2;
  em.line("pypto_kernel::fillpad_valid(" + t.buf + ", " + t.buf + ", " + t.rows() + ", " + t.cols() + ", " +
          t.valid_rows() + ", " + t.valid_cols() + ", " + std::to_string(mode) + ");");
}

namespace {

// fillpad (§10): the valid box of the operand, the pad value outside it; a copy for a fully valid
// tile. fillpad_inplace pads the operand's own buffer, then the result is a copy of it.
TileOpHandler FillPad(bool inplace) {
  return [inplace](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]);
    const std::string into = inplace ? a.buf : dst.buf;
    if (a.has_valid()) {
      auto* pad = attr_get<std::string>(call.attrs, "pad_value");
      const int mode = !pad || *pad == "zero" ? 0 : *pad == "max" ? 1 : 2;
      em.line("pypto_kernel::fillpad_valid(" + into + ", " + a.buf + ", " + a.rows() + ", " + a.cols() + ", " +
              a.valid_rows() + ", " + a.valid_cols() + ", " + std::to_string(mode) + ");");
    }
    if ((inplace || !a.has_valid()) && dst.buf != a.buf) {
      em.line("pypto_kernel::copy(" + dst.buf + ", " + a.buf + ", " + dst.numel() + ");");
    }
  };
}

// set_validshape (§9): metadata only; the result's declaration checked the new extents.
TileOpHandler SetValidShape() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]);
    if (dst.buf != a.buf) em.line("pypto_kernel::copy(" + dst.buf + ", " + a.buf + ", " + dst.numel() + ");");
  };
}

TileOpHandler Concat() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]), b = em.tile(call.args[1]);
    em.line("pypto_kernel::concat_cols(" + dst.buf + ", " + a.buf + ", " + a.cols() + ", " + b.buf + ", " + b.cols() +
            ", " + a.rows() + ");");
  };
}

// How an index failure names a tile operand, in DSL terms: its Var ("tile 'ta'"), the tensor a
// nested load reads ("tensor 'a'": pl.gather(a, idx) on tensors), a nested pl.create_tensor /
// pl.full ("a new tile": pl.scatter(pl.create_tensor(...), a, idx)), else "a computed tile".
std::string OperandLabel(const ExprPtr& e) {
  if (const Var* v = as_var(e)) return "tile '" + v->name + "'";
  auto* call = e->as<Call>();
  if (call && call->callee == "tile.load" && !call->args.empty()) {
    if (const Var* t = as_var(call->args[0])) return "tensor '" + t->name + "'";
  }
  if (call && call->callee == "tile.full") return "a new tile";
  return "a computed tile";
}

// The `what` literal of an index-checked helper ("gather from tile 'ta' with indices from tile
// 'ti'"): pypto.runtime.dsl_terms reads it back to locate a failure at the op's DSL line.
// Identifiers hold no quote or backslash, so the names need no escaping.
std::string IndexWhat(const std::string& op, const ExprPtr& indexed, const ExprPtr& indices) {
  return "\"" + op + " " + OperandLabel(indexed) + " with indices from " + OperandLabel(indices) + "\"";
}

// The `what` literal of a block-checked helper ("tile.slice of tile 'ta'", "tile.assemble into
// tile 't'"), read back the same way.
std::string OpWhat(const std::string& op, const ExprPtr& operand) { return "\"" + op + " " + OperandLabel(operand) + "\""; }

// extract (src, r, c, shape) and slice (tile, shape, [r, c]): a bounds-checked block copy.
TileOpHandler Block(bool is_slice) {
  return [is_slice](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]);
    std::string r0, c0, rows = dst.rows(), cols = dst.cols();
    if (is_slice) {
      auto off = ListArg(call, 2), win = ListArg(call, 1);
      r0 = em.scalar(off[0]);
      c0 = em.scalar(off[1]);
      // The window before drop_dims: a dropped [8, 1] column is copied as such into its [1, 8] tile
      // (same row-major order).
      rows = em.scalar(win[0]);
      cols = em.scalar(win[1]);
    } else {
      r0 = em.scalar(call.args[1]);
      c0 = em.scalar(call.args[2]);
    }
    em.line("if (!pypto_kernel::extract_block(ctx, " + dst.buf + ", " + View(a) + ", static_cast<int64_t>(" + r0 +
            "), static_cast<int64_t>(" + c0 + "), " + rows + ", " + cols + ", " +
            OpWhat(call.callee + " of", call.args[0]) + ")) return;");
    if (is_slice) EmitPadOutsideValid(em, call, dst, /*zero_filled=*/false);
  };
}

TileOpHandler Assemble() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef t = em.tile(call.args[0]), s = em.tile(call.args[1]);
    auto off = ListArg(call, 2);
    const std::string at = ", static_cast<int64_t>(" + em.scalar(off[0]) + "), static_cast<int64_t>(" +
                           em.scalar(off[1]) + "), " + OpWhat("tile.assemble into", call.args[0]);
    if (s.has_valid()) {   // only the source's valid region is written (§9)
      em.line("if (!pypto_kernel::assemble_valid(ctx, " + dst.buf + ", " + View(t) + ", " + View(s) + ", " +
              s.valid_rows() + ", " + s.valid_cols() + at + ")) return;");
      return;
    }
    em.line("if (!pypto_kernel::assemble(ctx, " + dst.buf + ", " + View(t) + ", " + View(s) + at + ")) return;");
  };
}

TileOpHandler Create() {
  return [](KernelEmitter& em, const Call&, const TileRef& dst) {
    em.line("pypto_kernel::fill" + Tpl(dst) + "(" + dst.buf + ", " + dst.numel() + ", " + CType(dst.dtype) + "{});");
  };
}

TileOpHandler Arange() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    em.line("pypto_kernel::arange(" + dst.buf + ", static_cast<int64_t>(" + em.scalar(call.args[0]) + "), " +
            dst.numel() + ", " + (IntAttr(call, "descending", 0) ? "true" : "false") + ");");
  };
}

TileOpHandler Gather() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef s = em.tile(call.args[0]), i = em.tile(call.args[1]);
    const std::string what = IndexWhat("gather from", call.args[0], call.args[1]);
    if (i.has_valid()) {   // only the indices' valid box is read (§1.5)
      em.line("if (!pypto_kernel::gather_valid(ctx, " + dst.buf + ", " + s.buf + ", " + s.numel() + ", " + i.buf +
              ", " + i.rows() + ", " + i.cols() + ", " + i.valid_rows() + ", " + i.valid_cols() + ", " + what +
              ")) return;");
      return;
    }
    em.line("if (!pypto_kernel::gather(ctx, " + dst.buf + ", " + s.buf + ", " + s.numel() + ", " + i.buf + ", " +
            i.numel() + ", " + what + ")) return;");
  };
}

TileOpHandler Scatter() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef d = em.tile(call.args[0]), s = em.tile(call.args[1]), i = em.tile(call.args[2]);
    const std::string what = IndexWhat("scatter into", call.args[0], call.args[2]);
    if (s.has_valid() || i.has_valid()) {   // only the valid box of src and indexes is scattered (§1.5)
      em.line("if (!pypto_kernel::scatter_valid(ctx, " + dst.buf + ", " + d.buf + ", " + d.numel() + ", " + s.buf +
              ", " + i.buf + ", " + s.rows() + ", " + s.cols() + ", std::min<int64_t>(" + s.valid_rows() + ", " +
              i.valid_rows() + "), std::min<int64_t>(" + s.valid_cols() + ", " + i.valid_cols() + "), " + what +
              ")) return;");
      return;
    }
    em.line("if (!pypto_kernel::scatter(ctx, " + dst.buf + ", " + d.buf + ", " + d.numel() + ", " + s.buf + ", " +
            i.buf + ", " + s.numel() + ", " + what + ")) return;");
  };
}

TileOpHandler GatherMask() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef s = em.tile(call.args[0]);
    if (s.has_valid()) {   // only src's valid box is read; dst is zero outside its valid box (§1.5)
      em.line("pypto_kernel::gather_mask_valid<" + StorageKind(s.dtype) + ", " + StorageKind(dst.dtype) + ", " +
              CType(s.dtype) + ", " + CType(dst.dtype) + ">(" + dst.buf + ", " + View(s) + ", " + s.valid_rows() +
              ", " + s.valid_cols() + ", " + std::to_string(IntAttr(call, "mask_pattern", 7)) + ");");
      return;
    }
    em.line("pypto_kernel::gather_mask<" + StorageKind(s.dtype) + ", " + StorageKind(dst.dtype) + ", " + CType(s.dtype) +
            ", " + CType(dst.dtype) + ">(" + dst.buf + ", " + View(s) + ", " +
            std::to_string(IntAttr(call, "mask_pattern", 7)) + ");");
  };
}

TileOpHandler ScatterMask() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef d = em.tile(call.args[0]), s = em.tile(call.args[1]);
    if (s.has_valid()) {   // only src's valid box is scattered (§1.5)
      em.line("pypto_kernel::scatter_mask_valid(" + dst.buf + ", " + d.buf + ", " + s.buf + ", " + d.rows() + ", " +
              d.cols() + ", " + s.valid_rows() + ", " + s.valid_cols() + ", " +
              std::to_string(IntAttr(call, "mask_pattern", 7)) + ");");
      return;
    }
    em.line("pypto_kernel::scatter_mask(" + dst.buf + ", " + d.buf + ", " + s.buf + ", " + d.rows() + ", " + d.cols() +
            ", " + std::to_string(IntAttr(call, "mask_pattern", 7)) + ");");
  };
}

TileOpHandler ScatterUpdate() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef in = em.tile(call.args[0]), idx = em.tile(call.args[1]), s = em.tile(call.args[2]);
    const std::string what = IndexWhat("scatter_update of", call.args[0], call.args[1]);
    if (idx.has_valid() || s.has_valid()) {   // only the valid boxes of index and src are read (§1.5)
      em.line("if (!pypto_kernel::scatter_update_valid(ctx, " + dst.buf + ", " + View(in) + ", " + idx.buf + ", " +
              idx.cols() + ", " + idx.valid_rows() + ", " + idx.valid_cols() + ", " + s.buf + ", " + s.rows() + ", " +
              s.valid_rows() + ", " + s.valid_cols() + ", " + what + ")) return;");
      return;
    }
    em.line("if (!pypto_kernel::scatter_update(ctx, " + dst.buf + ", " + View(in) + ", " + idx.buf + ", " + idx.numel() +
            ", " + s.buf + ", " + what + ")) return;");
  };
}

TileOpHandler MatmulBias() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]), b = em.tile(call.args[1]), bias = em.tile(call.args[2]);
    em.line("pypto_kernel::matmul_bias" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + b.buf + ", " + bias.buf +
            ", " + a.dim(0) + ", " + a.dim(1) + ", " + b.dim(1) + ");");
  };
}

// Operand t's stride, in matrices, along the two batch axes of the result (a result with fewer
// batch dims has leading ones): t's batch dims aligned from the right, 0 where t broadcasts (a dim
// it lacks or has as 1).
std::vector<std::string> BatchStrides(const TileRef& t) {
  std::vector<std::string> strides(2, "0");
  const size_t own = t.dims.size() - 2;   // t's batch dims, the last `own` of the result's
  std::string later = "1";
  int64_t later_value = 1;                // while every dim so far is a literal
  for (size_t k = 0; k < own; ++k) {
    const std::string& d = t.dims[own - 1 - k];
    const bool literal = !d.empty() && d.find_first_not_of("0123456789") == std::string::npos;
    if (literal && d == "1") continue;    // broadcast: stride 0, later unchanged
    strides[1 - k] = literal ? later : "(" + d + " == 1 ? 0 : " + later + ")";
    if (literal && later_value > 0) {
      later_value *= std::stoll(d);
      later = std::to_string(later_value);
    } else {
      later_value = 0;
      later = "(" + later + ") * " + d;
    }
  }
  for (auto& s : strides) s = "static_cast<int64_t>(" + s + ")";
  return strides;
}

TileOpHandler BatchMatmul(bool acc) {
  return [acc](KernelEmitter& em, const Call& call, const TileRef& dst) {
    const size_t ai = acc ? 1 : 0;
    TileRef a = em.tile(call.args[ai]), b = em.tile(call.args[ai + 1]);
    const std::string c_init = acc ? em.tile(call.args[0]).buf : "nullptr";
    const size_t ra = a.dims.size(), rb = b.dims.size(), batch_rank = dst.dims.size() - 2;
    const auto as = BatchStrides(a), bs = BatchStrides(b);
    const std::string d0 = batch_rank == 2 ? dst.dims[0] : "static_cast<int64_t>(1)";
    const std::string d1 = batch_rank >= 1 ? dst.dims[batch_rank - 1] : "static_cast<int64_t>(1)";
    em.line("pypto_kernel::batch_matmul<" + StorageKind(dst.dtype) + ", " + CType(dst.dtype) + ">(" + dst.buf + ", " +
            c_init + ", " + a.buf + ", " + as[0] + ", " + as[1] + ", " + b.buf + ", " + bs[0] + ", " + bs[1] + ", " +
            d0 + ", " + d1 + ", " + a.dims[ra - 2] + ", " + a.dims[ra - 1] + ", " + b.dims[rb - 1] + ");");
  };
}

}  // namespace

void AddReferenceTileOps(std::map<std::string, TileOpHandler>& ops) {
  for (auto [op, fn] : std::vector<std::pair<const char*, const char*>>{
           {"rem", "Rem"}, {"and", "And"}, {"or", "Or"}, {"xor", "Xor"}, {"prelu", "LRelu"}}) {
    ops[std::string("tile.") + op] = TileTile(fn);
  }
  ops["tile.shl"] = Shift("Shl");
  ops["tile.shr"] = Shift("Shr");
  for (auto [op, fn] : std::vector<std::pair<const char*, const char*>>{
           {"part_add", "Add"}, {"part_mul", "Mul"}, {"part_max", "Max"}, {"part_min", "Min"}}) {
    ops[std::string("tile.") + op] = PartOp(fn);
  }
  for (auto [op, fn] : std::vector<std::pair<const char*, const char*>>{
           {"adds", "Add"}, {"subs", "Sub"}, {"muls", "Mul"}, {"divs", "Div"}, {"maximums", "Max"},
           {"minimums", "Min"}, {"rems", "Rem"}, {"ands", "And"}, {"ors", "Or"}, {"xors", "Xor"},
           {"shls", "Shl"}, {"shrs", "Shr"}, {"lrelu", "LRelu"}}) {
    ops[std::string("tile.") + op] = TileScalar(fn);
  }
  ops["tile.addc"] = Ternary("Add");
  ops["tile.subc"] = Ternary("Sub");
  ops["tile.addsc"] = ScalarTile("Add");
  ops["tile.subsc"] = ScalarTile("Sub");
  ops["tile.expands"] = Expands();
  ops["tile.sin"] = UnaryOp("Sin", true);
  ops["tile.cos"] = UnaryOp("Cos", true);
  ops["tile.not"] = UnaryOp("Not", false);
  ops["tile.cmp"] = Compare();
  ops["tile.cmps"] = Compare();
  ops["tile.sel"] = Select();
  ops["tile.sels"] = SelectWhole();
  ops["tile.row_prod"] = RowReduceOp("Mul");
  ops["tile.row_expand"] = RowExpandOp("Second");
  ops["tile.row_expand_max"] = RowExpandOp("Max");
  ops["tile.row_expand_min"] = RowExpandOp("Min");
  ops["tile.row_expand_expdif"] = RowExpandOp("ExpDif");
  ops["tile.sum"] = AxisReduce("Add");
  ops["tile.max"] = AxisReduce("Max");
  ops["tile.min"] = AxisReduce("Min");
  ops["tile.col_sum"] = ColReduce("Add");
  ops["tile.col_max"] = ColReduce("Max");
  ops["tile.col_min"] = ColReduce("Min");
  ops["tile.col_prod"] = ColReduce("Mul");
  for (auto [op, fn] : std::vector<std::pair<const char*, const char*>>{
           {"col_expand", "Second"}, {"col_expand_add", "Add"}, {"col_expand_sub", "Sub"}, {"col_expand_mul", "Mul"},
           {"col_expand_div", "Div"}, {"col_expand_max", "Max"}, {"col_expand_min", "Min"},
           {"col_expand_expdif", "ExpDif"}}) {
    ops[std::string("tile.") + op] = ColExpand(fn);
  }
  ops["tile.transpose"] = Transpose();
  ops["tile.transpose_view"] = Transpose();
  ops["tile.reshape"] = CopyOp();
  ops["tile.fillpad"] = FillPad(false);
  ops["tile.fillpad_inplace"] = FillPad(true);
  ops["tile.set_validshape"] = SetValidShape();
  ops["tile.concat"] = Concat();
  ops["tile.extract"] = Block(false);
  ops["tile.slice"] = Block(true);
  ops["tile.assemble"] = Assemble();
  ops["tile.create"] = Create();
  ops["tile.ci"] = Arange();
  ops["tile.arange"] = Arange();
  ops["tile.gather"] = Gather();
  ops["tile.scatter"] = Scatter();
  ops["tile.gather_mask"] = GatherMask();
  ops["tile.scatter_mask"] = ScatterMask();
  ops["tile.scatter_update"] = ScatterUpdate();
  ops["tile.matmul_bias"] = MatmulBias();
  ops["tile.gemv_bias"] = MatmulBias();
  ops["tile.batch_matmul"] = BatchMatmul(false);
  ops["tile.batch_matmul_acc"] = BatchMatmul(true);
}

}  // namespace pypto::codegen::kernel_cpu
