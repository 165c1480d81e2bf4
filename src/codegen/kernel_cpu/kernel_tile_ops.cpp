// CPU kernel code generation: tile ops. One handler per op name, each emitting a call to a
// helper of pypto_kernel_prelude.h that writes the op's value into the destination tile.
//
//   tile.load(tensor, [offsets], [shapes])     load<S>(ctx, dst, tensor, dtype, rank, off, shp, name)
//   tile.load(..., [valid]) / transpose=True   load_valid<S>(..., valid, ...) / then transpose
//
// A tile whose type has a valid shape (spec anchor_features §10; pypto_kernel_valid.h): element-wise
// ops compute its valid rows, reductions and matmul read only its valid box, stores write only it.
//   tile.store(tile, [offsets], tensor)        store<S>(...)           (value: the tensor)
//   tile.add/sub/mul/div/maximum/minimum       binary / binary_scalar  (tile–tile, tile–scalar)
//   tile.exp/log/sqrt/rsqrt/recip              unary_float             (computed in float)
//   tile.neg/abs/relu                          unary
//   tile.row_max/row_sum/row_min               row_reduce / row_sum    ([M, N] -> [M, 1])
//   tile.row_expand_add/sub/mul/div            row_expand              ([M, N] op [M, 1])
//   tile.matmul / tile.matmul_acc              matmul                  (blocked, vectorised)
//   tile.move, tile.cast                       copy / cast
//   tile.full(shape, value)                    fill
#include <algorithm>
#include <map>

#include "kernel_ops_util.h"
#include "pypto/ir/attrs.h"
#include "pypto/ir/op_registry.h"

namespace pypto::codegen::kernel_cpu {

using namespace ir;

std::vector<ExprPtr> ListArg(const Call& call, size_t i) {
  PYPTO_CHECK(i < call.args.size(), call.callee << ": missing argument " << i);
  if (auto* t = call.args[i]->as<MakeTuple>()) return t->elements;
  return {call.args[i]};
}

std::string IntArray(KernelEmitter& em, const std::string& hint, const std::vector<std::string>& values) {
  const std::string name = em.fresh(hint);
  std::string s = "const int64_t " + name + "[" + std::to_string(values.size()) + "] = {";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::string("static_cast<int64_t>(") + values[i] + ")";
  em.line(s + "};");
  return name;
}

int64_t IntAttr(const Call& call, const std::string& key, int64_t def) {
  if (auto* v = attr_get<int64_t>(call.attrs, key)) return *v;
  if (auto* b = attr_get<bool>(call.attrs, key)) return *b ? 1 : 0;
  return def;
}

// ", x_decl": the declared extents of a tensor operand as a trailing load / store argument, so
// the helper checks the box against the parameter's shape and clips it to a smaller run-time
// tensor (a clamped slice, spec anchor_features §18). Empty for a fully dynamic shape (the
// run-time extents are the declared ones).
std::string DeclArg(KernelEmitter& em, const TensorType* tt, int tensor_index) {
  if (!tt || std::none_of(tt->shape.begin(), tt->shape.end(), [](const ExprPtr& d) { return d->is<ConstInt>(); }))
    return "";
  const std::string t = "ctx->tensors[" + std::to_string(tensor_index) + "]";
  std::vector<std::string> dims;
  for (size_t a = 0; a < tt->shape.size(); ++a) {
    auto* c = tt->shape[a]->as<ConstInt>();
    dims.push_back(c ? std::to_string(c->value) : t + ".shapes[" + std::to_string(a) + "]");
  }
  return ", " + IntArray(em, "decl", dims);
}

namespace {

TileOpHandler Load() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    // tile.load's type inference checked the tensor, one offset and one size per tensor axis.
    auto offs = ListArg(call, 1);
    std::vector<std::string> off, shp;
    for (auto& o : offs) off.push_back(em.scalar(o));
    for (auto& s : ListArg(call, 2)) shp.push_back(em.scalar(s));
    auto* tt = call.args[0]->type->as<TensorType>();
    const std::string o = IntArray(em, "off", off), s = IntArray(em, "shp", shp);
    const int ti = em.tensor_index(call.args[0]);
    const std::string decl = DeclArg(em, tt, ti);
    const bool transpose = IntAttr(call, "transpose", 0) != 0;
    // transpose=True (§10): load the block in tensor coordinates, then transpose it into dst.
    TileRef box = dst;
    if (transpose) {
      auto* dt = call.type->as<TileType>();
      box = em.declare_tile("block", *TileType::make(ListArg(call, 2), dt->dtype, dt->memory), call.span);
    }
    if (!dst.ptr.empty()) {   // reads_in_place (KernelInPlaceMatmulLoads): plain FP32 rank 2, only matmul reads it
      em.line("const float* " + dst.ptr + " = nullptr;");
      em.line("int64_t " + dst.ld + " = 0;");
      em.line("if (!pypto_kernel::load_view" + Tpl(dst) + "(ctx, " + dst.buf + ", &" + dst.ptr + ", &" + dst.ld +
              ", ctx->tensors[" + std::to_string(ti) + "], " + RuntimeDType(tt->dtype) + ", " +
              std::to_string(off.size()) + ", " + o + ", " + s + ", \"" + em.tensor_name(call.args[0]) + "\"" + decl +
              ")) return;");
      return;
    }
    std::string helper = "load", valid;
    if (dst.has_valid()) {   // only the valid box is read, the rest of the tile is 0
      helper = "load_valid";
      // The box in tensor coordinates: transpose swapped back, dropped axes (extent 1) put back.
      std::vector<std::string> v = dst.valid;
      if (transpose) std::swap(v[v.size() - 1], v[v.size() - 2]);
      std::vector<ExprPtr> drop;
      if (auto* l = attr_get<std::vector<ExprPtr>>(call.attrs, "drop_dims")) drop = *l;
      std::vector<int64_t> axes;
      for (auto& d : drop) axes.push_back(d->as<ConstInt>()->value);   // checked by type inference
      std::sort(axes.begin(), axes.end());
      for (int64_t a : axes) v.insert(v.begin() + a, "1");
      valid = ", " + (transpose || !axes.empty() ? IntArray(em, "vld", v) : dst.valid_arr);
    }
    em.line("if (!pypto_kernel::" + helper + Tpl(dst) + "(ctx, " + box.buf + ", ctx->tensors[" + std::to_string(ti) +
            "], " + RuntimeDType(tt->dtype) + ", " + std::to_string(off.size()) + ", " + o + ", " + s + valid + ", \"" +
            em.tensor_name(call.args[0]) + "\"" + decl + ")) return;");
    if (transpose) em.line("pypto_kernel::transpose(" + dst.buf + ", " + box.buf + ", " + box.rows() + ", " + box.cols() + ");");
    EmitPadOutsideValid(em, call, dst, /*zero_filled=*/true);
  };
}

// A tile operand of another dtype than the result (mixed-dtype add/sub/mul/div promote,
// reference_ops.md §1.3), converted into a temporary of the result's dtype first.
TileRef Promoted(KernelEmitter& em, const ExprPtr& operand, const TileRef& dst) {
  TileRef t = em.tile(operand);
  if (t.dtype == dst.dtype) return t;
  auto* tt = operand->type->as<TileType>();
  TypePtr pt = TileType::make(tt->shape, dst.dtype, tt->memory);
  TileRef p = em.declare_tile("promoted", *pt->as<TileType>(), operand->span);
  em.line("pypto_kernel::cast" + Tpl(p) + "(" + p.buf + ", " + t.buf + ", " + t.numel() + ");");
  return p;
}

TileOpHandler Binary(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    const std::string op = "pypto_kernel::" + functor + "{}";
    const std::string ct = CType(dst.dtype);
    if (IsTile(call.args[0]) && IsTile(call.args[1])) {
      TileRef a = Promoted(em, call.args[0], dst), b = Promoted(em, call.args[1], dst);
      if (a.dims == dst.dims && b.dims == dst.dims) {
        em.line("pypto_kernel::binary" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + b.buf + ", " +
                dst.valid_prefix() + ", " + op + ");");
      } else {  // broadcast ([M, N] with [1, N], [M, 1], ...), checked by the op's type inference
        em.line("pypto_kernel::binary_bcast" + Tpl(dst) + "(" + dst.buf + ", " + View(a) + ", " + View(b) + ", " +
                dst.rows() + ", " + dst.cols() + ", " + op + ");");
      }
    } else if (IsTile(call.args[0])) {
      TileRef a = em.tile(call.args[0]);
      em.line("pypto_kernel::binary_scalar" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + em.scalar_as(call.args[1], dst.dtype) + ", " + dst.valid_prefix() + ", " + op + ");");
    } else {  // scalar op tile (IR built directly; the DSL puts the tile first)
      TileRef b = em.tile(call.args[1]);
      em.line("pypto_kernel::binary_scalar" + Tpl(dst) + "(" + dst.buf + ", " + b.buf + ", " + em.scalar_as(call.args[0], dst.dtype) + ", " + dst.valid_prefix() + ", " + op + ", true);");
    }
  };
}

TileOpHandler Unary(const std::string& functor, bool via_float) {
  return [functor, via_float](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]);
    em.line(std::string("pypto_kernel::") + (via_float ? "unary_float" : "unary") + Tpl(dst) + "(" + dst.buf + ", " +
            a.buf + ", " + dst.valid_prefix() + ", pypto_kernel::" + functor + "{});");
  };
}

TileOpHandler RowReduce(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]);
    if (a.has_valid()) {   // only the valid box: [valid_rows, 1] (§10)
      const std::string v = a.valid_rows() + ", " + a.valid_cols() + ", " + a.rows() + ", " + a.cols();
      if (functor == "Sum") {
        em.line("pypto_kernel::row_sum_valid" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + v + ");");
      } else {
        em.line("pypto_kernel::row_reduce_valid" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + v +
                ", pypto_kernel::" + functor + "{});");
      }
      return;
    }
    if (functor == "Sum") {
      em.line("pypto_kernel::row_sum" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + a.rows() + ", " + a.cols() + ");");
    } else {
      em.line("pypto_kernel::row_reduce" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + a.rows() + ", " + a.cols() +
              ", pypto_kernel::" + functor + "{});");
    }
  };
}

TileOpHandler RowExpand(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]), r = em.tile(call.args[1]);
    em.line("pypto_kernel::row_expand" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + r.buf + ", " +
            (dst.has_valid() ? dst.valid_rows() : a.rows()) + ", " + a.cols() + ", pypto_kernel::" + functor + "{});");
  };
}

TileOpHandler Matmul(bool acc) {
  return [acc](KernelEmitter& em, const Call& call, const TileRef& dst) {
    const size_t ai = acc ? 1 : 0;
    TileRef a = em.tile(call.args[ai]), b = em.tile(call.args[ai + 1]);
    const bool valid = a.has_valid() || b.has_valid() || dst.has_valid();
    // An accumulator with pending zeros (kernel_pending_zero.cpp): nullptr while they are owed
    // (a @ b, not reading it); into its own buffer, the zeros are then no longer owed.
    std::string c_init = "nullptr", owed;
    if (acc) {
      TileRef c = valid ? em.tile(call.args[0]) : em.tile_keeping_zeros(call.args[0]);
      owed = valid ? "" : em.pending_zero_flag(c);
      c_init = owed.empty() ? c.buf : "(" + owed + " ? nullptr : " + c.buf + ")";
      if (c.buf != dst.buf) owed.clear();
    }
    auto emit = [&](const std::string& text) {
      em.line(text);
      if (!owed.empty()) em.line(owed + " = false;");
    };
    if (valid) {   // reads only the valid elements (§10)
      emit("pypto_kernel::matmul_valid<" + StorageKind(dst.dtype) + ", " + CType(dst.dtype) + ">(" + dst.buf + ", " +
           c_init + ", " + a.buf + ", " + b.buf + ", " + a.dim(0) + ", " + a.dim(1) + ", " + b.dim(1) + ", " +
           a.valid_rows() + ", std::min<int64_t>(" + a.valid_cols() + ", " + b.valid_rows() + "), " + b.valid_cols() +
           ");");
      return;
    }
    if (!a.ptr.empty() || !b.ptr.empty()) {   // an operand read in place (load_view): its row stride
      auto p = [](const TileRef& t) { return t.ptr.empty() ? t.buf : t.ptr; };
      auto ld = [](const TileRef& t) { return t.ld.empty() ? t.dim(1) : t.ld; };
      emit("pypto_kernel::matmul_strided<" + StorageKind(dst.dtype) + ", " + CType(dst.dtype) + ">(" + dst.buf + ", " +
           c_init + ", " + p(a) + ", " + ld(a) + ", " + p(b) + ", " + ld(b) + ", " + a.dim(0) + ", " + a.dim(1) + ", " +
           b.dim(1) + ");");
      return;
    }
    emit("pypto_kernel::matmul<" + StorageKind(dst.dtype) + ", " + CType(dst.dtype) + ">(" + dst.buf + ", " + c_init +
         ", " + a.buf + ", " + b.buf + ", " + a.dim(0) + ", " + a.dim(1) + ", " + b.dim(1) + ");");
  };
}

// move and cast: a copy when the compute types agree, else a converting cast.
TileOpHandler Convert() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef a = em.tile(call.args[0]);
    if (call.callee == "tile.cast" && is_float(a.dtype) && is_integer(dst.dtype)) {   // float -> int: the mode
      auto* m = attr_get<std::string>(call.attrs, "mode");
      const int mode = m ? ir::ops::CastModeIndex(*m) : 2;   // the reference's default "round"
      em.line("pypto_kernel::cast_mode" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + dst.valid_prefix() + ", " +
              std::to_string(mode) + ");");
      return;
    }
    if (a.dtype == dst.dtype) {
      em.line("pypto_kernel::copy(" + dst.buf + ", " + a.buf + ", " + dst.valid_prefix() + ");");
    } else {
      em.line("pypto_kernel::cast" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + dst.valid_prefix() + ");");
    }
  };
}

TileOpHandler Full() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    const ExprPtr& value = call.args[1];   // tile.full(shape, value), dtype an attr
    em.line("pypto_kernel::fill" + Tpl(dst) + "(" + dst.buf + ", " + dst.numel() + ", static_cast<" + CType(dst.dtype) +
            ">(" + em.scalar(value) + "));");
  };
}

const std::map<std::string, TileOpHandler>& Registry() {
  static std::map<std::string, TileOpHandler> kOps = {
      {"tile.load", Load()},
      {"tile.add", Binary("Add")},
      {"tile.sub", Binary("Sub")},
      {"tile.mul", Binary("Mul")},
      {"tile.div", Binary("Div")},
      {"tile.maximum", Binary("Max")},
      {"tile.minimum", Binary("Min")},
      {"tile.exp", Unary("Exp", true)},
      {"tile.log", Unary("Log", true)},
      {"tile.sqrt", Unary("Sqrt", true)},
      {"tile.rsqrt", Unary("Rsqrt", true)},
      {"tile.recip", Unary("Recip", true)},
      {"tile.neg", Unary("Neg", false)},
      {"tile.abs", Unary("Abs", false)},
      {"tile.relu", Unary("Relu", false)},
      {"tile.row_max", RowReduce("Max")},
      {"tile.row_min", RowReduce("Min")},
      {"tile.row_sum", RowReduce("Sum")},
      {"tile.row_expand_add", RowExpand("Add")},
      {"tile.row_expand_sub", RowExpand("Sub")},
      {"tile.row_expand_mul", RowExpand("Mul")},
      {"tile.row_expand_div", RowExpand("Div")},
      {"tile.matmul", Matmul(false)},
      {"tile.matmul_acc", Matmul(true)},
      {"tile.move", Convert()},
      {"tile.cast", Convert()},
      {"tile.full", Full()},
      {"tile.gemv", Matmul(false)},
      {"tile.gemv_acc", Matmul(true)},
  };
  static const bool kWithReference = (AddReferenceTileOps(kOps), AddAccessTileOps(kOps), true);
  (void)kWithReference;
  return kOps;
}

}  // namespace

const std::map<std::string, TileOpHandler>& TileOps() { return Registry(); }

const TileOpHandler* FindTileOp(const std::string& name) {
  auto it = Registry().find(name);
  return it == Registry().end() ? nullptr : &it->second;
}

const std::map<std::string, TensorOpHandler>& TensorOps() {
  static const std::map<std::string, TensorOpHandler> kOps = {
      {"tile.store", [](KernelEmitter& em, const Call& call) { return em.store(call); }},
      {"tile.mscatter", EmitMscatter},
      {"tensor.write", EmitTensorWrite},
  };
  return kOps;
}

void KernelEmitter::emit_tile_op(const Call* call, const TileRef& dst) {
  // VerifyKernelProgram checked it is a tile op of the CPU backend (ops::check_kernel_tile_op).
  const TileOpHandler* h = FindTileOp(call->callee);
  PYPTO_CHECK(h != nullptr, "tile op '" << call->callee << "' has no CPU kernel handler");
  // A destination with pending zeros (kernel_pending_zero.cpp) gets them first, unless it is
  // this matmul_acc's accumulator (the Matmul handler passes nullptr for it while they are owed).
  if (!pending_zero_flag(dst).empty()) {
    const Var* acc = call->callee == "tile.matmul_acc" && !call->args.empty() ? as_var(call->args[0]) : nullptr;
    auto it = acc ? tiles_.find(acc) : tiles_.end();
    if (it == tiles_.end() || it->second.buf != dst.buf) write_pending_zeros(dst);
  }
  (*h)(*this, *call, dst);
}

int KernelEmitter::emit_tensor_op(const Call* call) {
  auto it = call->is_op ? TensorOps().find(call->callee) : TensorOps().end();
  PYPTO_CHECK(it != TensorOps().end(), "'" << call->callee << "' as a kernel tensor value (VerifyKernelProgram refuses it)");
  return it->second(*this, *call);
}

int KernelEmitter::store(const Call& store_call) {
  const Call* call = &store_call;
  TileRef t = tile(call->args[0]);
  auto offs = ListArg(*call, 1);
  std::vector<std::string> off;
  for (auto& o : offs) off.push_back(scalar(o));
  std::vector<std::string> shp = t.dims;
  // A tile of lower rank than the tensor stores into the trailing axes (leading sizes 1).
  while (shp.size() < off.size()) shp.insert(shp.begin(), "1");
  // tile.store's type inference checked the tensor, the offsets' count, the dtype and the rank.
  auto* tt = call->args[2]->type->as<TensorType>();
  const int idx = tensor_index(call->args[2]);
  const std::string o = IntArray(*this, "off", off), s = IntArray(*this, "shp", shp);
  const std::string decl = DeclArg(*this, tt, idx);
  auto* atomic = attr_get<std::string>(call->attrs, "atomic");
  const bool add = atomic && *atomic == "Add";
  if (t.has_valid()) {   // only the valid box is written (§10)
    std::vector<std::string> v = t.valid;
    while (v.size() < off.size()) v.insert(v.begin(), "1");
    const std::string va = v.size() == t.valid.size() ? t.valid_arr : IntArray(*this, "vld", v);
    line("if (!pypto_kernel::store_valid<" + StorageKind(tt->dtype) + ">(ctx, " + t.buf + ", ctx->tensors[" +
         std::to_string(idx) + "], " + RuntimeDType(tt->dtype) + ", " + std::to_string(off.size()) + ", " + o + ", " + s +
         ", " + va + ", \"" + tensor_param_names_.at(idx) + "\"" + (decl.empty() ? ", nullptr" : decl) +
         (add ? ", true" : "") + ")) return;");
    return idx;
  }
  const std::string helper = add ? "store_add" : "store";   // atomic=Add: adds into t
  line("if (!pypto_kernel::" + helper + "<" + StorageKind(tt->dtype) + ">(ctx, " + t.buf + ", ctx->tensors[" + std::to_string(idx) +
       "], " + RuntimeDType(tt->dtype) + ", " + std::to_string(off.size()) + ", " + o + ", " + s + ", \"" +
       tensor_param_names_.at(idx) + "\"" + decl + ")) return;");
  return idx;
}

}  // namespace pypto::codegen::kernel_cpu
