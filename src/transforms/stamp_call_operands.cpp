// StampCallOperands
//
// What: stamps Function::call_operands on every chip-level Orchestration function: the values
//   computed between kernel calls that the L2 generator may print inside a chunk of calls (a
//   slice or view, a reshape, a tensor.dim / tensor.read, a scalar expression, a Var copy, an
//   in-place tensor.assemble), in program order. A value qualifies when
//     - its block's statements from it to the next call are such values, each qualifying;
//     - every reference to it, and to every Var bound to its C++ text (a copy, the result of a
//       call that writes it back: Function::returned_params), lies at or before that call
//       (the source of a tensor.assemble is no reference: it prints nothing).
//   A copy or assemble of a value declared before the segment qualifies with the values after
//   it. Only functions of at least kCallChunkMin task statements are stamped (the generator
//   chunks no other); a value that does not qualify (read again later) is printed between
//   chunks.
//
//     @pl.function(type=pl.FunctionType.Orchestration)   @pl.function(..., call_operands=["s0", "s1", ...])
//     def main(self, a, b, t):                      ==>  def main(self, a, b, t):
//         s0 = pl.tensor.slice(a, [16, 16], [0, 0])          (the same body)
//         t = self.k(s0, b, t)
//         s1 = pl.tensor.slice(a, [16, 16], [0, 16])
//         t = self.k(s1, b, t)
//         ... (64 calls or more)
//
// Input invariants: ReturnedParamsStamped (a call's result is bound to the argument it returns).
// Output invariants: CallOperandsStamped; nothing else changes.
// Why: g++ -O2 time grows faster than linearly with one function's size, so the generator
//   prints long runs of calls in unoptimised chunks of 64 (emit_statements.cpp). An unrolled
//   tiled program computes a slice before each call: with the slices outside the chunks nothing
//   was chunked (1,000 sliced calls: 96 s and 1.2 GB to build). With this stamp the generator
//   may cut a run right after any call: every value a chunk declares is dead there.
#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/visitor.h"
#include "pypto/transforms/flat_stmts.h"
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
};

const Call* op_call(const AssignStmt& a, const char* callee) {
  auto* c = a.value->as<Call>();
  return c && c->is_op && c->callee == callee ? c : nullptr;
}

ValueForm value_form(const Stmt& s) {
  auto* a = s.as<AssignStmt>();
  if (!a) return ValueForm::None;
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
  explicit LastUses(const Function& fn) { visit_function(fn); }
  int64_t number(const Stmt* s) const { return number_.at(s); }
  int64_t last_use(const Var* v) const {
    auto it = last_.find(v);
    return it == last_.end() ? -1 : it->second;
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
  std::unordered_map<const Stmt*, int64_t> number_;
  std::unordered_map<const Var*, int64_t> last_;
  int64_t count_ = 0, current_ = 0;
};

// The values between two calls of one block (a segment) and the C++ names they declare: each
// declaring value starts a group; a copy, an assemble or a call result bound to a group's text
// joins it. A group is dead at the call when every member's last reference is at or before it.
class Segment {
 public:
  void add(const AssignStmt& a, ValueForm form) {
    int g = -1;
    if (form == ValueForm::Declares) {
      g = static_cast<int>(need_.size());
      need_.push_back(-1);
      parent_.push_back(g);
    } else {
      const ExprPtr& src = form == ValueForm::Copy ? a.value : a.value->as<Call>()->args[0];
      g = group_of(as_var(src));
    }
    values_.push_back({a.var, g});
    if (g >= 0) group_[a.var.get()] = g;
  }
  // The call's result `r`, bound to the text of `args` (the arguments it returns), joins (and
  // merges) their groups.
  void bind_result(const Var* r, const std::vector<const Var*>& args) {
    int g = -1;
    for (const Var* v : args) {
      int h = group_of(v);
      if (h < 0) continue;
      if (g < 0) g = h;
      else parent_[h] = g;
    }
    if (g >= 0 && r) group_[r] = g;
  }
  // The values that may sit in a chunk with the call numbered `call`: those after the last one
  // whose group is still live there.
  void qualify(const LastUses& uses, int64_t call, std::vector<VarPtr>* out) {
    for (auto& [v, g] : group_) {
      int r = root(g);
      need_[r] = std::max(need_[r], uses.last_use(v));
    }
    size_t first = 0;
    for (size_t i = 0; i < values_.size(); ++i) {
      if (values_[i].group >= 0 && need_[root(values_[i].group)] > call) first = i + 1;
    }
    for (size_t i = first; i < values_.size(); ++i) out->push_back(values_[i].var);   // (program order)
    clear();
  }
  void clear() {
    values_.clear();
    group_.clear();
    need_.clear();
    parent_.clear();
  }

 private:
  struct Value {
    VarPtr var;
    int group;   // -1: bound to a name declared outside the segment
  };
  int group_of(const Var* v) const {
    auto it = v ? group_.find(v) : group_.end();
    return it == group_.end() ? -1 : root(it->second);
  }
  int root(int g) const {
    while (parent_[g] != g) g = parent_[g];
    return g;
  }
  std::vector<Value> values_;
  std::unordered_map<const Var*, int> group_;
  std::vector<int64_t> need_;   // per group: the last reference of any member
  std::vector<int> parent_;
};

class Stamper {
 public:
  Stamper(const Program& program, const Function& fn) : program_(program), uses_(fn) {}

  void block(const StmtPtr& body, std::vector<VarPtr>* out) {
    if (!body) return;
    FlatStmts flat(body);
    const std::vector<StmtPtr>& stmts = flat.stmts();
    Segment seg;
    for (const StmtPtr& s : stmts) {
      if (IsSelfContainedTask(*s)) {
        if (auto* a = s->as<AssignStmt>()) seg.bind_result(a->var.get(), returned_args(*a->value->as<Call>()));
        seg.qualify(uses_, uses_.number(s.get()), out);
      } else if (ValueForm form = value_form(*s); form != ValueForm::None) {
        seg.add(*s->as<AssignStmt>(), form);
      } else {
        seg.clear();   // a run ends: the values before it have no call of their own
        nested(*s, out);
      }
    }
  }

 private:
  void nested(const Stmt& s, std::vector<VarPtr>* out) {
    if (auto* f = s.as<ForStmt>()) block(f->body, out);
    if (auto* b = s.as<IfStmt>()) {
      block(b->then_body, out);
      block(b->else_body, out);
    }
    if (auto* r = s.as<RuntimeScopeStmt>()) block(r->body, out);
  }
  // The arguments a kernel call's result is bound to: the callee's returned parameter, or every
  // argument when the callee is unknown.
  std::vector<const Var*> returned_args(const Call& c) const {
    std::vector<const Var*> out;
    FunctionPtr callee = program_.get(c.callee);
    if (!callee) {
      for (auto& a : c.args) out.push_back(as_var(a));
      return out;
    }
    for (int64_t p : callee->returned_params) {
      if (p >= 0 && static_cast<size_t>(p) < c.args.size()) out.push_back(as_var(c.args[p]));
    }
    return out;
  }

  const Program& program_;
  LastUses uses_;
};

// True when some block of `s` has a value statement right before a call (a cheap statement scan
// that spares the full reference walk for programs of calls alone).
bool has_value_before_call(const StmtPtr& s) {
  if (!s) return false;
  const Stmt* prev = nullptr;
  for (const StmtPtr& st : FlatStmts(s)) {
    if (prev && IsSelfContainedTask(*st) && value_form(*prev) != ValueForm::None) return true;
    if (auto* f = st->as<ForStmt>(); f && has_value_before_call(f->body)) return true;
    if (auto* b = st->as<IfStmt>(); b && (has_value_before_call(b->then_body) || has_value_before_call(b->else_body))) return true;
    if (auto* r = st->as<RuntimeScopeStmt>(); r && has_value_before_call(r->body)) return true;
    prev = st.get();
  }
  return false;
}

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    std::vector<VarPtr> vars = CallOperandsOf(*program, *fn);
    if (vars == fn->call_operands) continue;
    out = out->with_function(fn->with_call_operands(std::move(vars)));
  }
  return out;
}

}  // namespace

bool IsSelfContainedTask(const Stmt& s) {
  const Expr* e = nullptr;
  if (auto* ev = s.as<EvalStmt>()) e = ev->expr.get();
  if (auto* a = s.as<AssignStmt>()) {
    if (a->var->type->is<TupleType>()) return false;
    e = a->value.get();
  }
  auto* c = e ? e->as<Call>() : nullptr;
  return c && !c->is_op;
}

std::vector<VarPtr> CallOperandsOf(const Program& program, const Function& fn) {
  std::vector<VarPtr> out;
  if (fn.type != FunctionType::Orchestration || fn.level == Level::HOST || !fn.body) return out;
  // The generator chunks only in functions of kCallChunkMin task statements or more.
  if (TaskStatementsOf(fn) < kCallChunkMin || !has_value_before_call(fn.body)) return out;
  Stamper(program, fn).block(fn.body, &out);
  return out;
}

Pass StampCallOperands() {
  return Pass{"StampCallOperands", {IRProperty::ReturnedParamsStamped}, {IRProperty::CallOperandsStamped}, Run,
              /*invalidated=*/{}};
}

}  // namespace pypto::transforms
