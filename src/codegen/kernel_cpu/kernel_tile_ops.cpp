// CPU kernel code generation: tile ops. One handler per op name, each emitting a call to a
// helper of pypto_kernel_prelude.h that writes the op's value into the destination tile.
//
//   tile.load(tensor, [offsets], [shapes])     load<S>(ctx, dst, tensor, dtype, rank, off, shp, name)
//   tile.store(tile, [offsets], tensor)        store<S>(...)           (value: the tensor)
//   tile.add/sub/mul/div/maximum/minimum       binary / binary_scalar  (tile–tile, tile–scalar)
//   tile.exp/log/sqrt/rsqrt/recip              unary_float             (computed in float)
//   tile.neg/abs/relu                          unary
//   tile.row_max/row_sum/row_min               row_reduce / row_sum    ([M, N] -> [M, 1])
//   tile.row_expand_add/sub/mul/div            row_expand              ([M, N] op [M, 1])
//   tile.matmul / tile.matmul_acc              matmul                  (blocked, vectorised)
//   tile.move, tile.cast                       copy / cast
//   tile.full(shape, value)                    fill
#include <map>

#include "kernel_emitter.h"

namespace pypto::codegen::kernel_cpu {

using namespace ir;

namespace {

void CheckArity(const Call& call, size_t n) {
  PYPTO_USER_CHECK(call.args.size() == n, call.span,
                   call.callee << " takes " << n << " arguments, got " << call.args.size(), "");
}

std::vector<ExprPtr> ListArg(const Call& call, size_t i) {
  PYPTO_USER_CHECK(i < call.args.size(), call.span, call.callee << ": missing argument " << i, "");
  if (auto* t = call.args[i]->as<MakeTuple>()) return t->elements;
  return {call.args[i]};
}

bool IsTile(const ExprPtr& e) { return e->type && e->type->is<TileType>(); }

std::string Tpl(const TileRef& dst) { return "<" + StorageKind(dst.dtype) + ">"; }

// Emits `const int64_t name[n] = {...};` and returns name.
std::string IntArray(KernelEmitter& em, const std::string& hint, const std::vector<std::string>& values) {
  const std::string name = em.Fresh(hint);
  std::string s = "const int64_t " + name + "[" + std::to_string(values.size()) + "] = {";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::string("static_cast<int64_t>(") + values[i] + ")";
  em.Line(s + "};");
  return name;
}

void CheckSameShape(const Call& call, const TileRef& a, const TileRef& b) {
  bool same = a.dims.size() == b.dims.size();
  for (size_t i = 0; same && i < a.dims.size(); ++i) same = a.dims[i] == b.dims[i];
  PYPTO_USER_CHECK(same || a.numel() == b.numel(), call.span,
                   call.callee << ": operand tiles have different shapes", "use tiles of the same shape");
}

TileOpHandler Load() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    CheckArity(call, 3);
    auto offs = ListArg(call, 1);
    std::vector<std::string> off, shp;
    for (auto& o : offs) off.push_back(em.Scalar(o));
    for (auto& s : ListArg(call, 2)) shp.push_back(em.Scalar(s));
    PYPTO_USER_CHECK(off.size() == shp.size(), call.span, "pl.load: " << off.size() << " offsets for " << shp.size() << " sizes", "");
    auto* tt = call.args[0]->type->as<TensorType>();
    PYPTO_USER_CHECK(tt != nullptr, call.span, "pl.load: the first argument must be a tensor", "");
    const std::string o = IntArray(em, "off", off), s = IntArray(em, "shp", shp);
    em.Line("if (!pypto_kernel::load" + Tpl(dst) + "(ctx, " + dst.buf + ", " + em.Tensor(call.args[0]) + ", " +
            RuntimeDType(tt->dtype) + ", " + std::to_string(off.size()) + ", " + o + ", " + s + ", \"" +
            em.TensorName(call.args[0]) + "\")) return;");
  };
}

TileOpHandler Binary(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    CheckArity(call, 2);
    const std::string op = "pypto_kernel::" + functor + "{}";
    const std::string ct = CType(dst.dtype);
    if (IsTile(call.args[0]) && IsTile(call.args[1])) {
      TileRef a = em.Tile(call.args[0]), b = em.Tile(call.args[1]);
      CheckSameShape(call, a, b);
      em.Line("pypto_kernel::binary" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + b.buf + ", " + dst.numel() +
              ", " + op + ");");
    } else if (IsTile(call.args[0])) {
      TileRef a = em.Tile(call.args[0]);
      em.Line("pypto_kernel::binary_scalar" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", static_cast<" + ct + ">(" +
              em.Scalar(call.args[1]) + "), " + dst.numel() + ", " + op + ");");
    } else {
      PYPTO_USER_CHECK(IsTile(call.args[1]), call.span, call.callee << ": at least one operand must be a tile", "");
      TileRef b = em.Tile(call.args[1]);
      em.Line("pypto_kernel::binary_scalar" + Tpl(dst) + "(" + dst.buf + ", " + b.buf + ", static_cast<" + ct + ">(" +
              em.Scalar(call.args[0]) + "), " + dst.numel() + ", " + op + ", true);");
    }
  };
}

TileOpHandler Unary(const std::string& functor, bool via_float) {
  return [functor, via_float](KernelEmitter& em, const Call& call, const TileRef& dst) {
    CheckArity(call, 1);
    TileRef a = em.Tile(call.args[0]);
    em.Line(std::string("pypto_kernel::") + (via_float ? "unary_float" : "unary") + Tpl(dst) + "(" + dst.buf + ", " +
            a.buf + ", " + dst.numel() + ", pypto_kernel::" + functor + "{});");
  };
}

TileOpHandler RowReduce(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    CheckArity(call, 1);
    TileRef a = em.Tile(call.args[0]);
    if (functor == "Sum") {
      em.Line("pypto_kernel::row_sum" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + a.rows() + ", " + a.cols() + ");");
    } else {
      em.Line("pypto_kernel::row_reduce" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + a.rows() + ", " + a.cols() +
              ", pypto_kernel::" + functor + "{});");
    }
  };
}

TileOpHandler RowExpand(const std::string& functor) {
  return [functor](KernelEmitter& em, const Call& call, const TileRef& dst) {
    CheckArity(call, 2);
    TileRef a = em.Tile(call.args[0]), r = em.Tile(call.args[1]);
    em.Line("pypto_kernel::row_expand" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + r.buf + ", " + a.rows() + ", " +
            a.cols() + ", pypto_kernel::" + functor + "{});");
  };
}

TileOpHandler Matmul(bool acc) {
  return [acc](KernelEmitter& em, const Call& call, const TileRef& dst) {
    CheckArity(call, acc ? 3 : 2);
    const size_t ai = acc ? 1 : 0;
    TileRef a = em.Tile(call.args[ai]), b = em.Tile(call.args[ai + 1]);
    PYPTO_USER_CHECK(a.dims.size() == 2 && b.dims.size() == 2, call.span, call.callee << " needs 2-D tiles", "");
    const std::string c_init = acc ? em.Tile(call.args[0]).buf : "nullptr";
    em.Line("pypto_kernel::matmul<" + StorageKind(dst.dtype) + ", " + CType(dst.dtype) + ">(" + dst.buf + ", " + c_init + ", " + a.buf + ", " + b.buf + ", " +
            a.dim(0) + ", " + a.dim(1) + ", " + b.dim(1) + ");");
  };
}

// move and cast: a copy when the compute types agree, else a converting cast.
TileOpHandler Convert() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    PYPTO_USER_CHECK(!call.args.empty(), call.span, call.callee << " needs a tile argument", "");
    TileRef a = em.Tile(call.args[0]);
    if (a.dtype == dst.dtype) {
      em.Line("pypto_kernel::copy(" + dst.buf + ", " + a.buf + ", " + dst.numel() + ");");
    } else {
      em.Line("pypto_kernel::cast" + Tpl(dst) + "(" + dst.buf + ", " + a.buf + ", " + dst.numel() + ");");
    }
  };
}

TileOpHandler Full() {
  return [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    // The value is the last scalar argument (shape is a list; dtype is an attr).
    ExprPtr value;
    for (auto& a : call.args) {
      if (!a->is<MakeTuple>() && a->type && a->type->is<ScalarType>()) value = a;
    }
    PYPTO_USER_CHECK(value != nullptr, call.span, "pl.full needs a fill value", "pl.full(shape, dtype, value)");
    em.Line("pypto_kernel::fill" + Tpl(dst) + "(" + dst.buf + ", " + dst.numel() + ", static_cast<" + CType(dst.dtype) +
            ">(" + em.Scalar(value) + "));");
  };
}

const std::map<std::string, TileOpHandler>& Registry() {
  static const std::map<std::string, TileOpHandler> kOps = {
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
  };
  return kOps;
}

}  // namespace

const TileOpHandler* FindTileOp(const std::string& name) {
  auto it = Registry().find(name);
  return it == Registry().end() ? nullptr : &it->second;
}

void KernelEmitter::EmitTileOp(const Call* call, const TileRef& dst) {
  PYPTO_USER_CHECK(call->is_op, call->span, "calls to other functions ('" << call->callee << "') are not supported inside a kernel",
                   "inline the callee's tile ops into the kernel");
  const TileOpHandler* h = FindTileOp(call->callee);
  PYPTO_USER_CHECK(h != nullptr, call->span, "op '" << call->callee << "' is not supported by the CPU kernel backend",
                   "see docs/kernels.md for the tile ops kernels can use");
  (*h)(*this, *call, dst);
}

int KernelEmitter::EmitTensorOp(const Call* call) {
  PYPTO_USER_CHECK(call->is_op && call->callee == "tile.store", call->span,
                   "op '" << call->callee << "' cannot be used inside a kernel on the CPU backend",
                   "kernels write tensors with pl.store(tile, offsets, tensor)");
  CheckArity(*call, 3);
  TileRef t = Tile(call->args[0]);
  auto offs = ListArg(*call, 1);
  std::vector<std::string> off;
  for (auto& o : offs) off.push_back(Scalar(o));
  std::vector<std::string> shp = t.dims;
  // A tile of lower rank than the tensor stores into the trailing axes (leading sizes 1).
  while (shp.size() < off.size()) shp.insert(shp.begin(), "1");
  PYPTO_USER_CHECK(shp.size() == off.size(), call->span,
                   "pl.store: " << off.size() << " offsets for a tile of rank " << t.dims.size(), "");
  auto* tt = call->args[2]->type->as<TensorType>();
  PYPTO_USER_CHECK(tt != nullptr, call->span, "pl.store: the third argument must be a tensor", "");
  PYPTO_USER_CHECK(tt->dtype == t.dtype || (tt->dtype == DataType::INDEX && t.dtype == DataType::INT64), call->span,
                   "pl.store: tile dtype " << to_string(t.dtype) << " differs from tensor dtype " << to_string(tt->dtype),
                   "pl.cast the tile to the tensor's dtype first");
  const int idx = TensorIndex(call->args[2]);
  const std::string o = IntArray(*this, "off", off), s = IntArray(*this, "shp", shp);
  Line("if (!pypto_kernel::store<" + StorageKind(tt->dtype) + ">(ctx, " + t.buf + ", ctx->tensors[" + std::to_string(idx) +
       "], " + RuntimeDType(tt->dtype) + ", " + std::to_string(off.size()) + ", " + o + ", " + s + ", \"" +
       tensor_param_names_.at(idx) + "\")) return;");
  return idx;
}

}  // namespace pypto::codegen::kernel_cpu
