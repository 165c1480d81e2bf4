// PrepareCrossScopeTaskIdHoists
//
// What: turns every `system.task_ref` placeholder AutoDeriveTaskDependencies writes into the
//   TaskId its consumer can name, declaring each carried TaskId at the lowest common scope of
//   producer and consumer (the spec's LCA hoist):
//     * `task_ref(task="k_tid3")` after a loop containing the submit bound to k_tid3: a TaskId
//       carry through each loop between the common scope and the producer (seeded with the
//       producer's id visible outside, else system.task_invalid), named after the loop by its
//       return var; a pl.parallel(N) with a static trip count N >= 4 (ForStmt::trip_count, so
//       pl.parallel(0, 8, 2) counts 4 and pl.parallel(8, 0, -1) counts 8) puts its N ids behind one
//       system.task_dummy barrier (the phase fence), so consumers name 1 id instead of N;
//     * `task_ref(i, task="k_tid3")`: the carry of loop `i` (the producer's id of the previous
//       iteration), plus carries through the producer's inner loops as above; inside a
//       pl.parallel, a sequential loop's carry starts from (and an if's branch without the
//       producer yields) a system.task_dummy join of the parallel's carry (an array of ids
//       after ClassifyIterArgCarry), where one id is needed.
//       for i in pl.range(4):                       seed = pl.system.task_invalid()
//           r = pl.system.task_ref(i, task="k_tid0")  for i, (k_carry0,) in pl.range(4, init_values=(seed,)):
//           x, k_tid0 = pl.submit(self.k, x,   ==>      x, k_tid0 = pl.submit(self.k, x, compiler_manual_dep_edges=[k_carry0])
//               compiler_manual_dep_edges=[r])          k_last0 = pl.yield_(k_tid0)
//   Each consumer's edges are then deduplicated by the Var they resolve to.
// Input invariants: CallDirectionsDerived, StaticTripCountsStamped (the fence and slot checks
//   read ForStmt::trip_count); each task_ref names a TaskId Var bound in the same function by a
//   submit (AutoDeriveTaskDependencies names them `<callee>_tid<N>`, distinct).
// Output invariants: CrossScopeTaskIdsHoisted (no task_ref left; every compiler edge names a
//   TaskId Var visible at its consumer). A function without task_ref is returned unchanged.
// Why: AutoDeriveTaskDependencies decides which task must follow which; where the producer's
//   TaskId lives (a loop carry, an array of N ids, a barrier) is a separate question of scopes,
//   answered here once for every edge.
#include <algorithm>
#include <map>
#include <set>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/flat_stmts.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/scope_carries.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// A pl.parallel fan-in of at least this many ids goes through a dummy barrier.
constexpr int64_t kFenceMinTrip = 4;

const Call* task_ref_of(const Stmt& s) {
  auto* a = s.as<AssignStmt>();
  auto* c = a ? a->value->as<Call>() : nullptr;
  return c && c->is_op && c->callee == "system.task_ref" ? c : nullptr;
}

// Placeholders are statements `r = system.task_ref(...)` (AutoDeriveTaskDependencies writes
// them so, and the frontend hoists a deps= entry into one): a statement walk finds them without
// visiting every expression (the 10,000-task codegen benchmark has none).
bool has_task_ref(const StmtPtr& s) {
  return AnyNestedStmt(s, [](const Stmt*, const Stmt& st) { return task_ref_of(st) != nullptr; });
}

VarPtr tid_var(const std::string& name, const Span& span) {
  return Var::make(name, ScalarType::make(DataType::TASK_ID), span);
}

class Hoister {
 public:
  explicit Hoister(const Function& fn) : fn_(fn) {}

  FunctionPtr Run() {
    std::vector<Scope> scopes;
    scan(fn_.body, scopes);
    plan();
    std::map<std::string, ExprPtr> visible;
    std::vector<StmtPtr> out;
    rebuild(fn_.body, visible, out);
    return Function::make(fn_.name, fn_.type, fn_.params, fn_.param_directions, fn_.return_types,
                          make_seq(out, fn_.body->span), fn_.level, fn_.role, fn_.attrs, fn_.span);
  }

 private:
  // A block: a loop body (side 0) or a branch of an if (1 then, 2 else).
  struct Scope {
    const Stmt* stmt = nullptr;
    int side = 0;
    bool operator==(const Scope& o) const { return stmt == o.stmt && side == o.side; }
  };
  struct Producer {
    int pos = 0;
    std::vector<Scope> scopes;           // enclosing blocks, outermost first
  };
  struct Ref {
    std::string task;
    const Var* loop_var = nullptr;       // set: the previous iteration of that loop
    bool every = false;                  // every_iteration=True
    int64_t slot = -1;                   // slot=k: iteration k of the pl.parallel below the common scope
    std::vector<Scope> scopes;           // the consumer's enclosing blocks
    Span span;
  };

  // Every TaskId Var bound in the function (by name) and every placeholder.
  void scan(const StmtPtr& s, std::vector<Scope>& scopes) {
    for (const StmtPtr& st : FlatStmts(s)) {
      if (auto* a = st->as<AssignStmt>()) {
        if (const Call* r = task_ref_of(*st)) {
          Ref ref{r->task_ref.task, nullptr, r->task_ref.every_iteration, r->task_ref.slot, scopes, r->span};
          if (!r->args.empty()) ref.loop_var = as_var(r->args[0]);
          if (refs_.emplace(a->var.get(), std::move(ref)).second) ref_order_.push_back(a->var.get());
        } else if (is_task_id(a->var->type) && a->var->type->is<ScalarType>()) {
          producers_.emplace(a->var->name, Producer{static_cast<int>(producers_.size()), scopes});
        }
      } else if (auto* f = st->as<ForStmt>()) {
        scopes.push_back(Scope{f, 0});
        scan(f->body, scopes);
        scopes.pop_back();
      } else if (auto* r = st->as<RuntimeScopeStmt>()) {
        scan(r->body, scopes);
      } else if (auto* i = st->as<IfStmt>()) {
        scopes.push_back(Scope{i, 1});
        scan(i->then_body, scopes);
        scopes.back().side = 2;
        if (i->else_body) scan(i->else_body, scopes);
        scopes.pop_back();
      }
    }
  }

  // For each loop or if, the producers whose TaskId it carries out (in program order).
  void plan() {
    for (const Var* var : ref_order_) {   // program order, not by address: first error, last slot loop
      const Ref& ref = refs_.at(var);
      auto p = producers_.find(ref.task);
      PYPTO_CHECK(p != producers_.end(), "PrepareCrossScopeTaskIdHoists: system.task_ref names '"
                                             << ref.task << "', which no TaskId of '" << fn_.name << "' is bound to");
      const auto& ps = p->second.scopes;
      size_t level = 0;
      if (ref.loop_var) {
        while (level < ref.scopes.size() && !is_loop_over(ref.scopes[level], ref.loop_var)) ++level;
        PYPTO_CHECK(level < ref.scopes.size() && level < ps.size() && ps[level] == ref.scopes[level],
                    "PrepareCrossScopeTaskIdHoists: system.task_ref(" << ref.loop_var->name << ", task='" << ref.task
                                                                      << "') outside a loop over "
                                                                      << ref.loop_var->name << " containing both tasks");
      } else {
        while (level < ps.size() && level < ref.scopes.size() && ps[level] == ref.scopes[level]) ++level;
      }
      if (ref.slot < 0) named_whole_.insert(ref.task);
      if (ref.slot >= 0) {
        // The slots are kept as an explicit array (the ids of every iteration), read by index.
        auto* par = level + 1 == ps.size() ? ps[level].stmt->as<ForStmt>() : nullptr;
        PYPTO_CHECK(!ref.loop_var && par && par->for_kind == ForKind::Parallel && ref.slot < par->trip_count,
                    "PrepareCrossScopeTaskIdHoists: slot=" << ref.slot << " on task_ref('" << ref.task
                                                           << "') without its pl.parallel just below the common scope");
        auto prev = slots_loop_.emplace(ref.task, par).first;
        PYPTO_CHECK(prev->second == par, "PrepareCrossScopeTaskIdHoists: '" << ref.task << "' kept in two slot loops");
      }
      if (ref.every) {
        size_t m = level;
        while (m < ps.size() && !ps[m].stmt->is<ForStmt>()) ++m;
        auto* slot_loop = m < ps.size() ? ps[m].stmt->as<ForStmt>() : nullptr;
        PYPTO_CHECK(!ref.loop_var && slot_loop && slot_loop->for_kind != ForKind::Parallel && slot_loop->trip_count > 0,
                    "PrepareCrossScopeTaskIdHoists: every_iteration=True on task_ref('" << ref.task
                                                                                       << "') without a pl.range of literal trip count below the common scope");
        slots_loop_[ref.task] = slot_loop;
      }
      for (size_t m = level; m < ps.size(); ++m) {
        auto& v = carries_[ps[m].stmt];
        if (std::find(v.begin(), v.end(), ref.task) == v.end()) v.push_back(ref.task);
      }
    }
    for (auto& [scope, v] : carries_) {
      std::sort(v.begin(), v.end(),
                [&](const std::string& x, const std::string& y) { return producers_.at(x).pos < producers_.at(y).pos; });
    }
  }

  static bool is_loop_over(const Scope& s, const Var* loop_var) {
    auto* f = s.stmt->as<ForStmt>();
    return f && f->loop_var.get() == loop_var;
  }

  // "k_tid3" -> "k_<what>3" (the names the golden code shows: k_carry3, k_last3, k_fence3).
  static std::string derived_name(const std::string& tid, const std::string& what) {
    size_t at = tid.rfind("_tid");
    if (at == std::string::npos) return tid + "_" + what;
    return tid.substr(0, at) + "_" + what + tid.substr(at + 4);
  }

  ExprPtr resolve(const Var* ref_var, const std::map<std::string, ExprPtr>& visible) {
    const Ref& ref = refs_.at(ref_var);
    if (ref.loop_var) {
      const Stmt* loop = nullptr;
      for (auto& sc : ref.scopes) {
        if (is_loop_over(sc, ref.loop_var)) loop = sc.stmt;
      }
      return carry_ia_.at({loop, ref.task});
    }
    auto it = visible.find(ref.task);
    PYPTO_CHECK(it != visible.end(), "PrepareCrossScopeTaskIdHoists: TaskId '" << ref.task << "' is not reachable from "
                                                                                << ref.span.line);
    return it->second;
  }

  // The task expression of `st` with its compiler edges resolved and deduplicated (null: not a
  // task with edges).
  ExprPtr with_resolved_edges(const ExprPtr& e, const std::map<const Var*, ExprPtr>& resolved) {
    if (!e || (!e->is<Call>() && !e->is<Submit>())) return nullptr;
    const auto& edges = compiler_dep_edges(*e);
    if (edges.empty()) return nullptr;
    std::vector<ExprPtr> out;
    bool changed = false;
    for (auto& d : edges) {
      ExprPtr r = d;
      if (const Var* v = as_var(d)) {
        if (auto it = resolved.find(v); it != resolved.end()) {
          r = it->second;
          changed = true;
        }
      }
      if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
    }
    return changed ? with_compiler_dep_edges(e, std::move(out)) : nullptr;
  }

  // Appends `extra` to the trailing yield of a loop body (inside its runtime scopes, if any).
  static StmtPtr append_yield(const StmtPtr& body, const std::vector<ExprPtr>& extra, const Span& span) {
    std::vector<StmtPtr> stmts = flatten_stmts(body);
    if (auto* r = ScopeHoldingYield(stmts)) {
      stmts.back() = RuntimeScopeStmt::make(r->mode, append_yield(r->body, extra, span), r->span);
      return make_seq(stmts, body->span);
    }
    std::vector<ExprPtr> values;
    if (!stmts.empty() && stmts.back()->is<YieldStmt>()) {
      values = stmts.back()->as<YieldStmt>()->values;
      stmts.pop_back();
    }
    values.insert(values.end(), extra.begin(), extra.end());
    stmts.push_back(YieldStmt::make(values, span));
    return make_seq(stmts, body->span);
  }

  void rebuild(const StmtPtr& s, std::map<std::string, ExprPtr>& visible, std::vector<StmtPtr>& out) {
    for (const StmtPtr& st : FlatStmts(s)) {
      if (auto* a = st->as<AssignStmt>()) {
        if (task_ref_of(*st)) {
          const Ref& ref = refs_.at(a->var.get());
          if (ref.slot >= 0) {
            // slot k of the array the pl.parallel filled (not its fence)
            ExprPtr arr = slots_rv_.at(ref.task);
            out.push_back(AssignStmt::make(
                a->var, Call::make_op("array.get_element", {arr, ConstInt::make(ref.slot, DataType::INDEX)}, {}, st->span),
                st->span));
            continue;
          }
          resolved_[a->var.get()] = resolve(a->var.get(), visible);
          continue;
        }
        if (producers_.count(a->var->name)) visible[a->var->name] = a->var;
        if (ExprPtr e = with_resolved_edges(a->value, resolved_)) {
          out.push_back(AssignStmt::make(a->var, e, st->span));
          continue;
        }
        out.push_back(st);
        continue;
      }
      if (auto* ev = st->as<EvalStmt>()) {
        ExprPtr e = with_resolved_edges(ev->expr, resolved_);
        out.push_back(e ? EvalStmt::make(e, st->span) : st);
        continue;
      }
      if (auto* r = st->as<RuntimeScopeStmt>()) {
        std::vector<StmtPtr> inner;
        rebuild(r->body, visible, inner);
        out.push_back(RuntimeScopeStmt::make(r->mode, make_seq(inner, r->body->span), r->span));
        continue;
      }
      if (auto* f = st->as<ForStmt>()) {
        rebuild_for(*f, visible, out);
        continue;
      }
      if (auto* i = st->as<IfStmt>()) {
        rebuild_if(*i, visible, out);
        continue;
      }
      out.push_back(st);
    }
  }

  // `ids` itself, or when it is the TaskId carry of an enclosing pl.parallel (which names the ids
  // of all its iterations before this one: ClassifyIterArgCarry makes it an array of slots) a
  // system.task_dummy barrier after them, appended to `out`: where one id is needed.
  ExprPtr join_parallel_ids(const std::string& t, const ExprPtr& ids, const Span& span, std::vector<StmtPtr>& out) {
    if (!parallel_carries_.count(ids.get())) return ids;
    VarPtr join = tid_var(derived_name(t, "join"), span);
    Attrs attrs{{"dummy_task", true}, {"manual_dep_edges", std::vector<ExprPtr>{ids}}};
    out.push_back(AssignStmt::make(join, Call::make_op("system.task_dummy", {}, attrs, span), span));
    return join;
  }

  // An if whose branches hold producers named after it: each such TaskId becomes an if result,
  // the branch's latest id or, where the branch has none, the one from before the if (none:
  // system.task_invalid).
  void rebuild_if(const IfStmt& i, std::map<std::string, ExprPtr>& visible, std::vector<StmtPtr>& out) {
    std::vector<std::string> carried;
    if (auto it = carries_.find(&i); it != carries_.end()) carried = it->second;
    VarPtr seed;
    std::map<std::string, ExprPtr> before = visible;
    for (const std::string& t : carried) {
      if (auto b = before.find(t); b != before.end()) {
        // An if result is one id: the branch without the producer names a barrier after a
        // pl.parallel's ids.
        if (!slots_at(i, t)) b->second = join_parallel_ids(t, b->second, i.span, out);
        continue;
      }
      if (int64_t n = slots_at(i, t)) {
        VarPtr slots = Var::make(derived_name(t, "slots"), ArrayType::make(n, DataType::TASK_ID), i.span);
        Attrs a{{"size", n}, {"dtype", std::string("TASK_ID")}};
        out.push_back(AssignStmt::make(slots, Call::make_op("array.create", {}, a, i.span), i.span));
        before[t] = slots;
        continue;
      }
      if (!seed) {
        seed = tid_var(derived_name(t, "seed"), i.span);
        out.push_back(AssignStmt::make(seed, Call::make_op("system.task_invalid", {}, {}, i.span), i.span));
      }
      before[t] = seed;
    }
    auto branch = [&](const StmtPtr& body, const Span& span) -> StmtPtr {
      std::map<std::string, ExprPtr> inner = before;
      std::vector<StmtPtr> nb;
      if (body) rebuild(body, inner, nb);
      StmtPtr b = make_seq(nb, body ? body->span : span);
      if (carried.empty()) return body ? b : nullptr;
      std::vector<ExprPtr> values;
      for (const std::string& t : carried) values.push_back(inner.at(t));
      return append_yield(b, values, span);
    };
    StmtPtr then_body = branch(i.then_body, i.span);
    StmtPtr else_body = branch(i.else_body, i.span);
    std::vector<VarPtr> rvs = i.return_vars;
    for (const std::string& t : carried) {
      VarPtr rv = Var::make(derived_name(t, "merged"), before.at(t)->type, i.span);
      rvs.push_back(rv);
      visible[t] = rv;
    }
    out.push_back(IfStmt::make(i.cond, then_body, else_body, rvs, i.span));
  }

  // The TaskId value loop (or if) `f` carries out for producer `t`: an array of `slots` ids when
  // `f` is, or encloses, the pl.range whose every iteration a consumer names; else one id (0).
  int64_t slots_at(const Stmt& f, const std::string& t) const {
    auto it = slots_loop_.find(t);
    if (it == slots_loop_.end()) return 0;
    if (f.is<IfStmt>() || leaves_through_if(t)) return 0;   // an if merges the slots' fence
    for (const Scope& sc : producers_.at(t).scopes) {
      if (sc.stmt == &f) return it->second->trip_count;   // f is the slot loop or encloses it
      if (sc.stmt == it->second) return 0;                // f is inside the slot loop
    }
    return 0;
  }

  // Does the value loop `loop` carries out for `t` (the slot loop's array, or a pl.parallel's N
  // ids) leave through an if? An if result is one TaskId, not an array, so such a loop puts
  // its ids behind a fence inside the branch.
  bool leaves_through_if(const std::string& t, const Stmt* loop) const {
    for (const Scope& sc : producers_.at(t).scopes) {
      if (sc.stmt == loop) return false;
      if (!sc.stmt->is<IfStmt>()) continue;
      auto c = carries_.find(sc.stmt);
      if (c != carries_.end() && std::find(c->second.begin(), c->second.end(), t) != c->second.end()) return true;
    }
    return false;
  }
  bool leaves_through_if(const std::string& t) const {
    auto it = slots_loop_.find(t);
    return it != slots_loop_.end() && leaves_through_if(t, it->second);
  }

  void rebuild_for(const ForStmt& f, std::map<std::string, ExprPtr>& visible, std::vector<StmtPtr>& out) {
    std::vector<std::string> carried;
    if (auto it = carries_.find(&f); it != carries_.end()) carried = it->second;
    std::vector<IterArgPtr> iter_args = f.iter_args;
    std::vector<VarPtr> rvs = f.return_vars;
    std::map<std::string, ExprPtr> inner = visible;
    VarPtr seed;
    std::vector<std::string> slot_tasks;   // carried as arrays filled by this loop's iterations
    for (const std::string& t : carried) {
      int64_t n = slots_at(f, t);
      if (!n && leaves_through_if(t) && slots_loop_.at(t) == &f) n = f.trip_count;   // the slot loop itself
      TypePtr type = n ? TypePtr(ArrayType::make(n, DataType::TASK_ID)) : TypePtr(ScalarType::make(DataType::TASK_ID));
      ExprPtr init;
      auto v = visible.find(t);
      if (v != visible.end() && (!n || v->second->type->is<ArrayType>())) {
        init = v->second;
        // A sequential loop carrying one id starts from a barrier after a pl.parallel's ids.
        if (!n && f.for_kind != ForKind::Parallel) init = join_parallel_ids(t, init, f.span, out);
      } else if (n) {
        // All slots invalid: an iteration that does not run the producer leaves its slot empty.
        VarPtr slots = Var::make(derived_name(t, "slots"), type, f.span);
        Attrs a{{"size", n}, {"dtype", std::string("TASK_ID")}};
        out.push_back(AssignStmt::make(slots, Call::make_op("array.create", {}, a, f.span), f.span));
        init = slots;
      } else {
        if (!seed) {
          seed = tid_var(derived_name(t, "seed"), f.span);
          out.push_back(AssignStmt::make(seed, Call::make_op("system.task_invalid", {}, {}, f.span), f.span));
        }
        init = seed;
      }
      IterArgPtr ia = IterArg::make(derived_name(t, "carry"), type, init, f.span);
      if (f.for_kind == ForKind::Parallel) parallel_carries_.insert(ia.get());
      iter_args.push_back(ia);
      inner[t] = ia;
      carry_ia_[{&f, t}] = ia;
      if (n && slots_loop_.at(t) == &f) {
        slot_tasks.push_back(t);
        if (producers_.at(t).scopes.back().stmt != &f) {
          // The producer's loops inside the slot loop carry one id per iteration, from none.
          VarPtr none = tid_var(derived_name(t, "none"), f.span);
          out.push_back(AssignStmt::make(none, Call::make_op("system.task_invalid", {}, {}, f.span), f.span));
          inner[t] = none;
        }
      }
    }
    std::vector<StmtPtr> nb;
    rebuild(f.body, inner, nb);
    StmtPtr body = make_seq(nb, f.body->span);
    std::vector<ExprPtr> yields;
    std::vector<StmtPtr> fills;
    for (const std::string& t : carried) {
      ExprPtr last = inner.at(t);
      // A loop carrying the slots as an array yields the array, not the fence a pl.parallel
      // inside it put them behind (the fence is one TaskId: the verifier refused the loop,
      // "loop-carried TaskId ... is an array here but its next value is one TaskId").
      if (carry_ia_.at({&f, t})->type->is<ArrayType>() && !last->type->is<ArrayType>())
        if (auto a = fenced_array_.find(last.get()); a != fenced_array_.end()) last = a->second;
      if (std::find(slot_tasks.begin(), slot_tasks.end(), t) != slot_tasks.end()) {
        // slot[i] = this iteration's id (the loop runs i = 0, 1, ..., N - 1: range_slots_ok).
        const IterArgPtr& ia = std::static_pointer_cast<const IterArg>(carry_ia_.at({&f, t}));
        VarPtr filled = Var::make(derived_name(t, "filled"), ia->type, f.span);
        fills.push_back(AssignStmt::make(
            filled, Call::make_op("array.update_element", {ia, f.loop_var, last}, {}, f.span), f.span));
        last = filled;
      }
      yields.push_back(last);
    }
    if (!fills.empty()) body = append_stmts(body, fills);
    std::vector<StmtPtr> barriers;
    for (size_t k = 0; k < carried.size(); ++k) {
      const std::string& t = carried[k];
      VarPtr rv = Var::make(derived_name(t, "last"), carry_ia_.at({&f, t})->type, f.span);
      rvs.push_back(rv);
      visible[t] = rv;
      if (rv->type->is<ArrayType>()) slots_rv_[t] = rv;
      // Phase fence: the N ids of a pl.parallel(N) fan-in (or a pl.range's slots) behind one
      // dummy barrier, so each later consumer names 1 id instead of N (N + M edges, not N * M).
      bool slot_loop = slots_loop_.count(t) && slots_loop_.at(t) == &f;
      bool many = f.for_kind == ForKind::Parallel || slot_loop;
      bool whole = named_whole_.count(t) > 0;   // some consumer names all ids, not a slot
      if (whole && ((many && f.trip_count >= kFenceMinTrip) || (many && leaves_through_if(t, &f)))) {
        VarPtr fence = tid_var(derived_name(t, "fence"), f.span);
        Attrs attrs{{"dummy_task", true}, {"manual_dep_edges", std::vector<ExprPtr>{rv}}};
        barriers.push_back(AssignStmt::make(fence, Call::make_op("system.task_dummy", {}, attrs, f.span), f.span));
        visible[t] = fence;
        fenced_array_[fence.get()] = rv;
      }
    }
    if (!yields.empty()) body = append_yield(body, yields, f.span);
    out.push_back(ForStmt::make(f.loop_var, f.start, f.stop, f.step, iter_args, body, rvs, f.for_kind, f.attrs, f.span)
                      ->with_typed_fields_of(f));   // keep StaticTripCountsStamped and every typed field
    out.insert(out.end(), barriers.begin(), barriers.end());
  }

  // Appends `extra` before the trailing yield of a loop body (inside its runtime scopes).
  static StmtPtr append_stmts(const StmtPtr& body, const std::vector<StmtPtr>& extra) {
    std::vector<StmtPtr> stmts = flatten_stmts(body);
    if (auto* r = ScopeHoldingYield(stmts)) {
      stmts.back() = RuntimeScopeStmt::make(r->mode, append_stmts(r->body, extra), r->span);
      return make_seq(stmts, body->span);
    }
    auto at = stmts.end();
    if (!stmts.empty() && stmts.back()->is<YieldStmt>()) --at;
    stmts.insert(at, extra.begin(), extra.end());
    return make_seq(stmts, body->span);
  }

  const Function& fn_;
  std::map<std::string, Producer> producers_;
  std::map<const Var*, Ref> refs_;
  std::vector<const Var*> ref_order_;                  // refs_ keys in program order
  std::map<const Stmt*, std::vector<std::string>> carries_;
  std::map<std::string, const ForStmt*> slots_loop_;
  std::map<std::string, ExprPtr> slots_rv_;
  std::set<std::string> named_whole_;                  // producers some placeholder names without slot=            // producer -> its slot loop's array (after it)   // producer -> the pl.range whose every id is kept
  std::map<std::pair<const Stmt*, std::string>, ExprPtr> carry_ia_;
  std::map<const Expr*, ExprPtr> fenced_array_;        // a phase fence -> the ids it stands for
  std::set<const Expr*> parallel_carries_;             // the TaskId carries of pl.parallel loops
  std::map<const Var*, ExprPtr> resolved_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (fn->type != FunctionType::Orchestration) continue;
    if (!has_task_ref(fn->body)) continue;
    out = out->with_function(Hoister(*fn).Run());
  }
  return out;
}

}  // namespace

Pass PrepareCrossScopeTaskIdHoists() {
  return Pass{"PrepareCrossScopeTaskIdHoists",
              {IRProperty::CallDirectionsDerived, IRProperty::StaticTripCountsStamped},
              {IRProperty::CrossScopeTaskIdsHoisted},
              Run,
              /*invalidated=*/{}};
}

}  // namespace pypto::transforms
