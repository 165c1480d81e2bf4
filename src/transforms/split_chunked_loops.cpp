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
//   T is counted without forming stop - start (TripsUpward), which leaves int64 for bounds far
//   apart. A guarded chunk's inner loop runs min(C, T - co * C) trips when T is known only at run
//   time (a C far above T runs no guard tests past the end); with a constant T, C is at most T.
//   A step s known only at run time (sign unknown): the outer loop walks the chunks' first
//   indices, `for co in range(start, stop, s * C)` (a zero step fails the run there, naming the
//   DSL line, as any run-time-step loop does), the inner loop sets i = co + ci * s, runs what
//   range(co, stop, s) has left (at most C: no index past the end, which could wrap around int64
//   and pass the guard) and always guards the body with `(s > 0 and i < stop) or (s < 0 and
//   i > stop)`; leading_full's full chunks are `range(start, stop - (C - 1) * s, s * C)` (start
//   for the stop when that leaves int64) and its remainder the last T % C iterations.
//   The new loops get ForStmt::loop_origin = chunk_outer / chunk_inner / chunk_remainder
//   (InterchangeChunkLoops reads it); they carry no ForStmt::chunk (the request is consumed). A run-time step's outer
//   loop (step `s * C`, C > 1) also gets ForStmt::chunk_stride = C: the code generators compute that
//   stride checked (pto2_chunk_stride / pypto_kernel::chunk_stride), so an overflowing
//   `s * C` fails the run naming the DSL line instead of wrapping.
// Input invariants: the parser's (ForStmt::chunk: chunk > 0; a loop with carries ends its body with a yield).
// Output invariants: no ForStmt has a chunk request (ForStmt::chunk.chunk == 0).
// Errors (located): a chunked loop whose constant step is 0; a constant step * chunk that
//   overflows int64; constant bounds with more than 2^63 - 1 trips.
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
      case BinaryOp::Min: return Int(std::min(x->value, y->value), sp);
      case BinaryOp::Div:   // the pass builds none of these (no `default:`: -Wswitch flags a new op)
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
  if (((x && x->value == 0) || (y && y->value == 0)) && op == BinaryOp::Mul) return Int(0, sp);   // operands are pure
  if (x && x->value == 1 && op == BinaryOp::Mul) return b;
  return BinaryExpr::make(op, a, b, sp);
}

ExprPtr Cmp(BinaryOp op, const ExprPtr& a, const ExprPtr& b, const Span& sp) { return BinaryExpr::make(op, a, b, sp); }

// A condition as the INDEX 0 or 1.
ExprPtr OneIf(const ExprPtr& cond, const Span& sp) { return Cast::make(cond, DataType::INDEX, sp); }

// x when `one` (an INDEX 0 / 1) is 1, else y: exact, one product is 0 (the code wraps, -fwrapv).
ExprPtr Pick(const ExprPtr& one, const ExprPtr& x, const ExprPtr& y, const Span& sp) {
  return Bin(BinaryOp::Add, Bin(BinaryOp::Mul, one, x, sp), Bin(BinaryOp::Mul, Bin(BinaryOp::Sub, Int(1, sp), one, sp), y, sp), sp);
}

// The number of k >= 0 with lo + k * a < hi (a > 0), without forming hi - lo, which leaves int64
// for bounds far apart although the count fits when a > 1: hi // a - lo // a + (hi % a > lo % a).
// It wraps only for loops of 2^63 trips or more. a == 1: max(hi - lo, 0).
ExprPtr TripsUpward(const ExprPtr& hi, const ExprPtr& lo, const ExprPtr& a, const Span& sp) {
  auto* ac = a->as<ConstInt>();
  if (ac && ac->value == 1) return Bin(BinaryOp::Max, Bin(BinaryOp::Sub, hi, lo, sp), Int(0, sp), sp);
  ExprPtr q = Bin(BinaryOp::Sub, Bin(BinaryOp::FloorDiv, hi, a, sp), Bin(BinaryOp::FloorDiv, lo, a, sp), sp);
  ExprPtr r = OneIf(Cmp(BinaryOp::Gt, Bin(BinaryOp::Mod, hi, a, sp), Bin(BinaryOp::Mod, lo, a, sp), sp), sp);
  return Bin(BinaryOp::Max, Bin(BinaryOp::Add, q, r, sp), Int(0, sp), sp);
}

// The trip count of range(start, stop, step) for a constant step: a constant when the bounds are
// (a located error when it leaves int64), else TripsUpward.
ExprPtr ConstantStepTrips(const ForStmt& f, int64_t step) {
  const Span& sp = f.span;
  const ExprPtr& hi = step > 0 ? f.stop : f.start;
  const ExprPtr& lo = step > 0 ? f.start : f.stop;
  const __int128 a = step > 0 ? __int128(step) : -__int128(step);
  auto* h = hi->as<ConstInt>();
  auto* l = lo->as<ConstInt>();
  if (!h || !l) return TripsUpward(hi, lo, Int(int64_t(a), sp), sp);
  const __int128 span_len = __int128(h->value) - __int128(l->value);
  const __int128 trips = span_len <= 0 ? 0 : (span_len + a - 1) / a;
  PYPTO_USER_CHECK(trips <= INT64_MAX, sp,
                   "the bounds of this chunked loop overflow int64 (range(" << f.start->as<ConstInt>()->value << ", "
                                                                        << f.stop->as<ConstInt>()->value << ", " << step
                                                                        << ") has more than 2^63 - 1 iterations)",
                   "use start / stop / step values whose trip count stays within int64");
  return Int(int64_t(trips), sp);
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

// How many iterations a chunk's inner loop runs: all C, or only those left in the loop, so that
// a chunk never runs guard tests past the loop's end (C may be far larger than the trip count)
// and never computes an index beyond it (one that would wrap around int64 and pass the guard).
enum class InnerTrips {
  All,         // C (the chunks are full)
  LeftOfTrips, // min(C, T - co * C): co is the chunk's number, T the loop's trip count (`trips`)
  LeftOfStop,  // what range(co, stop, s) has left, at most C: co is the chunk's first index
};

// The bounds of a new outer chunk loop, and how the inner loop recomputes the loop variable.
struct ChunkPlan {
  ExprPtr start, stop, step;   // outer loop: `for co in range(start, stop, step)`
  int64_t chunk = 0;           // C
  bool base_index = false;     // co is the first index of its chunk (run-time step), else its number
  int64_t checked_stride = 0;  // C when `step` is `s * C` for a run-time s: ForStmt::chunk_stride = C
  InnerTrips inner = InnerTrips::All;
  ExprPtr trips;               // LeftOfTrips: the loop's trip count
};

// Chunks over `for co in range(start, stop, step)`: co a chunk number, or with a run-time step
// (`step` = s * C) a chunk's first index.
ChunkPlan Plan(ExprPtr start, ExprPtr stop, ExprPtr step, int64_t C, bool runtime_step = false) {
  ChunkPlan p;
  p.start = std::move(start), p.stop = std::move(stop), p.step = std::move(step), p.chunk = C;
  if (runtime_step) p.base_index = true, p.checked_stride = C;
  return p;
}

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
    ExprPtr T = ConstantStepTrips(*f, step);
    if (guarded) {
      if (auto* tc = T->as<ConstInt>()) {
        // A known trip count: a chunk of C > T iterations holds the whole loop in T.
        const int64_t c = std::max<int64_t>(1, std::min(C, tc->value));
        ExprPtr n_outer = Int(tc->value / c + (tc->value % c != 0), sp);
        return Chunked(*f, Plan(Int(0, sp), n_outer, Int(1, sp), c), /*guard=*/tc->value % c != 0, f->return_vars);
      }
      ExprPtr n_outer = Bin(BinaryOp::FloorDiv, Bin(BinaryOp::Add, T, Int(C - 1, sp), sp), Int(C, sp), sp);
      ChunkPlan plan = Plan(Int(0, sp), n_outer, Int(1, sp), C);
      plan.inner = InnerTrips::LeftOfTrips, plan.trips = T;
      return Chunked(*f, plan, /*guard=*/true, f->return_vars);
    }
    ExprPtr n_full = Bin(BinaryOp::FloorDiv, T, Int(C, sp), sp);
    ExprPtr n_rem = Bin(BinaryOp::Mod, T, Int(C, sp), sp);
    const bool no_rem = n_rem->is<ConstInt>() && ConstOr(n_rem, 0) == 0;
    if (no_rem) return Chunked(*f, Plan(Int(0, sp), n_full, Int(1, sp), C), false, f->return_vars);
    std::vector<VarPtr> mid = FreshLike(f->return_vars);
    StmtPtr full = Chunked(*f, Plan(Int(0, sp), n_full, Int(1, sp), C), false, mid);
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
  // recomputes i = co + ci * s, runs what the loop has left (InnerTrips::LeftOfStop) and always
  // guards the body with InRange. leading_full: the full chunks are
  // `range(start, stop - (C - 1) * s, s * C)` (a chunk is full when its last index is in range;
  // `start` for the stop when stop - (C - 1) * s leaves int64: then no chunk is full), the
  // remainder the last T % C iterations of the loop's T (TripsUpward on the bounds ordered by the
  // step's sign), 0 trips when s is 0.
  StmtPtr RuntimeStep(const ForStmt& f, int64_t C, bool guarded) {
    const Span& sp = f.span;
    ExprPtr chunk_step = Bin(BinaryOp::Mul, f.step, Int(C, sp), sp);
    if (guarded) {
      ChunkPlan plan = Plan(f.start, f.stop, chunk_step, C, true);
      plan.inner = InnerTrips::LeftOfStop;
      return Chunked(f, plan, true, f.return_vars);
    }
    ExprPtr up = OneIf(Cmp(BinaryOp::Gt, f.step, Int(0, sp), sp), sp);
    ExprPtr shift = Bin(BinaryOp::Mul, Int(C - 1, sp), f.step, sp);
    ExprPtr shifted = Bin(BinaryOp::Sub, f.stop, shift, sp);
    // stop - (C - 1) * s moved against the step's sign: it left int64
    ExprPtr wrapped = OneIf(Cmp(BinaryOp::Eq, Cmp(BinaryOp::Gt, shifted, f.stop, sp), Cmp(BinaryOp::Gt, f.step, Int(0, sp), sp), sp), sp);
    ExprPtr full_stop = C == 1 ? f.stop : Pick(wrapped, f.start, shifted, sp);
    std::vector<VarPtr> mid = FreshLike(f.return_vars);
    StmtPtr full = Chunked(f, Plan(f.start, full_stop, chunk_step, C, true), false, mid);
    ExprPtr nonzero = OneIf(Cmp(BinaryOp::Ne, f.step, Int(0, sp), sp), sp);
    ExprPtr zero = OneIf(Cmp(BinaryOp::Eq, f.step, Int(0, sp), sp), sp);
    // |s| (1 for a zero step, whose loop fails before the count is used)
    ExprPtr magnitude = Bin(BinaryOp::Add, Bin(BinaryOp::Max, f.step, Bin(BinaryOp::Sub, Int(0, sp), f.step, sp), sp), zero, sp);
    VarPtr T = Var::make(f.loop_var->name + "_trips", f.loop_var->type, sp);
    ExprPtr trips = TripsUpward(Pick(up, f.stop, f.start, sp), Pick(up, f.start, f.stop, sp), magnitude, sp);
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

  // The inner loop's trip count (InnerTrips) in the chunk `co`.
  static ExprPtr InnerStop(const ForStmt& f, const ChunkPlan& plan, const VarPtr& co) {
    const Span& sp = f.span;
    const ExprPtr C = Int(plan.chunk, sp);
    if (plan.inner == InnerTrips::All) return C;
    if (plan.inner == InnerTrips::LeftOfTrips) {
      return Bin(BinaryOp::Min, C, Bin(BinaryOp::Sub, plan.trips, Bin(BinaryOp::Mul, co, C, sp), sp), sp);
    }
    // range(co, stop, s) with co in range: -((co - stop) // s). co - stop leaves int64 exactly when
    // it comes out of the step's sign (then more than C are left: C * s fits in int64); it is
    // replaced by -s there, so the division is defined.
    ExprPtr w = Bin(BinaryOp::Sub, co, f.stop, sp);
    ExprPtr zero = Int(0, sp);
    ExprPtr wrapped = OneIf(Cmp(BinaryOp::Eq, Cmp(BinaryOp::Gt, w, zero, sp), Cmp(BinaryOp::Gt, f.step, zero, sp), sp), sp);
    ExprPtr safe_w = Pick(wrapped, Bin(BinaryOp::Sub, zero, f.step, sp), w, sp);
    ExprPtr left = Bin(BinaryOp::Sub, zero, Bin(BinaryOp::FloorDiv, safe_w, f.step, sp), sp);
    return Bin(BinaryOp::Min, C, Bin(BinaryOp::Max, left, Bin(BinaryOp::Mul, C, wrapped, sp), sp), sp);
  }

  // for co in range(plan): for ci in range(InnerStop): i = <index>; [if InRange(i)] body.
  // The index is start + (co * C + ci) * step, or co + ci * step when co is a chunk's first index.
  // The outer loop's results are `results`.
  StmtPtr Chunked(const ForStmt& f, const ChunkPlan& plan, bool guard, const std::vector<VarPtr>& results) {
    const Span& sp = f.span;
    const int64_t C = plan.chunk;
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
    StmtPtr inner = ForStmt::make(ci, Int(0, sp), InnerStop(f, plan, co), Int(1, sp), inner_ias, make_seq(inner_body, sp), inner_rvs,
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
