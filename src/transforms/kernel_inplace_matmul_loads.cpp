// KernelInPlaceMatmulLoads (kernel pipeline)
//
// What: stamps Call::reads_in_place on the tile.loads of every kernel whose tile only a matmul
//   reads, so on the CPU the matmul reads the box where it lies in the tensor (no copy):
//       ta = pl.load(a, [row, k * TK], [TM, TK])
//     ==>
//       ta = pl.load(a, [row, k * TK], [TM, TK], reads_in_place=True)
// Input invariants: none. A move is looked through when it is stamped Call::shares_source_tile
//   (so the pipeline runs KernelShareTileMoves first); an unstamped one is a use that keeps the
//   copy, which is what the backend prints for it. Output invariants: InPlaceMatmulLoadsStamped;
//   nothing else changes.
// Why: the CPU kernel backend prints a stamped load as load_view + matmul_strided, reading the
//   stamp instead of analysing the kernel while it prints.
//
//   ta = pl.load(a, [row, k * TK], [TM, TK])       load_view: ta_p points into a (row stride
//   tb = pl.load(b, [k * TK, col], [TK, TN])       ta_ld), or at ta after a copy when a is not
//   acc = pl.matmul_acc(acc, ta, tb)               FP32 with unit last stride / the box is clipped
//                                                  matmul_strided(acc, acc, ta_p, ta_ld, tb_p, tb_ld, ...)
//
// A load's tile is a value: reading the tensor later instead of copying it now gives the same
// bits only if nothing writes the tensor in between and nothing but a matmul reads the tile. So
// a load qualifies when
//   - it is a plain FP32 rank-2 load of a rank-2 FP32 tensor (no transpose, dropped axes or valid
//     shape: those need the copy's layout or its zero fill);
//   - every use of its tile — directly, or through a rebinding / a buffer-sharing move
//     (KernelShareTileMoves) — is the a or b operand of a tile.matmul / matmul_acc / gemv /
//     gemv_acc without valid shapes (the handlers that take a row stride); a yield, a store, an
//     element-wise op or any other use keeps the copy;
//   - no statement from the load to the last one using the tile writes any tensor (tile.store,
//     mscatter, tensor.write, anywhere inside it: two tensor parameters may view one buffer, so
//     a write to any of them counts).
// A load written as the matmul's operand itself (`matmul_acc(acc, move(load(a, ..)), ..)`, how
// the frontend leaves `ta = pl.move(pl.load(..))` used once) qualifies when no operand of that
// matmul writes a tensor.
// Other tasks cannot write the tensor meanwhile: the runtime orders a task after every writer of
// its inputs, the same guarantee the copy relies on.
#include <map>
#include <set>
#include <utility>

#include "pypto/ir/attrs.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

bool IsMatmulOp(const Call* c) {
  return c->is_op && (c->callee == "tile.matmul" || c->callee == "tile.matmul_acc" || c->callee == "tile.gemv" ||
                      c->callee == "tile.gemv_acc");
}

bool HasValid(const ExprPtr& e) {
  auto* tt = e->type ? e->type->as<TileType>() : nullptr;
  return tt && tt->has_valid_shape();
}

bool IsFp32Rank2Tile(const TypePtr& t) {
  auto* tt = t ? t->as<TileType>() : nullptr;
  return tt && tt->dtype == DataType::FP32 && tt->shape.size() == 2 && !tt->has_valid_shape();
}

// A plain FP32 rank-2 load of a rank-2 FP32 tensor.
bool IsCandidateLoad(const ExprPtr& value) {
  auto* call = value->as<Call>();
  if (!call || !call->is_op || call->callee != "tile.load" || call->args.empty()) return false;
  if (!IsFp32Rank2Tile(value->type)) return false;
  auto* tt = call->args[0]->type ? call->args[0]->type->as<TensorType>() : nullptr;
  if (!tt || tt->dtype != DataType::FP32 || tt->shape.size() != 2) return false;
  if (auto* tr = attr_get<bool>(call->attrs, "transpose"); tr && *tr) return false;
  if (auto* tr = attr_get<int64_t>(call->attrs, "transpose"); tr && *tr) return false;
  if (auto* d = attr_get<std::vector<ExprPtr>>(call->attrs, "drop_dims"); d && !d->empty()) return false;
  return true;
}

// Does the expression contain a call with a tensor value (a store, mscatter, tensor.write)?
struct FindsWrite : IRVisitor {
  bool writes = false;
  void visit_(const Call* op) override {
    writes = writes || (op->type && op->type->is<TensorType>());
    IRVisitor::visit_(op);
  }
};

// The expression under any buffer-sharing moves (KernelShareTileMoves) around it.
ExprPtr StripSharingMoves(ExprPtr x) {
  while (x->is<Call>() && x->as<Call>()->shares_source_tile && !x->as<Call>()->args.empty()) x = x->as<Call>()->args[0];
  return x;
}

// The tile an expression names once rebindings and buffer-sharing moves are looked through.
const Var* SourceVar(const ExprPtr& e, const std::map<const Var*, const Var*>& alias) {
  ExprPtr x = e;
  while (auto* c = x->as<Call>()) {
    if (!c->shares_source_tile || c->args.empty()) return nullptr;
    x = c->args[0];
  }
  const Var* v = as_var(x);
  if (!v) return nullptr;
  auto it = alias.find(v);
  return it == alias.end() ? v : it->second;
}

// Pass 1: the candidate loads (with their statement list and index) and the alias roots.
struct Collect : IRVisitor {
  struct Site { const SeqStmts* seq; size_t index; const Call* load; };
  std::map<const Var*, Site> loads;
  std::map<const Var*, const Var*> alias;   // a rebinding / sharing move -> the tile it names
  void visit_(const SeqStmts* op) override {
    for (size_t i = 0; i < op->stmts.size(); ++i) {
      // `ta = pl.load(..)` or `ta = pl.move(pl.load(..))` (a move that shares the load's buffer)
      auto* a = op->stmts[i]->as<AssignStmt>();
      if (a && IsFp32Rank2Tile(a->var->type)) {
        ExprPtr load = StripSharingMoves(a->value);
        if (IsCandidateLoad(load)) loads[a->var.get()] = {op, i, load->as<Call>()};
      }
      visit_stmt(op->stmts[i]);
    }
  }
  void visit_(const AssignStmt* op) override {
    if (op->var->type && op->var->type->is<TileType>() && (as_var(op->value) || op->value->is<Call>())) {
      auto* c = op->value->as<Call>();
      if (!c || c->shares_source_tile) {
        if (const Var* src = SourceVar(op->value, alias)) alias[op->var.get()] = src;
      }
    }
    IRVisitor::visit_(op);
  }
};

// Pass 2: per root tile, its uses as a matmul operand and its other uses.
struct Uses : IRVisitor {
  const std::map<const Var*, const Var*>& alias;
  std::map<const Var*, int> good, bad;
  // Loads written as the operand itself, matmul(acc, load(a, ..), ..): their operand uses and
  // all their occurrences (one Call node may be shared by several expressions).
  std::map<const Call*, int> load_operand, load_total;
  explicit Uses(const std::map<const Var*, const Var*>& a) : alias(a) {}
  const Var* root(const Var* v) const {
    auto it = alias.find(v);
    return it == alias.end() ? v : it->second;
  }
  void visit_(const Var* op) override {
    ++bad[root(op)];
    IRVisitor::visit_(op);
  }
  void visit_(const AssignStmt* op) override {
    // The defined var is no use; a rebinding / sharing move is none either (its own uses count).
    if (alias.count(op->var.get())) return;
    visit_expr(op->value);
  }
  void visit_(const Call* op) override {
    if (op->is_op && op->callee == "tile.load") ++load_total[op];
    if (!IsMatmulOp(op)) return IRVisitor::visit_(op);
    bool any_valid = op->type && op->type->is<TileType>() && op->type->as<TileType>()->has_valid_shape();
    for (auto& a : op->args) any_valid = any_valid || HasValid(a);
    if (any_valid) return IRVisitor::visit_(op);
    const size_t first = (op->callee == "tile.matmul_acc" || op->callee == "tile.gemv_acc") ? 1 : 0;
    FindsWrite w;   // the operands are evaluated one after another: none may write a tensor
    for (auto& a : op->args) w.visit_expr(a);
    for (size_t i = 0; i < op->args.size(); ++i) {
      const bool operand = i == first || i == first + 1;
      const Var* v = operand ? SourceVar(op->args[i], alias) : nullptr;
      if (v) {
        ++good[v];
        continue;
      }
      if (operand && !w.writes) {
        ExprPtr x = StripSharingMoves(op->args[i]);
        if (IsCandidateLoad(x)) ++load_operand[x->as<Call>()];
      }
      visit_expr(op->args[i]);
    }
  }
};

// Does the statement mention a tile whose root is `target`, or write a tensor?
struct Scan : IRVisitor {
  const std::map<const Var*, const Var*>& alias;
  const Var* target;
  bool uses = false, writes = false;
  Scan(const std::map<const Var*, const Var*>& a, const Var* t) : alias(a), target(t) {}
  void visit_(const Var* op) override {
    auto it = alias.find(op);
    uses = uses || (it == alias.end() ? op : it->second) == target;
  }
  void visit_(const Call* op) override {
    writes = writes || (op->type && op->type->is<TensorType>());
    IRVisitor::visit_(op);
  }
};

}  // namespace

std::set<const Call*> InPlaceMatmulLoadsOf(const Function& fn) {
  Collect c;
  c.visit_stmt(fn.body);
  Uses u(c.alias);
  u.visit_stmt(fn.body);
  std::set<const Call*> out;
  for (auto& [call, n] : u.load_operand)
    if (u.load_total[call] == n) out.insert(call);
  for (auto& [var, site] : c.loads) {
    if (u.bad[var] != 0 || u.good[var] == 0 || u.load_total[site.load] != 1) continue;
    // The statements after the load up to the last one that uses its tile write no tensor.
    bool writes = false;
    size_t last = site.index;
    std::vector<bool> w(site.seq->stmts.size(), false);
    for (size_t i = site.index + 1; i < site.seq->stmts.size(); ++i) {
      Scan s(c.alias, var);
      s.visit_stmt(site.seq->stmts[i]);
      w[i] = s.writes;
      if (s.uses) last = i;
    }
    for (size_t i = site.index + 1; i <= last; ++i) writes = writes || w[i];
    if (!writes && last > site.index) out.insert(site.load);
  }
  return out;
}

namespace {

// Stamps the loads of `chosen` (nodes of the function before the rewrite).
struct Stamper : IRMutator {
  std::set<const Call*> chosen;
  explicit Stamper(std::set<const Call*> c) : chosen(std::move(c)) {}
  ExprPtr mutate_(const Call* op, const ExprPtr& self) override {
    ExprPtr e = IRMutator::mutate_(op, self);
    if (!op->is_op || op->callee != "tile.load") return e;
    return with_reads_in_place(e, chosen.count(op) != 0);
  }
  using IRMutator::mutate_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (!fn->is_kernel() || !fn->body) continue;
    Stamper s(InPlaceMatmulLoadsOf(*fn));
    FunctionPtr stamped = s.mutate_function(fn);
    if (stamped != fn) out = out->with_function(stamped);
  }
  return out;
}

}  // namespace

Pass KernelInPlaceMatmulLoads() {
  return Pass{"KernelInPlaceMatmulLoads", {}, {IRProperty::InPlaceMatmulLoadsStamped}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
