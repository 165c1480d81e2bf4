// AutoDeriveTaskDependencies
//
// What: in each L2 Orchestration function whose body is one default-mode AUTO region (no
//   pl.manual_scope(); a user pl.submit is a task like a call, the user's TaskIds (carried,
//   merged, task_dummy, arrays) stay extra edges; hand-placed pl.scope() blocks keep it AUTO, below),
//   finds every pair of task accesses that conflict (read/write, write/read,
//   write/write on regions of the same storage that may overlap; tasks under an if count as
//   if their branch ran, two branches of one if never conflict) and
//   orders each pair with a compiler edge (Call/Submit::compiler_manual_dep_edges):
//     * same iteration, producer in the consumer's block or an enclosing one: the consumer
//       names the producer's TaskId (the producer call becomes a pl.submit so it has one);
//     * producer in an inner loop the consumer is not in (fan-in): a placeholder
//       `r = pl.system.task_ref(task="k_tid3")` just before the consumer, named in its edges;
//     * loop-carried (producer in an earlier iteration of a pl.range over i): the placeholder
//       `pl.system.task_ref(i, task="k_tid3")` (chains through the producer's or consumer's own
//       carried edges cover older iterations).
//   PrepareCrossScopeTaskIdHoists (the next pass) turns the placeholders into TaskId carries
//   declared at the lowest common scope of producer and consumer; this pass only decides edges.
//   Regions are offsets / extents polynomial in loop variables and symbols (affine_region.h),
//   so disjoint tiles (`i * 32` vs `(i + 1) * 32`) get no edge. A tensor.create in a loop is
//   new storage every iteration unless a carry of the loop hands it on (then its carried
//   hazards get edges, and the per-iteration layout allocates it before the iteration's scope).
//   A pl.parallel whose iterations conflict becomes a pl.range (the runtime would order them in
//   submission order anyway), so those hazards get carried edges too.
//   When every hazard is ordered
//   by an edge the body becomes a compiler-owned MANUAL runtime scope (nothing tracked at run
//   time); otherwise it stays AUTO with the edges on top, and each tensor argument whose every
//   hazard is covered is demoted (In -> NoDep, InOut -> Out) so the runtime skips tracking it.
//       c = self.k(a, c)                        with pl.manual_scope():
//       d = self.k(c, d)              ==>           c, k_tid0 = pl.submit(self.k, a, c, ...)
//                                                   d = self.k(c, d, ..., compiler_manual_dep_edges=[k_tid0])
//   A hand-placed pl.scope() keeps the region AUTO (orchestration_codegen.txt: manual=false):
//   edges on top, and only where the consumer and any loop carrying the id are inside the
//   producer's innermost such block (its TaskId's C++ variable lives there).
//   The verdict is stamped on the function: attrs["auto_deps"] = "manual: ..." | "auto: ..."
//   | "fallback: <reason>" (visible in PYPTO_DUMP_IR).
// Input invariants: CallDirectionsDerived, ReturnParamsExplicit, StaticTripCountsStamped (trip counts
//   of rising loops are read from ForStmt::trip_count). Runs before
//   MaterializeRuntimeScopes (a MANUAL body gets no nested AUTO scopes) and ClassifyIterArgCarry
//   (which classifies the TaskId carries it adds).
// Output invariants: SSA; every compiler edge names a TaskId visible at its consumer or a
//   system.task_ref placeholder (resolved by PrepareCrossScopeTaskIdHoists).
// Why: automatic tracking costs an OverlapMap lookup/insert per tensor per task at run time;
//   what the compiler can prove it need not track. Parameters are assumed not to alias each
//   other (the runtime's own contract for distinct arguments).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

#include "affine_region.h"
#include "buffer_roots.h"
#include "escaping_allocations.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/node_pool.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/flat_stmts.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/return_lineage.h"

namespace pypto::transforms {

using namespace ir;

namespace {

struct Loop {
  const ForStmt* stmt = nullptr;
  std::set<const Var*> defs;       // loop var, iter_args and every Var defined in the body
  std::set<const Var*> handed_on;  // tensor.create roots made in the body that a carry yields
  std::vector<const RuntimeScopeStmt*> hand;   // hand-placed pl.scope() blocks around the loop
  std::optional<int64_t> step, trip;
  bool parallel = false;
  bool serialised = false;         // a pl.parallel whose iterations conflict, emitted as a pl.range
  int first_pos = 0, end_pos = 0;  // tasks inside have positions [first_pos, end_pos)
};

// A view of storage: the roots it may be (tensor params / creates) and its box in the root.
struct Region {
  std::set<const Var*> roots;
  bool whole = false;              // box unknown: the whole root
  std::vector<Poly> off, ext;
};

// Shared, immutable: a view chain (x = k(..., x) 10,000 times) shares one Region.
using RegionPtr = std::shared_ptr<const Region>;

struct Access {
  RegionPtr r;
  bool read = false, write = false;
  size_t arg = 0;                  // kNoArg: a runtime-allocated output (no argument to demote)
  bool uncovered = false;          // some hazard through this access has no edge
};
constexpr size_t kNoArg = SIZE_MAX;

// A block a task is in: a loop body (side 0) or a branch of an if (side 1: then, 2: else).
struct Scope {
  const Stmt* stmt = nullptr;
  int side = 0;
  bool operator==(const Scope& o) const { return stmt == o.stmt && side == o.side; }
  bool operator!=(const Scope& o) const { return !(*this == o); }
};

// What a task statement submits: a kernel Call or a pl.submit (with the user's deps=, core_num,
// predicate, its own TaskId).
struct TaskExpr {
  const Call* call = nullptr;
  const Submit* submit = nullptr;
  const std::string& callee() const { return call ? call->callee : submit->callee; }
  const std::vector<ExprPtr>& args() const { return call ? call->args : submit->args; }
  const std::vector<ArgDirection>& dirs() const { return call ? call->arg_directions : submit->arg_directions; }
  const Span& span() const { return call ? call->span : submit->span; }
};

struct Task;
struct Edge {
  Task* from;
  Loop* carried;                   // null: same iteration; else the loop whose carry names it
};

struct Task {
  int pos = 0;
  StmtPtr stmt;
  TaskExpr call;
  std::vector<Loop*> loops;        // enclosing loops, outermost first
  std::vector<Scope> scopes;       // enclosing loop bodies and branches, outermost first
  std::vector<const RuntimeScopeStmt*> hand;   // enclosing hand-placed pl.scope() blocks, outermost first
  std::vector<Access> acc;
  std::vector<Edge> edges;
  bool need_tid = false;
};

class Analyzer {
 public:
  Analyzer(const Program& prog, const Function& fn) : prog_(prog), fn_(fn) {}

  FunctionPtr Run();

 private:
  // ---- scan ----
  void scan(const StmtPtr& s, std::vector<Loop*>& loops);
  void scan_task(const StmtPtr& s, TaskExpr c, std::vector<Loop*>& loops);
  void check_element_writes();
  bool is_submit_task_id(const ExprPtr& value);
  void collect_accesses(Task& t);
  void note_def(const Var* v, const std::vector<Loop*>& loops) {
    def_order_.emplace(v, static_cast<int>(def_order_.size()));
    for (Loop* l : loops) l->defs.insert(v);
  }
  // `roots` in definition order (params first), not by address: the order edges are found in
  // is the order of the dependency lines, e.g. {u_then, u_else} of an if result.
  std::vector<const Var*> in_def_order(const std::set<const Var*>& roots);
  void fallback(const std::string& why) {
    if (fallback_.empty()) fallback_ = why;
  }
  std::optional<Poly> poly(const ExprPtr& e, int depth = 0);
  RegionPtr region_of(const Var* v);
  Region compute_region(const Var* v);
  const Var* alias_source(const Var* v);
  Region region_of_type(const Var* root, const TypePtr& t);
  const Var* alias_arg(const std::string& callee, const std::vector<ExprPtr>& args, size_t result);
  const Var* alias_arg(const Call& c, size_t result) { return alias_arg(c.callee, c.args, result); }
  const Var* tuple_alias(const TupleGetItem& g);
  int alias_param(const std::string& callee, size_t result);
  // The omitted Out arguments of a pl.submit (`tmp, tid = pl.submit(self.k, x)`): the runtime
  // allocates each at submission, new storage like a pl.create_tensor there. Its root is the
  // first variable that names the tuple element.
  int runtime_output_param(const TupleGetItem& g);
  void note_runtime_output(const Var* v, const TupleGetItem& g);
  std::map<std::pair<const Var*, int>, const Var*> runtime_out_;   // (submit tuple, element) -> root
  std::map<const Var*, Loop*> submit_loop_;                         // runtime-allocating submit tuple -> its loop
  std::map<const Var*, Task*> task_by_result_;                       // a task statement's result var -> the task
  bool user_deps_name(const Task& consumer, const Task* producer);

  // ---- derive ----
  bool overlap(const Access& a, const Access& b, Loop* carried, int64_t min_dist);
  bool covers(const Access& a, const Access& b);
  bool fanin_ok(Task* t, size_t level, bool range_slots = false);
  bool self_chained(Task* t, size_t level);
  bool every_iteration(Task* t, size_t level);
  std::vector<int64_t> overlapping_slots(Task* a, Task* b, size_t level);
  void derive();
  bool serialise_conflicting_parallel_loops();
  std::set<Loop*> conflicting_parallel_;   // derive: pl.parallel loops with a hazard across iterations
  // Records the hazard: an edge when `covered` (and a's TaskId can reach b), else marks both
  // accesses uncovered. Returns whether it became an edge.
  bool hazard(Task* a_task, Access& a, Task* b_task, Access& b, Loop* carried, bool covered);

  // ---- rewrite ----
  StmtPtr rewrite_body();
  void rebuild(const StmtPtr& s, std::unordered_map<Task*, ExprPtr>& visible, std::vector<StmtPtr>& out);
  // The callee of a task call and the type of a pl.submit of it (built once per kernel).
  struct SubmitOf {
    FunctionPtr fn;
    TypePtr type;
  };
  const SubmitOf& submit_of(const std::string& callee);
  bool kernel_always_loads(const std::string& callee, size_t param);
  std::unordered_map<std::string, std::vector<bool>> loaded_params_;
  std::unordered_map<std::string, SubmitOf> submit_of_;
  TypePtr tid_type_ = ScalarType::make(DataType::TASK_ID);

  const Program& prog_;
  const Function& fn_;
  std::string fallback_;
  std::vector<std::unique_ptr<Loop>> loops_;
  std::map<const ForStmt*, Loop*> loop_of_;
  std::vector<std::unique_ptr<Task>> tasks_;
  std::unordered_map<const Stmt*, Task*> task_of_;
  std::unordered_map<const Var*, ExprPtr> def_;                  // AssignStmt values
  std::map<const Var*, std::pair<const ForStmt*, size_t>> carry_site_;   // iter_arg / for rv
  std::map<const Var*, std::pair<const IfStmt*, size_t>> if_site_;
  std::map<const Var*, Loop*> created_in_;                       // tensor.create root -> loop (null: top)
  std::set<const Var*> manual_roots_;
  std::map<const Var*, int> def_order_;                          // params, then definitions in program order
  Poly::Bounds bounds_;                                          // atoms with a known range
  std::unordered_map<const Var*, RegionPtr> region_memo_;
  std::set<const Var*> in_progress_;
  std::map<const Var*, RegionPtr> carry_approx_;                 // iter_arg -> its region in the previous round
  std::vector<std::pair<const Var*, RegionPtr>> approx_reads_;   // in-progress carry reads of this round
  bool collect_all_accesses();
  std::vector<VarPtr> fresh_;                                    // renamed atoms (kept alive)
  // Accesses per root in program order: all of them, and the writes only.
  std::map<const Var*, std::vector<std::pair<Task*, size_t>>> by_root_, writes_by_root_;
  std::map<std::pair<Task*, size_t>, int> chained_memo_;
  std::map<std::pair<std::string, size_t>, int> alias_param_memo_;   // (callee, result) -> param index
  int pos_ = 0;
  std::vector<Scope> scopes_;                                    // scan: the blocks around
  std::vector<const RuntimeScopeStmt*> hand_scopes_;             // scan: the hand-placed scopes around
  bool any_hand_scope_ = false;
  std::vector<const Call*> element_writes_;   // the tensor.write ops of the region
  int uncovered_ = 0, edges_ = 0;
  std::string first_uncovered_;
  // rewrite state
  std::map<const Var*, std::pair<VarPtr, VarPtr>> remap_;
  bool manual_ = false;     // everything covered: the whole body is one MANUAL scope
  bool per_loop_ = false;   // everything covered, loops allocate: MANUAL per outermost iteration
  int loop_depth_ = 0;
  int demoted_ = 0;
  std::unique_ptr<BufferRoots> buffer_roots_;   // of fn_, for the escaping allocations of per_loop_
  std::string layout_fallback_;                 // set when per_loop_ cannot place an allocation (then AUTO)
};

std::optional<int64_t> const_of(const ExprPtr& e) {
  if (auto* c = e->as<ConstInt>()) return c->value;
  return std::nullopt;
}

bool is_task_call(const Program& prog, const ExprPtr& e) {
  auto* c = e ? e->as<Call>() : nullptr;
  if (!c || c->is_op) return false;
  FunctionPtr f = prog.get(c->callee);
  return f && (f->is_kernel() || f->type == FunctionType::Group);
}

// A task statement's value: a kernel call or a pl.submit.
bool is_task_expr(const Program& prog, const ExprPtr& e) { return is_task_call(prog, e) || (e && e->is<Submit>()); }

// The task of value `e` (is_task_expr).
TaskExpr task_expr(const ExprPtr& e) { return TaskExpr{e->as<Call>(), e->as<Submit>()}; }

bool contains_task(const Program& prog, const StmtPtr& s) {
  if (!s) return false;
  for (auto& st : FlatStmts(s)) {
    if (auto* a = st->as<AssignStmt>(); a && (is_task_call(prog, a->value) || a->value->is<Submit>())) return true;
    if (auto* e = st->as<EvalStmt>(); e && (is_task_call(prog, e->expr) || e->expr->is<Submit>())) return true;
    if (auto* f = st->as<ForStmt>(); f && contains_task(prog, f->body)) return true;
    if (auto* i = st->as<IfStmt>(); i && (contains_task(prog, i->then_body) || contains_task(prog, i->else_body))) return true;
    if (auto* r = st->as<RuntimeScopeStmt>(); r && contains_task(prog, r->body)) return true;
  }
  return false;
}

// Ops an analysed region may contain: views, allocation, an assemble in place (a new name of
// its target: LowerTensorAssemble made the source a view the kernels wrote), element reads and
// writes by the orchestrator (they wait for the element's tracked producers / readers and for
// every live task with an untracked write at run time; later tasks are submitted after them),
// and the user's TaskId values (an invalid id, a dummy barrier, arrays: extra edges, no tensor).
bool allowed_op(const std::string& op) {
  return op == "tensor.create" || op == "tensor.slice" || op == "tensor.transpose" || op == "tensor.dim" ||
         op == "tensor.read" || op == "tensor.write" || op == "tensor.assemble" || op == "system.task_invalid" ||
         op == "system.task_dummy" || op == "array.create" || op == "array.get_element" ||
         op == "array.update_element";
}

// Ops whose result is their first argument's storage and box.
bool names_first_arg(const Call& c) { return c.is_op && (c.callee == "tensor.assemble" || c.callee == "tensor.write"); }

void Analyzer::scan(const StmtPtr& s, std::vector<Loop*>& loops) {
  for (const StmtPtr& st : FlatStmts(s)) {
    if (!fallback_.empty()) return;
    switch (st->kind) {
      case NodeKind::AssignStmt: {
        auto* a = st->as<AssignStmt>();
        note_def(a->var.get(), loops);
        if (is_task_expr(prog_, a->value)) {
          def_[a->var.get()] = a->value;
          if (a->value->is<Submit>()) submit_loop_[a->var.get()] = loops.empty() ? nullptr : loops.back();
          scan_task(st, task_expr(a->value), loops);
          break;
        }
        if (auto* c = a->value->as<Call>()) {
          if (!c->is_op) return fallback("a call to non-kernel function '" + c->callee + "'");
          if (!allowed_op(c->callee)) return fallback("op " + c->callee + " in the region");
          if (c->callee == "tensor.create") {
            created_in_[a->var.get()] = loops.empty() ? nullptr : loops.back();
            if (auto* m = attr_get<bool>(c->attrs, "manual_dep"); m && *m) manual_roots_.insert(a->var.get());
          }
          if (c->callee == "tensor.dim") bounds_[a->var.get()] = Poly::Bound{0, std::nullopt};
          if (c->callee == "tensor.write") element_writes_.push_back(c);
        }
        def_[a->var.get()] = a->value;
        if (auto* g = a->value->as<TupleGetItem>()) note_runtime_output(a->var.get(), *g);
        break;
      }
      case NodeKind::EvalStmt: {
        auto* e = st->as<EvalStmt>();
        if (is_task_expr(prog_, e->expr)) {
          scan_task(st, task_expr(e->expr), loops);
          break;
        }
        auto* c = e->expr->as<Call>();
        // Python's assert checks scalars on the orchestrator (a tensor.read in its condition waits
        // like any other): it touches no tensor.
        const bool assert_stmt = c && c->is_op && c->callee == "system.assert";
        if (!c || !c->is_op || !(allowed_op(c->callee) || assert_stmt))
          return fallback("a statement with effects the analysis does not model");
        break;
      }
      case NodeKind::ForStmt: {
        auto* f = st->as<ForStmt>();
        auto l = std::make_unique<Loop>();
        l->stmt = f;
        l->parallel = f->for_kind == ForKind::Parallel;
        l->step = const_of(f->step);
        auto a = const_of(f->start);
        // The stamp (StampStaticTripCounts), for rising loops only: the bounds below assume the
        // loop var grows from `start`, so a counting-down loop stays unmodelled (no trip).
        if (l->step && *l->step > 0 && f->trip_count >= 0) l->trip = f->trip_count;
        l->defs.insert(f->loop_var.get());
        l->hand = hand_scopes_;
        note_def(f->loop_var.get(), loops);
        if (a && l->trip && *l->trip > 0) {
          bounds_[f->loop_var.get()] = Poly::Bound{*a, *a + *l->step * (*l->trip - 1)};
        } else if (auto sp = poly(f->start); sp && sp->is_provably_nonneg(bounds_) && l->step && *l->step > 0) {
          bounds_[f->loop_var.get()] = Poly::Bound{0, std::nullopt};
        }
        for (size_t i = 0; i < f->iter_args.size(); ++i) {
          l->defs.insert(f->iter_args[i].get());
          note_def(f->iter_args[i].get(), loops);
          carry_site_[f->iter_args[i].get()] = {f, i};
          carry_site_[f->return_vars[i].get()] = {f, i};
          note_def(f->return_vars[i].get(), loops);
        }
        loop_of_[f] = l.get();
        loops.push_back(l.get());
        Loop* lp = l.get();
        loops_.push_back(std::move(l));
        lp->first_pos = pos_;
        scopes_.push_back(Scope{f, 0});
        scan(f->body, loops);
        scopes_.pop_back();
        lp->end_pos = pos_;
        loops.pop_back();
        break;
      }
      case NodeKind::IfStmt: {
        auto* i = st->as<IfStmt>();
        // Tasks under an if are analysed as if both branches ran (their hazards are a
        // superset); a TaskId a later task names is merged as an if result
        // (PrepareCrossScopeTaskIdHoists): the branch's id, or the one from before the if.
        for (size_t k = 0; k < i->return_vars.size(); ++k) {
          if_site_[i->return_vars[k].get()] = {i, k};
          note_def(i->return_vars[k].get(), loops);
        }
        scopes_.push_back(Scope{i, 1});
        scan(i->then_body, loops);
        scopes_.back().side = 2;
        if (i->else_body) scan(i->else_body, loops);
        scopes_.pop_back();
        break;
      }
      case NodeKind::RuntimeScopeStmt: {
        auto* r = st->as<RuntimeScopeStmt>();
        if (r->mode == RuntimeScopeMode::Manual) return fallback("a user pl.manual_scope() (never analysed)");
        // A hand-placed pl.scope() keeps the region AUTO (spec): edges on top of the tracking.
        hand_scopes_.push_back(r);
        any_hand_scope_ = true;
        scan(r->body, loops);
        hand_scopes_.pop_back();
        break;
      }
      case NodeKind::ScopeStmt:
        return fallback("an un-outlined scope");
      case NodeKind::SeqStmts:
      case NodeKind::YieldStmt:
      case NodeKind::ReturnStmt:
        break;
#define PYPTO_EXPR_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
        break;
    }
  }
}

// Index of the parameter result `result` of a call aliases (ReturnParamsExplicit; the sole
// Out/InOut parameter for a single unnamed return), as the task emitter binds it.
const Var* Analyzer::alias_arg(const std::string& callee, const std::vector<ExprPtr>& args, size_t result) {
  // Per callee, not per call: 10,000 calls of 4 kernels would otherwise re-find each return.
  auto key = std::make_pair(callee, result);
  auto memo = alias_param_memo_.find(key);
  int p = memo != alias_param_memo_.end() ? memo->second : alias_param(callee, result);
  if (memo == alias_param_memo_.end()) alias_param_memo_.emplace(std::move(key), p);
  if (p < 0 || static_cast<size_t>(p) >= args.size()) return nullptr;
  return as_var(args[p]);
}

// The argument element `g` of a task's result tuple (a kernel call's or a pl.submit's) names,
// or null.
const Var* Analyzer::tuple_alias(const TupleGetItem& g) {
  auto* tv = as_var(g.tuple);
  auto td = tv ? def_.find(tv) : def_.end();
  if (td == def_.end() || !is_task_expr(prog_, td->second)) return nullptr;
  TaskExpr t = task_expr(td->second);
  return alias_arg(t.callee(), t.args(), static_cast<size_t>(g.index));
}

// Does the consumer's pl.submit list the producer's own TaskId (`_, tid = pl.submit(...)`) in
// deps=? Then an edge of the same iteration would repeat it.
bool Analyzer::user_deps_name(const Task& consumer, const Task* producer) {
  if (!consumer.call.submit) return false;
  for (const ExprPtr& d : consumer.call.submit->deps) {
    auto def = def_.find(as_var(d));
    auto* g = def != def_.end() ? def->second->as<TupleGetItem>() : nullptr;
    auto t = g ? task_by_result_.find(as_var(g->tuple)) : task_by_result_.end();
    if (t != task_by_result_.end() && t->second == producer && is_submit_task_id(def->second)) return true;
  }
  return false;
}

// The parameter of the omitted Out argument that tuple element `g` of a pl.submit names, or -1.
int Analyzer::runtime_output_param(const TupleGetItem& g) {
  auto* tv = as_var(g.tuple);
  auto td = tv ? def_.find(tv) : def_.end();
  auto* sub = td != def_.end() ? td->second->as<Submit>() : nullptr;
  if (!sub || g.index < 0) return -1;
  int p = alias_param(sub->callee, static_cast<size_t>(g.index));
  return p >= 0 && static_cast<size_t>(p) >= sub->args.size() ? p : -1;
}

void Analyzer::note_runtime_output(const Var* v, const TupleGetItem& g) {
  if (runtime_output_param(g) < 0) return;
  const Var* tv = as_var(g.tuple);
  if (runtime_out_.emplace(std::make_pair(tv, g.index), v).second) created_in_[v] = submit_loop_[tv];
}

// alias_arg's parameter index for `callee` (-1: none), e.g. 3 for k(a, b, s, c) returning c.
int Analyzer::alias_param(const std::string& callee, size_t result) {
  FunctionPtr f = prog_.get(callee);
  std::vector<int> rets = ExplicitReturnedParamIndices(*f);
  int p = result < rets.size() ? rets[result] : -1;
  if (p < 0 && f->return_types.size() == 1) {
    int sole = -1, count = 0;
    for (size_t i = 0; i < f->params.size(); ++i) {
      if (f->params[i]->type->is<TensorType>() && f->param_directions[i] != ParamDirection::In) {
        sole = static_cast<int>(i);
        ++count;
      }
    }
    if (count == 1) p = sole;
  }
  return p;
}


// `tup[n]` where tup is a pl.submit's result and n its TaskId element.
bool Analyzer::is_submit_task_id(const ExprPtr& value) {
  auto* g = value->as<TupleGetItem>();
  auto* tv = g ? as_var(g->tuple) : nullptr;
  auto d = tv ? def_.find(tv) : def_.end();
  auto* sub = d != def_.end() ? d->second->as<Submit>() : nullptr;
  return sub && g->index + 1 == static_cast<int>(sub->type->as<TupleType>()->elements.size());
}

void Analyzer::scan_task(const StmtPtr& s, TaskExpr c, std::vector<Loop*>& loops) {
  auto t = std::make_unique<Task>();
  t->pos = pos_++;
  t->stmt = s;
  t->call = c;
  t->loops = loops;
  t->scopes = scopes_;
  t->hand = hand_scopes_;
  PYPTO_CHECK(c.dirs().size() == c.args().size(), "AutoDeriveTaskDependencies: call to '" << c.callee()
                                                                                           << "' without derived directions");
  task_of_[s.get()] = t.get();
  if (auto* as = s->as<AssignStmt>()) task_by_result_[as->var.get()] = t.get();
  tasks_.push_back(std::move(t));
}

bool same_region(const Region& a, const Region& b) {
  return a.roots == b.roots && a.whole == b.whole && (a.whole || (a.off == b.off && a.ext == b.ext));
}

// Every task's accesses, in rounds until each read of a loop carry made while its region was
// being computed saw the carry's final region (region_of); false when they do not settle.
bool Analyzer::collect_all_accesses() {
  for (int round = 0; round < 8; ++round) {
    for (auto& t : tasks_) {
      if (fallback_.empty()) collect_accesses(*t);
    }
    if (!fallback_.empty()) return true;
    bool settled = true;
    for (auto& [ia, seen] : approx_reads_) {
      RegionPtr final_region = region_of(ia);
      if (same_region(*seen, *final_region)) continue;
      settled = false;
      carry_approx_[ia] = final_region;
    }
    if (settled) return true;
    approx_reads_.clear();
    region_memo_.clear();
    for (auto& t : tasks_) t->acc.clear();
  }
  return false;
}

// After the scan (every definition known, including those after their first use in a loop).
void Analyzer::collect_accesses(Task& t) {
  // A task in a loop that never runs (a literal trip count of 0) accesses nothing: no hazard,
  // and no edge to an instance that does not exist (a fan-in of 0 slots).
  for (const Loop* l : t.loops) {
    if (l->trip && *l->trip == 0) return;
  }
  const std::vector<ExprPtr>& args = t.call.args();
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i]->type->is<TensorType>()) continue;
    ArgDirection d = t.call.dirs()[i];
    if (d == ArgDirection::NoDep || d == ArgDirection::Scalar) continue;   // user-asserted: no hazard
    auto* v = as_var(args[i]);
    if (!v) return fallback("a tensor argument that is not a variable");
    Access a;
    a.r = region_of(v);
    if (!fallback_.empty()) return;
    bool manual = false;
    for (auto* r : a.r->roots) manual |= manual_roots_.count(r) > 0;
    if (manual) continue;                                                   // manual_dep=True tensors
    a.read = d == ArgDirection::In || d == ArgDirection::InOut;
    a.write = d == ArgDirection::Out || d == ArgDirection::InOut;
    a.arg = i;
    t.acc.push_back(std::move(a));
  }
  // The runtime-allocated outputs it writes (those some variable names).
  auto* as = t.call.submit ? t.stmt->as<AssignStmt>() : nullptr;
  if (!as) return;
  for (auto it = runtime_out_.lower_bound({as->var.get(), INT_MIN});
       it != runtime_out_.end() && it->first.first == as->var.get(); ++it) {
    Access a;
    a.r = region_of(it->second);
    if (!fallback_.empty()) return;
    a.write = true;
    a.arg = kNoArg;
    t.acc.push_back(std::move(a));
  }
}

std::optional<Poly> Analyzer::poly(const ExprPtr& e, int depth) {
  if (auto c = const_of(e)) return Poly::constant(*c);
  if (auto* v = as_var(e)) {
    auto it = def_.find(v);
    if (it != def_.end() && depth < 32 && it->second->type->is<ScalarType>()) {
      if (auto p = poly(it->second, depth + 1)) return p;
    }
    return Poly::atom(v);
  }
  if (auto* b = e->as<BinaryExpr>()) {
    if (b->op != BinaryOp::Add && b->op != BinaryOp::Sub && b->op != BinaryOp::Mul) return std::nullopt;
    auto x = poly(b->a, depth + 1), y = poly(b->b, depth + 1);
    if (!x || !y) return std::nullopt;
    return b->op == BinaryOp::Add ? *x + *y : b->op == BinaryOp::Sub ? *x - *y : *x * *y;
  }
  if (auto* u = e->as<UnaryExpr>(); u && u->op == UnaryOp::Neg) {
    auto x = poly(u->a, depth + 1);
    if (!x) return std::nullopt;
    return Poly::constant(0) - *x;
  }
  if (auto* k = e->as<Cast>()) {
    auto* st = k->type->as<ScalarType>();
    if (st && is_integer(st->dtype)) return poly(k->value, depth + 1);
  }
  return std::nullopt;
}

Region Analyzer::region_of_type(const Var* root, const TypePtr& t) {
  Region r;
  r.roots = {root};
  auto* tt = t->as<TensorType>();
  if (!tt) {
    r.whole = true;
    return r;
  }
  for (auto& d : tt->shape) {
    if (auto* dv = as_var(d)) bounds_[dv] = Poly::Bound{0, std::nullopt};
    auto p = poly(d);
    if (!p) r.whole = true;
    r.off.push_back(Poly::constant(0));
    r.ext.push_back(p ? *p : Poly::constant(0));
  }
  return r;
}

RegionPtr Analyzer::region_of(const Var* v) {
  if (auto it = region_memo_.find(v); it != region_memo_.end()) return it->second;
  if (in_progress_.count(v)) {
    // A loop carry read while its own yield is being resolved: the previous round's region of
    // the carry (first round: the init's). Run() repeats the rounds until every such read saw
    // the carry's final region: what was computed from a smaller one (a value of the body, an
    // if result yielded back) is memoized with too few roots otherwise.
    auto site = carry_site_.find(v);
    const ForStmt* f = site->second.first;
    const Var* ia = f->iter_args[site->second.second].get();
    auto approx = carry_approx_.find(ia);
    RegionPtr r = approx != carry_approx_.end() ? approx->second
                                                : region_of(as_var(f->iter_args[site->second.second]->init));
    approx_reads_.emplace_back(ia, r);
    return r;
  }
  RegionPtr r;
  if (const Var* src = alias_source(v)) {
    r = region_of(src);                     // the same storage and box: share it
  } else {
    r = std::make_shared<const Region>(compute_region(v));
  }
  region_memo_[v] = r;
  return r;
}

// The variable `v` is another name of (a plain copy, or a kernel call's / tuple element's
// aliased argument), or null when `v` has a region of its own (compute_region).
const Var* Analyzer::alias_source(const Var* v) {
  for (auto& p : fn_.params) {
    if (p.get() == v) return nullptr;
  }
  if (carry_site_.count(v) || if_site_.count(v)) return nullptr;
  auto d = def_.find(v);
  if (d == def_.end()) return nullptr;
  const ExprPtr& e = d->second;
  if (auto* src = as_var(e)) return src;
  if (auto* g = e->as<TupleGetItem>()) {
    if (const Var* a = tuple_alias(*g)) return a;
    auto ro = runtime_out_.find({as_var(g->tuple), g->index});
    return ro != runtime_out_.end() && ro->second != v ? ro->second : nullptr;
  }
  if (auto* c = e->as<Call>(); c && !c->is_op) return alias_arg(*c, 0);
  if (auto* c = e->as<Call>(); c && names_first_arg(*c)) return as_var(c->args[0]);
  return nullptr;
}

Region Analyzer::compute_region(const Var* v) {
  auto site = carry_site_.find(v);
  Region r;
  bool param = false;
  for (auto& p : fn_.params) param |= p.get() == v;
  if (param) {
    r = region_of_type(v, v->type);
  } else if (site != carry_site_.end()) {
    const ForStmt* f = site->second.first;
    const size_t i = site->second.second;
    const Var* init = as_var(f->iter_args[i]->init);
    if (!init) {
      fallback("a tensor loop carry initialised from an expression");
      return r;
    }
    in_progress_.insert(f->iter_args[i].get());
    in_progress_.insert(f->return_vars[i].get());
    Region a = *region_of(init);
    auto body = flatten_stmts(f->body);
    auto* y = body.empty() ? nullptr : body.back()->as<YieldStmt>();
    const Var* yv = y && i < y->values.size() ? as_var(y->values[i]) : nullptr;
    Region b = yv ? *region_of(yv) : a;
    // Storage created in the loop and handed to the next iteration by this carry is not new
    // storage every iteration (overlap() must see its carried hazards); the per-iteration layout
    // allocates it before the iteration's scope (rebuild).
    if (auto lit = loop_of_.find(f); lit != loop_of_.end()) {
      for (const Var* root : b.roots)
        if (created_in_.count(root) && lit->second->defs.count(root)) lit->second->handed_on.insert(root);
    }
    in_progress_.erase(f->iter_args[i].get());
    in_progress_.erase(f->return_vars[i].get());
    r = a;
    bool same = a.roots == b.roots && a.whole == b.whole && a.off == b.off && a.ext == b.ext;
    if (!same) {
      r.roots.insert(b.roots.begin(), b.roots.end());
      r.whole = true;
    }
  } else if (auto is = if_site_.find(v); is != if_site_.end()) {
    const IfStmt* i = is->second.first;
    r.whole = true;
    for (const StmtPtr& br : {i->then_body, i->else_body}) {
      if (!br) continue;
      auto body = flatten_stmts(br);
      auto* y = body.empty() ? nullptr : body.back()->as<YieldStmt>();
      const Var* yv = y && is->second.second < y->values.size() ? as_var(y->values[is->second.second]) : nullptr;
      if (!yv) {
        fallback("a tensor branch result that is not a variable");
        return r;
      }
      Region b = *region_of(yv);
      r.roots.insert(b.roots.begin(), b.roots.end());
    }
  } else if (auto d = def_.find(v); d != def_.end()) {
    const ExprPtr& e = d->second;
    if (auto* src = as_var(e)) {
      r = *region_of(src);
    } else if (auto* g = e->as<TupleGetItem>()) {
      const Var* a = tuple_alias(*g);
      auto ro = a ? runtime_out_.end() : runtime_out_.find({as_var(g->tuple), g->index});
      if (ro != runtime_out_.end()) {
        if (ro->second == v) return region_of_type(v, v->type);   // the runtime's new storage
        a = ro->second;
      }
      if (!a) {
        fallback("a tuple element the analysis cannot trace to a tensor argument");
        return r;
      }
      r = *region_of(a);
    } else if (auto* c = e->as<Call>()) {
      if (!c->is_op) {
        const Var* a = alias_arg(*c, 0);
        if (!a) {
          fallback("the result of '" + c->callee + "' does not alias a tensor argument");
          return r;
        }
        r = *region_of(a);
      } else if (c->callee == "tensor.create") {
        r = region_of_type(v, v->type);
      } else if (c->callee == "tensor.slice") {
        const Var* src = as_var(c->args[0]);
        auto* shapes = c->args[1]->as<MakeTuple>();
        auto* offs = c->args[2]->as<MakeTuple>();
        if (!src || !shapes || !offs) {
          fallback("a tensor.slice of an expression");
          return r;
        }
        r = *region_of(src);
        if (!r.whole && r.off.size() == offs->elements.size()) {
          for (size_t k = 0; k < offs->elements.size(); ++k) {
            auto o = poly(offs->elements[k]);
            auto s = poly(shapes->elements[k]);
            if (!o || !s) {
              r.whole = true;
              break;
            }
            r.off[k] = r.off[k] + *o;
            r.ext[k] = *s;
          }
        } else {
          r.whole = true;
        }
      } else if (names_first_arg(*c)) {
        fallback(c->callee + " of an expression");
        return r;
      } else if (c->callee == "tensor.transpose") {
        r = *region_of(as_var(c->args[0]));
        r.whole = true;
      } else {
        fallback("a tensor produced by " + c->callee);
        return r;
      }
    } else {
      fallback("a tensor value the analysis cannot trace");
      return r;
    }
  } else {
    fallback("tensor '" + v->name + "' of unknown origin");
    return r;
  }
  return r;
}

// May `a` (iteration i) and `b` overlap? carried == null: the same iteration of every common
// loop. Else b runs at least `min_dist` iterations of `carried` later (same outer iterations,
// independent inner ones).
bool Analyzer::overlap(const Access& a, const Access& b, Loop* carried, int64_t min_dist) {
  bool shared = false;
  for (auto* r : a.r->roots) {
    if (!b.r->roots.count(r)) continue;
    if (carried) {
      // Storage created inside the loop is new storage every iteration, unless a carry of the
      // loop hands it to the next one.
      if (created_in_.count(r) && carried->defs.count(r) && !carried->handed_on.count(r)) continue;
    }
    shared = true;
  }
  if (!shared) return false;
  if (a.r->whole || b.r->whole || a.r->off.size() != b.r->off.size()) return true;
  // Provably disjoint in some dimension once b's atoms are replaced per `sub`?
  auto disjoint = [&](const std::map<const Var*, Poly>& sub, const Poly::Bounds& bounds) {
    for (size_t d = 0; d < a.r->off.size(); ++d) {
      // Constant boxes (the common case) without building polynomials.
      auto oa = a.r->off[d].constant_value(), ea = a.r->ext[d].constant_value();
      auto obc = b.r->off[d].constant_value(), ebc = b.r->ext[d].constant_value();
      if (oa && ea && obc && ebc) {
        if (*obc - *oa - *ea >= 0 || *oa - *obc - *ebc >= 0) return true;
        continue;
      }
      Poly ob = sub.empty() ? b.r->off[d] : b.r->off[d].substitute(sub);
      Poly eb = sub.empty() ? b.r->ext[d] : b.r->ext[d].substitute(sub);
      if ((ob - a.r->off[d] - a.r->ext[d]).is_provably_nonneg(bounds)) return true;
      if ((a.r->off[d] - ob - eb).is_provably_nonneg(bounds)) return true;
    }
    return false;
  };
  if (!carried) return !disjoint({}, bounds_);
  if (!carried->step || *carried->step <= 0) return true;
  // b's iteration: atoms defined in the loop take other values. Two sound views of the loop
  // variable j of b: j = i + step * (min_dist + delta) (delta >= 0), or (when the loop is
  // bounded) any value of its range independently of i.
  std::set<const Var*> atoms;
  for (size_t d = 0; d < b.r->off.size(); ++d) {
    auto x = b.r->off[d].atoms(), y = b.r->ext[d].atoms();
    atoms.insert(x.begin(), x.end());
    atoms.insert(y.begin(), y.end());
  }
  std::map<const Var*, Poly> after, anywhere;
  Poly::Bounds bounds = bounds_;
  bool bounded = false;
  for (const Var* v : atoms) {
    if (!carried->defs.count(v)) continue;
    fresh_.push_back(Var::make(v->name + "'", v->type));
    const Var* nv = fresh_.back().get();
    auto known = bounds_.find(v);
    if (known != bounds_.end()) bounds[nv] = known->second;
    anywhere[v] = Poly::atom(nv);
    if (v == carried->stmt->loop_var.get()) {
      bounded = known != bounds_.end() && known->second.hi.has_value();
      fresh_.push_back(Var::make(v->name + "_delta", v->type));
      const Var* delta = fresh_.back().get();
      bounds[delta] = Poly::Bound{0, std::nullopt};
      after[v] = Poly::atom(v) + Poly::constant(*carried->step) * (Poly::constant(min_dist) + Poly::atom(delta));
    } else {
      after[v] = Poly::atom(nv);
    }
  }
  if (disjoint(after, bounds)) return false;
  if (bounded && disjoint(anywhere, bounds)) return false;
  return true;
}

// Does `a`'s box contain `b`'s (same iteration)?
bool Analyzer::covers(const Access& a, const Access& b) {
  if (a.r->whole || b.r->whole || a.r->roots.size() != 1 || a.r->roots != b.r->roots) return false;
  if (a.r->off.size() != b.r->off.size()) return false;
  for (size_t d = 0; d < a.r->off.size(); ++d) {
    auto oa = a.r->off[d].constant_value(), ea = a.r->ext[d].constant_value();
    auto ob = b.r->off[d].constant_value(), eb = b.r->ext[d].constant_value();
    if (oa && ea && ob && eb) {   // constant boxes without building polynomials
      if (*ob - *oa < 0 || (*oa + *ea) - (*ob + *eb) < 0) return false;
      continue;
    }
    if (!(b.r->off[d] - a.r->off[d]).is_provably_nonneg(bounds_)) return false;
    if (!((a.r->off[d] + a.r->ext[d]) - (b.r->off[d] + b.r->ext[d])).is_provably_nonneg(bounds_)) return false;
  }
  return true;
}

// A pl.range whose every iteration's TaskId can be kept in an array of slots (indexed by the
// loop variable): literal bounds from 0, step 1, at most this many iterations.
constexpr int64_t kMaxRangeSlots = 256;

bool range_slots_ok(const Loop& l) {
  auto start = const_of(l.stmt->start);
  return !l.parallel && l.trip && *l.trip <= kMaxRangeSlots && start && *start == 0 && l.step && *l.step == 1;
}

// Can every instance of `t` inside the loops below level `level` be named after them? A
// pl.parallel(N) (constant N) keeps all N ids; a pl.range keeps the last one, which suffices
// when t's instances are chained by its own carried edges; with `range_slots` (a fan-in after
// the loop, not a loop-carried edge) the outermost of those loops may instead be a pl.range of
// independent instances whose N ids are kept in an array (PrepareCrossScopeTaskIdHoists). At
// most one level keeps N ids.
bool Analyzer::fanin_ok(Task* t, size_t level, bool range_slots) {
  int arrays = 0;
  for (size_t m = level; m < t->loops.size(); ++m) {
    Loop* l = t->loops[m];
    if (l->parallel) {
      if (!l->trip || ++arrays > 1) return false;
    } else if (!self_chained(t, m)) {
      if (!(range_slots && m == level && range_slots_ok(*l)) || ++arrays > 1) return false;
    }
  }
  return true;
}

// Does a fan-in edge from `t` at `level` name every iteration of t->loops[level], a pl.range
// (fanin_ok with range_slots)?
bool Analyzer::every_iteration(Task* t, size_t level) {
  return level < t->loops.size() && !t->loops[level]->parallel && !self_chained(t, level);
}

// A pl.parallel fan-in that provably needs only some of its N ids: `a` directly in
// a->loops[level], a pl.parallel(N) from 0 step 1 with N <= kMaxRangeSlots, and outside any
// branch `b` is not in. Returns the iterations k whose instance of `a` may conflict with `b`
// (the loop variable replaced by k); empty when every slot is needed or the form does not apply.
std::vector<int64_t> Analyzer::overlapping_slots(Task* a, Task* b, size_t level) {
  if (level + 1 != a->loops.size()) return {};
  Loop* l = a->loops[level];
  auto start = const_of(l->stmt->start);
  if (!l->parallel || !l->trip || *l->trip > kMaxRangeSlots || !start || *start != 0 || !l->step || *l->step != 1) {
    return {};
  }
  std::vector<Scope> outer(a->scopes.begin(), a->scopes.end() - 1);
  if (a->scopes.back().stmt != l->stmt || outer.size() > b->scopes.size() ||
      !std::equal(outer.begin(), outer.end(), b->scopes.begin())) {
    return {};
  }
  const Var* p = l->stmt->loop_var.get();
  std::vector<int64_t> slots;
  for (int64_t k = 0; k < *l->trip; ++k) {
    bool hit = false;
    for (auto& x : a->acc) {
      for (auto& y : b->acc) {
        if (hit || !(x.write || y.write)) continue;
        Access xk = x;
        if (!x.r->whole) {
          Region r = *x.r;
          std::map<const Var*, Poly> sub{{p, Poly::constant(k)}};
          for (auto& o : r.off) o = o.substitute(sub);
          for (auto& e : r.ext) e = e.substitute(sub);
          xk.r = std::make_shared<const Region>(std::move(r));
        }
        hit = overlap(xk, y, nullptr, 0);
      }
    }
    if (hit) slots.push_back(k);
  }
  if (slots.empty() || static_cast<int64_t>(slots.size()) >= *l->trip || slots.size() > 4) return {};
  return slots;
}

// Does `t` in iteration i+1 of t->loops[level] (a pl.range) get an edge from t in iteration i?
bool Analyzer::self_chained(Task* t, size_t level) {
  auto key = std::make_pair(t, level);
  if (auto it = chained_memo_.find(key); it != chained_memo_.end()) return it->second == 1;
  chained_memo_[key] = 0;
  Loop* l = t->loops[level];
  bool conflict = false;
  for (auto& x : t->acc) {
    for (auto& y : t->acc) {
      if ((x.write || y.write) && overlap(x, y, l, 1)) conflict = true;
    }
  }
  bool ok = conflict && !l->parallel && fanin_ok(t, level + 1);
  chained_memo_[key] = ok ? 1 : 0;
  return ok;
}

// Can an edge from `a` to `b` (across iterations of `carried` when set) name a's TaskId? Its
// C++ variable lives in a's innermost hand-placed PTO2_SCOPE block: `b` must be inside that
// block, and a loop carrying the id must be too (its carry is declared outside the block).
bool hand_scopes_allow(const Task& a, const Task& b, const Loop* carried) {
  if (a.hand.empty()) return true;
  const RuntimeScopeStmt* s = a.hand.back();
  auto in = [s](const std::vector<const RuntimeScopeStmt*>& chain) {
    return std::find(chain.begin(), chain.end(), s) != chain.end();
  };
  return in(b.hand) && (!carried || in(carried->hand));
}

bool Analyzer::hazard(Task* at, Access& a, Task* bt, Access& b, Loop* carried, bool covered) {
  covered = covered && hand_scopes_allow(*at, *bt, carried);
  if (covered) {
    if (bt->edges.empty()) bt->edges.reserve(4);
    bt->edges.push_back(Edge{at, carried});
    return true;
  }
  a.uncovered = b.uncovered = true;
  if (uncovered_++ == 0) {
    std::ostringstream os;
    os << "'" << at->call.callee() << "' (line " << at->call.span().line << ") -> '" << bt->call.callee() << "' (line "
       << bt->call.span().line << ")" << (carried ? " across iterations of a loop" : "");
    first_uncovered_ = os.str();
  }
  return false;
}

size_t common_prefix(const std::vector<Loop*>& a, const std::vector<Loop*>& b) {
  size_t k = 0;
  while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
  return k;
}

// Does `a` run whenever `b` does, in the same iteration (its blocks enclose b's)?
bool encloses(const Task& a, const Task& b) {
  if (a.scopes.size() > b.scopes.size()) return false;
  for (size_t k = 0; k < a.scopes.size(); ++k) {
    if (a.scopes[k] != b.scopes[k]) return false;
  }
  return true;
}

// Are `a` and `b` in different branches of one if (never both in one iteration)?
bool exclusive(const Task& a, const Task& b) {
  for (size_t k = 0; k < a.scopes.size() && k < b.scopes.size(); ++k) {
    if (a.scopes[k] != b.scopes[k]) return a.scopes[k].stmt == b.scopes[k].stmt;
  }
  return false;
}

std::vector<const Var*> Analyzer::in_def_order(const std::set<const Var*>& roots) {
  std::vector<const Var*> out(roots.begin(), roots.end());
  if (out.size() < 2) return out;
  // Every root is a param or defined in the body (numbered); anything else goes last.
  auto rank = [&](const Var* v) {
    auto it = def_order_.find(v);
    return it == def_order_.end() ? INT_MAX : it->second;
  };
  std::stable_sort(out.begin(), out.end(), [&](const Var* a, const Var* b) { return rank(a) < rank(b); });
  return out;
}

// A pl.parallel whose iterations conflict is ordered by the runtime's tracking in submission
// order, as a pl.range would be: the orchestration runs either loop in order. Such a loop
// becomes a pl.range, so its carried hazards become edges through a TaskId carry (a
// pl.parallel's TaskId carry is one id per iteration, which cannot name the previous one).
// Not when the user carries a TaskId through it (its per-iteration meaning would change).
// True when some loop changed: derive() must run again (fan-ins from it change too).
bool Analyzer::serialise_conflicting_parallel_loops() {
  bool changed = false;
  for (Loop* L : conflicting_parallel_) {
    bool user_ids = false;
    for (auto& ia : L->stmt->iter_args) user_ids |= is_task_id(ia->type);
    if (user_ids) continue;
    L->parallel = false;
    L->serialised = true;
    changed = true;
  }
  conflicting_parallel_.clear();
  if (!changed) return false;
  for (auto& t : tasks_) {
    t->edges.clear();
    t->need_tid = false;
    for (auto& a : t->acc) a.uncovered = false;
  }
  by_root_.clear();
  writes_by_root_.clear();
  chained_memo_.clear();
  uncovered_ = edges_ = 0;
  first_uncovered_.clear();
  return true;
}

void Analyzer::derive() {
  for (auto& t : tasks_) {
    for (size_t i = 0; i < t->acc.size(); ++i) {
      for (auto* r : t->acc[i].r->roots) {
        by_root_[r].push_back({t.get(), i});
        if (t->acc[i].write) writes_by_root_[r].push_back({t.get(), i});
      }
    }
  }
  using Entry = std::pair<Task*, size_t>;
  auto first_at = [](const std::vector<Entry>& list, int pos) {
    return std::lower_bound(list.begin(), list.end(), pos, [](const Entry& e, int p) { return e.first->pos < p; });
  };
  for (auto& bp : tasks_) {
    Task* B = bp.get();
    for (auto& b : B->acc) {
      std::set<Entry> seen;
      // Same iteration: earlier accesses (a read only needs writes), newest first, up to a
      // covering write in scope (everything older reaches B through it).
      const std::vector<const Var*> roots = in_def_order(b.r->roots);
      for (auto* root : roots) {
        auto& list = b.write ? by_root_[root] : writes_by_root_[root];
        auto it = first_at(list, B->pos);
        while (it != list.begin()) {
          --it;
          Task* A = it->first;
          if (b.r->roots.size() > 1 && !seen.insert(*it).second) continue;   // reached via another root
          Access& a = A->acc[it->second];
          if (!(a.write || b.write)) continue;
          if (exclusive(*A, *B) || !overlap(a, b, nullptr, 0)) continue;
          size_t common = common_prefix(A->loops, B->loops);
          bool covered = hazard(A, a, B, b, nullptr, fanin_ok(A, common, /*range_slots=*/true));
          // A write that surely ran before B (not in a branch B is outside of) hides older ones.
          if (a.write && covered && encloses(*A, *B) && covers(a, b)) break;
        }
      }
      // Loop-carried: accesses of tasks in an earlier iteration of each enclosing loop.
      for (size_t k = 0; k < B->loops.size(); ++k) {
        Loop* L = B->loops[k];
        std::set<Entry> seen_c;
        for (auto* root : roots) {
          auto& list = b.write ? by_root_[root] : writes_by_root_[root];
          for (auto it = first_at(list, L->first_pos); it != list.end() && it->first->pos < L->end_pos; ++it) {
            Task* A = it->first;
            if (b.r->roots.size() > 1 && !seen_c.insert(*it).second) continue;
            Access& a = A->acc[it->second];
            if (!(a.write || b.write) || !overlap(a, b, L, 1)) continue;
            bool covered = !L->parallel && fanin_ok(A, k + 1) &&
                           (!overlap(a, b, L, 2) || self_chained(A, k) || self_chained(B, k));
            if (L->parallel) conflicting_parallel_.insert(L);
            hazard(A, a, B, b, L, covered);
          }
        }
      }
    }
  }
  // Drop implied edges, then mark what the rewrite has to build. A task has a handful of
  // edges: linear scans over small vectors (no per-task std::set: 10,000 tasks).
  std::vector<Edge> unique;
  std::vector<Task*> same_iteration, implied;
  for (auto& bp : tasks_) {
    Task* B = bp.get();
    unique.clear();
    same_iteration.clear();
    implied.clear();
    std::set<std::pair<Task*, Loop*>> uniq_big;   // only for long edge lists
    const bool big = B->edges.size() > 32;
    for (auto& e : B->edges) {
      bool dup = big ? !uniq_big.insert({e.from, e.carried}).second
                     : std::any_of(unique.begin(), unique.end(),
                                   [&](const Edge& u) { return u.from == e.from && u.carried == e.carried; });
      if (dup) continue;
      unique.push_back(e);
      if (!e.carried) same_iteration.push_back(e.from);
    }
    std::sort(same_iteration.begin(), same_iteration.end());
    // A -> B is implied when B already follows a task C of its own block that follows A in the
    // same iteration (C names the same TaskId of A that B would): the usual write-after-write
    // behind a read.
    for (auto& e : unique) {
      Task* C = e.from;
      if (e.carried || C->scopes != B->scopes) continue;
      for (auto& ce : C->edges) {
        if (!ce.carried && ce.from != C && std::binary_search(same_iteration.begin(), same_iteration.end(), ce.from)) {
          implied.push_back(ce.from);
        }
      }
    }
    std::sort(implied.begin(), implied.end());
    B->edges.clear();
    for (auto& e : unique) {
      if (!e.carried && std::binary_search(implied.begin(), implied.end(), e.from)) continue;
      if (!e.carried && encloses(*e.from, *B) && user_deps_name(*B, e.from)) continue;   // deps= names it
      B->edges.push_back(e);
      e.from->need_tid = true;
    }
    edges_ += static_cast<int>(B->edges.size());
  }
}

// A tensor.write waits for the live tasks with an untracked write (an Out, InOut or NoDep tensor
// in a MANUAL scope); a task without one is not among them once its reads go untracked, so it
// must not read what a tensor.write writes.
void Analyzer::check_element_writes() {
  std::set<const Var*> written;
  for (const Call* w : element_writes_) {
    const Var* target = as_var(w->args[0]);
    if (!target) return fallback("a tensor.write of an expression");
    RegionPtr r = region_of(target);
    if (!fallback_.empty()) return;
    written.insert(r->roots.begin(), r->roots.end());
  }
  for (auto& t : tasks_) {
    bool writes = false;
    for (size_t i = 0; i < t->call.args().size(); ++i) {
      ArgDirection d = t->call.dirs()[i];
      writes |= t->call.args()[i]->type->is<TensorType>() && d != ArgDirection::In && d != ArgDirection::Scalar;
    }
    if (writes) continue;
    for (const Access& a : t->acc) {
      for (const Var* root : a.r->roots) {
        if (!written.count(root)) continue;
        return fallback("a tensor.write of a tensor that a task writing no tensor reads ('" + t->call.callee() +
                        "', line " + std::to_string(t->call.span().line) + ")");
      }
    }
  }
}

// ---- rewrite ----

VarPtr tid_var(const std::string& base, const TypePtr& tid_type, const Span& span) { return Var::make(base, tid_type, span); }

// Distinct per task (codegen declares each TaskId under its name; system.task_ref names it).
std::string tid_name(const Task& t) { return t.call.callee() + "_tid" + std::to_string(t.pos); }

const Analyzer::SubmitOf& Analyzer::submit_of(const std::string& callee) {
  auto it = submit_of_.find(callee);
  if (it != submit_of_.end()) return it->second;
  FunctionPtr f = prog_.get(callee);
  std::vector<TypePtr> elems = f->return_types;
  elems.push_back(tid_type_);
  return submit_of_.emplace(callee, SubmitOf{f, TupleType::make(std::move(elems))}).first->second;
}

// Does kernel `callee` always load from its tensor parameter `param` (a tile.load of it, or of
// a view / copy of it, in a statement at the top level of its body)? The race checker compares
// the boxes a kernel reports it loaded and stored; an argument its kernel reported nothing for
// counts whole, and an untracked (pl.no_dep) one as read and written. So an In argument is
// demoted to NoDep only when its kernel surely reports its reads (a load inside an if or a loop
// may not run): otherwise a demoted read would show as an unordered write.
bool Analyzer::kernel_always_loads(const std::string& callee, size_t param) {
  auto it = loaded_params_.find(callee);
  if (it == loaded_params_.end()) {
    FunctionPtr f = prog_.get(callee);
    std::vector<bool> loaded(f ? f->params.size() : 0, false);
    if (f && f->is_kernel()) {
      struct Loads : IRVisitor {
        const BufferRoots& roots;
        const Function& fn;
        std::vector<bool>& loaded;
        Loads(const BufferRoots& r, const Function& f, std::vector<bool>& l) : roots(r), fn(f), loaded(l) {}
        void visit_(const Call* op) override {
          if (op->is_op && op->callee == "tile.load" && !op->args.empty()) {
            for (const Var* root : roots.of(op->args[0])) {
              for (size_t i = 0; i < fn.params.size(); ++i) loaded[i] = loaded[i] || fn.params[i].get() == root;
            }
          }
          IRVisitor::visit_(op);
        }
      };
      BufferRoots roots(prog_, *f, /*views_are_roots=*/false);
      Loads loads(roots, *f, loaded);
      for (const StmtPtr& st : FlatStmts(f->body)) {
        if (auto* a = st->as<AssignStmt>()) loads.visit_expr(a->value);
        if (auto* e = st->as<EvalStmt>()) loads.visit_expr(e->expr);
      }
    }
    it = loaded_params_.emplace(callee, std::move(loaded)).first;
  }
  return param < it->second.size() && it->second[param];
}

void Analyzer::rebuild(const StmtPtr& s, std::unordered_map<Task*, ExprPtr>& visible, std::vector<StmtPtr>& out) {
  for (const StmtPtr& st : FlatStmts(s)) {
    auto tit = task_of_.find(st.get());
    if (tit != task_of_.end()) {
      Task* T = tit->second;
      std::vector<ArgDirection> dirs = T->call.dirs();
      // Tasks the runtime still sees (AUTO code) skip tracking every argument whose hazards
      // all have edges.
      if (!manual_ && !(per_loop_ && loop_depth_ > 0)) {
        for (auto& a : T->acc) {
          if (a.uncovered || a.arg == kNoArg) continue;
          if (dirs[a.arg] == ArgDirection::In && kernel_always_loads(T->call.callee(), a.arg)) {
            dirs[a.arg] = ArgDirection::NoDep;
            ++demoted_;
          } else if (dirs[a.arg] == ArgDirection::InOut) {
            dirs[a.arg] = ArgDirection::Out;
            ++demoted_;
          }
        }
      }
      std::vector<ExprPtr> edges;
      for (auto& e : T->edges) {
        // A producer of an enclosing block of the same iteration is named directly; any other
        // (an inner loop's, or an earlier iteration's) through a placeholder that
        // PrepareCrossScopeTaskIdHoists turns into TaskId carries.
        bool direct = !e.carried && encloses(*e.from, *T);
        ExprPtr ref;
        std::vector<int64_t> slots;
        if (!direct && !e.carried) slots = overlapping_slots(e.from, T, common_prefix(e.from->loops, T->loops));
        if (direct) {
          ref = visible.at(e.from);
        } else if (!slots.empty()) {
          // Only the slots of the pl.parallel whose instances overlap: one placeholder each.
          for (size_t k = 0; k + 1 < slots.size(); ++k) {
            VarPtr rv = tid_var(e.from->call.callee() + "_ref" + std::to_string(e.from->pos), tid_type_, st->span);
            Attrs ra{{"task", tid_name(*e.from)}, {"slot", slots[k]}};
            out.push_back(AssignStmt::make(rv, Call::make_op("system.task_ref", {}, ra, st->span), st->span));
            edges.push_back(rv);
          }
          VarPtr rv = tid_var(e.from->call.callee() + "_ref" + std::to_string(e.from->pos), tid_type_, st->span);
          Attrs ra{{"task", tid_name(*e.from)}, {"slot", slots.back()}};
          out.push_back(AssignStmt::make(rv, Call::make_op("system.task_ref", {}, ra, st->span), st->span));
          ref = rv;
        } else {
          Attrs ra{{"task", tid_name(*e.from)}};
          if (!e.carried && every_iteration(e.from, common_prefix(e.from->loops, T->loops))) ra["every_iteration"] = true;
          std::vector<ExprPtr> ra_args;
          if (e.carried) ra_args.push_back(e.carried->stmt->loop_var);
          VarPtr rv = tid_var(e.from->call.callee() + "_ref" + std::to_string(e.from->pos), tid_type_, st->span);
          out.push_back(AssignStmt::make(rv, Call::make_op("system.task_ref", ra_args, ra, st->span), st->span));
          ref = rv;
        }
        edges.push_back(ref);
      }
      auto* as = st->as<AssignStmt>();
      if (const Submit* us = T->call.submit) {
        // The user's pl.submit keeps its deps=, core_num, predicate and result; the edges are
        // merged after deps= by codegen.
        auto sub = make_node<Submit>(us->callee, us->args, std::move(dirs), us->deps, us->core_num, us->sync_start,
                                     us->allow_early_resolve, us->timing_slot, us->predicate, us->type, us->span);
        sub->compiler_manual_dep_edges = std::move(edges);
        sub->dump_vars = us->dump_vars;
        if (!as && !T->need_tid) {
          out.push_back(EvalStmt::make(std::move(sub), st->span));
          continue;
        }
        VarPtr tv = as ? as->var : Var::make(us->callee + "_task", us->type, st->span);
        out.push_back(AssignStmt::make(tv, std::move(sub), st->span));
        if (T->need_tid) {
          const int id_index = static_cast<int>(us->type->as<TupleType>()->elements.size()) - 1;
          VarPtr tid = tid_var(tid_name(*T), tid_type_, st->span);
          out.push_back(AssignStmt::make(tid, TupleGetItem::make(tv, id_index, st->span), st->span));
          visible[T] = tid;
        }
        continue;
      }
      const Call& c = *T->call.call;
      if (T->need_tid) {
        const SubmitOf& so = submit_of(c.callee);
        const FunctionPtr& f = so.fn;
        // Built once with its edges (what Submit::make + with_compiler_dep_edges give, without
        // the intermediate copy and a tuple type per task): a plain submit, TaskId edges.
        auto fresh = make_node<Submit>(c.callee, c.args, std::move(dirs), std::vector<ExprPtr>{}, nullptr, false, false, -1,
                                              nullptr, so.type, c.span);
        fresh->compiler_manual_dep_edges = std::move(edges);
        ExprPtr sub = std::move(fresh);
        if (!c.dump_vars.empty()) sub = with_dump_vars(sub, c.dump_vars);
        VarPtr tv = Var::make(c.callee + "_task", sub->type, st->span);
        out.push_back(AssignStmt::make(tv, sub, st->span));
        if (as) {
          if (as->var->type->is<TupleType>()) {
            remap_[as->var.get()] = {as->var, tv};
          } else {
            out.push_back(AssignStmt::make(as->var, TupleGetItem::make(tv, 0, st->span), st->span));
          }
        }
        // Distinct names: codegen declares each TaskId under its name (no renaming probes).
        VarPtr tid = tid_var(tid_name(*T), tid_type_, st->span);
        out.push_back(AssignStmt::make(tid, TupleGetItem::make(tv, static_cast<int>(f->return_types.size()), st->span), st->span));
        visible[T] = tid;
      } else {
        ExprPtr call = Call::make_func(c.callee, c.args, c.type, dirs, c.span, c.attrs);
        if (!edges.empty()) call = with_compiler_dep_edges(call, edges);
        if (!c.dump_vars.empty()) call = with_dump_vars(call, c.dump_vars);
        out.push_back(as ? StmtPtr(AssignStmt::make(as->var, call, st->span)) : StmtPtr(EvalStmt::make(call, st->span)));
      }
      continue;
    }
    if (auto* i = st->as<IfStmt>()) {
      std::vector<StmtPtr> then_out, else_out;
      rebuild(i->then_body, visible, then_out);
      StmtPtr else_body;
      if (i->else_body) {
        rebuild(i->else_body, visible, else_out);
        else_body = make_seq(else_out, i->else_body->span);
      }
      out.push_back(IfStmt::make(i->cond, make_seq(then_out, i->then_body->span), else_body, i->return_vars, i->span));
      continue;
    }
    if (auto* r = st->as<RuntimeScopeStmt>()) {   // a hand-placed pl.scope(): same block, rebuilt inside
      std::vector<StmtPtr> inner;
      rebuild(r->body, visible, inner);
      auto scope = RuntimeScopeStmt::make(r->mode, make_seq(inner, r->body->span), r->span);
      if (!r->carried_task_ids.empty()) scope = scope->with_carried_task_ids(r->carried_task_ids);
      if (!r->exit_values.empty()) scope = scope->with_exit_values(r->exit_values);
      out.push_back(scope);
      continue;
    }
    auto* f = st->as<ForStmt>();
    if (!f) {
      out.push_back(st);
      continue;
    }
    std::vector<StmtPtr> nb;
    ++loop_depth_;
    rebuild(f->body, visible, nb);
    --loop_depth_;
    StmtPtr body = make_seq(nb, f->body->span);
    // Loops that allocate: each outermost iteration is PTO2_SCOPE() { <buffers>
    // PTO2_SCOPE(MANUAL) { body } } (codegen declares a MANUAL block's buffers just before it),
    // so an iteration's buffers are released when it ends, as with the AUTO body
    // MaterializeRuntimeScopes would give it. MANUAL scopes do not nest.
    // Storage the iteration hands to the next one through a carry is allocated before the
    // iteration's scope, in the enclosing one (anchor_features §17, as MaterializeRuntimeScopes
    // does for AUTO bodies).
    if (per_loop_ && loop_depth_ == 0) {
      if (!buffer_roots_) buffer_roots_ = std::make_unique<BufferRoots>(prog_, fn_, /*views_are_roots=*/false);
      EscapeSplit split = SplitEscapingAllocations(nb, *buffer_roots_, prog_, "loop");
      if (!split.scope_ok) layout_fallback_ = "a loop hands on storage that a nested loop or branch of it creates";
      body = RuntimeScopeStmt::make(RuntimeScopeMode::Manual, make_seq(split.rest, f->body->span), f->body->span);
      body = RuntimeScopeStmt::make(RuntimeScopeMode::Auto, body, f->body->span);
      if (!split.lifted.empty()) {
        split.lifted.push_back(body);
        body = make_seq(split.lifted, f->body->span);
      }
    }
    const bool serialised = loop_of_.count(f) && loop_of_.at(f)->serialised;
    out.push_back(ForStmt::make(f->loop_var, f->start, f->stop, f->step, f->iter_args, body, f->return_vars,
                                serialised ? ForKind::Sequential : f->for_kind, f->attrs, f->span)
                      ->with_typed_fields_of(*f));   // keep StaticTripCountsStamped and every typed field
  }
}
StmtPtr Analyzer::rewrite_body() {
  std::vector<StmtPtr> stmts = flatten_stmts(fn_.body);
  StmtPtr ret;
  if (!stmts.empty() && stmts.back()->is<ReturnStmt>()) {
    ret = stmts.back();
    stmts.pop_back();
  }
  std::unordered_map<Task*, ExprPtr> visible;
  std::vector<StmtPtr> out;
  rebuild(make_seq(stmts, fn_.span), visible, out);
  std::vector<StmtPtr> body;
  if (manual_) {
    body.push_back(RuntimeScopeStmt::make(RuntimeScopeMode::Manual, make_seq(out, fn_.span), fn_.span));
  } else {
    body = std::move(out);
  }
  if (ret) body.push_back(ret);
  return make_seq(body, fn_.span);
}

struct Remap : IRMutator {
  explicit Remap(std::map<const Var*, std::pair<VarPtr, VarPtr>> m) {
    for (auto& [k, v] : m) var_remap_[k] = v;
  }
};

FunctionPtr Analyzer::Run() {
  std::vector<Loop*> loops;
  for (auto& p : fn_.params) note_def(p.get(), loops);
  scan(fn_.body, loops);
  Attrs attrs = fn_.attrs;
  auto stamp = [&](const std::string& verdict, StmtPtr body) {
    attrs["auto_deps"] = verdict;
    return Function::make(fn_.name, fn_.type, fn_.params, fn_.param_directions, fn_.return_types, body, fn_.level,
                          fn_.role, attrs, fn_.span);
  };
  if (!collect_all_accesses()) fallback("loop carry regions that do not settle");
  if (fallback_.empty() && tasks_.empty()) fallback_ = "no kernel calls";
  if (fallback_.empty() && !element_writes_.empty()) check_element_writes();
  if (!fallback_.empty()) return stamp("fallback: " + fallback_, fn_.body);
  derive();
  if (serialise_conflicting_parallel_loops()) derive();
  bool loop_allocates = false;
  for (auto& [root, loop] : created_in_) loop_allocates |= loop != nullptr;
  // A hand-placed pl.scope() keeps manual=false (orchestration_codegen.txt): edges on top of AUTO.
  const bool hand = any_hand_scope_;
  manual_ = !hand && uncovered_ == 0 && !loop_allocates;
  per_loop_ = !hand && uncovered_ == 0 && loop_allocates;
  StmtPtr body = rewrite_body();
  if (!layout_fallback_.empty()) {
    // No MANUAL scope per iteration can hold that storage: lay the region out as AUTO with the
    // edges on top instead (MaterializeRuntimeScopes then leaves such a body unscoped, as it
    // does without the analysis).
    per_loop_ = false;
    demoted_ = 0;
    remap_.clear();
    body = rewrite_body();
  }
  std::ostringstream os;
  if (manual_) {
    os << "manual: " << tasks_.size() << " tasks, " << edges_ << " edges";
  } else if (per_loop_) {
    os << "manual per loop iteration (loops allocate; " << demoted_ << " top-level args demoted): " << tasks_.size()
       << " tasks, " << edges_ << " edges";
  } else if (uncovered_ == 0 && !layout_fallback_.empty()) {
    os << "auto (" << layout_fallback_ << ", so its iterations cannot each be a MANUAL scope): " << edges_
       << " edges, " << demoted_ << " args demoted";
  } else if (uncovered_ == 0) {
    os << "auto (a hand-placed pl.scope() keeps it AUTO): " << edges_ << " edges, " << demoted_ << " args demoted";
  } else {
    os << "auto: " << uncovered_ << " hazards not representable (first: " << first_uncovered_ << "); " << edges_
       << " edges, " << demoted_ << " args demoted";
  }
  int serialised = 0;
  for (auto& l : loops_) serialised += l->serialised;
  if (serialised)
    os << " (" << serialised << " pl.parallel loop" << (serialised > 1 ? "s" : "") << " run in order: iterations conflict)";
  FunctionPtr f = stamp(os.str(), body);
  if (!remap_.empty()) f = Remap(remap_).mutate_function(f);
  return f;
}

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (fn->type != FunctionType::Orchestration || fn->level == Level::HOST) continue;
    Analyzer a(*program, *fn);
    out = out->with_function(a.Run());
  }
  return out;
}

}  // namespace

Pass AutoDeriveTaskDependencies() {
  return Pass{"AutoDeriveTaskDependencies",
              {IRProperty::CallDirectionsDerived, IRProperty::ReturnParamsExplicit, IRProperty::StaticTripCountsStamped},
              {IRProperty::AutoDepsAnalysed},
              Run,
              /*invalidated=*/{}};
}

}  // namespace pypto::transforms
