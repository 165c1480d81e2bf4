// SplitChunkedLoops
//
// What: every loop with a `chunk=C` request (the typed ForStmt::chunk; pl.range / pl.parallel inside
//   a pl.auto_chunk scope, spec anchor_features §7) of T trips becomes an outer loop over chunks and an inner loop of
//   C trips, both of the loop's kind (pl.unroll loops were expanded by UnrollLoops already). The
//   loop variable is recomputed at the top of the inner body: i = start + (co * C + ci) * step.
//     chunk_policy="guarded" (default): ceil(T / C) outer trips; the body runs under
//       `if i < stop` (`>` for a negative step) and the carries pass through the if's results
//       (no if when T is a constant multiple of C):
//         for i in pl.parallel(0, 10, 1, chunk=4):    for co in pl.parallel(0, 3, 1):
//             body                           ==>          for ci in pl.parallel(0, 4, 1):
//                                                             i = 0 + (co * 4 + ci) * 1
//                                                             if i < 10: body
//     chunk_policy="leading_full": T // C full chunks, then a remainder loop of T % C trips
//       running a fresh copy of the body (loops with a constant zero trip count are left out).
//   A step s known only at run time (sign unknown): the outer loop walks the chunks' first
//   indices, `for co in range(start, stop, s * C)` (a zero step fails the run there, naming the
//   DSL line, as any run-time-step loop does), the inner loop sets i = co + ci * s and always
//   guards the body with `(s > 0 and i < stop) or (s < 0 and i > stop)`; leading_full's full
//   chunks are `range(start, stop - (C - 1) * s, s * C)` and its remainder the last T % C
//   iterations (T from a floor division by s, which is never 0 there).
//   The new loops get ForStmt::loop_origin = chunk_outer / chunk_inner / chunk_remainder
//   (InterchangeChunkLoops reads it); they carry no ForStmt::chunk (the request is consumed). A run-time step's outer
//   loop (step `s * C`, C > 1) also gets ForStmt::chunk_stride = C: the code generators compute that
//   stride checked (pto2_chunk_stride / pypto_kernel::chunk_stride), so an overflowing
//   `s * C` fails the run naming the DSL line instead of wrapping.
// Input invariants: the parser's (ForStmt::chunk: chunk > 0; a loop with carries ends its body with a yield).
// Output invariants: no ForStmt has a chunk request (ForStmt::chunk.chunk == 0).
// Errors (located): a chunked loop whose constant step is 0; a constant step * chunk, or chunk
//   arithmetic on constant bounds, that overflows int64.
// Why: pl.auto_chunk lets the compiler pick kernel boundaries: one chunk of iterations per task.
#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

#include "defined_vars.h"

namespace pypto::transforms {

using namespace ir;

namespace {

ExprPtr Int(int64_t v, const Span& sp) { return ConstInt::make(v, DataType::INDEX, sp); }

// x <op> y for constants, or a located error when the result leaves int64 (the bounds of a
// chunked loop whose constants are near the int64 limits).
int64_t Checked(BinaryOp op, int64_t x, int64_t y, const Span& sp) {
  int64_t r = 0;
  const bool overflow = op == BinaryOp::Add   ? __builtin_add_overflow(x, y, &r)
                        : op == BinaryOp::Sub ? __builtin_sub_overflow(x, y, &r)
                                              : __builtin_mul_overflow(x, y, &r);
  PYPTO_USER_CHECK(!overflow, sp,
                   "the bounds of this chunked loop overflow int64 (" << x << (op == BinaryOp::Add ? " + " : op == BinaryOp::Sub ? " - " : " * ")
                                                                      << y << ")",
                   "use start / stop / step values whose chunk arithmetic stays within int64");
  return r;
}

// a <op> b, folded when both are constants.
ExprPtr Bin(BinaryOp op, const ExprPtr& a, const ExprPtr& b, const Span& sp) {
  auto* x = a->as<ConstInt>();
  auto* y = b->as<ConstInt>();
  if (x && y) {
    auto floordiv = [](int64_t p, int64_t q) { return p / q - ((p % q != 0) && ((p < 0) != (q < 0))); };
    switch (op) {
      case BinaryOp::Add:
      case BinaryOp::Sub:
      case BinaryOp::Mul: return Int(Checked(op, x->value, y->value, sp), sp);
      case BinaryOp::FloorDiv: return Int(floordiv(x->value, y->value), sp);
      case BinaryOp::Mod: return Int(x->value - floordiv(x->value, y->value) * y->value, sp);
      case BinaryOp::Max: return Int(std::max(x->value, y->value), sp);
      case BinaryOp::Div:   // the pass builds none of these (no `default:`: -Wswitch flags a new op)
      case BinaryOp::Min:
      case BinaryOp::Eq:
      case BinaryOp::Ne:
      case BinaryOp::Lt:
      case BinaryOp::Le:
      case BinaryOp::Gt:
      case BinaryOp::Ge:
      case BinaryOp::And:
      case BinaryOp::Or:
      case BinaryOp::BitAnd:
      case BinaryOp::BitOr:
      case BinaryOp::BitXor:
      case BinaryOp::Shl:
      case BinaryOp::Shr: break;
    }
  }
  if (y && y->value == 0 && (op == BinaryOp::Add || op == BinaryOp::Sub)) return a;
  if (x && x->value == 0 && op == BinaryOp::Add) return b;
  if (y && y->value == 1 && (op == BinaryOp::Mul || op == BinaryOp::FloorDiv)) return a;
  if (x && x->value == 1 && op == BinaryOp::Mul) return b;
  return BinaryExpr::make(op, a, b, sp);
}

int64_t ConstOr(const ExprPtr& e, int64_t dflt) {
  auto* c = e->as<ConstInt>();
  return c ? c->value : dflt;
}

// A copy of a loop body: `subst` replaces Vars (loop var, iter_args); with `fresh`, every Var
// the body defines gets a new Var (the remainder copy must share no Var with the main one).
class BodyCopy : public IRMutator {
 public:
  BodyCopy(std::unordered_map<const Var*, ExprPtr> subst, const std::unordered_set<const Var*>* fresh)
      : subst_(std::move(subst)), fresh_(fresh) {}
  ExprPtr mutate_(const Var* op, const ExprPtr& self) override {
    if (ExprPtr r = Replaced(op)) return r;
    if (!fresh_ || !fresh_->count(op)) return self;
    return Var::make(op->name, op->type, op->span);
  }
  ExprPtr mutate_(const IterArg* op, const ExprPtr& self) override {
    if (ExprPtr r = Replaced(op)) return r;
    if (!fresh_ || !fresh_->count(op)) return self;
    return IterArg::make(op->name, op->type, mutate_expr(op->init), op->span);
  }

 private:
  ExprPtr Replaced(const Var* op) const {
    if (auto s = subst_.find(op); s != subst_.end()) return s->second;
    if (auto r = var_remap_.find(op); r != var_remap_.end()) return r->second.second;
    return nullptr;
  }
  std::unordered_map<const Var*, ExprPtr> subst_;
  const std::unordered_set<const Var*>* fresh_;
};

// The bounds of a new outer chunk loop, and how the inner loop recomputes the loop variable.
struct ChunkPlan {
  ExprPtr start, stop, step;   // outer loop: `for co in range(start, stop, step)`
  bool base_index = false;     // co is the first index of its chunk (run-time step), else its number
  int64_t checked_stride = 0;  // C when `step` is `s * C` for a run-time s: ForStmt::chunk_stride = C
};

class Splitter : public IRMutator {
 public:
  Splitter() { statements_only_ = true; }   // rewrites loops only (BodyCopy substitutes)
  StmtPtr mutate_(const ForStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);   // nested chunked loops first
    auto* f = s->as<ForStmt>();
    if (!f || f->chunk.chunk == 0) return s;
    const bool guarded = f->chunk.policy == ChunkPolicy::Guarded;
    const Span& sp = f->span;
    const int64_t C = f->chunk.chunk;
    if (!f->step->is<ConstInt>()) return RuntimeStep(*f, C, guarded);
    const int64_t step = ConstOr(f->step, 0);
    PYPTO_USER_CHECK(step != 0, f->span, "a chunked loop needs a non-zero step", "write a non-zero step");
    int64_t stride = 0;
    PYPTO_USER_CHECK(!__builtin_mul_overflow(step, C, &stride), f->span,
                     "step * chunk = " << step << " * " << C << " overflows int64 (a chunk's stride)",
                     "use a smaller step or chunk");
    // T = max(ceil((stop - start) / step), 0)
    ExprPtr span_len = step > 0 ? Bin(BinaryOp::Sub, f->stop, f->start, sp) : Bin(BinaryOp::Sub, f->start, f->stop, sp);
    const int64_t astep = step > 0 ? step : -step;
    ExprPtr T = Bin(BinaryOp::Max,
                    Bin(BinaryOp::FloorDiv, Bin(BinaryOp::Add, span_len, Int(astep - 1, sp), sp), Int(astep, sp), sp),
                    Int(0, sp), sp);
    const bool exact = T->is<ConstInt>() && ConstOr(T, 0) % C == 0;
    if (guarded) {
      ExprPtr n_outer = Bin(BinaryOp::FloorDiv, Bin(BinaryOp::Add, T, Int(C - 1, sp), sp), Int(C, sp), sp);
      return Chunked(*f, {Int(0, sp), n_outer, Int(1, sp)}, /*guard=*/!exact, f->return_vars);
    }
    ExprPtr n_full = Bin(BinaryOp::FloorDiv, T, Int(C, sp), sp);
    ExprPtr n_rem = Bin(BinaryOp::Mod, T, Int(C, sp), sp);
    const bool no_rem = n_rem->is<ConstInt>() && ConstOr(n_rem, 0) == 0;
    if (no_rem) return Chunked(*f, {Int(0, sp), n_full, Int(1, sp)}, false, f->return_vars);
    std::vector<VarPtr> mid = FreshLike(f->return_vars);
    StmtPtr full = Chunked(*f, {Int(0, sp), n_full, Int(1, sp)}, false, mid);
    // The remainder: i = start + (n_full * C + r) * step.
    return make_seq({full, Remainder(*f, Bin(BinaryOp::Mul, n_full, Int(C, sp), sp), n_rem, mid)}, sp);
  }

 private:
  static std::vector<VarPtr> FreshLike(const std::vector<VarPtr>& vars) {
    std::vector<VarPtr> out;
    for (auto& v : vars) out.push_back(Var::make(v->name, v->type, v->span));
    return out;
  }

  // start + k * step
  static ExprPtr Index(const ForStmt& f, const ExprPtr& k) {
    return Bin(BinaryOp::Add, f.start, Bin(BinaryOp::Mul, k, f.step, f.span), f.span);
  }

  static ExprPtr Cmp(BinaryOp op, const ExprPtr& a, const ExprPtr& b, const Span& sp) {
    return BinaryExpr::make(op, a, b, sp);
  }

  // `i` is inside the loop's range: i < stop (i > stop for a negative step); for a run-time step
  // both, picked by its sign: (step > 0 and i < stop) or (step < 0 and i > stop).
  static ExprPtr InRange(const ForStmt& f, const ExprPtr& i) {
    const Span& sp = f.span;
    if (auto* c = f.step->as<ConstInt>()) return Cmp(c->value > 0 ? BinaryOp::Lt : BinaryOp::Gt, i, f.stop, sp);
    ExprPtr up = Cmp(BinaryOp::And, Cmp(BinaryOp::Gt, f.step, Int(0, sp), sp), Cmp(BinaryOp::Lt, i, f.stop, sp), sp);
    ExprPtr down = Cmp(BinaryOp::And, Cmp(BinaryOp::Lt, f.step, Int(0, sp), sp), Cmp(BinaryOp::Gt, i, f.stop, sp), sp);
    return Cmp(BinaryOp::Or, up, down, sp);
  }

  // A run-time step s, sign unknown: the outer loop walks the chunks' first indices,
  // `for co in range(start, stop, s * C)`, so a zero step fails the run there (the loop's
  // run-time step check, naming the DSL line) before any division by s; the inner loop
  // recomputes i = co + ci * s and always guards the body with InRange. leading_full: the full
  // chunks are `range(start, stop - (C - 1) * s, s * C)` (a chunk is full when its last index is
  // in range), the remainder the last T % C iterations, T = max(-((start - stop) // s), 0)
  // (Python's trip count for either sign), 0 trips when s is 0.
  StmtPtr RuntimeStep(const ForStmt& f, int64_t C, bool guarded) {
    const Span& sp = f.span;
    ExprPtr chunk_step = Bin(BinaryOp::Mul, f.step, Int(C, sp), sp);
    if (guarded) return Chunked(f, {f.start, f.stop, chunk_step, true, C}, true, f.return_vars);
    ExprPtr full_stop = Bin(BinaryOp::Sub, f.stop, Bin(BinaryOp::Mul, Int(C - 1, sp), f.step, sp), sp);
    std::vector<VarPtr> mid = FreshLike(f.return_vars);
    StmtPtr full = Chunked(f, {f.start, full_stop, chunk_step, true, C}, false, mid);
    ExprPtr nonzero = Cast::make(Cmp(BinaryOp::Ne, f.step, Int(0, sp), sp), DataType::INDEX, sp);
    ExprPtr zero = Cast::make(Cmp(BinaryOp::Eq, f.step, Int(0, sp), sp), DataType::INDEX, sp);
    ExprPtr safe_step = Bin(BinaryOp::Add, f.step, zero, sp);
    VarPtr T = Var::make(f.loop_var->name + "_trips", f.loop_var->type, sp);
    ExprPtr trips = Bin(BinaryOp::Max,
                        BinaryExpr::make(BinaryOp::Sub, Int(0, sp),
                                         Bin(BinaryOp::FloorDiv, Bin(BinaryOp::Sub, f.start, f.stop, sp), safe_step, sp), sp),
                        Int(0, sp), sp);
    ExprPtr n_rem = Bin(BinaryOp::Mul, Bin(BinaryOp::Mod, T, Int(C, sp), sp), nonzero, sp);
    ExprPtr done = Bin(BinaryOp::Sub, T, Bin(BinaryOp::Mod, T, Int(C, sp), sp), sp);
    return make_seq({AssignStmt::make(T, trips, sp), full, Remainder(f, done, n_rem, mid)}, sp);
  }

  // for r in range(n_rem): i = start + (done + r) * step; a fresh copy of the body (it must share
  // no Var with the main copy). `mid` are the full chunks' results, its carries' inits.
  StmtPtr Remainder(const ForStmt& f, const ExprPtr& done, const ExprPtr& n_rem, const std::vector<VarPtr>& mid) {
    const Span& sp = f.span;
    VarPtr r = Var::make(f.loop_var->name + "_rem", f.loop_var->type, sp);
    std::vector<IterArgPtr> ias;
    std::unordered_map<const Var*, ExprPtr> subst;
    for (size_t k = 0; k < f.iter_args.size(); ++k) {
      ias.push_back(IterArg::make(f.iter_args[k]->name, f.iter_args[k]->type, mid[k], sp));
      subst[f.iter_args[k].get()] = ias.back();
    }
    DefinedVars dv;
    dv.visit_stmt(f.body);
    VarPtr lv = Var::make(f.loop_var->name, f.loop_var->type, f.loop_var->span);
    subst[f.loop_var.get()] = lv;
    BodyCopy copy(std::move(subst), &dv.defs);
    std::vector<StmtPtr> body{AssignStmt::make(lv, Index(f, Bin(BinaryOp::Add, done, r, sp)), sp)};
    for (auto& st : flatten_stmts(copy.mutate_stmt(f.body))) body.push_back(st);
    return ForStmt::make(r, Int(0, sp), n_rem, Int(1, sp), ias, make_seq(body, sp), f.return_vars, f.for_kind,
                         f.attrs, sp)
        ->with_chunk_split(LoopOrigin::ChunkRemainder, 0);
  }

  // for co in range(plan): for ci in range(C): i = <index>; [if InRange(i)] body.
  // The index is start + (co * C + ci) * step, or co + ci * step when co is a chunk's first index.
  // The outer loop's results are `results`.
  StmtPtr Chunked(const ForStmt& f, const ChunkPlan& plan, bool guard, const std::vector<VarPtr>& results) {
    const Span& sp = f.span;
    const int64_t C = f.chunk.chunk;
    const bool carries = !f.iter_args.empty();
    VarPtr co = Var::make(f.loop_var->name + "_chunk", f.loop_var->type, sp);
    VarPtr ci = Var::make(f.loop_var->name + "_in", f.loop_var->type, sp);
    std::vector<IterArgPtr> outer_ias, inner_ias;
    std::unordered_map<const Var*, ExprPtr> subst;
    for (auto& ia : f.iter_args) {
      outer_ias.push_back(IterArg::make(ia->name, ia->type, ia->init, sp));
      inner_ias.push_back(IterArg::make(ia->name, ia->type, outer_ias.back(), sp));
      subst[ia.get()] = inner_ias.back();
    }
    BodyCopy copy(std::move(subst), nullptr);
    std::vector<StmtPtr> body = flatten_stmts(copy.mutate_stmt(f.body));
    ExprPtr idx = plan.base_index ? Bin(BinaryOp::Add, co, Bin(BinaryOp::Mul, ci, f.step, sp), sp)
                                  : Index(f, Bin(BinaryOp::Add, Bin(BinaryOp::Mul, co, Int(C, sp), sp), ci, sp));
    std::vector<StmtPtr> inner_body{AssignStmt::make(f.loop_var, idx, sp)};
    std::vector<VarPtr> inner_rvs;
    for (auto& ia : f.iter_args) inner_rvs.push_back(Var::make(ia->name, ia->type, sp));
    if (guard) {
      std::vector<VarPtr> if_rvs;
      std::vector<ExprPtr> pass, if_vals;
      for (auto& ia : inner_ias) {
        if_rvs.push_back(Var::make(ia->name, ia->type, sp));
        pass.push_back(ia);
        if_vals.push_back(if_rvs.back());
      }
      StmtPtr else_body = carries ? StmtPtr(YieldStmt::make(pass, sp)) : nullptr;
      inner_body.push_back(IfStmt::make(InRange(f, f.loop_var), make_seq(body, sp), else_body, if_rvs, sp));
      if (carries) inner_body.push_back(YieldStmt::make(if_vals, sp));
    } else {
      inner_body.insert(inner_body.end(), body.begin(), body.end());
    }
    StmtPtr inner = ForStmt::make(ci, Int(0, sp), Int(C, sp), Int(1, sp), inner_ias, make_seq(inner_body, sp), inner_rvs,
                                  f.for_kind, f.attrs, sp)
                        ->with_chunk_split(LoopOrigin::ChunkInner, 0);
    std::vector<StmtPtr> outer_body{inner};
    if (carries) outer_body.push_back(YieldStmt::make(std::vector<ExprPtr>(inner_rvs.begin(), inner_rvs.end()), sp));
    return ForStmt::make(co, plan.start, plan.stop, plan.step, outer_ias, make_seq(outer_body, sp), results, f.for_kind,
                         f.attrs, sp)
        ->with_chunk_split(LoopOrigin::ChunkOuter, plan.checked_stride > 1 ? plan.checked_stride : 0);
  }
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    Splitter s;
    FunctionPtr nf = s.mutate_function(fn);
    if (nf != fn) out = out->with_function(nf);
  }
  return out;
}

}  // namespace

Pass SplitChunkedLoops() { return Pass{"SplitChunkedLoops", {}, {IRProperty::ChunkedLoopsSplit}, Run, /*invalidated=*/{}}; }

}  // namespace pypto::transforms
