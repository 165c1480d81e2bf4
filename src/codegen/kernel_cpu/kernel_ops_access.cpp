// CPU kernel code generation for element access, the vector-lane index and barriers
// (spec/reference_ops.md §10, §13):
//
//   tile.read(t, [i, j])        pypto_kernel::tile_at(ctx, t, n, (i) * cols + (j))       (a scalar)
//   tile.write(t, [i, j], v)    tile_set<S>(ctx, t, n, flat, v) — in place on t; a bound result
//                               is a copy of the updated t
//   tile.get_subblock_idx()     0 (the CPU runs one vector lane)
//   system.bar_v() ...          nothing (a CPU kernel runs in program order)
#include "kernel_ops_util.h"

namespace pypto::codegen::kernel_cpu {

using namespace ir;

namespace {

// Row-major flat index of `indices` (the call's list arg 1) in tile `t`.
std::string FlatIndex(KernelEmitter& em, const Call& call, const TileRef& t) {
  auto idx = ListArg(call, 1);
  std::string flat;
  for (size_t k = 0; k < idx.size(); ++k) {
    const std::string i = "static_cast<int64_t>(" + em.Scalar(idx[k]) + ")";
    flat = flat.empty() ? i : "(" + flat + ") * " + t.dim(k) + " + " + i;
  }
  return flat.empty() ? "0" : flat;
}

bool IsBarrier(const std::string& op) {
  return op == "system.sync_src" || op == "system.sync_dst" || op == "system.bar_v" || op == "system.bar_m" ||
         op == "system.bar_all";
}

}  // namespace

bool AccessScalarText(KernelEmitter& em, const Call& call, std::string* out) {
  if (!call.is_op) return false;
  if (call.callee == "tile.read") {
    TileRef t = em.Tile(call.args[0]);
    *out = "pypto_kernel::tile_at(ctx, " + t.buf + ", " + t.numel() + ", " + FlatIndex(em, call, t) + ")";
    return true;
  }
  if (call.callee == "tile.get_subblock_idx") {
    *out = "static_cast<int64_t>(0)";
    return true;
  }
  if (IsBarrier(call.callee)) {
    *out = "0 /* " + call.callee + ": no-op on the CPU */";
    return true;
  }
  return false;
}

void AddAccessTileOps(std::map<std::string, TileOpHandler>& ops) {
  ops["tile.write"] = [](KernelEmitter& em, const Call& call, const TileRef& dst) {
    TileRef t = em.Tile(call.args[0]);
    const std::string flat = em.Fresh("widx"), value = em.Scalar(call.args[2]);
    em.Line("const int64_t " + flat + " = " + FlatIndex(em, call, t) + ";");
    em.Line("if (!pypto_kernel::tile_set" + Tpl(t) + "(ctx, " + t.buf + ", " + t.numel() + ", " + flat + ", " + value +
            ")) return;");
    if (dst.buf != t.buf) em.Line("pypto_kernel::copy(" + dst.buf + ", " + t.buf + ", " + dst.numel() + ");");
  };
}

}  // namespace pypto::codegen::kernel_cpu
