// InterchangeChunkLoops
//
// What: replaces every `pl.at(level=CORE_GROUP, optimizations=[pl.auto_chunk])` scope (attr
//   auto_chunk) by its statements, with the kernel boundaries picked (spec anchor_features §7):
//     - a chunk chain: a loop with ForStmt::loop_origin chunk_outer whose body is its chunk_inner
//       loop, whose body (after the loop variable's assignment and the guard) may again be the
//       outer loop of a nested chunked loop, and so on. When every inner loop of the chain is
//       parallel, all its outer loops move outward, in order, and stay in the orchestration;
//       the inner loops with the body become one InCore scope (one task per combination of
//       outer iterations). A chain with a sequential inner loop is wrapped whole. A nested
//       level joins the chain only when its outer loop's bounds read nothing the inner loops
//       around it define (a triangular nest keeps it inside) and it passes their carries
//       straight through. A nested level with a leading_full remainder loop ends the chain:
//       its remainder gets a scope of its own, after the level's outer loop, holding a fresh
//       copy of the enclosing inner loops (their guards included) around the remainder (with a
//       run-time step, the trip count SplitChunkedLoops computes before the level goes with it);
//     - a remainder loop (chunk_remainder) gets an InCore scope of its own;
//     - the other statements are grouped into InCore scopes (runs of consecutive statements),
//       except yields, returns and pure scalar assignments (scalars, tensor.dim, tensor.read of an
//       element) and ifs of them with scalar results (a conditional expression in a loop bound),
//       which stay in the orchestration.
//   Each produced scope is `pl.at(level=CORE_GROUP)` with the auto_chunk scope's split /
//   slot_num / name_hint; OutlineIncoreScopes then outlines them as usual.
//       with pl.at(level=CORE_GROUP, optimizations=[pl.auto_chunk]):     for io in pl.parallel(0, 2, 1):
//           for io in pl.parallel(0, 2, 1):                    ==>            for jo in pl.parallel(0, 3, 1):
//               for ii in pl.parallel(0, 4, 1):                                    with pl.at(level=CORE_GROUP):
//                   i = io * 4 + ii                                                    for ii in pl.parallel(0, 4, 1):
//                   for jo in pl.parallel(0, 3, 1):                                        i = io * 4 + ii
//                       for ji in pl.parallel(0, 2, 1): j = jo * 2 + ji; body                for ji in ...: body
// Input invariants: SplitChunkedLoops ran.
// Output invariants: no ScopeStmt has the auto_chunk attr.
// Why: the reference's auto_chunk: the compiler, not the user, picks the kernel boundaries.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

LoopOrigin Origin(const ForStmt& f) { return f.loop_origin; }

// A scalar assignment the orchestration computes: on scalars, tensor.dim (a shape) and
// tensor.read (an element, which the orchestration reads once its writers are done). A loop
// bound reading a tensor element (`pl.range(t[0, 1] % 4, chunk=2)`, its read hoisted before the
// loop) must stay: the chunk loops that read it run in the orchestration.
// An expression the orchestration computes: no call but tensor.dim / tensor.read.
bool PureScalarExpr(const ExprPtr& e) {
  struct CallFinder : IRVisitor {
    bool found = false;
    void visit_(const Call* op) override {
      if (!(op->is_op && (op->callee == "tensor.dim" || op->callee == "tensor.read"))) found = true;
      IRVisitor::visit_(op);
    }
    void visit_(const Submit* op) override { found = true; }
  } finder;
  finder.visit_expr(e);
  return !finder.found;
}

bool PureScalarAssign(const Stmt& s) {
  auto* a = s.as<AssignStmt>();
  return a && a->var->type->is<ScalarType>() && PureScalarExpr(a->value);
}

// An if of such assignments with scalar results: what a conditional expression in a loop bound
// (`pl.range((m if n % 2 == 0 else n) % 4, chunk=2)`) becomes. It stays in the orchestration
// with the chunk loops that read its result.
bool PureScalarIf(const Stmt& s) {
  auto* i = s.as<IfStmt>();
  if (!i || !PureScalarExpr(i->cond)) return false;
  for (auto& rv : i->return_vars)
    if (!rv->type->is<ScalarType>()) return false;
  for (const StmtPtr& body : {i->then_body, i->else_body}) {
    if (!body) continue;
    for (const StmtPtr& st : flatten_stmts(body)) {
      auto* y = st->as<YieldStmt>();
      bool pure_yield = y && std::all_of(y->values.begin(), y->values.end(), PureScalarExpr);
      if (!pure_yield && !PureScalarAssign(*st) && !PureScalarIf(*st)) return false;
    }
  }
  return true;
}

// One level of a chunk chain: the outer loop over chunks and its inner loop of C trips.
struct Level {
  const ForStmt* outer;
  const ForStmt* inner;
  StmtPtr inner_self;
  const ForStmt* remainder = nullptr;   // a leading_full remainder loop after `outer` (last level only)
  const Stmt* trips = nullptr;          // its run-time trip count `i_trips = ...` before `outer`
};

// `loop`'s body is `[stmt]` or `[stmt, yield]`: that stmt, else null.
StmtPtr SoleStmt(const StmtPtr& body) {
  auto stmts = flatten_stmts(body);
  const bool ok = stmts.size() == 1 || (stmts.size() == 2 && stmts[1]->is<YieldStmt>());
  return ok ? stmts[0] : nullptr;
}

// The next level inside an inner chunk loop's body, as SplitChunkedLoops builds it: `[i = ..., O]`
// or guarded `[i = ..., if i < stop: O]` (with their trailing yields), O maybe followed by its
// leading_full remainder loop R (whose carries start from O's results) and, for a run-time
// step, preceded by the trip count R reads (`[T = ..., O, R]`); else {null, null, null}.
struct Nested {
  const ForStmt* outer = nullptr;
  const ForStmt* remainder = nullptr;
  const AssignStmt* trips = nullptr;
};
Nested NestedOuter(const ForStmt& inner) {
  auto stmts = flatten_stmts(inner.body);
  if (stmts.empty() || !stmts[0]->is<AssignStmt>()) return {};
  stmts.erase(stmts.begin());
  if (StmtPtr s = SoleStmt(make_seq(stmts)); s && s->is<IfStmt>()) stmts = flatten_stmts(s->as<IfStmt>()->then_body);
  if (!stmts.empty() && stmts.back()->is<YieldStmt>()) stmts.pop_back();
  const AssignStmt* trips = stmts.size() == 3 ? stmts[0]->as<AssignStmt>() : nullptr;
  if (trips) stmts.erase(stmts.begin());
  auto* o = stmts.empty() ? nullptr : stmts[0]->as<ForStmt>();
  if (!o || Origin(*o) != LoopOrigin::ChunkOuter || stmts.size() > 2) return {};
  if (stmts.size() == 1) return {o, nullptr, nullptr};
  auto* r = stmts[1]->as<ForStmt>();
  if (!r || Origin(*r) != LoopOrigin::ChunkRemainder || r->iter_args.size() != o->return_vars.size()) return {};
  for (size_t m = 0; m < r->iter_args.size(); ++m) {
    if (r->iter_args[m]->init.get() != o->return_vars[m].get()) return {};
  }
  return {o, r, trips};
}

// Every Var an expression reads.
struct VarUses : IRVisitor {
  std::unordered_set<const Var*> vars;
  void visit_(const Var* op) override { vars.insert(op); }
  void visit_(const IterArg* op) override { vars.insert(op); }
};

// Every Var a statement defines (loop vars, carries, assignments, if results).
struct VarDefs : IRVisitor {
  std::unordered_set<const Var*> vars;
  void visit_(const AssignStmt* op) override {
    vars.insert(op->var.get());
    IRVisitor::visit_(op);
  }
  void visit_(const ForStmt* op) override {
    vars.insert(op->loop_var.get());
    for (auto& ia : op->iter_args) vars.insert(ia.get());
    for (auto& rv : op->return_vars) vars.insert(rv.get());
    IRVisitor::visit_(op);
  }
  void visit_(const IfStmt* op) override {
    for (auto& rv : op->return_vars) vars.insert(rv.get());
    IRVisitor::visit_(op);
  }
};

// Level k+1 may move out of level k's inner loop: its outer loop's bounds (and its run-time trip
// count, when it has one) read nothing the inner loops around it define, and its carries are
// theirs, passed straight through.
bool Movable(const std::vector<Level>& chain, const ForStmt& next, const AssignStmt* trips) {
  const Level& last = chain.back();
  if (next.iter_args.size() != last.inner->iter_args.size()) return false;
  for (size_t m = 0; m < next.iter_args.size(); ++m) {
    if (next.iter_args[m]->init.get() != last.inner->iter_args[m].get()) return false;
  }
  VarUses uses;
  for (const ExprPtr& e : {next.start, next.stop, next.step}) uses.visit_expr(e);
  if (trips) uses.visit_expr(trips->value);
  for (const Level& l : chain) {
    VarDefs defs;
    defs.vars.insert(l.inner->loop_var.get());
    for (auto& ia : l.inner->iter_args) defs.vars.insert(ia.get());
    auto stmts = flatten_stmts(l.inner->body);
    if (!stmts.empty()) defs.visit_stmt(stmts[0]);   // the loop variable's assignment
    for (const Var* v : uses.vars) {
      if (defs.vars.count(v)) return false;
    }
  }
  return true;
}

// Rebuilds the inner loops of a chain as one nest: a nested level's outer loop (now outside) is
// replaced by its inner loop, its carries by the enclosing inner loop's (`remap`). `drop` loops
// are left out; with `fresh`, every Var the nest defines gets a new Var (a second copy of the
// nest must share no Var with the first).
class NestBuilder : public IRMutator {
 public:
  NestBuilder(std::unordered_map<const ForStmt*, StmtPtr> replace, std::unordered_set<const Stmt*> drop,
              const std::vector<std::pair<VarPtr, VarPtr>>& remap, const StmtPtr* fresh_defs_of)
      : replace_(std::move(replace)), drop_(std::move(drop)) {
    for (auto& [from, to] : remap) {
      if (from != to) var_remap_[from.get()] = {from, to};
    }
    if (fresh_defs_of) fresh_.visit_stmt(*fresh_defs_of);
    fresh_on_ = fresh_defs_of != nullptr;
  }
  StmtPtr mutate_(const ForStmt* op, const StmtPtr& self) override {
    if (auto it = replace_.find(op); it != replace_.end()) return mutate_stmt(it->second);
    return IRMutator::mutate_(op, self);
  }
  StmtPtr mutate_(const SeqStmts* op, const StmtPtr& self) override {
    std::vector<StmtPtr> out;
    bool changed = false;
    for (const StmtPtr& st : op->stmts) {
      if (drop_.count(st.get())) {
        changed = true;
        continue;
      }
      out.push_back(mutate_stmt(st));
      changed |= out.back() != st;
    }
    return changed ? make_seq(std::move(out), op->span) : self;
  }
  ExprPtr mutate_(const Var* op, const ExprPtr& self) override {
    ExprPtr e = Chase(op, self);
    if (e != self || !fresh_on_ || !fresh_.vars.count(op)) return e;
    VarPtr n = Var::make(op->name, op->type, op->span);
    var_remap_[op] = {std::static_pointer_cast<const Var>(self), n};
    return n;
  }
  ExprPtr mutate_(const IterArg* op, const ExprPtr& self) override {
    ExprPtr e = Chase(op, self);
    if (e != self || !fresh_on_ || !fresh_.vars.count(op)) return e;
    IterArgPtr n = IterArg::make(op->name, op->type, mutate_expr(op->init), op->span);
    var_remap_[op] = {std::static_pointer_cast<const Var>(self), n};
    return n;
  }

 private:
  // A remap target may itself be rebuilt (an inner loop's carry gets a new init): follow it.
  ExprPtr Chase(const Var* op, ExprPtr e) {
    for (auto it = var_remap_.find(op); it != var_remap_.end(); it = var_remap_.find(op)) {
      if (it->second.second.get() == op) break;
      e = it->second.second;
      op = it->second.second.get();
    }
    return e;
  }

  std::unordered_map<const ForStmt*, StmtPtr> replace_;
  std::unordered_set<const Stmt*> drop_;
  VarDefs fresh_;
  bool fresh_on_ = false;
};

class Interchanger : public IRMutator {
 public:
  Interchanger() { statements_only_ = true; }   // rewrites scopes only
  StmtPtr mutate_(const ScopeStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);
    auto* sc = s->as<ScopeStmt>();
    auto* ac = attr_get<bool>(sc->attrs, "auto_chunk");
    if (!ac || !*ac) return s;
    Attrs kernel_attrs{{"level", std::string("CORE_GROUP")}};
    for (const char* k : {"split", "slot_num", "name_hint"}) {
      if (auto it = sc->attrs.find(k); it != sc->attrs.end()) kernel_attrs[k] = it->second;
    }
    auto wrap = [&](std::vector<StmtPtr> stmts, const Span& sp) {
      return ScopeStmt::make(ScopeKind::At, kernel_attrs, make_seq(std::move(stmts), sp), nullptr, nullptr, sp);
    };
    std::vector<StmtPtr> out, pending;
    auto flush = [&]() {
      if (pending.empty()) return;
      out.push_back(wrap(pending, pending.front()->span));
      pending.clear();
    };
    for (const StmtPtr& st : flatten_stmts(sc->body)) {
      auto* f = st->as<ForStmt>();
      if (f && Origin(*f) == LoopOrigin::ChunkOuter) {
        flush();
        out.push_back(Chain(*f, st, wrap));
      } else if (f && Origin(*f) == LoopOrigin::ChunkRemainder) {
        flush();
        out.push_back(wrap({st}, st->span));
      } else if (st->is<YieldStmt>() || st->is<ReturnStmt>() || PureScalarAssign(*st) || PureScalarIf(*st)) {
        flush();
        out.push_back(st);
      } else {
        pending.push_back(st);
      }
    }
    flush();
    return make_seq(out, sc->span);
  }

 private:
  // A chunk chain O0 { I0 { O1 { I1 { ... body } } } } (each inner body: the loop variable's
  // assignment, maybe a guard, then the next outer loop) becomes, when every inner loop is
  // parallel, O0 { O1 { ... scope { I0 { I1 { ... body } } } } }: one task per combination of
  // outer iterations. A chain with a sequential inner loop is wrapped whole.
  template <class Wrap>
  static StmtPtr Chain(const ForStmt& outer, const StmtPtr& self, const Wrap& wrap) {
    std::vector<Level> chain;
    const ForStmt* o = &outer;
    const ForStmt* remainder = nullptr;
    const Stmt* trips = nullptr;
    while (o) {
      StmtPtr i_self = SoleStmt(o->body);
      auto* inner = i_self ? i_self->as<ForStmt>() : nullptr;
      if (!inner || Origin(*inner) != LoopOrigin::ChunkInner) break;
      auto body = flatten_stmts(o->body);
      const bool passes_carries = body.size() == 1
                                      ? o->iter_args.empty()
                                      : body[1]->as<YieldStmt>()->values.size() == inner->return_vars.size();
      if (!passes_carries || inner->iter_args.size() != o->iter_args.size()) break;
      for (size_t m = 0; m < inner->iter_args.size(); ++m) {
        if (inner->iter_args[m]->init.get() != o->iter_args[m].get()) return wrap({self}, outer.span);
      }
      if (body.size() == 2) {
        auto& ys = body[1]->as<YieldStmt>()->values;
        for (size_t m = 0; m < ys.size(); ++m) {
          if (ys[m].get() != inner->return_vars[m].get()) return wrap({self}, outer.span);
        }
      }
      chain.push_back({o, inner, i_self, remainder, trips});
      if (remainder) break;   // the level with a remainder ends the chain
      Nested next = NestedOuter(*inner);
      o = next.outer && Movable(chain, *next.outer, next.trips) ? next.outer : nullptr;
      remainder = o ? next.remainder : nullptr;
      trips = o ? next.trips : nullptr;
    }
    if (chain.empty()) return wrap({self}, outer.span);
    for (const Level& l : chain) {
      if (l.inner->for_kind != ForKind::Parallel) return wrap({self}, outer.span);
    }
    // The outer loops, outermost first; each after the first carries the one before's values.
    const size_t K = outer.iter_args.size();
    std::vector<std::vector<IterArgPtr>> carries(chain.size());
    std::vector<std::vector<VarPtr>> results(chain.size());
    carries[0] = outer.iter_args;
    results[0] = outer.return_vars;
    for (size_t k = 1; k < chain.size(); ++k) {
      const ForStmt& ok = *chain[k].outer;
      for (size_t m = 0; m < K; ++m) {
        carries[k].push_back(IterArg::make(ok.iter_args[m]->name, ok.iter_args[m]->type, carries[k - 1][m], ok.span));
        results[k].push_back(Var::make(ok.return_vars[m]->name, ok.return_vars[m]->type, ok.span));
      }
    }
    // The main nest: each nested outer loop replaced by its inner loop; the last level's
    // remainder (if any) left out, its results read from that level's inner loop instead.
    const size_t last = chain.size() - 1;
    const ForStmt* rem = chain[last].remainder;
    std::unordered_map<const ForStmt*, StmtPtr> replace;
    std::vector<std::pair<VarPtr, VarPtr>> remap;
    for (size_t k = 0; k < chain.size(); ++k) {
      const ForStmt& o = *chain[k].outer;
      if (k > 0) replace[chain[k].outer] = chain[k].inner_self;
      for (size_t m = 0; m < K; ++m) {
        // The outermost inner loop starts from the innermost outer loop's carries; the others
        // from the inner loop around them.
        remap.emplace_back(o.iter_args[m], k == 0 ? VarPtr(carries.back()[m]) : VarPtr(chain[k - 1].inner->iter_args[m]));
        if (k > 0) remap.emplace_back(o.return_vars[m], chain[k].inner->return_vars[m]);
        if (k > 0 && rem && k == last) remap.emplace_back(rem->return_vars[m], chain[k].inner->return_vars[m]);
      }
    }
    // (A run-time step's trip count is read by the remainder only: it goes with the remainder.)
    std::unordered_set<const Stmt*> drop;
    if (rem) drop.insert(rem);
    if (chain[last].trips) drop.insert(chain[last].trips);
    NestBuilder nest(replace, drop, remap, nullptr);
    StmtPtr inner_nest = nest.mutate_stmt(chain[0].inner_self);
    // The remainder's nest: a fresh copy of the inner loops down to the last level, whose outer
    // loop is left out and whose remainder runs there, starting from the main part's results.
    StmtPtr rem_nest;
    if (rem) {
      std::unordered_map<const ForStmt*, StmtPtr> rreplace;
      std::vector<std::pair<VarPtr, VarPtr>> rremap;
      for (size_t k = 0; k < last; ++k) {
        const ForStmt& o = *chain[k].outer;
        if (k > 0) rreplace[chain[k].outer] = chain[k].inner_self;
        for (size_t m = 0; m < K; ++m) {
          rremap.emplace_back(o.iter_args[m], k == 0 ? results[last][m] : VarPtr(chain[k - 1].inner->iter_args[m]));
          if (k > 0) rremap.emplace_back(o.return_vars[m], chain[k].inner->return_vars[m]);
        }
      }
      for (size_t m = 0; m < K; ++m) rremap.emplace_back(chain[last].outer->return_vars[m], chain[last - 1].inner->iter_args[m]);
      NestBuilder copy(rreplace, {chain[last].outer}, rremap, &chain[0].inner_self);
      rem_nest = copy.mutate_stmt(chain[0].inner_self);
    }
    const ForStmt& first_inner = *chain[0].inner;
    std::vector<StmtPtr> body{wrap({inner_nest}, first_inner.span)};
    std::vector<ExprPtr> yielded(first_inner.return_vars.begin(), first_inner.return_vars.end());
    for (size_t k = chain.size(); k-- > 0;) {
      const ForStmt& ok = *chain[k].outer;
      if (K > 0) body.push_back(YieldStmt::make(yielded, ok.span));
      StmtPtr loop = ForStmt::make(ok.loop_var, ok.start, ok.stop, ok.step, carries[k], make_seq(body, ok.span),
                                   results[k], ok.for_kind, ok.attrs, ok.span)
                         ->with_typed_fields_of(ok);
      body = {loop};
      yielded.assign(results[k].begin(), results[k].end());
      if (k == last && rem_nest) {
        body.push_back(wrap({rem_nest}, rem->span));
        auto& rvs = rem_nest->as<ForStmt>()->return_vars;
        yielded.assign(rvs.begin(), rvs.end());
      }
    }
    return body[0];
  }
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    Interchanger x;
    FunctionPtr nf = x.mutate_function(fn);
    if (nf != fn) out = out->with_function(nf);
  }
  return out;
}

}  // namespace

Pass InterchangeChunkLoops() { return Pass{"InterchangeChunkLoops", {}, {IRProperty::AutoChunkScopesInterchanged}, Run, /*invalidated=*/{}}; }

}  // namespace pypto::transforms
