// StampCallOperands
//
// What: stamps Function::call_operands, open_calls, cut_calls and carried_operands on every
//   chip-level Orchestration function of at least kCallChunkMin task statements (the generator
//   chunks no other). A *run* is a block's statements between loops, branches and other
//   statements: kernel calls and candidate values — a tensor.slice, transpose, reshape, dim or
//   read, a scalar expression, a Var copy, an in-place tensor.assemble — and the batched
//   tensor.creates between them (Function::batched_creates: they print nothing where they stand,
//   and the generator holds them in chunks too). call_operands are the candidate values the L2
//   generator may print inside a chunk of calls, in program order. A task with a tuple result
//   (`out, tid = pl.submit(...)`, a call of several results) and the statements right after it
//   that take its elements are a *unit*, a call of the run that no chunk splits (the elements
//   read the task's TaskOutputTensors), when nothing else reads the tuple: its elements are
//   stamped (a runtime-allocated output or a fresh TaskId declares a C++ name; a result bound to
//   the argument it writes back joins that argument's group), and it is named by its first
//   element in open_calls and cut_calls (a tuple's own name does not survive printing). A value's
//   *death* is the first call in its run after the last reference to it, or to a Var bound to
//   its C++ text (a copy, an assemble's result, the result of a call that writes it back:
//   Function::returned_params; the source of a tensor.assemble is no reference: it prints
//   nothing). A value is
//     - *near* when its death is at most kCallChunkMin calls on, every call in between has a
//       result Var, and at most one forced cut (every kCallChunkMin-th call of a run) is there;
//     - *far* otherwise, when a call follows it in its run: it dies further on, or is read
//       after its run's last call (by a copy there, a later loop, the calls after it, the return);
//   either qualifies; a value after its run's last call does not (it prints between chunks). A
//   copy or assemble bound to a name declared outside the run declares nothing (near).
//   open_calls are the calls strictly between a near value and its death: a chunk must not end
//   after one of them, unless it is a cut call. The open forced cuts are cut_calls, where a
//   chunk ends anyway. carried_operands are the values declaring a C++ name that are far or
//   live across a cut call: the chunk declaring one hands it on to the block, where the chunks
//   and statements after it read it.
//
//     @pl.function(type=pl.FunctionType.Orchestration)   @pl.function(..., call_operands=["s0", "s1"],
//     def main(self, a, b, t):                      ==>                open_calls=["u"])
//         s0 = pl.tensor.slice(a, [16, 16], [0, 0])      def main(self, a, b, t):   (the same body)
//         u = self.k(s0, b, t)
//         v = self.k(s0, b, u)        (s0 is read by two calls: u stays open)
//         s1 = pl.tensor.slice(a, [16, 16], [0, 16])
//         w = self.k(s1, b, v)
//         ... (64 task statements or more; were u the run's 64th call, also cut_calls=["u"],
//              carried_operands=["s0"])
//
// Input invariants: ReturnedParamsStamped (a call's result is bound to the argument it returns),
//   TaskStatementsCounted (Function::task_statements says which functions are chunked),
//   AllocationBatchesStamped (a batched create is part of a run).
// Output invariants: CallOperandsStamped; nothing else changes.
// Why: g++ -O2 time grows faster than linearly with one function's size, so the generator
//   prints long runs of calls in unoptimised chunks of about 64 (emit_statements.cpp). An
//   unrolled tiled program computes a slice before each call: with the slices outside the
//   chunks nothing was chunked (1,000 sliced calls: 96 s and 1.2 GB to build). With this stamp
//   the generator may end a chunk after any call not in open_calls (every value the chunk
//   declares is dead there or handed on) and must end one after each of cut_calls, so that a
//   chain of overlapping spans (each call reading its own slice and the previous one) is still
//   chunked; a far value (read again 100 calls on, after a loop) keeps no chunk from ending.
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/visitor.h"
#include "pypto/transforms/flat_stmts.h"
#include "pypto/transforms/ptr_map.h"
#include "pypto/transforms/return_lineage.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// How a value statement's C++ text relates to other values.
enum class ValueForm {
  None,       // not a value a chunk may hold
  Declares,   // declares a C++ name of its own (a slice, a view, a scalar expression)
  Copy,       // bound to its source's text (value: the source Var)
  Assemble,   // bound to its target's text (tensor.assemble: arg 0); its source prints nothing
  Batched,    // a tensor.create of Function::batched_creates: allocated at its block's entry, it
              // prints nothing where it stands (its name is declared outside the run)
};

using BatchedCreates = std::unordered_set<const Var*>;

const Call* op_call(const AssignStmt& a, const char* callee) {
  auto* c = a.value->as<Call>();
  return c && c->is_op && c->callee == callee ? c : nullptr;
}

ValueForm value_form(const Stmt& s, const BatchedCreates& batched) {
  auto* a = s.as<AssignStmt>();
  if (!a) return ValueForm::None;
  if (batched.count(a->var.get())) return ValueForm::Batched;
  const Type& t = *a->var->type;
  auto* st = t.as<ScalarType>();
  if (!t.is<TensorType>() && !(st && st->dtype != DataType::TASK_ID)) return ValueForm::None;
  const Expr& v = *a->value;
  if (as_var(a->value)) return ValueForm::Copy;
  if (auto* c = v.as<Call>()) {
    if (!c->is_op) return ValueForm::None;
    static const std::unordered_set<std::string> kViews = {"tensor.slice", "tensor.transpose", "tensor.reshape",
                                                          "tensor.dim", "tensor.read"};
    if (c->callee == "tensor.assemble") return c->args.size() >= 2 && as_var(c->args[0]) ? ValueForm::Assemble : ValueForm::None;
    return kViews.count(c->callee) ? ValueForm::Declares : ValueForm::None;
  }
  if (v.is<Submit>() || v.is<TupleGetItem>() || v.is<MakeTuple>() || !st) return ValueForm::None;
  return ValueForm::Declares;   // a scalar expression
}

// Each statement's preorder number (SeqStmts not counted) and each Var's last reference: the
// number of the innermost statement that names it, through types' shapes; a tensor.assemble's
// source is not counted (it prints nothing).
class LastUses : public IRVisitor {
 public:
  explicit LastUses(const Function& fn) {
    const size_t vars = fn.params.size() + CountVarDefs(fn.body);   // (about one statement a Var)
    number_.reserve(vars);
    last_.reserve(vars);
    visit_function(fn);
  }
  int64_t number(const Stmt* s) const { return *number_.find(s); }
  int64_t last_use(const Var* v) const {
    const int64_t* l = last_.find(v);
    return l ? *l : -1;
  }

  void visit_stmt(const StmtPtr& s) override {
    if (s && !s->is<SeqStmts>()) number_[s.get()] = current_ = ++count_;
    IRVisitor::visit_stmt(s);
  }
  void visit_(const Var* op) override {
    int64_t& l = last_[op];
    l = std::max(l, current_);
    IRVisitor::visit_(op);
  }
  // A TaskId declared before its PTO2_SCOPE (RuntimeScopeStmt::carried_task_ids): the
  // statement binding it assigns that name and declares none.
  bool declared_before_scope(const Var* v) const { return before_scope_.count(v) > 0; }

  void visit_(const RuntimeScopeStmt* op) override {
    for (const ScopeTaskIdCarry& c : op->carried_task_ids) before_scope_.insert(c.var.get());
    IRVisitor::visit_(op);
  }
  void visit_(const AssignStmt* op) override {
    if (auto* c = op_call(*op, "tensor.assemble")) {
      for (size_t i = 0; i < c->args.size(); ++i) {
        if (i != 1) visit_expr(c->args[i]);
      }
      visit_expr(op->var);
      return;
    }
    IRVisitor::visit_(op);
  }

 private:
  PtrMap<Stmt, int64_t> number_;   // (node-based maps: most of the pass's time on 100,000 calls)
  PtrMap<Var, int64_t> last_;
  std::unordered_set<const Var*> before_scope_;
  int64_t count_ = 0, current_ = 0;
};

// Union-find over the C++ names a run of statements declares: each declaring value starts a
// group; a copy, an assemble's result and a call's result bound to a group's text join it.
class Groups {
 public:
  int make() {
    parent_.push_back(static_cast<int>(parent_.size()));
    return parent_.back();
  }
  int find(int g) const {
    while (parent_[g] != g) g = parent_[g];
    return g;
  }
  int join(int a, int b) {   // either may be -1 (no group)
    if (a < 0 || b < 0) return a < 0 ? b : a;
    a = find(a);
    b = find(b);
    if (a != b) parent_[b] = a;
    return a;
  }
  size_t size() const { return parent_.size(); }

 private:
  std::vector<int> parent_;
};

class Stamper {
 public:
  Stamper(const Program& program, const Function& fn, const BatchedCreates& batched)
      : program_(program), batched_(batched), fn_(fn) {}

  // The runs of `body` (calls and candidate values), then its nested blocks, in program order.
  void block(const StmtPtr& body, CallOperands* out) {
    if (!body) return;
    FlatStmts flat(body);
    const std::vector<StmtPtr>& stmts = flat.stmts();
    // Each statement classified once: on a 100,000-call body each look (statement, Var, type,
    // value) misses the cache, and asking again per use made the pass grow faster than linearly.
    std::vector<Kind> kinds(stmts.size());
    for (size_t i = 0; i < stmts.size(); ++i) {
      prefetch_stmts_ahead(stmts, i);
      kinds[i] = kind_of(*stmts[i]);
    }
    for (size_t i = 0; i < stmts.size();) {
      size_t end = i;
      while (end < stmts.size()) {
        if (kinds[end].call || kinds[end].form != ValueForm::None) {
          ++end;
        } else if (size_t u = kinds[end].tuple ? unit_end(stmts, end) : end; u > end) {
          end = u;
        } else {
          break;
        }
      }
      if (end > i) {
        run(stmts, kinds, i, end, out);
        i = end;
      } else {
        nested(*stmts[i++], out);
      }
    }
  }

 private:
  // What a statement of a block is to a run: a call (with no tuple result), a task with a tuple
  // result (a unit's head), a candidate value (its form), or none of them.
  struct Kind {
    bool call = false;
    bool tuple = false;
    ValueForm form = ValueForm::None;
  };
  Kind kind_of(const Stmt& s) const {
    Kind k;
    k.call = IsSelfContainedTask(s);
    k.tuple = !k.call && TupleResult(s);
    if (!k.call && !k.tuple) k.form = value_form(s, batched_);
    return k;
  }

  // A task with a tuple result (a pl.submit, a call of several results) and the statements
  // right after it that take its elements form a *unit* a chunk never splits (the generator
  // prints the elements from the task's TaskOutputTensors). The end of the unit at `i`, when
  // nothing else reads the tuple; else `i` (the task ends its run and prints between chunks).
  size_t unit_end(const std::vector<StmtPtr>& stmts, size_t i) const {
    const Var* tuple = TupleResult(*stmts[i]);
    const size_t end = tuple ? ElementsEnd(stmts, i) : i;
    return end > i + 1 && uses().last_use(tuple) <= uses().number(stmts[end - 1].get()) ? end : i;
  }

  // The group an element `x = task[i]` of a unit joins: a kernel result bound to the argument
  // it writes back joins that argument's; a runtime-allocated output (`const Tensor& x =
  // task_0_outs.get_ref(0)`) and a fresh TaskId (`PTO2TaskId x = task_0_outs.task_id()`)
  // declare a C++ name (`declares`); a TaskId declared before its PTO2_SCOPE
  // (RuntimeScopeStmt::carried_task_ids) is assigned there and declares nothing (-1).
  template <class GroupOf>
  int element_group(const Expr& task, const AssignStmt& element, Groups& groups, const GroupOf& group_of,
                    bool* declares) const {
    *declares = false;
    const size_t index = static_cast<size_t>(element.value->as<TupleGetItem>()->index);
    auto* call = task.as<Call>();
    const std::vector<ExprPtr>& args = call ? call->args : task.as<Submit>()->args;
    const Function* callee = function(call ? call->callee : task.as<Submit>()->callee);
    if (callee && index < callee->return_types.size() && index < callee->returned_params.size()) {
      const int64_t p = callee->returned_params[index];
      if (p >= 0 && static_cast<size_t>(p) < args.size()) return group_of(args[p]);
    }
    if (uses().declared_before_scope(element.var.get())) return -1;
    *declares = true;
    return groups.make();
  }

  // One run stmts[b, e): a value qualifies when its group's last reference is followed, within
  // the run and at most kCallChunkMin calls on, by a call (its *death*: a chunk may end only
  // after it), every value in between qualifies, and every call in between has a result Var
  // (to be named in open_calls).
  void run(const std::vector<StmtPtr>& stmts, const std::vector<Kind>& kinds, size_t b, size_t e, CallOperands* out) {
    const size_t n = e - b;
    auto at = [&](size_t k) -> const Stmt& { return *stmts[b + k]; };
    auto kind = [&](size_t k) -> const Kind& { return kinds[b + k]; };
    // The run's calls (a unit's task among them) and, per element of a unit, its task.
    std::vector<bool> call(n, false);
    std::vector<size_t> owner(n, n);
    for (size_t k = 0; k < n; ++k) {
      call[k] = kind(k).call || kind(k).tuple;
      if (!kind(k).tuple) continue;
      for (size_t j = ElementsEnd(stmts, b + k) - b; --j > k;) owner[j] = k;
    }
    Groups groups;
    std::vector<int> group(n, -1);   // per value: its group (-1: bound to a name declared outside)
    std::vector<bool> declares(n, false);   // per value: it declares a C++ name of its own
    std::unordered_map<const Var*, int> members;
    auto group_of = [&](const ExprPtr& e) {
      auto it = members.find(as_var(e));
      return it == members.end() ? -1 : it->second;
    };
    for (size_t k = 0; k < n; ++k) {
      auto* a = at(k).as<AssignStmt>();
      if (call[k]) {
        if (!a || kind(k).tuple) continue;
        int g = -1;
        for_returned_args(*a->value->as<Call>(), [&](const ExprPtr& arg) { g = groups.join(g, group_of(arg)); });
        if (g >= 0) members[a->var.get()] = g;
        continue;
      }
      if (owner[k] < n) {
        bool own = false;
        group[k] = element_group(*at(owner[k]).as<AssignStmt>()->value, *a, groups, group_of, &own);
        declares[k] = own;
      } else {
        const ValueForm form = kind(k).form;
        declares[k] = form == ValueForm::Declares;
        group[k] = form == ValueForm::Declares ? groups.make()
                   : form == ValueForm::Batched ? -1
                   : group_of(form == ValueForm::Copy ? a->value : a->value->as<Call>()->args[0]);
      }
      if (group[k] >= 0) members[a->var.get()] = group[k];
    }
    std::vector<int64_t> need(groups.size(), -1);   // per root: the last reference of a member
    for (auto& [v, g] : members) {
      int64_t& l = need[groups.find(g)];
      l = std::max(l, uses().last_use(v));
    }
    // A run's statements are leaves numbered in a row; calls and unnamed calls counted before k.
    const int64_t base = groups.size() ? uses().number(&at(0)) : 0;   // (no group: no reference asked)
    // Every kCallChunkMin-th call of the run is a forced cut: a chunk ends there even when values
    // are live across it (they are handed to the next chunk), so values read by calls in
    // overlapping spans (a slice each call and the next one read) cannot keep one chunk open for
    // the whole run. A span holds fewer than kCallChunkMin calls, so at most one forced cut.
    std::vector<size_t> next_call(n + 1, n), calls_before(n + 1, 0), unnamed_before(n + 1, 0), forced_before(n + 1, 0);
    for (size_t k = n; k-- > 0;) next_call[k] = call[k] ? k : next_call[k + 1];
    for (size_t k = 0; k < n; ++k) {
      calls_before[k + 1] = calls_before[k] + call[k];
      unnamed_before[k + 1] = unnamed_before[k] + (call[k] && !at(k).is<AssignStmt>());
      forced_before[k + 1] = forced_before[k] + (call[k] && calls_before[k + 1] % static_cast<size_t>(kCallChunkMin) == 0);
    }
    // A value is *near* when its death is at most kCallChunkMin calls on, past one forced cut at
    // most and past calls with result Vars only: the calls in between stay open, and it is carried
    // over the cut. Otherwise it is *far* — dying further on, or read after its run — when its
    // group is declared in the run (a far copy's source is farther still: far too, and carried)
    // and a call follows it there (a chunk holds it): its chunk hands it on wherever it ends,
    // declared in the block, so the chunks and statements after it read it, and no call is held
    // open. (A group read last after the run's last call — a copy there — is far too: no call
    // marks its death.) Any other value (after the run's last call) prints between chunks. An
    // element of a unit is in its task's chunk: a chunk may end only after the unit, so its task
    // is the first call it holds open, and it qualifies wherever it dies.
    std::vector<size_t> death(n, n), from(n, n);
    std::vector<bool> qualified(n, false), crosses(n, false), far(n, false);
    for (size_t k = 0; k < n; ++k) {
      if (call[k]) continue;
      const bool element = owner[k] < n;
      from[k] = element ? owner[k] : k + 1;   // the first call a chunk could end after, k declared
      size_t d = k;   // a value bound to an outside name declares nothing: dead where it stands
      if (group[k] >= 0) {
        const int64_t last = need[groups.find(group[k])] - base;
        d = last >= 0 && static_cast<size_t>(last) < n ? next_call[std::max<size_t>(static_cast<size_t>(last), k)] : n;
        if (element && last <= static_cast<int64_t>(k)) d = k;   // read by nothing after it
      }
      const size_t cuts = d < n ? forced_before[d] - forced_before[from[k]] : 0;
      const bool near = d < n && cuts <= 1 &&
                        calls_before[d + 1] - calls_before[from[k]] <= static_cast<size_t>(kCallChunkMin) &&
                        unnamed_before[d] == unnamed_before[from[k]];
      far[k] = !near && group[k] >= 0 && (element || next_call[k] < n);
      qualified[k] = near || far[k] || element;
      crosses[k] = far[k] || (near && cuts == 1 && d > k);
      death[k] = d;
    }
    // The calls from a near value's first to its death are open; an open forced cut is a cut
    // call, and a value declaring a C++ name across a cut, or far, is carried to the chunks after
    // its own.
    std::vector<int> open(n + 1, 0);
    for (size_t k = 0; k < n; ++k) {
      if (!qualified[k] || far[k] || death[k] <= k) continue;
      ++open[from[k]];
      --open[death[k]];
    }
    for (size_t k = 0, depth = 0; k < n; ++k) {
      depth += open[k];
      // A unit's task is named by its first element (a tuple's own name does not survive
      // printing: the parser names it after the names it unpacks into).
      const Stmt& named = kind(k).tuple ? at(k + 1) : at(k);
      const VarPtr var = named.is<AssignStmt>() ? named.as<AssignStmt>()->var : VarPtr();
      const bool batched = kind(k).form == ValueForm::Batched;
      if (qualified[k] && !batched) {   // (the generator knows batched creates)
        out->values.push_back(var);
        if (declares[k] && crosses[k]) out->carried.push_back(var);
      }
      if (depth == 0 || !call[k]) continue;
      out->open_calls.push_back(var);
      if (forced_before[k + 1] > forced_before[k]) out->cut_calls.push_back(var);
    }
  }

  void nested(const Stmt& s, CallOperands* out) {
    if (auto* f = s.as<ForStmt>()) block(f->body, out);
    if (auto* b = s.as<IfStmt>()) {
      block(b->then_body, out);
      block(b->else_body, out);
    }
    if (auto* r = s.as<RuntimeScopeStmt>()) block(r->body, out);
  }
  // Calls f(arg) for each argument a kernel call's result is bound to: the callee's returned
  // parameters, or every argument when the callee is unknown (no copy: this runs per call).
  template <class F>
  void for_returned_args(const Call& c, const F& f) const {
    const Function* callee = function(c.callee);
    if (!callee) {
      for (const ExprPtr& a : c.args) f(a);
      return;
    }
    for (int64_t p : callee->returned_params) {
      if (p >= 0 && static_cast<size_t>(p) < c.args.size()) f(c.args[p]);
    }
  }
  // The program's function `name`, or null (Program::get scans the list and copies a shared_ptr).
  const Function* function(const std::string& name) const {
    if (functions_.empty()) {
      for (const FunctionPtr& f : program_.functions) functions_.emplace(f->name, f.get());
    }
    auto it = functions_.find(name);
    return it == functions_.end() ? nullptr : it->second;
  }

  const Program& program_;
  mutable std::unordered_map<std::string, const Function*> functions_;
  const BatchedCreates& batched_;
  // Built on first use: a run of calls alone asks nothing of it, and the walk of a 100,000-call
  // body (two tables of every statement and Var, missing the cache) was most of the pass's time.
  const LastUses& uses() const {
    if (!uses_) uses_.emplace(fn_);
    return *uses_;
  }

  const Function& fn_;
  mutable std::optional<LastUses> uses_;
};

// True when some block of `s` has a value statement right before a call (a cheap statement scan
// that spares the full reference walk for programs of calls alone).
bool has_value_before_call(const StmtPtr& s, const BatchedCreates& batched) {
  return AnyNestedStmt(s, [&](const Stmt* prev, const Stmt& st) {
    return (prev && IsSelfContainedTask(st) && value_form(*prev, batched) != ValueForm::None) || TupleResult(st);
  });
}

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    CallOperands stamp = CallOperandsOf(*program, *fn);
    if (stamp.values == fn->call_operands && stamp.open_calls == fn->open_calls && stamp.cut_calls == fn->cut_calls &&
        stamp.carried == fn->carried_operands)
      continue;
    out = out->with_function(fn->with_call_operands(std::move(stamp.values))
                                 ->with_open_calls(std::move(stamp.open_calls))
                                 ->with_cut_calls(std::move(stamp.cut_calls))
                                 ->with_carried_operands(std::move(stamp.carried)));
  }
  return out;
}

}  // namespace

namespace {

bool IsTask(const Expr* e) {
  auto* c = e ? e->as<Call>() : nullptr;
  return (c && !c->is_op) || (e && e->is<Submit>());
}

bool IsElementOf(const Stmt& s, const Var* tuple) {
  auto* a = s.as<AssignStmt>();
  auto* g = a ? a->value->as<TupleGetItem>() : nullptr;
  return g && as_var(g->tuple) == tuple;
}

}  // namespace

bool IsSelfContainedTask(const Stmt& s) {
  if (auto* ev = s.as<EvalStmt>()) return IsTask(ev->expr.get());
  auto* a = s.as<AssignStmt>();
  return a && !a->var->type->is<TupleType>() && IsTask(a->value.get());
}

const Var* TupleResult(const Stmt& s) {
  auto* a = s.as<AssignStmt>();
  return a && a->var->type->is<TupleType>() && IsTask(a->value.get()) ? a->var.get() : nullptr;
}

size_t ElementsEnd(const std::vector<StmtPtr>& stmts, size_t i) {
  const Var* tuple = TupleResult(*stmts[i]);
  size_t j = i + 1;
  while (tuple && j < stmts.size() && IsElementOf(*stmts[j], tuple)) ++j;
  return j;
}

CallOperands CallOperandsOf(const Program& program, const Function& fn) {
  CallOperands out;
  if (fn.type != FunctionType::Orchestration || fn.level == Level::HOST || !fn.body) return out;
  // The generator chunks only in functions of kCallChunkMin task statements or more (read from
  // the stamp: recounting was half this pass's time on a 100,000-call body).
  if (fn.task_statements < kCallChunkMin) return out;
  BatchedCreates batched;
  for (const VarPtr& v : fn.batched_creates) batched.insert(v.get());
  if (!has_value_before_call(fn.body, batched)) return out;
  Stamper(program, fn, batched).block(fn.body, &out);
  return out;
}

Pass StampCallOperands() {
  return Pass{"StampCallOperands",
              {IRProperty::ReturnedParamsStamped, IRProperty::TaskStatementsCounted, IRProperty::AllocationBatchesStamped},
              {IRProperty::CallOperandsStamped}, Run,
              /*invalidated=*/{}};
}

}  // namespace pypto::transforms
