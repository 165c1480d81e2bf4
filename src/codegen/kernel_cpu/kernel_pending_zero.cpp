// Pending zeros: an FP32 `tile.full(0)` whose buffer is its own (a named tile, or a loop slot it
// initialises) is not filled where it is defined. A `bool` declared next to the buffer says its
// zeros are still owed; whatever reads or writes the buffer first writes them (`if (flag)
// { fill; flag = false; }`, emitted by tile(), emit_tile_op and yields), except a matmul_acc
// accumulating into it, which passes nullptr while the flag is set: the FP32 matmul then
// computes a @ b without reading the buffer, the bits of accumulating into zeros (+0 start,
// pypto_kernel_matmul.h). So the tiled GEMM's `acc = full(0); for k: acc = matmul_acc(acc, ..)`
// writes no 32 KB of zeros per task. The flag is run-time state: a use inside a branch or a
// loop that does not run leaves it set for the next use, and a loop that runs no iteration
// leaves the zeros to the store after it. It is a print-time rule on the buffer names the
// emitter hands out (no IR walk): every path from an IR value to its buffer goes through the
// three hooks.
#include <cmath>

#include "kernel_emitter.h"

namespace pypto::codegen::kernel_cpu {

using namespace ir;

namespace {

// `tile.full(shape, 0)` of an FP32 tile with no valid shape: +0 only (a -0.0 fill is not the
// +0 a matmul's accumulators start from).
bool IsZeroFill(const Call& call, const TileRef& dst) {
  if (!call.is_op || call.callee != "tile.full" || call.args.size() < 2) return false;
  if (dst.dtype != DataType::FP32 || dst.has_valid()) return false;
  auto* tt = call.type ? call.type->as<TileType>() : nullptr;
  if (!tt || tt->dtype != DataType::FP32 || tt->has_valid_shape()) return false;
  if (auto* f = call.args[1]->as<ConstFloat>()) return f->value == 0.0 && !std::signbit(f->value);
  if (auto* i = call.args[1]->as<ConstInt>()) return i->value == 0;
  return false;
}

}  // namespace

bool KernelEmitter::defer_zero_fill(const Call& call, const TileRef& dst) {
  if (!IsZeroFill(call, dst) || zero_flags_.count(dst.buf)) return false;
  const std::string flag = fresh(dst.buf + "_zero");
  line("[[maybe_unused]] bool " + flag + " = true;  // " + dst.buf + " = tile.full(0), written when first used");
  // A tile nothing uses afterwards (a dead `full(0)`, or one assigned again before any use)
  // then has no statement naming its buffer: g++ -Wall warned of an unused variable.
  line("(void)" + dst.buf + ";");
  zero_flags_[dst.buf] = flag;
  return true;
}

std::string KernelEmitter::pending_zero_flag(const TileRef& t) const {
  auto it = zero_flags_.find(t.buf);
  return it == zero_flags_.end() ? "" : it->second;
}

void KernelEmitter::write_pending_zeros(const TileRef& t) {
  const std::string flag = pending_zero_flag(t);
  if (flag.empty()) return;
  line("if (" + flag + ") {  // " + t.buf + "'s pending tile.full(0)");
  line("  pypto_kernel::fill<pypto_kernel::Storage::F32>(" + t.buf + ", " + t.numel() + ", 0.0f);");
  line("  " + flag + " = false;");
  line("}");
}

TileRef KernelEmitter::tile_keeping_zeros(const ExprPtr& e) {
  if (const Var* v = as_var(e)) {
    auto it = tiles_.find(v);
    if (it != tiles_.end()) return it->second;
  }
  return tile(e);
}

}  // namespace pypto::codegen::kernel_cpu
