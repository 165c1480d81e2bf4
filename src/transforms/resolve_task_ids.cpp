// ResolveTaskIds
//
// What: decides, for every TaskId value of an Orchestration function (L2 and HOST), how the
//   generated code names it, and stamps the result as Function::task_ids (ir::TaskIdInfo, one
//   entry per TaskId Var the body defines, in definition order):
//     slots  0: one TaskId; N: the value names an array of N TaskId slots — a
//            pl.Array[N, TASK_ID], a pl.parallel carry held as pl.slots(N) (in a sequential
//            loop and after the loop), or a name for such storage (a copy, an array update);
//            an if result one of whose branches yields such an array (a phi array of N)
//     fresh  always valid, so a dependency on it needs no is_valid() guard: a pl.submit's TaskId,
//            a copy of a fresh value, the iter_arg of a pl.parallel slot carry whose init is
//            fresh (each iteration reads the value from before the loop); a task_dummy barrier
//            when the backend always submits it (L2: no edges; HOST: it waits on a fresh TaskId)
//     read   a statement names it: deps=, a task_dummy's edges, a carry init, a yield, an array
//            op's argument, or a copy that is itself read (HOST code prints `(void)h;` after a
//            handle nothing reads)
//     submit (printed at_submit=True) the pl.submit result tuple whose TaskId element the Var
//            unpacks, for the first unpacking in the submission's own statement list (HOST
//            declares the handle there: `TaskHandle t = submit_next_level(...);`)
//   stamps RuntimeScopeStmt::carried_task_ids on every runtime scope: the TaskIds the yield right
//   after it carries out of it (TaskIdsCarriedOutOfScope), whose storage the generator declares
//   before the PTO2_SCOPE;
//   and drops the compiler edges (compiler_manual_dep_edges) that name a TaskId whose storage is
//   out of scope at the task: a TaskId lives in the C++ block (PTO2_SCOPE, loop or branch body)
//   that declares its storage — the producer's block, the block before a PTO2_SCOPE for a TaskId
//   the following yield carries out (TaskIdsCarriedOutOfScope), the loop's block for a carry,
//   the init's storage for an array carry. A compiler edge is best-effort ordering, so dropping
//   an unresolvable one is safe; a user edge naming such a TaskId is VerifyOrchestrationProgram's
//   located error ("whose scope has already closed here").
//
//     for i, (prev,) in pl.parallel(4, init_values=(seed,)):     task_ids={"seed": pl.task_id(read=True),
//         out, t = pl.submit(self.k, x, deps=[prev])                       "prev": pl.task_id(read=True),
//         pl.yield_(t)                                                      "t": pl.task_id(fresh=True, read=True, at_submit=True),
//     out2, u = pl.submit(self.k, x, deps=[prev_1])                         "prev_1": pl.task_id(slots=4, read=True), ...}
//
// Input invariants: IterArgCarryClassified (the slot decisions), RuntimeScopesMaterialized (the
//   blocks that bound lifetimes).
// Output invariants: TaskIdsResolved; only compiler edges out of scope are removed (and the
//   scope stamps added).
// Errors: a TaskId if result whose branches yield slot arrays of different sizes (UserError at the if).
// Why: the L2 and HOST generators print dependency lists, carries and yields from these facts
//   instead of re-deriving lifetimes while they print.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/attrs.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/flat_stmts.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/scope_carries.h"

namespace pypto::transforms {

using namespace ir;

namespace {

bool same_carries(const std::vector<ScopeTaskIdCarry>& a, const std::vector<ScopeTaskIdCarry>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].var != b[i].var || a[i].slots != b[i].slots) return false;
  }
  return true;
}

int64_t array_slots(const TypePtr& t) {
  auto* at = t ? t->as<ArrayType>() : nullptr;
  return at && at->dtype == DataType::TASK_ID ? at->size : 0;
}

class Resolver {
 public:
  explicit Resolver(const Function& fn) : host_(fn.level == Level::HOST) {
    open_.push_back(next_block_++);   // the entry block
    block(fn.body);
  }

  std::vector<TaskIdInfo> table() const {
    // A copy reads its source when something reads the copy (reverse order: chains c = b; d = c).
    std::unordered_set<const Var*> read = read_;
    for (auto it = copies_.rbegin(); it != copies_.rend(); ++it) {
      if (read.count(it->first)) read.insert(it->second);
    }
    std::vector<TaskIdInfo> out;
    for (const VarPtr& v : order_) {
      const Fact& f = facts_.at(v.get());
      auto s = submit_of_.find(v.get());
      out.push_back(TaskIdInfo{v, f.slots, f.fresh, read.count(v.get()) > 0, s == submit_of_.end() ? nullptr : s->second});
    }
    return out;
  }
  // Tasks whose compiler edges name out-of-scope TaskIds -> the edges that stay.
  const std::unordered_map<const Expr*, std::vector<ExprPtr>>& pruned() const { return pruned_; }
  // Runtime scopes whose carried_task_ids stamp is missing or stale -> the right one.
  const std::unordered_map<const RuntimeScopeStmt*, std::vector<ScopeTaskIdCarry>>& scope_carries() const {
    return scope_carries_;
  }

 private:
  struct Fact {
    int block = 0;        // the C++ block declaring its storage
    int64_t slots = 0;
    bool fresh = false;
  };

  int current() const { return open_.back(); }
  bool is_open(int b) const {
    for (int o : open_) if (o == b) return true;
    return false;
  }
  int decl_block(const Var* v) const {
    auto it = hoisted_.find(v);
    return it == hoisted_.end() ? current() : it->second;
  }
  void define(const VarPtr& v, Fact f, VarPtr submit = nullptr) {
    if (!v || !is_task_id(v->type)) return;
    if (facts_.emplace(v.get(), f).second) order_.push_back(v);
    if (submit) submit_of_[v.get()] = std::move(submit);
  }
  const Fact* fact(const Var* v) const {
    auto it = facts_.find(v);
    return it == facts_.end() ? nullptr : &it->second;
  }
  void read(const ExprPtr& e) {
    if (const Var* v = as_var(e); v && is_task_id(v->type)) read_.insert(v);
  }
  void read_all(const std::vector<ExprPtr>& es) {
    for (auto& e : es) read(e);
  }

  void block(const StmtPtr& body) {
    FlatStmts stmts(body);   // in place: no copy of a 40,000-statement body
    const YieldStmt* saved = block_yield_;
    const int saved_list = list_;
    block_yield_ = TrailingYield(stmts.stmts());
    list_ = ++lists_;
    for (auto& s : stmts) stmt(s);
    block_yield_ = saved;
    list_ = saved_list;
  }
  void nested(const StmtPtr& body) {
    open_.push_back(next_block_++);
    block(body);
    open_.pop_back();
  }

  void stmt(const StmtPtr& s) {
    switch (s->kind) {
      case NodeKind::SeqStmts: block(s); return;
      case NodeKind::RuntimeScopeStmt: {
        auto* r = s->as<RuntimeScopeStmt>();
        std::vector<ScopeTaskIdCarry> carried;
        if (block_yield_) carried = TaskIdsCarriedOutOfScope(*r, *block_yield_);
        for (const ScopeTaskIdCarry& c : carried) hoisted_[c.var.get()] = current();
        nested(r->body);
        // An if result that is a phi array (a branch yields a TaskId array) carries its slots.
        for (ScopeTaskIdCarry& c : carried) {
          const Fact* f = fact(c.var.get());
          if (c.slots == 0 && f && f->slots > 0) c.slots = f->slots;
        }
        if (!same_carries(carried, r->carried_task_ids)) scope_carries_[r] = std::move(carried);
        return;
      }
      case NodeKind::AssignStmt: assign(*s->as<AssignStmt>()); return;
      case NodeKind::EvalStmt: task(*s->as<EvalStmt>()->expr); return;
      case NodeKind::ForStmt: loop(*s->as<ForStmt>()); return;
      case NodeKind::IfStmt: {
        auto* i = s->as<IfStmt>();
        for (auto& rv : i->return_vars) define(rv, Fact{decl_block(rv.get()), array_slots(rv->type), false});
        nested(i->then_body);
        if (i->else_body) nested(i->else_body);
        phi_slots(*i);
        return;
      }
      case NodeKind::YieldStmt: read_all(s->as<YieldStmt>()->values); return;
      case NodeKind::ScopeStmt: nested(s->as<ScopeStmt>()->body); return;   // outlined before codegen
      case NodeKind::ReturnStmt: return;
#define PYPTO_EXPR_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
        return;
    }
  }

  // The dependency edges of a task: user edges are read; compiler edges out of scope are dropped.
  void task(const Expr& e) {
    if (auto* sub = e.as<Submit>()) read_all(sub->deps);
    const std::vector<ExprPtr>& edges = compiler_dep_edges(e);
    auto live = [&](const ExprPtr& d) {
      const Fact* f = fact(as_var(d));
      return f && is_open(f->block);
    };
    if (std::all_of(edges.begin(), edges.end(), live)) return;   // the common case: no vector per task
    std::vector<ExprPtr> kept;
    for (auto& d : edges) {
      if (live(d)) kept.push_back(d);
    }
    pruned_[&e] = std::move(kept);
  }

  void assign(const AssignStmt& a) {
    const VarPtr& v = a.var;
    const ExprPtr& value = a.value;
    if (auto* sub = value->as<Submit>()) {
      task(*sub);
      submit_tuples_.emplace(v.get(), SubmitTuple{list_, false});
      return;
    }
    if (auto* g = value->as<TupleGetItem>()) {
      auto* tt = g->tuple->type->as<TupleType>();
      auto st = submit_tuples_.find(as_var(g->tuple));
      const bool tid = st != submit_tuples_.end() && tt && g->index + 1 == static_cast<int>(tt->elements.size());
      // The first unpacking of the TaskId in the submission's own statement list names it there.
      VarPtr at_submit;
      if (tid && st->second.list == list_ && !st->second.unpacked) {
        st->second.unpacked = true;
        at_submit = as_var_ptr(g->tuple);
      }
      define(v, Fact{decl_block(v.get()), 0, tid}, at_submit);
      return;
    }
    if (const Var* src = as_var(value)) {   // a copy names the source's storage
      if (is_task_id(src->type)) copies_.emplace_back(v.get(), src);
      if (const Fact* f = fact(src)) define(v, *f);
      return;
    }
    auto* c = value->as<Call>();
    if (!c) return define(v, Fact{decl_block(v.get()), array_slots(v->type), false});
    if (!c->is_op) return task(*c);
    read_all(c->args);
    if (c->callee == "system.task_dummy") {
      const std::vector<ExprPtr>& edges = c->manual_dep_edges;
      read_all(edges);
      // L2 submits a barrier without edges unconditionally; HOST's submit_barrier returns a valid
      // handle when it waits on a fresh TaskId.
      bool fresh = edges.empty();
      if (host_) {
        fresh = false;
        for (auto& d : edges) {
          const Fact* f = fact(as_var(d));
          fresh = fresh || (f && f->slots == 0 && f->fresh);
        }
      }
      return define(v, Fact{decl_block(v.get()), 0, fresh});
    }
    if (c->callee == "array.update_element") {   // the new array value shares the storage
      if (const Fact* f = fact(as_var(c->args.at(0)))) return define(v, *f);
    }
    define(v, Fact{decl_block(v.get()), array_slots(v->type), false});
  }

  // A TaskId if result one of whose branches yields an array of N slots (a pl.parallel carry's
  // result) is a phi array of N: `PTO2TaskId r[N];`, a scalar branch broadcast into it.
  void phi_slots(const IfStmt& s) {
    for (size_t k = 0; k < s.return_vars.size(); ++k) {
      auto it = facts_.find(s.return_vars[k].get());
      if (it == facts_.end() || it->second.slots > 0) continue;
      for (const StmtPtr& body : {s.then_body, s.else_body}) {
        const YieldStmt* y = body ? trailing_yield(body) : nullptr;
        const Fact* f = y && k < y->values.size() ? fact(as_var(y->values[k])) : nullptr;
        if (!f || f->slots == 0) continue;
        PYPTO_USER_CHECK(it->second.slots == 0 || it->second.slots == f->slots, s.span,
                         "if result '" << s.return_vars[k]->name << "' is an array of " << it->second.slots
                                       << " TaskIds in one branch and of " << f->slots << " in the other",
                         "carry the TaskIds of pl.parallel loops with the same trip count through one name");
        it->second.slots = f->slots;
      }
    }
  }

  void loop(const ForStmt& f) {
    std::vector<Fact> after(f.iter_args.size());   // what each return var names
    for (size_t i = 0; i < f.iter_args.size(); ++i) {
      const IterArgPtr& ia = f.iter_args[i];
      read(ia->init);
      if (!is_task_id(ia->type)) continue;
      const Fact* init = fact(as_var(ia->init));
      const LoopCarry carry = i < f.carries.size() ? f.carries[i] : LoopCarry::rebound();
      const int home = hoisted_.count(ia.get()) ? hoisted_.at(ia.get()) : current();
      Fact fa;
      if (!carry.rebind) {                              // another name for the init's storage
        fa = Fact{init ? init->block : current(), array_slots(ia->type), false};
        after[i] = fa;
      } else if (ia->type->is<ArrayType>()) {           // updated in place: the init's storage
        fa = init ? *init : Fact{home, array_slots(ia->type), false};
        after[i] = fa;
      } else if (carry.slots == 0) {                    // a variable the yield re-assigns
        fa = Fact{home, 0, false};
        after[i] = fa;
      } else {                                          // pl.slots(N): one slot per iteration
        Fact backing{home, carry.slots, false};
        fa = f.for_kind == ForKind::Parallel ? (init ? *init : Fact{current(), 0, false}) : backing;
        after[i] = backing;
      }
      define(ia, fa);
    }
    nested(f.body);
    for (size_t k = 0; k < f.return_vars.size() && k < after.size(); ++k) define(f.return_vars[k], after[k]);
  }

  const bool host_;
  std::vector<int> open_;
  int next_block_ = 0;
  const YieldStmt* block_yield_ = nullptr;
  std::unordered_map<const Var*, int> hoisted_;   // declared before its PTO2_SCOPE, in this block
  struct SubmitTuple {
    int list;        // the statement list of the submission
    bool unpacked;   // its TaskId element was unpacked in that list
  };
  std::unordered_map<const Var*, SubmitTuple> submit_tuples_;
  std::unordered_map<const Var*, VarPtr> submit_of_;   // TaskId Var -> the submit tuple it unpacks there
  int list_ = 0, lists_ = 0;
  std::unordered_map<const Var*, Fact> facts_;
  std::vector<VarPtr> order_;
  std::unordered_set<const Var*> read_;
  std::vector<std::pair<const Var*, const Var*>> copies_;   // (copy, source), program order
  std::unordered_map<const Expr*, std::vector<ExprPtr>> pruned_;
  std::unordered_map<const RuntimeScopeStmt*, std::vector<ScopeTaskIdCarry>> scope_carries_;
};

class StampScopeCarries : public IRMutator {
 public:
  explicit StampScopeCarries(const std::unordered_map<const RuntimeScopeStmt*, std::vector<ScopeTaskIdCarry>>& want)
      : want_(want) {}
  StmtPtr mutate_(const RuntimeScopeStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);
    auto it = want_.find(op);
    return it == want_.end() ? s : s->as<RuntimeScopeStmt>()->with_carried_task_ids(it->second);
  }

 private:
  const std::unordered_map<const RuntimeScopeStmt*, std::vector<ScopeTaskIdCarry>>& want_;
};

class DropOutOfScopeEdges : public IRMutator {
 public:
  explicit DropOutOfScopeEdges(const std::unordered_map<const Expr*, std::vector<ExprPtr>>& live) : live_(live) {}
  ExprPtr mutate_(const Call* op, const ExprPtr& self) override { return keep(op, IRMutator::mutate_(op, self)); }
  ExprPtr mutate_(const Submit* op, const ExprPtr& self) override { return keep(op, IRMutator::mutate_(op, self)); }

 private:
  ExprPtr keep(const Expr* op, const ExprPtr& e) {
    auto it = live_.find(op);
    return it == live_.end() ? e : with_compiler_dep_edges(e, it->second);
  }
  const std::unordered_map<const Expr*, std::vector<ExprPtr>>& live_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (fn->type != FunctionType::Orchestration) continue;
    FunctionPtr nf = fn;
    Resolver first(*fn);
    if (!first.pruned().empty()) nf = DropOutOfScopeEdges(first.pruned()).mutate_function(fn);
    Resolver second(*nf);
    // Stamping the scopes keeps every Var, so the table stays valid for the stamped body.
    if (!second.scope_carries().empty()) nf = StampScopeCarries(second.scope_carries()).mutate_function(nf);
    nf = nf->with_task_ids(second.table());
    out = out->with_function(nf);
  }
  return out;
}

}  // namespace

std::vector<TaskIdInfo> ResolvedTaskIds(const Function& fn) { return Resolver(fn).table(); }

std::vector<std::string> CheckTaskIdsResolved(const Function& fn) {
  std::vector<std::string> out;
  Resolver r(fn);
  if (!r.pruned().empty()) out.push_back("function '" + fn.name + "': a compiler edge names an out-of-scope TaskId");
  std::vector<std::string> carries;   // sorted: scope_carries() is hashed by address
  for (const auto& [scope, want] : r.scope_carries()) {
    carries.push_back("function '" + fn.name + "': a runtime scope's carried_task_ids (" +
                      std::to_string(scope->carried_task_ids.size()) + " entries) is not the one ResolveTaskIds computes (" +
                      std::to_string(want.size()) + " entries)");
  }
  std::sort(carries.begin(), carries.end());
  out.insert(out.end(), carries.begin(), carries.end());
  std::vector<TaskIdInfo> want = r.table();
  if (want.size() != fn.task_ids.size()) {
    out.push_back("function '" + fn.name + "': " + std::to_string(fn.task_ids.size()) + " task_ids entries, expected " +
                  std::to_string(want.size()));
    return out;
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].var != fn.task_ids[i].var || !want[i].same_facts(fn.task_ids[i])) {
      out.push_back("function '" + fn.name + "': task_ids entry " + std::to_string(i) + " ('" + want[i].var->name +
                    "') is not the one ResolveTaskIds computes");
    }
  }
  return out;
}

Pass ResolveTaskIds() {
  return Pass{"ResolveTaskIds",
              {IRProperty::IterArgCarryClassified, IRProperty::RuntimeScopesMaterialized},
              {IRProperty::TaskIdsResolved},
              Run,
              /*invalidated=*/{}};
}

}  // namespace pypto::transforms
