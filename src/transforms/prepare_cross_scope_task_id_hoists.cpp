// PrepareCrossScopeTaskIdHoists
//
// What: turns every `system.task_ref` placeholder AutoDeriveTaskDependencies writes into the
//   TaskId its consumer can name, declaring each carried TaskId at the lowest common scope of
//   producer and consumer (the spec's LCA hoist):
//     * `task_ref(task="k_tid3")` after a loop containing the submit bound to k_tid3: a TaskId
//       carry through each loop between the common scope and the producer (seeded with the
//       producer's id visible outside, else system.task_invalid), named after the loop by its
//       return var; a pl.parallel(N) with constant N >= 4 puts its N ids behind one
//       system.task_dummy barrier (the phase fence), so consumers name 1 id instead of N;
//     * `task_ref(i, task="k_tid3")`: the carry of loop `i` (the producer's id of the previous
//       iteration), plus carries through the producer's inner loops as above.
//       for i in pl.range(4):                       seed = pl.system.task_invalid()
//           r = pl.system.task_ref(i, task="k_tid0")  for i, (k_carry0,) in pl.range(4, init_values=(seed,)):
//           x, k_tid0 = pl.submit(self.k, x,   ==>      x, k_tid0 = pl.submit(self.k, x, compiler_manual_dep_edges=[k_carry0])
//               compiler_manual_dep_edges=[r])          k_last0 = pl.yield_(k_tid0)
//   Each consumer's edges are then deduplicated by the Var they resolve to.
// Input invariants: CallDirectionsDerived; each task_ref names a TaskId Var bound in the same
//   function by a submit (AutoDeriveTaskDependencies names them `<callee>_tid<N>`, distinct).
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
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// A pl.parallel fan-in of at least this many ids goes through a dummy barrier.
constexpr int64_t kFenceMinTrip = 4;

const Call* task_ref_of(const StmtPtr& s) {
  auto* a = s->as<AssignStmt>();
  auto* c = a ? a->value->as<Call>() : nullptr;
  return c && c->is_op && c->callee == "system.task_ref" ? c : nullptr;
}

// Placeholders are statements `r = system.task_ref(...)` (AutoDeriveTaskDependencies writes
// them so, and the frontend hoists a deps= entry into one): a statement walk finds them without
// visiting every expression (the 10,000-task codegen benchmark has none).
bool has_task_ref(const StmtPtr& s) {
  for (const StmtPtr& st : flatten_stmts(s)) {
    if (task_ref_of(st)) return true;
    if (auto* f = st->as<ForStmt>(); f && has_task_ref(f->body)) return true;
    if (auto* r = st->as<RuntimeScopeStmt>(); r && has_task_ref(r->body)) return true;
    if (auto* i = st->as<IfStmt>(); i && (has_task_ref(i->then_body) || (i->else_body && has_task_ref(i->else_body)))) {
      return true;
    }
  }
  return false;
}

VarPtr tid_var(const std::string& name, const Span& span) {
  return Var::make(name, ScalarType::make(DataType::TASK_ID), span);
}

class Hoister {
 public:
  explicit Hoister(const Function& fn) : fn_(fn) {}

  FunctionPtr Run() {
    std::vector<const ForStmt*> loops;
    scan(fn_.body, loops);
    plan();
    std::map<std::string, ExprPtr> visible;
    std::vector<StmtPtr> out;
    rebuild(fn_.body, visible, out);
    return Function::make(fn_.name, fn_.type, fn_.params, fn_.param_directions, fn_.return_types,
                          make_seq(out, fn_.body->span), fn_.level, fn_.role, fn_.attrs, fn_.span);
  }

 private:
  struct Producer {
    int pos = 0;
    std::vector<const ForStmt*> loops;   // enclosing loops, outermost first
  };
  struct Ref {
    std::string task;
    const Var* loop_var = nullptr;       // set: the previous iteration of that loop
    std::vector<const ForStmt*> loops;   // the consumer's enclosing loops
    Span span;
  };

  // Every TaskId Var bound in the function (by name) and every placeholder.
  void scan(const StmtPtr& s, std::vector<const ForStmt*>& loops) {
    for (const StmtPtr& st : flatten_stmts(s)) {
      if (auto* a = st->as<AssignStmt>()) {
        if (const Call* r = task_ref_of(st)) {
          Ref ref{std::get<std::string>(r->attrs.at("task")), nullptr, loops, r->span};
          if (!r->args.empty()) ref.loop_var = as_var(r->args[0]);
          refs_[a->var.get()] = std::move(ref);
        } else if (is_task_id(a->var->type) && a->var->type->is<ScalarType>()) {
          producers_.emplace(a->var->name, Producer{static_cast<int>(producers_.size()), loops});
        }
      } else if (auto* f = st->as<ForStmt>()) {
        loops.push_back(f);
        scan(f->body, loops);
        loops.pop_back();
      } else if (auto* r = st->as<RuntimeScopeStmt>()) {
        scan(r->body, loops);
      } else if (auto* i = st->as<IfStmt>()) {
        scan(i->then_body, loops);
        if (i->else_body) scan(i->else_body, loops);
      }
    }
  }

  // For each loop, the producers whose TaskId it carries (in program order).
  void plan() {
    for (auto& [var, ref] : refs_) {
      auto p = producers_.find(ref.task);
      PYPTO_CHECK(p != producers_.end(), "PrepareCrossScopeTaskIdHoists: system.task_ref names '"
                                             << ref.task << "', which no TaskId of '" << fn_.name << "' is bound to");
      const auto& pl = p->second.loops;
      size_t level = 0;
      if (ref.loop_var) {
        while (level < ref.loops.size() && ref.loops[level]->loop_var.get() != ref.loop_var) ++level;
        PYPTO_CHECK(level < ref.loops.size() && level < pl.size() && pl[level] == ref.loops[level],
                    "PrepareCrossScopeTaskIdHoists: system.task_ref(" << ref.loop_var->name << ", task='" << ref.task
                                                                      << "') outside a loop over "
                                                                      << ref.loop_var->name << " containing both tasks");
      } else {
        while (level < pl.size() && level < ref.loops.size() && pl[level] == ref.loops[level]) ++level;
      }
      for (size_t m = level; m < pl.size(); ++m) {
        auto& v = carries_[pl[m]];
        if (std::find(v.begin(), v.end(), ref.task) == v.end()) v.push_back(ref.task);
      }
    }
    for (auto& [loop, v] : carries_) {
      std::sort(v.begin(), v.end(),
                [&](const std::string& x, const std::string& y) { return producers_.at(x).pos < producers_.at(y).pos; });
    }
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
      const ForStmt* loop = nullptr;
      for (auto* l : ref.loops) {
        if (l->loop_var.get() == ref.loop_var) loop = l;
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
    if (stmts.size() == 1 && stmts[0]->is<RuntimeScopeStmt>()) {
      auto* r = stmts[0]->as<RuntimeScopeStmt>();
      return RuntimeScopeStmt::make(r->mode, append_yield(r->body, extra, span), r->span);
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
    for (const StmtPtr& st : flatten_stmts(s)) {
      if (auto* a = st->as<AssignStmt>()) {
        if (task_ref_of(st)) {
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
      out.push_back(st);   // an if holds no task here (AutoDeriveTaskDependencies falls back on one)
    }
  }

  void rebuild_for(const ForStmt& f, std::map<std::string, ExprPtr>& visible, std::vector<StmtPtr>& out) {
    std::vector<std::string> carried;
    if (auto it = carries_.find(&f); it != carries_.end()) carried = it->second;
    std::vector<IterArgPtr> iter_args = f.iter_args;
    std::vector<VarPtr> rvs = f.return_vars;
    std::map<std::string, ExprPtr> inner = visible;
    VarPtr seed;
    for (const std::string& t : carried) {
      ExprPtr init;
      if (auto v = visible.find(t); v != visible.end()) {
        init = v->second;
      } else {
        if (!seed) {
          seed = tid_var(derived_name(t, "seed"), f.span);
          out.push_back(AssignStmt::make(seed, Call::make_op("system.task_invalid", {}, {}, f.span), f.span));
        }
        init = seed;
      }
      IterArgPtr ia = IterArg::make(derived_name(t, "carry"), ScalarType::make(DataType::TASK_ID), init, f.span);
      iter_args.push_back(ia);
      inner[t] = ia;
      carry_ia_[{&f, t}] = ia;
    }
    std::vector<StmtPtr> nb;
    rebuild(f.body, inner, nb);
    StmtPtr body = make_seq(nb, f.body->span);
    std::vector<ExprPtr> yields;
    std::vector<StmtPtr> barriers;
    for (const std::string& t : carried) {
      yields.push_back(inner.at(t));
      VarPtr rv = tid_var(derived_name(t, "last"), f.span);
      rvs.push_back(rv);
      visible[t] = rv;
      // Phase fence: the N ids of a pl.parallel(N) fan-in behind one dummy barrier, so each
      // later consumer names 1 id instead of N (N + M edges instead of N * M).
      auto* tc = f.stop->as<ConstInt>();
      auto* t0 = f.start->as<ConstInt>();
      if (f.for_kind == ForKind::Parallel && tc && t0 && tc->value - t0->value >= kFenceMinTrip) {
        VarPtr fence = tid_var(derived_name(t, "fence"), f.span);
        Attrs attrs{{"dummy_task", true}, {"manual_dep_edges", std::vector<ExprPtr>{rv}}};
        barriers.push_back(AssignStmt::make(fence, Call::make_op("system.task_dummy", {}, attrs, f.span), f.span));
        visible[t] = fence;
      }
    }
    if (!yields.empty()) body = append_yield(body, yields, f.span);
    out.push_back(ForStmt::make(f.loop_var, f.start, f.stop, f.step, iter_args, body, rvs, f.for_kind, f.attrs, f.span)
                      ->with_results(f.carries, f.trip_count));   // keep StaticTripCountsStamped
    out.insert(out.end(), barriers.begin(), barriers.end());
  }

  const Function& fn_;
  std::map<std::string, Producer> producers_;
  std::map<const Var*, Ref> refs_;
  std::map<const ForStmt*, std::vector<std::string>> carries_;
  std::map<std::pair<const ForStmt*, std::string>, ExprPtr> carry_ia_;
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
              {IRProperty::CallDirectionsDerived},
              {IRProperty::CrossScopeTaskIdsHoisted},
              Run};
}

}  // namespace pypto::transforms
