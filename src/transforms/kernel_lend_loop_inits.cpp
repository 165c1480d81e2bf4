// KernelLendLoopInits (kernel pipeline)
//
// What: stamps ForStmt::lent_inits on the loops of every kernel: the iter_arg indices whose
//   init is a tile the loop's carry may take over (its buffer becomes the carry's storage, no
//   copy). The tiled GEMM's accumulator is the case it is for (a 32 KB copy per task saved):
//       acc0 = pl.tile.full([64, 128], dtype=pl.FP32, value=0.0)
//       for k, (acc,) in pl.range(0, 3, 1, init_values=(acc0,)):
//     ==>
//       for k, (acc,) in pl.range(0, 3, 1, init_values=(acc0,), lent_inits=[0]):
//   Init i is lent when it is
//   - a var (not an iter_arg) that is read nowhere else in the kernel: the loop init is its only
//     use (a later read would see the carry's value, not the init's);
//   - computed by a tile op into a buffer of its own: not a rebinding, not a tile.move that
//     shares its source (stamped Call::shares_source_tile, or one KernelShareTileMoves would
//     stamp: the answer does not depend on the order of the two passes), not a load a matmul
//     reads in place (Call::reads_in_place: it has no buffer of its own; such a load is read
//     only by matmuls, so it is never a loop init anyway);
//   - defined inside the same loops as this loop: an init from outside an enclosing loop is read
//     again by that loop's next iteration;
//   - of the carry's type: same dtype, the same literal shape, no valid shape on either.
// Input invariants: none. Output invariants: LoopInitLendingStamped; nothing else changes.
// Why: the CPU kernel backend binds a lent carry to its init's buffer from this stamp instead
//   of counting uses while it prints.
#include <map>
#include <utility>

#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// One walk: how often each var is read, where each tile with a buffer of its own is defined
// (the number of loops around its definition), and each loop with the loops around it.
struct Survey : IRVisitor {
  std::map<const Var*, int> uses;
  std::map<const Var*, int> own_buffer_depth;
  std::vector<std::pair<const ForStmt*, int>> loops;
  int depth = 0;
  void visit_(const Var* op) override {
    ++uses[op];
    IRVisitor::visit_(op);
  }
  void visit_(const AssignStmt* op) override {   // the defined var is no use
    auto* call = op->value->as<Call>();
    if (op->var->type && op->var->type->is<TileType>() && call && call->is_op && !call->shares_source_tile &&
        !IsPlainTileMove(*call) && !call->reads_in_place) {
      own_buffer_depth[op->var.get()] = depth;
    }
    visit_expr(op->value);
  }
  void visit_(const ForStmt* op) override {
    loops.emplace_back(op, depth);
    ++depth;
    IRVisitor::visit_(op);
    --depth;
  }
};

// Same dtype, same literal shape, no valid shape on either.
bool SameFixedTile(const TypePtr& x, const TypePtr& y) {
  auto* a = x ? x->as<TileType>() : nullptr;
  auto* b = y ? y->as<TileType>() : nullptr;
  if (!a || !b || a->has_valid_shape() || b->has_valid_shape() || a->dtype != b->dtype || a->shape.size() != b->shape.size())
    return false;
  for (size_t d = 0; d < a->shape.size(); ++d) {
    auto* p = a->shape[d]->as<ConstInt>();
    auto* q = b->shape[d]->as<ConstInt>();
    if (!p || !q || p->value != q->value) return false;
  }
  return true;
}

// Stamps every loop of a kernel body with its entry of `lent` (empty when it has none).
struct Stamper : IRMutator {
  std::map<const ForStmt*, std::vector<int64_t>> lent;
  explicit Stamper(std::map<const ForStmt*, std::vector<int64_t>> l) : lent(std::move(l)) {}
  StmtPtr mutate_(const ForStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);
    auto it = lent.find(op);
    std::vector<int64_t> inits = it == lent.end() ? std::vector<int64_t>{} : it->second;
    auto* loop = s->as<ForStmt>();
    if (inits == loop->lent_inits) return s;
    return std::static_pointer_cast<const ForStmt>(s)->with_lent_inits(std::move(inits));
  }
  using IRMutator::mutate_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (!fn->is_kernel() || !fn->body) continue;
    Stamper s(LentLoopInitsOf(*fn));
    FunctionPtr stamped = s.mutate_function(fn);
    if (stamped != fn) out = out->with_function(stamped);
  }
  return out;
}

}  // namespace

std::map<const ForStmt*, std::vector<int64_t>> LentLoopInitsOf(const Function& fn) {
  std::map<const ForStmt*, std::vector<int64_t>> out;
  if (!fn.body) return out;
  Survey s;
  s.visit_stmt(fn.body);
  for (auto& [loop, depth] : s.loops) {
    for (size_t i = 0; i < loop->iter_args.size(); ++i) {
      const IterArg& ia = *loop->iter_args[i];
      const Var* v = as_var(ia.init);
      if (!v || v->is<IterArg>() || s.uses[v] != 1) continue;
      auto d = s.own_buffer_depth.find(v);
      if (d == s.own_buffer_depth.end() || d->second != depth || !SameFixedTile(ia.type, v->type)) continue;
      out[loop].push_back(static_cast<int64_t>(i));
    }
  }
  return out;
}

Pass KernelLendLoopInits() {
  return Pass{"KernelLendLoopInits", {}, {IRProperty::LoopInitLendingStamped}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
