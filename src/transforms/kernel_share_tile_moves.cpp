// KernelShareTileMoves (kernel pipeline)
//
// What: stamps Call::shares_source_tile on every tile.move of every kernel: true when the move
//   keeps the dtype (IsPlainTileMove), so on the CPU, where memory spaces do not exist, its
//   result is the source tile itself (no buffer, no copy), and neither tile is written in place
//   (the first operand of tile.write, tile.fillpad_inplace or tile.gather_row: a write into one
//   would show in the other, where the accelerator's move made a copy); false otherwise.
//       t_1 = pl.move(t, target_memory=pl.MemorySpace.Left)
//     ==>
//       t_1 = pl.move(t, target_memory=pl.MemorySpace.Left, shares_source_tile=True)
// Input invariants: none. Output invariants: TileMoveSharingStamped; nothing else changes.
// Why: the CPU kernel backend binds such a move to its source's buffer from this stamp instead
//   of deciding while it prints.
#include <map>
#include <set>
#include <vector>

#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

bool is_move(const Call* c) { return c && c->is_op && c->callee == "tile.move"; }

// What a kernel writes in place: the tile Vars (and iter_args), and the moves written through
// directly (`pl.tile.write(pl.move(t, ...), ...)`, the source followed through nested moves).
// Each tile.move with the Var it defines, if any.
struct Survey : IRVisitor {
  std::set<const Var*> written;
  std::set<const Call*> written_moves;
  std::map<const Call*, const Var*> defines;
  std::vector<const Call*> moves;
  void visit_(const AssignStmt* op) override {
    if (auto* c = op->value->as<Call>(); is_move(c)) defines[c] = op->var.get();
    IRVisitor::visit_(op);
  }
  void visit_(const Call* op) override {
    if (is_move(op)) moves.push_back(op);
    if (WritesArg0InPlace(*op)) {
      ExprPtr target = op->args[0];
      for (auto* m = target->as<Call>(); is_move(m); m = target->as<Call>()) {
        written_moves.insert(m);
        target = m->args[0];
      }
      if (const Var* v = as_var(target)) written.insert(v);
    }
    IRVisitor::visit_(op);
  }
};

// Stamps every tile.move of a kernel body from `shared` (arguments first, so nested moves are
// stamped too).
struct Stamper : IRMutator {
  const std::set<const Call*>& shared;
  explicit Stamper(const std::set<const Call*>& s) : shared(s) {}
  ExprPtr mutate_(const Call* op, const ExprPtr& self) override {
    ExprPtr e = IRMutator::mutate_(op, self);
    auto* call = e->as<Call>();
    if (!is_move(call)) return e;
    return with_shares_source_tile(e, shared.count(op) != 0);
  }
  using IRMutator::mutate_;
};

}  // namespace

bool WritesArg0InPlace(const Call& c) {
  return c.is_op && !c.args.empty() &&
         (c.callee == "tile.write" || c.callee == "tile.fillpad_inplace" || c.callee == "tile.gather_row");
}

std::set<const Call*> SharedTileMovesOf(const Function& fn) {
  std::set<const Call*> out;
  if (!fn.body) return out;
  Survey s;
  s.visit_stmt(fn.body);
  for (const Call* m : s.moves) {
    const Var* source = as_var(m->args[0]);
    auto it = s.defines.find(m);
    const Var* result = it == s.defines.end() ? nullptr : it->second;
    const bool written = s.written_moves.count(m) || (source && s.written.count(source)) ||
                         (result && s.written.count(result));
    if (IsPlainTileMove(*m) && !written) out.insert(m);
  }
  return out;
}

namespace {

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (!fn->is_kernel() || !fn->body) continue;
    const std::set<const Call*> shared = SharedTileMovesOf(*fn);
    Stamper s(shared);
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
