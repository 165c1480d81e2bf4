// KernelAccumulateInStore (kernel pipeline)
//
// What: stamps attr `accumulates_in` = [t, off0, off1] on the tile.full that starts a kernel's
//   accumulator when the kernel's last act is storing the accumulated tile, whole, into the
//   tensor parameter t that nothing else in the kernel touches:
//       acc = pl.tile.full([64, 128], pl.FP32, 0.0)
//       for k, (acc_1,) in pl.range(0, 3, 1, init_values=(acc,)): ... matmul_acc(acc_1, ..) ...
//       c_1 = pl.store(acc_3, [0, 0], c)
//       return c
//     ==>
//       acc = pl.tile.full([64, 128], pl.FP32, 0.0, accumulates_in=[c, 0, 0])
// Input invariants: none. Output invariants: AccumulatorsInStoreStamped; nothing else changes.
// Why: the CPU kernel backend then lets the accumulator's buffer be the stored box of t itself
//   (pypto_kernel::accumulate_in_place), so the final store copies nothing: the tiled GEMM's
//   32 KB store per task (3 % of its profile) disappears. The backend prints the stamp; it does
//   not analyse the kernel.
//
// Writing the box early gives the same bits only if nothing reads or writes the box between the
// accumulator's start and the store, and nothing reads the accumulator's buffer after the store.
// The stamp needs (all decided here, statically):
//   - the store is a top-level statement of the body followed only by the return; its tile is
//     the accumulator (the tile.full var itself, or the result of a top-level loop whose init
//     it is), of the tile.full's type: FP32, rank 2, the same literal shape, no valid shape on
//     either — the box the store writes is exactly the accumulator's;
//   - the tile.full var is a top-level assignment read nowhere but there (store or loop init);
//   - t is an FP32 rank-2 tensor parameter used nowhere in the kernel but by this store (and
//     the return): no load, store or element access of t can see the early writes;
//   - the offsets are literals or scalar parameters, known where the accumulator starts.
// What only the run knows is checked by the kernel when it starts (accumulate_in_place falls
// back to a buffer of its own, the code before this pass): the box is inside t, its rows are
// contiguous (t's row stride = the tile's columns), and it overlaps no other tensor argument of
// the task (two parameters may view one buffer: an In operand read after the box is written).
// Other tasks cannot read the box meanwhile: the runtime orders the task's consumers of t after it.
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pypto/ir/attrs.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// How often each var is read, the return statement's values not counted.
struct Uses : IRVisitor {
  std::map<const Var*, int> n;
  void visit_(const Var* op) override {
    ++n[op];
    IRVisitor::visit_(op);
  }
  void visit_(const AssignStmt* op) override {   // the defined var is no use
    auto* c = op->value->as<Call>();
    if (c && c->attrs.count(kAccumulatesInAttr)) {   // this pass's own stamp is no use either
      for (auto& a : c->args) visit_expr(a);
      return;
    }
    visit_expr(op->value);
  }
  void visit_(const ReturnStmt*) override {}
};

bool Fp32Rank2(const TypePtr& t, std::vector<int64_t>* shape) {
  auto* tt = t ? t->as<TileType>() : nullptr;
  if (!tt || tt->dtype != DataType::FP32 || tt->shape.size() != 2 || tt->has_valid_shape()) return false;
  for (auto& d : tt->shape) {
    auto* c = d->as<ConstInt>();
    if (!c) return false;
    shape->push_back(c->value);
  }
  return true;
}

const Call* StoreOf(const StmtPtr& s) {
  ExprPtr e;
  if (auto* a = s->as<AssignStmt>()) e = a->value;
  else if (auto* ev = s->as<EvalStmt>()) e = ev->expr;
  auto* c = e ? e->as<Call>() : nullptr;
  return c && c->is_op && c->callee == "tile.store" && c->args.size() == 3 ? c : nullptr;
}

// The tile.full assignment to stamp in kernel `fn`, with the attr value; nullptr when none.
const AssignStmt* Candidate(const Function& fn, std::vector<ExprPtr>* into) {
  auto* seq = fn.body ? fn.body->as<SeqStmts>() : nullptr;
  if (!seq || seq->stmts.empty()) return nullptr;
  const auto& stmts = seq->stmts;
  size_t i = stmts.size();
  while (i > 0 && stmts[i - 1]->is<ReturnStmt>()) --i;
  if (i == 0) return nullptr;
  const Call* store = StoreOf(stmts[i - 1]);
  if (!store) return nullptr;
  const Var* stored = as_var(store->args[0]);
  const Var* t = as_var(store->args[2]);
  auto* offs = store->args[1]->as<MakeTuple>();
  auto* tt = t && t->type ? t->type->as<TensorType>() : nullptr;
  if (!stored || !tt || tt->dtype != DataType::FP32 || tt->shape.size() != 2 || !offs || offs->elements.size() != 2)
    return nullptr;
  std::set<const Var*> params, scalar_params;
  for (auto& p : fn.params) {
    params.insert(p.get());
    if (p->type && p->type->is<ScalarType>()) scalar_params.insert(p.get());
  }
  if (!params.count(t)) return nullptr;
  for (auto& o : offs->elements) {
    const Var* v = as_var(o);
    if (!o->is<ConstInt>() && !(v && scalar_params.count(v))) return nullptr;
  }
  Uses uses;
  uses.visit_stmt(fn.body);
  if (uses.n[t] != 1) return nullptr;   // the store's own use
  // The accumulator: `stored` itself, or the init of the loop whose result it is.
  const Var* acc = stored;
  for (size_t j = 0; j + 1 < i; ++j) {
    auto* loop = stmts[j]->as<ForStmt>();
    if (!loop) continue;
    for (size_t r = 0; r < loop->return_vars.size(); ++r)
      if (loop->return_vars[r].get() == stored) acc = as_var(loop->iter_args[r]->init);
  }
  if (!acc || uses.n[acc] != 1) return nullptr;   // the store or the loop init
  std::vector<int64_t> acc_shape, stored_shape;
  for (size_t j = 0; j + 1 < i; ++j) {
    auto* a = stmts[j]->as<AssignStmt>();
    if (!a || a->var.get() != acc) continue;
    auto* full = a->value->as<Call>();
    if (!full || !full->is_op || full->callee != "tile.full") return nullptr;
    if (!Fp32Rank2(a->var->type, &acc_shape) || !Fp32Rank2(stored->type, &stored_shape) || acc_shape != stored_shape)
      return nullptr;
    *into = {store->args[2], offs->elements[0], offs->elements[1]};
    return a;
  }
  return nullptr;
}

struct Stamper : IRMutator {
  const AssignStmt* target;
  std::vector<ExprPtr> into;
  Stamper(const AssignStmt* t, std::vector<ExprPtr> i) : target(t), into(std::move(i)) {}
  StmtPtr mutate_(const AssignStmt* op, const StmtPtr& self) override {
    if (op != target) return IRMutator::mutate_(op, self);
    return std::make_shared<AssignStmt>(op->var, WithAccumulatesIn(op->value, into), op->span);
  }
  using IRMutator::mutate_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (!fn->is_kernel() || !fn->body) continue;
    std::vector<ExprPtr> into;
    const AssignStmt* target = Candidate(*fn, &into);
    if (!target) continue;
    auto* call = target->value->as<Call>();
    if (call->attrs.count(kAccumulatesInAttr)) continue;   // stamped already (the pass ran twice)
    Stamper s(target, std::move(into));
    FunctionPtr stamped = s.mutate_function(fn);
    if (stamped != fn) out = out->with_function(stamped);
  }
  return out;
}

// Same var, or integer literals of one value.
bool SameOperand(const ExprPtr& a, const ExprPtr& b) {
  if (a == b) return true;
  auto* x = a ? a->as<ConstInt>() : nullptr;
  auto* y = b ? b->as<ConstInt>() : nullptr;
  return x && y && x->value == y->value;
}

// Every top-level tile.full assignment of a kernel body, and its accumulates_in attr (or nullptr).
struct Fulls : IRVisitor {
  std::vector<std::pair<const AssignStmt*, const std::vector<ExprPtr>*>> found;
  void visit_(const AssignStmt* op) override {
    auto* c = op->value->as<Call>();
    if (c && c->is_op && c->callee == "tile.full")
      found.emplace_back(op, attr_get<std::vector<ExprPtr>>(c->attrs, kAccumulatesInAttr));
    IRVisitor::visit_(op);
  }
};

}  // namespace

std::vector<std::string> StaleAccumulatesIn(const Function& fn) {
  std::vector<std::string> out;
  if (!fn.body) return out;
  std::vector<ExprPtr> want;
  const AssignStmt* target = Candidate(fn, &want);
  Fulls fulls;
  fulls.visit_stmt(fn.body);
  for (auto& [assign, have] : fulls.found) {
    bool ok = assign == target ? have && have->size() == 3 : !have;
    for (size_t i = 0; ok && assign == target && i < 3; ++i) ok = SameOperand((*have)[i], want[i]);
    if (!ok) out.push_back("tile.full of '" + assign->var->name + "' has a stale accumulates_in");
  }
  return out;
}

ExprPtr WithAccumulatesIn(const ExprPtr& call, std::vector<ExprPtr> into) {
  auto* c = call->as<Call>();
  PYPTO_CHECK(c && c->is_op && c->callee == "tile.full" && into.size() == 3,
              "accumulates_in takes a tile.full call and [tensor, offset0, offset1]");
  auto n = std::make_shared<Call>(*c);
  n->attrs[kAccumulatesInAttr] = std::move(into);
  return n;
}

Pass KernelAccumulateInStore() {
  return Pass{"KernelAccumulateInStore", {}, {IRProperty::AccumulatorsInStoreStamped}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
