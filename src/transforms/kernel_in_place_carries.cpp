// KernelInPlaceCarries (kernel pipeline)
//
// What: stamps ForStmt::inplace_carries on the loops of every kernel: the iter_arg indices
//   whose yielded tile the body can compute straight into the carry's storage. A loop body
//   ending in `pl.yield_(v0, v1, ...)` copies each yielded tile into its carry slot; when v_i
//   is computed by a top-level tile op of the body, has the carry's type, is yielded only at
//   position i, and carry i (or a rebinding of it) is not read after that op, the op can write
//   carry i's storage directly and the copy disappears:
//       for i, (acc,) in pl.range(0, 4, 1, init_values=(acc0,)):        pl.range(0, 4, 1, init_values=(acc0,),
//           acc_next = pl.add(acc, x)                             ==>            inplace_carries=[0])
//           acc_out = pl.yield_(acc_next)
//   Element-wise helpers of the prelude allow the destination to be an operand; matmul /
//   matmul_acc must not have the carry as an `a` / `b` operand (acc is fine).
// Input invariants: none. Output: InPlaceCarriesFound.
// Why: the CPU kernel backend writes those tiles in place; it decides nothing.
#include <algorithm>

#include "pypto/ir/mutator.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

struct ReadsVar : IRVisitor {
  const Var* target;
  bool found = false;
  explicit ReadsVar(const Var* t) : target(t) {}
  void visit_(const Var* op) override {
    if (op == target) found = true;
  }
  void visit_(const IterArg* op) override {
    if (op == target) found = true;
    IRVisitor::visit_(op);
  }
};

bool StmtReads(const StmtPtr& s, const Var* v) {
  ReadsVar r(v);
  r.visit_stmt(s);
  return r.found;
}

bool ExprReads(const ExprPtr& e, const Var* v) {
  ReadsVar r(v);
  r.visit_expr(e);
  return r.found;
}

// Stamps every loop of a kernel body (inner loops first).
struct Stamper : IRMutator {
  StmtPtr mutate_(const ForStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);
    auto* loop = s->as<ForStmt>();
    std::vector<int64_t> carries = InPlaceCarriesOf(*loop);
    if (carries == loop->inplace_carries) return s;
    return std::static_pointer_cast<const ForStmt>(s)->with_inplace_carries(std::move(carries));
  }
  using IRMutator::mutate_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (!fn->is_kernel()) continue;
    Stamper s;
    FunctionPtr stamped = s.mutate_function(fn);
    if (stamped != fn) out = out->with_function(stamped);
  }
  return out;
}

}  // namespace

bool IsPlainTileMove(const Call& call) {
  if (!call.is_op || call.callee != "tile.move" || call.args.empty()) return false;
  auto* src = call.args[0]->type ? call.args[0]->type->as<TileType>() : nullptr;
  auto* dst = call.type ? call.type->as<TileType>() : nullptr;
  return src && dst && src->dtype == dst->dtype;
}

std::vector<int64_t> InPlaceCarriesOf(const ForStmt& loop) {
  std::vector<int64_t> out;
  std::vector<StmtPtr> stmts = flatten_stmts(loop.body);
  if (stmts.empty()) return out;
  auto* yield = stmts.back()->as<YieldStmt>();
  if (!yield || yield->values.size() != loop.iter_args.size()) return out;
  for (size_t i = 0; i < yield->values.size(); ++i) {
    const Var* v = as_var(yield->values[i]);
    const IterArg* carry = loop.iter_args[i].get();
    if (!v || v == carry || !carry->type->is<TileType>() || !structural_equal(v->type, carry->type)) continue;
    size_t uses = 0;
    for (auto& y : yield->values) uses += as_var(y) == v ? 1 : 0;
    if (uses != 1) continue;
    // The top-level statement computing v.
    size_t k = stmts.size();
    for (size_t j = 0; j + 1 < stmts.size(); ++j) {
      auto* a = stmts[j]->as<AssignStmt>();
      if (a && a->var.get() == v) k = j;
    }
    if (k == stmts.size()) continue;
    auto* call = stmts[k]->as<AssignStmt>()->value->as<Call>();
    if (!call || !call->is_op) continue;
    if (call->callee == "tile.matmul" || call->callee == "tile.matmul_acc") {
      const size_t first_ab = call->callee == "tile.matmul" ? 0 : 1;
      bool reads = false;
      for (size_t a = first_ab; a < call->args.size(); ++a) reads = reads || ExprReads(call->args[a], carry);
      if (reads) continue;
    }
    // Names sharing the carry's buffer: the carry and rebindings of it (`prev = acc`,
    // `m = pl.move(acc, ...)`).
    std::vector<const Var*> aliases = {carry};
    for (size_t j = 0; j < k; ++j) {
      auto* a = stmts[j]->as<AssignStmt>();
      const Var* src = a ? as_var(a->value) : nullptr;
      if (a && !src) {
        if (auto* c = a->value->as<Call>(); c && IsPlainTileMove(*c)) src = as_var(c->args[0]);
      }
      if (src && std::find(aliases.begin(), aliases.end(), src) != aliases.end()) aliases.push_back(a->var.get());
    }
    bool read_later = false;
    for (size_t j = k + 1; j < stmts.size() && !read_later; ++j) {
      for (const Var* al : aliases) read_later = read_later || StmtReads(stmts[j], al);
    }
    if (read_later) continue;
    out.push_back(static_cast<int64_t>(i));
  }
  return out;
}

Pass KernelInPlaceCarries() {
  return Pass{"KernelInPlaceCarries", {}, {IRProperty::InPlaceCarriesFound}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
