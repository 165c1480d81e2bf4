// KernelShareTileMoves (kernel pipeline)
//
// What: stamps Call::shares_source_tile on every tile.move of every kernel: true when the move
//   keeps the dtype (IsPlainTileMove), so on the CPU, where memory spaces do not exist, its
//   result is the source tile itself (no buffer, no copy); false for a converting move.
//       t_1 = pl.move(t, target_memory=pl.MemorySpace.Left)
//     ==>
//       t_1 = pl.move(t, target_memory=pl.MemorySpace.Left, shares_source_tile=True)
// Input invariants: none. Output invariants: TileMoveSharingStamped; nothing else changes.
// Why: the CPU kernel backend binds such a move to its source's buffer from this stamp instead
//   of deciding while it prints.
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// Stamps every tile.move of a kernel body (arguments first, so nested moves are stamped too).
struct Stamper : IRMutator {
  ExprPtr mutate_(const Call* op, const ExprPtr& self) override {
    ExprPtr e = IRMutator::mutate_(op, self);
    auto* call = e->as<Call>();
    if (!call || !call->is_op || call->callee != "tile.move") return e;
    return with_shares_source_tile(e, IsPlainTileMove(*call));
  }
  using IRMutator::mutate_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (!fn->is_kernel() || !fn->body) continue;
    Stamper s;
    FunctionPtr stamped = s.mutate_function(fn);
    if (stamped != fn) out = out->with_function(stamped);
  }
  return out;
}

}  // namespace

Pass KernelShareTileMoves() {
  return Pass{"KernelShareTileMoves", {}, {IRProperty::TileMoveSharingStamped}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
