// CPU kernel code generation for element access, the vector-lane index and barriers
// (spec/reference_ops.md §10, §13):
//
//   tile.read(t, [i, j])        pypto_kernel::tile_at(ctx, t, "k.py", 7, {i, j}, {rows, cols})  (a scalar;
//                               each index checked against its own axis)
//   tile.write(t, [i, j], v)    tile_set<S>(ctx, t, "k.py", 8, {i, j}, {rows, cols}, v) — in place on t; a bound result
//                               is a copy of the updated t
//   tile.get_subblock_idx()     0 (the CPU runs one vector lane)
//   system.bar_v() ...          nothing (a CPU kernel runs in program order)
//   tile.mscatter(src, idx, t)  mscatter<S>(ctx, src, idx, n, t, dtype, "t"[, decl, rank]) (a tensor value)
//   tile.gather_row(dst, t, ..) gather_row<S>(ctx, out, dst, dr, dc, t, dtype, do0, do1, so0, so1, r, c, decl, tr, "t")
//   tensor.write(t, [i, j], v)  element_flat_index(ctx, "k.py", 9, "tensor.write", {i, j}, {d0, d1}) (per-axis check);
//                               float wval[1] = {v}; store<S>(ctx, wval, t, dtype, 2, widx, wshp, "t", decl)
//                               (a scalar store to global memory, anchor_features §11; a tensor value)
#include "kernel_ops_util.h"

#include "pypto/ir/attrs.h"

namespace pypto::codegen::kernel_cpu {

using namespace ir;

namespace {

// `"file", line, {i, j}, {d0, d1}`: the DSL site, the call's indices (list arg 1) and the tile's
// extents, for tile_at / tile_set, which check every index against its own axis.
std::string IndexArgs(KernelEmitter& em, const Call& call, const TileRef& t) {
  auto idx = ListArg(call, 1);
  std::string is, ds;
  for (size_t k = 0; k < idx.size(); ++k) {
    is += (k ? ", " : "") + std::string("static_cast<int64_t>(") + em.scalar(idx[k]) + ")";
    const std::string d = t.dim(k);
    const bool literal = d.find_first_not_of("0123456789") == std::string::npos;
    ds += (k ? ", " : "") + (literal ? d : "static_cast<int64_t>(" + d + ")");
  }
  return common::CppSourceSiteArgs(call.span) + ", {" + is + "}, {" + ds + "}";
}

}  // namespace

void AddAccessScalarOps(std::map<std::string, ScalarOpPrinter>& ops) {
  ops["tile.read"] = [](KernelEmitter& em, const Call& call) {
    TileRef t = em.tile(call.args[0]);
    return "pypto_kernel::tile_at(ctx, " + t.buf + ", " + IndexArgs(em, call, t) + ")";
  };
  ops["tile.get_subblock_idx"] = [](KernelEmitter&, const Call&) { return std::string("static_cast<int64_t>(0)"); };
  for (const char* barrier : {"system.sync_src", "system.sync_dst", "system.bar_v", "system.bar_m", "system.bar_all"}) {
    ops[barrier] = [](KernelEmitter&, const Call& call) { return "0 /* " + call.callee + ": no-op on the CPU */"; };
  }
}

// ", decl, rank" for mscatter: indices flat over the declared shape, clipped to a smaller
// run-time tensor (§18); empty for a fully dynamic shape.
static std::string MscatterDecl(KernelEmitter& em, const TensorType* tt, int t) {
  const std::string decl = DeclArg(em, tt, t);
  return decl.empty() ? decl : decl + ", " + std::to_string(tt->shape.size());
}

int EmitMscatter(KernelEmitter& em, const Call& call) {
  TileRef src = em.tile(call.args[0]), idx = em.tile(call.args[1]);
  auto* tt = call.args[2]->type->as<TensorType>();
  const int t = em.tensor_index(call.args[2]);
  em.line("if (!pypto_kernel::mscatter<" + StorageKind(tt->dtype) + ">(ctx, " + src.buf + ", " + idx.buf + ", " +
          src.numel() + ", ctx->tensors[" + std::to_string(t) + "], " + RuntimeDType(tt->dtype) + ", \"" +
          em.tensor_name(call.args[2]) + "\"" + MscatterDecl(em, tt, t) + ")) return;");
  return t;
}

int EmitTensorWrite(KernelEmitter& em, const Call& call) {
  // A one-element store: checked against the declared shape, clipped to a smaller run-time
  // tensor (a clamped slice, §18), noted by the race checker as a write.
  auto* tt = call.args[0]->type->as<TensorType>();
  const int t = em.tensor_index(call.args[0]);
  std::vector<std::string> idx, ones;
  for (auto& i : ListArg(call, 1)) {
    idx.push_back(em.scalar(i));
    ones.push_back("1");
  }
  // Each index against its own axis first (the declared extent, or the run-time one where the
  // declaration is dynamic — what the store checks too), so the error names tensor.write and the
  // DSL line rather than the internal store.
  std::string is, ds;
  for (size_t a = 0; a < idx.size(); ++a) {
    auto* c = tt->shape[a]->as<ConstInt>();
    is += (a ? ", " : "") + std::string("static_cast<int64_t>(") + idx[a] + ")";
    ds += (a ? ", " : "") + (c ? std::to_string(c->value)
                               : "static_cast<int64_t>(ctx->tensors[" + std::to_string(t) + "].shapes[" +
                                     std::to_string(a) + "])");
  }
  em.line("if (pypto_kernel::element_flat_index(ctx, " + common::CppSourceSiteArgs(call.span) + ", \"tensor.write\", {" +
          is + "}, {" + ds + "}) < 0) return;");
  const std::string ct = CType(tt->dtype), v = em.scalar_as(call.args[2], tt->dtype);
  const std::string o = IntArray(em, "widx", idx), s = IntArray(em, "wshp", ones), decl = DeclArg(em, tt, t);
  em.line("if (!pypto_kernel::store_one<" + StorageKind(tt->dtype) + ", " + ct + ">(ctx, " + v + ", ctx->tensors[" + std::to_string(t) +
          "], " + RuntimeDType(tt->dtype) + ", " + std::to_string(idx.size()) + ", " + o + ", " + s + ", \"" +
          em.tensor_name(call.args[0]) + "\"" + decl + ")) return;");
  return t;
}

void AddAccessTileOps(std::map<std::string, TileOpHandler>& ops) {
  ops["tile.gather_row"] = [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef d = em.tile(call.args[0]);
    auto* tt = call.args[1]->type->as<TensorType>();
    auto doff = ListArg(call, 2), soff = ListArg(call, 3), shp = ListArg(call, 4);
    auto* tr = attr_get<bool>(call.attrs, "transpose");
    auto i64 = [&em](const ExprPtr& e) { return "static_cast<int64_t>(" + em.scalar(e) + ")"; };
    const std::string decl = DeclArg(em, tt, em.tensor_index(call.args[1]));   // §18 clipping
    em.line("if (!pypto_kernel::gather_row" + Tpl(d) + "(ctx, " + dst.buf + ", " + d.buf + ", " + d.rows() + ", " +
            d.cols() + ", " + em.tensor(call.args[1]) + ", " + RuntimeDType(tt->dtype) + ", " + i64(doff[0]) + ", " +
            i64(doff[1]) + ", " + i64(soff[0]) + ", " + i64(soff[1]) + ", " + i64(shp[0]) + ", " + i64(shp[1]) +
            (decl.empty() ? std::string(", nullptr") : decl) + ", " + (tr && *tr ? "true" : "false") + ", \"" +
            em.tensor_name(call.args[1]) + "\")) return;");
  };
  ops["tile.write"] = [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef t = em.tile(call.args[0]);
    em.line("if (!pypto_kernel::tile_set" + Tpl(t) + "(ctx, " + t.buf + ", " + IndexArgs(em, call, t) + ", " +
            em.scalar(call.args[2]) + ")) return;");
    if (dst.buf != t.buf) em.line("pypto_kernel::copy(" + dst.buf + ", " + t.buf + ", " + dst.numel() + ");");
  };
}

}  // namespace pypto::codegen::kernel_cpu
