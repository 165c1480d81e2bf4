// Statements. Same rules as expressions: immutable, built by `make`, each with a span.
//
// SSA: every Var is assigned once. Values that change across loop iterations are IterArgs of
// the ForStmt, the body ends with a YieldStmt giving their next values, and `return_vars`
// (one per iter_arg) bind the final values after the loop. An IfStmt with `return_vars`
// ends each branch with a YieldStmt giving the values those vars take.
#pragma once
#include <memory>
#include <vector>

#include "pypto/ir/expr.h"

namespace pypto::ir {

struct Stmt : Node {
  using Node::Node;
};
using StmtPtr = std::shared_ptr<const Stmt>;

// var = value
struct AssignStmt : Stmt {
  static constexpr NodeKind kKind = NodeKind::AssignStmt;
  VarPtr var;
  ExprPtr value;
  AssignStmt(VarPtr v, ExprPtr e, Span s) : Stmt(kKind, std::move(s)), var(std::move(v)), value(std::move(e)) {}
  ~AssignStmt() override { release_children(var, value); }
  static std::shared_ptr<const AssignStmt> make(VarPtr var, ExprPtr value, Span span = {});
};

// An expression evaluated for its effect (a call whose result is unused).
struct EvalStmt : Stmt {
  static constexpr NodeKind kKind = NodeKind::EvalStmt;
  ExprPtr expr;
  EvalStmt(ExprPtr e, Span s) : Stmt(kKind, std::move(s)), expr(std::move(e)) {}
  ~EvalStmt() override { release_children(expr); }
  static std::shared_ptr<const EvalStmt> make(ExprPtr expr, Span span = {});
};

struct SeqStmts : Stmt {
  static constexpr NodeKind kKind = NodeKind::SeqStmts;
  std::vector<StmtPtr> stmts;
  SeqStmts(std::vector<StmtPtr> v, Span s) : Stmt(kKind, std::move(s)), stmts(std::move(v)) {}
  ~SeqStmts() override { release_children(stmts); }
  static std::shared_ptr<const SeqStmts> make(std::vector<StmtPtr> stmts, Span span = {});
};

// Software prefetch for walks over long statement lists (issue 17, linear compile time): a
// 100,000-statement body outgrows the caches, and a pass reaching each statement node (and the
// value / target it points to) then waits on memory for each, so a pass costs ~2x more per
// statement at 100k than at 10k. A loop over `stmts` calls prefetch_stmts_ahead(stmts, i) at
// step i: it asks for the node kFar statements on, and for the children of the one kNear on
// (its node has arrived by then), so the waits overlap the work. Only a hint: no effect on results.
inline void prefetch_node(const void* p) {
  // A make_shared node: its reference counts sit just before it; its fields span ~2-3 lines.
  const char* c = static_cast<const char*>(p);
  __builtin_prefetch(c - 16);
  __builtin_prefetch(c + 48);
  __builtin_prefetch(c + 112);
}
inline void prefetch_stmts_ahead(const std::vector<StmtPtr>& stmts, size_t i) {
  constexpr size_t kFar = 16, kNear = 6;
  if (i + kFar < stmts.size()) prefetch_node(stmts[i + kFar].get());
  if (i + kNear < stmts.size()) {
    const Stmt* s = stmts[i + kNear].get();
    if (!s) return;
    if (auto* a = s->as<AssignStmt>()) {
      prefetch_node(a->value.get());
      prefetch_node(a->var.get());
    } else if (auto* e = s->as<EvalStmt>()) {
      prefetch_node(e->expr.get());
    }
  }
}
// Calls f(stmt) for each of `stmts` in order, prefetching ahead (above): the loop of a walk
// over a statement list that may be long.
template <class F>
void for_each_prefetched(const std::vector<StmtPtr>& stmts, F&& f) {
  for (size_t i = 0; i < stmts.size(); ++i) {
    prefetch_stmts_ahead(stmts, i);
    f(stmts[i]);
  }
}

// How one loop carry (iter_arg) is materialised in C++: the ClassifyIterArgCarry pass result,
// printed as `carries=(pl.alias, pl.rebind, pl.slots(4))`.
//   alias     (rebind = false)            no variable: another name for the init's storage
//   rebind    (rebind = true, slots = 0)  a variable re-assigned by the loop's yield
//   slots(N)  (rebind = true, slots = N)  a TaskId carried as `PTO2TaskId arr[N]`, one slot
//                                         per pl.parallel iteration (or copied slot by slot)
struct LoopCarry {
  bool rebind = true;
  int64_t slots = 0;
  bool operator==(const LoopCarry& o) const { return rebind == o.rebind && slots == o.slots; }
  bool operator!=(const LoopCarry& o) const { return !(*this == o); }
  static LoopCarry alias() { return LoopCarry{false, 0}; }
  static LoopCarry rebound(int64_t slots = 0) { return LoopCarry{true, slots}; }
};

// `chunk=C, chunk_policy="guarded"` of a loop in a pl.auto_chunk scope (spec anchor_features §7):
// the user's request, typed by the parser, that SplitChunkedLoops split the loop into chunks of C
// iterations (and then clears). chunk = 0: not a chunked loop.
struct ChunkSpec {
  int64_t chunk = 0;
  ChunkPolicy policy = ChunkPolicy::Guarded;
  bool operator==(const ChunkSpec& o) const { return chunk == o.chunk && policy == o.policy; }
  bool operator!=(const ChunkSpec& o) const { return !(*this == o); }
};

// for loop_var in pl.range(start, stop, step, init_values=[iter_arg inits]) / pl.parallel(...)
struct ForStmt : Stmt {
  static constexpr NodeKind kKind = NodeKind::ForStmt;
  VarPtr loop_var;
  ExprPtr start, stop, step;
  std::vector<IterArgPtr> iter_args;
  StmtPtr body;
  std::vector<VarPtr> return_vars;   // one per iter_arg
  ForKind for_kind;
  Attrs attrs;
  // Pass results (typed, printed as pl.range keywords, compared by structural equality):
  std::vector<LoopCarry> carries;   // one per iter_arg (ClassifyIterArgCarry); empty before it runs
  int64_t trip_count = -1;          // iterations when start/stop/step are literals (StampStaticTripCounts); -1 unknown
  // Pass result (KernelInPlaceCarries; typed, printed as pl.range(..., inplace_carries=[0])):
  // the iter_arg indices whose yielded tile the body computes straight into the carry's storage.
  std::vector<int64_t> inplace_carries;
  // Pass result (KernelLendLoopInits; typed, printed as pl.range(..., lent_inits=[0])): the
  // iter_arg indices whose init is a tile read nowhere else, so the carry takes its buffer
  // instead of a copy of it.
  std::vector<int64_t> lent_inits;
  // Pass results (SplitChunkedLoops; typed, printed as pl.range(..., chunk_stride=4,
  // loop_origin="chunk_outer")): which part of a split chunked loop this is (InterchangeChunkLoops
  // reads it), and C > 1 on the outer loop of a chunked loop whose run-time step is `s * C` (the
  // code generators compute that stride overflow-checked), 0 on every other loop.
  LoopOrigin loop_origin = LoopOrigin::User;
  int64_t chunk_stride = 0;
  // The user's chunk request (parser; printed pl.range(..., chunk=4, chunk_policy="guarded")),
  // consumed by SplitChunkedLoops.
  ChunkSpec chunk;
  // Pass result (StampCountedLoops; typed, printed as pl.range(..., counted=True)): the code
  // generators print this loop counted (Python's range: an iteration count, the variable computed
  // from it) rather than `for (i = a; i < b; i += s)`, whose last `i += s` could pass INT64_MAX
  // (signed overflow: the loop wraps and never ends), or whose step is known only at run time.
  bool counted = false;
  ForStmt(VarPtr lv, ExprPtr a, ExprPtr b, ExprPtr c, std::vector<IterArgPtr> ia, StmtPtr bd, std::vector<VarPtr> rv,
          ForKind k, Attrs at, Span s)
      : Stmt(kKind, std::move(s)), loop_var(std::move(lv)), start(std::move(a)), stop(std::move(b)), step(std::move(c)),
        iter_args(std::move(ia)), body(std::move(bd)), return_vars(std::move(rv)), for_kind(k), attrs(std::move(at)) {}
  ~ForStmt() override { release_children(loop_var, start, stop, step, iter_args, body, return_vars); }
  static std::shared_ptr<const ForStmt> make(VarPtr loop_var, ExprPtr start, ExprPtr stop, ExprPtr step,
                                             std::vector<IterArgPtr> iter_args, StmtPtr body, std::vector<VarPtr> return_vars,
                                             ForKind kind = ForKind::Sequential, Attrs attrs = {}, Span span = {});
  // A copy with the pass results set: `loop->with_results(carries, 4)`.
  std::shared_ptr<const ForStmt> with_results(std::vector<LoopCarry> carries, int64_t trip_count) const;
  // A copy with inplace_carries set: `loop->with_inplace_carries({0})`.
  std::shared_ptr<const ForStmt> with_inplace_carries(std::vector<int64_t> carries) const;
  // A copy with lent_inits set: `loop->with_lent_inits({0})`.
  std::shared_ptr<const ForStmt> with_lent_inits(std::vector<int64_t> inits) const;
  // A copy with the SplitChunkedLoops results set: `loop->with_chunk_split(LoopOrigin::ChunkOuter, 4)`
  // (stride 0, or C > 1 on a ChunkOuter loop whose step is `s * C`).
  std::shared_ptr<const ForStmt> with_chunk_split(LoopOrigin origin, int64_t stride) const;
  // A copy with the chunk request set (chunk > 0, or {} for none): `loop->with_chunk({4, ChunkPolicy::Guarded})`.
  std::shared_ptr<const ForStmt> with_chunk(ChunkSpec chunk) const;
  // A copy with `counted` set: `loop->with_counted(true)`.
  std::shared_ptr<const ForStmt> with_counted(bool counted) const;
  // A copy with every typed field besides the structure (carries, trip_count, inplace_carries,
  // lent_inits, loop_origin, chunk_stride, chunk, counted) taken from `from`, a loop with as many iter_args: what a
  // pass that rebuilds a loop from its parts calls, so no typed field is dropped by a rebuild
  // (a new typed field is added here). `ForStmt::make(...)->with_typed_fields_of(*old)`.
  std::shared_ptr<const ForStmt> with_typed_fields_of(const ForStmt& from) const;
};

struct IfStmt : Stmt {
  static constexpr NodeKind kKind = NodeKind::IfStmt;
  ExprPtr cond;
  StmtPtr then_body;
  StmtPtr else_body;                 // may be null
  std::vector<VarPtr> return_vars;
  IfStmt(ExprPtr c, StmtPtr t, StmtPtr e, std::vector<VarPtr> rv, Span s)
      : Stmt(kKind, std::move(s)), cond(std::move(c)), then_body(std::move(t)), else_body(std::move(e)), return_vars(std::move(rv)) {}
  ~IfStmt() override { release_children(cond, then_body, else_body, return_vars); }
  static std::shared_ptr<const IfStmt> make(ExprPtr cond, StmtPtr then_body, StmtPtr else_body,
                                            std::vector<VarPtr> return_vars = {}, Span span = {});
};

// pl.yield_(v0, v1, ...): the next values of the enclosing for's iter_args, or the values of
// the enclosing if's return_vars. Always the last statement of its body.
struct YieldStmt : Stmt {
  static constexpr NodeKind kKind = NodeKind::YieldStmt;
  std::vector<ExprPtr> values;
  YieldStmt(std::vector<ExprPtr> v, Span s) : Stmt(kKind, std::move(s)), values(std::move(v)) {}
  ~YieldStmt() override { release_children(values); }
  static std::shared_ptr<const YieldStmt> make(std::vector<ExprPtr> values, Span span = {});
};

struct ReturnStmt : Stmt {
  static constexpr NodeKind kKind = NodeKind::ReturnStmt;
  std::vector<ExprPtr> values;
  ReturnStmt(std::vector<ExprPtr> v, Span s) : Stmt(kKind, std::move(s)), values(std::move(v)) {}
  ~ReturnStmt() override { release_children(values); }
  static std::shared_ptr<const ReturnStmt> make(std::vector<ExprPtr> values, Span span = {});
};

// The task options of a pl.at / pl.spmd scope, written by the user and typed by the parser
// (printed as the scope's keywords, compared by structural equality); OutlineIncoreScopes puts
// them on the task it makes (Submit::deps / predicate / sync_start / allow_early_resolve, NoDep
// argument directions), OutlineClusterScopes takes sync_start of a pl.spmd nested in a cluster.
//   with pl.at(level=pl.Level.CORE_GROUP, deps=[t0], predicate=(rc[0, 0] > 0),
//              allow_early_resolve=True, no_dep_args=[x]) as t1:
//   with pl.spmd(4, sync_start=True):
struct ScopeOptions {
  std::vector<ExprPtr> deps;          // deps=[...]: TaskIds (None entries dropped by the parser)
  ExprPtr predicate;                  // predicate=(...): a scalar comparison; null when absent
  std::vector<ExprPtr> no_dep_args;   // no_dep_args=[...]: tensor Vars the task does not depend on (pl.at)
  bool sync_start = false;            // sync_start=True (pl.spmd)
  bool allow_early_resolve = false;   // allow_early_resolve=True
  // Every expression child (deps, then the predicate, then no_dep_args): what visitors walk.
  std::vector<ExprPtr> exprs() const;
  // Whether any option is set.
  bool empty() const { return deps.empty() && !predicate && no_dep_args.empty() && !sync_start && !allow_early_resolve; }
};

// `with pl.at(level=..., deps=..., ...) [as tid]:`, `with pl.spmd(N, ...) [as tid]:`,
// `for i in pl.spmd(N, ...):` (block_var = i), `with pl.cluster():`.
// Task options are the typed `options`; the other scope options (level, core_num, name_hint,
// split, auto_chunk, dump_vars) live in attrs (see attrs.h). OutlineIncoreScopes /
// OutlineClusterScopes replace these by calls/submits to outlined functions.
struct ScopeStmt : Stmt {
  static constexpr NodeKind kKind = NodeKind::ScopeStmt;
  ScopeKind scope_kind;
  Attrs attrs;
  StmtPtr body;
  VarPtr task_id_var;   // `as tid`; null when absent
  VarPtr block_var;     // `for i in pl.spmd(...)`; null otherwise
  ScopeOptions options;
  ScopeStmt(ScopeKind k, Attrs a, StmtPtr b, VarPtr tid, VarPtr bv, Span s)
      : Stmt(kKind, std::move(s)), scope_kind(k), attrs(std::move(a)), body(std::move(b)), task_id_var(std::move(tid)), block_var(std::move(bv)) {}
  ~ScopeStmt() override { release_children(body, task_id_var, block_var, options.deps, options.predicate, options.no_dep_args); }
  static std::shared_ptr<const ScopeStmt> make(ScopeKind kind, Attrs attrs, StmtPtr body, VarPtr task_id_var = nullptr,
                                               VarPtr block_var = nullptr, Span span = {});
  // A copy with the task options set (deps TaskIds, no_dep_args tensor Vars; a cluster takes none):
  // `scope->with_options(opts)`.
  std::shared_ptr<const ScopeStmt> with_options(ScopeOptions options) const;
};

// A TaskId the yield after a runtime scope carries out of it (pass ResolveTaskIds): its storage
// is declared in the enclosing block, before the scope, so the yield can still name it. `var` is
// the yielded pl.submit TaskId element, or the iter_arg of a loop in the scope whose TaskId result
// is yielded (its C++ variable names the result); `slots` > 0 for a pl.slots(N) array carry.
struct ScopeTaskIdCarry {
  VarPtr var;
  int64_t slots = 0;
};

// A runtime scope: PTO2_SCOPE() (AUTO) or PTO2_SCOPE(PTO2ScopeMode::MANUAL). The parser makes
// MANUAL ones from `with pl.manual_scope():`; MaterializeRuntimeScopes adds the AUTO ones.
// `carried_task_ids` (ResolveTaskIds; empty before it) prints as the scope option
// `with pl.manual_scope(carried_task_ids={"prev_2": 0, "prev_1": 4}):`.
// `exit_values` (StampScopeExits; empty before it): the tensor / number values assigned, and
// loop or if results, of the body's top-level statements (and of its top-level nested scopes' exit values) that code
// after the block reads; the generator gives each an exit slot declared before the block.
// Printed `with pl.manual_scope(exit_values=["src_2", "steps_2"]):`.
struct RuntimeScopeStmt : Stmt {
  static constexpr NodeKind kKind = NodeKind::RuntimeScopeStmt;
  RuntimeScopeMode mode;
  StmtPtr body;
  std::vector<ScopeTaskIdCarry> carried_task_ids;   // in the order of the following yield
  std::vector<VarPtr> exit_values;                  // in statement, then result order
  RuntimeScopeStmt(RuntimeScopeMode m, StmtPtr b, Span s) : Stmt(kKind, std::move(s)), mode(m), body(std::move(b)) {}
  ~RuntimeScopeStmt() override { release_children(body); }
  static std::shared_ptr<const RuntimeScopeStmt> make(RuntimeScopeMode mode, StmtPtr body, Span span = {});
  // A copy with carried_task_ids set (each var a TaskId): `scope->with_carried_task_ids({{t, 0}})`.
  std::shared_ptr<const RuntimeScopeStmt> with_carried_task_ids(std::vector<ScopeTaskIdCarry> carries) const;
  // A copy with exit_values set (each a tensor or non-TaskId scalar Var): `scope->with_exit_values({src_2})`.
  std::shared_ptr<const RuntimeScopeStmt> with_exit_values(std::vector<VarPtr> values) const;
};

}  // namespace pypto::ir
