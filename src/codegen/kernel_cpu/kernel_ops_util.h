// Internal to the CPU kernel backend: small emission helpers shared by the tile op handler
// files (kernel_tile_ops.cpp, kernel_ops_*.cpp).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "kernel_emitter.h"

namespace pypto::codegen::kernel_cpu {

inline bool IsTile(const ir::ExprPtr& e) { return e->type && e->type->is<ir::TileType>(); }
// "<pypto_kernel::Storage::F32>": the storage template argument of a helper call.
inline std::string Tpl(const TileRef& t) { return "<" + StorageKind(t.dtype) + ">"; }
// The elements of a list argument (a MakeTuple), or the argument itself.
std::vector<ir::ExprPtr> ListArg(const ir::Call& call, size_t i);
// Emits `const int64_t name[n] = {...};` and returns name.
std::string IntArray(KernelEmitter& em, const std::string& hint, const std::vector<std::string>& values);
// "a, ar, ac": a tile operand as pointer, rows and cols of its 2-D view.
inline std::string View(const TileRef& t) { return t.buf + ", " + t.rows() + ", " + t.cols(); }
// ", decl" (declared extents of a tensor operand, for load / store clipping, §18) or "".
std::string DeclArg(KernelEmitter& em, const ir::TensorType* tt, int tensor_index);
// An integer attr of the call (`def` when absent; type inference has checked it).
int64_t IntAttr(const ir::Call& call, const std::string& key, int64_t def);
// The pad_value attr of a slice / load (spec reference_ops.md §9): writes the pad value into the
// elements of `t` outside its valid box; nothing for a fully valid tile, for "null" / no attr,
// and for "zero" when the op already zero-filled (`zero_filled`).
//   tile.slice(x, [8, 16], [0, 0], [3, 16]) pad_value="max"  ->  fillpad_valid(t, t, 8, 16, 3, 16, 1);
void EmitPadOutsideValid(KernelEmitter& em, const ir::Call& call, const TileRef& t, bool zero_filled);

// Registers the handlers of the reference op families (kernel_ops_reference.cpp).
void AddReferenceTileOps(std::map<std::string, TileOpHandler>& ops);
// tile.write (kernel_ops_access.cpp).
void AddAccessTileOps(std::map<std::string, TileOpHandler>& ops);
// Registers the printers of tile.read, tile.get_subblock_idx and the system barriers
// (kernel_ops_access.cpp). A new scalar- or tensor-valued op gets its handler here and its kind
// in the kernel op table (pypto/ir/kernel_ops.h), which the verifier reads; test_kernel_op_table
// fails when the two differ.
void AddAccessScalarOps(std::map<std::string, ScalarOpPrinter>& ops);
// Registers the printers of system.reserve_buffer / system.import_peer_buffer (the buffer's
// base address, an import's stamped by ResolvePeerBufferBases, 0 for AUTO) and
// system.aic/aiv_initialize_pipe (a no-op that only evaluates its buffer arguments)
// (kernel_pipe_buffers.cpp; spec anchor_features §8).
void AddPipeBufferScalarOps(std::map<std::string, ScalarOpPrinter>& ops);
// tile.mscatter(src, idx, tensor): emits the scatter and returns the tensor's index.
int EmitMscatter(KernelEmitter& em, const ir::Call& call);
// tensor.write(t, indices, v) in a kernel: emits the one-element store and returns t's index
// (kernel_ops_access.cpp; spec anchor_features §11).
int EmitTensorWrite(KernelEmitter& em, const ir::Call& call);

}  // namespace pypto::codegen::kernel_cpu
