// StampScopeExits
//
// What: stamps RuntimeScopeStmt::exit_values on every runtime scope of an Orchestration
//   function: the tensor / number (not TaskId) values defined at the top level of the scope body
//   that code outside the block reads — an assignment's value (a tensor only as a view: not a
//   runtime allocation, reclaimed with the scope, nor a tensor naming another value's Tensor,
//   AliasRoots, which leaves with that value), a loop carry the loop rebinds (ForStmt::carries rebind), or an if
//   result — and the exit values of the scopes nested at the top level of the body that code
//   outside this block reads too. The generator declares an exit slot for each before the block
//   (`std::optional<Tensor> src_exit;` / `int64_t steps_exit = 0;`), assigns it after the
//   assignment / loop / if and names it after the block (scope_carries.h). A `pl.Array` (numbers /
//   bools) version — assigned, a loop's or an if's result — leaves too when its C array is the
//   block's own (made in the block, or a phi array of an if there; StampArrayBackings): its exit
//   slot is a C array, copied slot by slot.
//
//     with pl.manual_scope():                         with pl.manual_scope(exit_values=["src_2"]):
//         for i, (src_1,) in pl.range(n, ...):  ==>       for i, (src_1,) in pl.range(n, ...):
//             src_2 = pl.yield_(dst)                          src_2 = pl.yield_(dst)
//     out = self.k(src_2, out)                        out = self.k(src_2, out)
//
//   A value from a nested block leaves both (issue 13):
//     with pl.scope(exit_values=["src_3"]):
//         with pl.manual_scope(exit_values=["src_3"]):
//             for ...: src_3 = pl.yield_(...)
//     out = self.k(src_3, out)
//   A read is any use but a ReturnStmt's (orchestration code prints no return). A tensor result
//   also leaves when a value defined in the block that names the same C++ Tensor (AliasRoot: an
//   in-place write's result, a kernel's write-back, a copy, a loop carrying it unchanged) is read
//   after the block; the generator declares the slot after the block under the name those
//   values print:
//     with pl.scope(exit_values=["out_1"]):
//         if n > 1: out_1 = pl.yield_(pl.assemble(out, t0, [0, 0]))  else: out_1 = pl.yield_(out)
//         out_2 = pl.assemble(out_1, t1, [2, 0])
//     out_3 = pl.assemble(out_2, t2, [4, 0])
// Input invariants: IterArgCarryClassified (which carries rebind), RuntimeScopesMaterialized
//   (the blocks), ArrayBackingsStamped (where an array result lives).
// Output invariants: ScopeExitsStamped; nothing but the scope stamps changes.
// Why: the generator and VerifyOrchestrationProgram read which values leave a block from this
//   typed stamp instead of counting reads while they print.
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/flat_stmts.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/return_lineage.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// Counts each Var read (definitions count too, consistently inside and outside a scope).
struct ReadCounter : IRVisitor {
  std::unordered_map<const Var*, int>& reads;
  explicit ReadCounter(std::unordered_map<const Var*, int>& r) : reads(r) {}
  void visit_(const Var* op) override { ++reads[op]; }
  void visit_(const IterArg* op) override { ++reads[op]; }
  void visit_(const ReturnStmt*) override {}
};

bool exit_slot_type(const TypePtr& t) {
  if (t->is<TensorType>()) return true;
  auto* s = t->as<ScalarType>();
  return s && s->dtype != DataType::TASK_ID;
}

// A pl.Array of numbers or bools (TaskIds keep their lexical-scope lifetime).
bool value_array(const TypePtr& t) {
  auto* a = t->as<ArrayType>();
  return a && a->dtype != DataType::TASK_ID;
}

// Every Var a statement list defines (assignments, loop / if results), nested ones included.
struct Defs : IRVisitor {
  std::unordered_set<const Var*> vars;
  void visit_(const AssignStmt* op) override {
    vars.insert(op->var.get());
    IRVisitor::visit_(op);
  }
  void visit_(const ForStmt* op) override {
    for (auto& v : op->return_vars) vars.insert(v.get());
    IRVisitor::visit_(op);
  }
  void visit_(const IfStmt* op) override {
    for (auto& v : op->return_vars) vars.insert(v.get());
    IRVisitor::visit_(op);
  }
};

// The Var whose C++ Tensor a tensor value names in the L2 generator (and
// VerifyOrchestrationProgram's model): through copies, tensor.assemble / tensor.write results
// (their target), a kernel's result (the argument it writes back,
// ExplicitReturnedParamIndices, as Function::returned_params) and a loop's result carrying its
// init unchanged (LoopCarry alias); any other value is its own.
class AliasRoots {
 public:
  AliasRoots(const Program& program, const Function& fn) : program_(program), defs_(CollectVarDefs(fn.body)) {}

  const Var* root(const Var* v) const {
    for (int depth = 0; depth < 4096; ++depth) {
      const Var* next = step(v);
      if (!next || next == v) return v;
      v = next;
    }
    return v;
  }

 private:
  const Var* step(const Var* v) const {
    const VarDef* def = defs_.find(v);
    if (!def) return nullptr;
    if (def->kind == VarDef::ForReturn) {
      const ForStmt* f = def->loop;
      const bool alias = def->index < f->carries.size() && !f->carries[def->index].rebind;
      return alias ? as_var(f->iter_args[def->index]->init) : nullptr;
    }
    if (def->kind != VarDef::Assign) return nullptr;
    return result_of(def->assign->value, 0);
  }

  // The Var result `pos` of `value` names.
  const Var* result_of(const ExprPtr& value, size_t pos) const {
    if (const Var* src = as_var(value)) return pos == 0 ? src : nullptr;
    if (auto* c = value->as<Call>()) {
      if (c->is_op) {
        const bool in_place = c->callee == "tensor.assemble" || c->callee == "tensor.write";
        return in_place && pos == 0 && !c->args.empty() ? as_var(c->args[0]) : nullptr;
      }
      return written_back(c->callee, c->args, pos);
    }
    if (auto* sub = value->as<Submit>()) return written_back(sub->callee, sub->args, pos);
    if (auto* g = value->as<TupleGetItem>()) {
      const Var* tv = as_var(g->tuple);
      const VarDef* def = tv ? defs_.find(tv) : nullptr;
      if (!def || def->kind != VarDef::Assign || pos != 0) return nullptr;
      return result_of(def->assign->value, static_cast<size_t>(g->index));
    }
    return nullptr;
  }

  // What StampReturnedParams stamps (its input need not carry the stamp yet).
  const Var* written_back(const std::string& callee, const std::vector<ExprPtr>& args, size_t pos) const {
    auto it = returned_.find(callee);
    if (it == returned_.end()) {
      FunctionPtr f = program_.get(callee);
      it = returned_.emplace(callee, f ? ExplicitReturnedParamIndices(*f) : std::vector<int>{}).first;
    }
    if (pos >= it->second.size()) return nullptr;
    const int p = it->second[pos];
    return p >= 0 && static_cast<size_t>(p) < args.size() ? as_var(args[p]) : nullptr;
  }

  const Program& program_;
  const VarDefs defs_;
  mutable std::unordered_map<std::string, std::vector<int>> returned_;   // callee -> its written-back params
};

// The exit values of each scope of one function, stamped bottom-up.
class Stamper : public IRMutator {
 public:
  Stamper(const Program& program, const Function& fn) : program_(program), fn_(fn) {
    statements_only_ = true;   // stamps scopes only
  }

  StmtPtr mutate_(const RuntimeScopeStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);
    auto* r = s->as<RuntimeScopeStmt>();
    std::vector<VarPtr> want = ExitsOf(*r);
    if (same(want, r->exit_values)) return s;
    ++restamped_;
    return r->with_exit_values(std::move(want));
  }

  int restamped() const { return restamped_; }

 private:
  static bool same(const std::vector<VarPtr>& a, const std::vector<VarPtr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  }

  std::vector<VarPtr> ExitsOf(const RuntimeScopeStmt& scope) {
    std::vector<VarPtr> candidates;
    std::unordered_set<const Var*> assigned;   // candidates an assignment defines
    for (const StmtPtr& s : FlatStmts(scope.body)) {   // in place: no copy of a long body
      if (auto* a = s->as<AssignStmt>()) {
        // A tensor is a candidate as an op's result (a view; an in-place write's result names its
        // target, below). A runtime allocation — a tensor.create, a task's output not written
        // back — does not leave its scope: VerifyOrchestrationProgram refuses its use after the
        // block (a MANUAL scope's creates are declared before its block anyway).
        auto* c = a->value->as<Call>();
        const bool op_result = c && c->is_op && c->callee != "tensor.create";
        if (block_array(scope, a->var)) candidates.push_back(a->var);
        if (!exit_slot_type(a->var->type) || (a->var->type->is<TensorType>() && !op_result)) continue;
        candidates.push_back(a->var);
        assigned.insert(a->var.get());
      } else if (auto* f = s->as<ForStmt>()) {
        for (size_t i = 0; i < f->return_vars.size() && i < f->carries.size(); ++i) {
          const bool value = f->carries[i].rebind && exit_slot_type(f->iter_args[i]->type);
          if (value || block_array(scope, f->return_vars[i])) candidates.push_back(f->return_vars[i]);
        }
      } else if (auto* br = s->as<IfStmt>()) {
        for (const VarPtr& rv : br->return_vars) {
          if (exit_slot_type(rv->type)) candidates.push_back(rv);
          // A pl.Array result lives in a C array: a phi array declared before the if, or the
          // pre-if array (StampArrayBackings). It leaves only when that array is the block's own.
          if (block_array(scope, rv)) candidates.push_back(rv);
        }
      } else if (auto* inner = s->as<RuntimeScopeStmt>()) {
        // A nested block's exit values (stamped first: the walk is bottom-up) are declared after
        // that block, inside this one: they leave this block the same way.
        candidates.insert(candidates.end(), inner->exit_values.begin(), inner->exit_values.end());
      }
    }
    if (candidates.empty()) return candidates;
    if (!counted_) {
      ReadCounter(reads_).visit_stmt(fn_.body);
      counted_ = true;
    }
    std::unordered_map<const Var*, int> inside;
    ReadCounter(inside).visit_stmt(scope.body);
    auto read_after = [&](const Var* v) {
      auto all = reads_.find(v);
      return all != reads_.end() && all->second > inside[v];
    };
    // Tensor candidates that a value of the block naming the same Tensor is read after it.
    std::unordered_set<const Var*> aliased;
    for (const Var* v : defined(scope)) {
      if (!v->type->is<TensorType>() || !read_after(v)) continue;
      if (!roots_) roots_.emplace(program_, fn_);   // built once, for the first block that needs it
      if (const Var* r = roots_->root(v); r != v) aliased.insert(r);
    }
    std::vector<VarPtr> out;
    for (const VarPtr& c : candidates) {
      const bool tensor = c->type->is<TensorType>();
      if (!read_after(c.get()) && !(tensor && aliased.count(c.get()))) continue;
      // An assigned tensor that names another value's Tensor (a write-back, an assemble into
      // it, a copy) leaves through that value's slot, or needs none when that value is
      // declared outside the block.
      if (tensor && assigned.count(c.get())) {
        if (!roots_) roots_.emplace(program_, fn_);
        if (roots_->root(c.get()) != c.get()) continue;
      }
      out.push_back(c);
    }
    return out;
  }

  const std::unordered_set<const Var*>& defined(const RuntimeScopeStmt& scope) {
    auto it = defs_.find(&scope);
    if (it == defs_.end()) {
      Defs d;
      d.visit_stmt(scope.body);
      it = defs_.emplace(&scope, std::move(d.vars)).first;
    }
    return it->second;
  }

  bool defined_in(const RuntimeScopeStmt& scope, const Var* v) { return defined(scope).count(v) > 0; }

  // A pl.Array (numbers / bools) version whose C array is the block's own (made in it, or a phi
  // array of an if there; StampArrayBackings): it leaves through a C array exit slot. Only the
  // latest version can be read (an older one is refused), so the slot holds the final contents.
  bool block_array(const RuntimeScopeStmt& scope, const VarPtr& v) {
    return value_array(v->type) && defined_in(scope, fn_.array_backing_of(v.get()));
  }

  const Program& program_;
  const Function& fn_;
  std::optional<AliasRoots> roots_;
  std::unordered_map<const RuntimeScopeStmt*, std::unordered_set<const Var*>> defs_;
  std::unordered_map<const Var*, int> reads_;   // every read in fn_ (Vars keep their identity)
  bool counted_ = false;
  int restamped_ = 0;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (fn->type != FunctionType::Orchestration) continue;
    Stamper st(*program, *fn);
    FunctionPtr nf = st.mutate_function(fn);
    if (nf != fn) out = out->with_function(nf);
  }
  return out;
}

}  // namespace

std::vector<std::string> CheckScopeExitsStamped(const Program& program, const Function& fn) {
  Stamper st(program, fn);
  st.mutate_function(FunctionPtr(std::shared_ptr<const Function>{}, &fn));
  if (st.restamped() == 0) return {};
  return {"function '" + fn.name + "': " + std::to_string(st.restamped()) +
          " runtime scope(s) lack the exit_values StampScopeExits computes"};
}

Pass StampScopeExits() {
  return Pass{"StampScopeExits",
              {IRProperty::IterArgCarryClassified, IRProperty::RuntimeScopesMaterialized,
               IRProperty::ArrayBackingsStamped},
              {IRProperty::ScopeExitsStamped},
              Run,
              /*invalidated=*/{}};
}

}  // namespace pypto::transforms
