// VerifyOrchestrationProgram (verify_program.h): what the L2 orchestration code generator
// (src/codegen/orchestration) can express, checked before it prints. The walk follows the
// generator's statement order, so the first violation reported is the one it would meet
// first. Messages, spans and help lines are the user-facing contract (test_diagnostics*.py).
//
//   entry       the function exists, is Orchestration; no TaskId parameter
//   statements  expression statements are tasks; assignments are tasks, supported ops, Var
//               copies, tuple elements or scalar expressions (no tuple values)
//   tasks       callee is a kernel or Group; scalar arguments are numbers (not TaskIds);
//               runtime-allocated outputs hold numbers; predicate= is `t[i, j] <cmp> literal`
//   Groups      one AIC and/or one AIV kernel
//   carries     loop carries and if results are tensors or scalars
//   expressions scalar expressions only; dynamic dims declared by a tensor parameter
#include <set>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "pypto/codegen/orchestration.h"
#include "pypto/ir/attrs.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/verifier.h"
#include "pypto/transforms/verify_program.h"
#include "verify_scalar_exprs.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// The ops an orchestration body may assign from (src/codegen/orchestration op handlers).
const std::set<std::string>& SupportedOrchestrationOps() {
  static const std::set<std::string> ops = {
      "tensor.create",      "tensor.read",  "tensor.slice",      "tensor.transpose",
      "tensor.dim",         "tensor.assemble", "system.task_dummy", "system.task_invalid",
      "array.create",       "array.get_element", "array.update_element"};
  return ops;
}

const char* kPredicateHelp = "write predicate=(t[i, j] > 0): one tensor element compared with an integer literal";

// The tensor.read of a predicate operand (through an optional Cast), or null.
const Call* predicate_read(const ExprPtr& e) {
  const Expr* x = e.get();
  if (auto* c = x->as<Cast>()) x = c->value.get();
  auto* call = x->as<Call>();
  return (call && call->is_op && call->callee == "tensor.read") ? call : nullptr;
}

// Literal integer (ConstInt, or -ConstInt, through casts).
bool int_literal(const ExprPtr& e) {
  if (e->is<ConstInt>()) return true;
  if (auto* u = e->as<UnaryExpr>(); u && u->op == UnaryOp::Neg && u->a->is<ConstInt>()) return true;
  if (auto* k = e->as<Cast>()) return int_literal(k->value);
  return false;
}

bool is_comparison(BinaryOp op) {
  return op == BinaryOp::Eq || op == BinaryOp::Ne || op == BinaryOp::Gt || op == BinaryOp::Lt || op == BinaryOp::Ge ||
         op == BinaryOp::Le;
}

class OrchestrationVerifier {
 public:
  OrchestrationVerifier(const Program& program, const Function& fn)
      : program_(program), fn_(fn), exprs_(kOrchestrationWording) {
    exprs_.on_var = [this](const Var* v, const Span&) { check_dim_use(v); };
  }

  void Run() {
    for (auto& p : fn_.params) {
      if (auto* tt = p->type->as<TensorType>()) {
        for (auto& d : tt->shape) {
          if (const Var* sym = as_var(d)) declared_dims_.insert(sym);
        }
      }
    }
    for (auto& p : fn_.params) {
      auto* st = p->type->as<ScalarType>();
      PYPTO_USER_CHECK(!st || st->dtype != DataType::TASK_ID, p->span,
                       "orchestration parameter '" << p->name << "' cannot be a TaskId", "");
    }
    stmt(fn_.body);
  }

 private:
  // A dynamic dimension the body names must come from a tensor parameter's shape.
  void check_dim_use(const Var* v) const {
    if (declared_dims_.count(v)) return;
    bool is_dyn = false;
    for (auto& dd : program_.dynamic_dims) is_dyn = is_dyn || dd.get() == v;
    PYPTO_USER_CHECK(!is_dyn, v->span,
                     "dynamic dimension '" << v->name << "' is used in orchestration function '" << fn_.name
                                           << "' but none of its tensor parameters declares it",
                     "declare a parameter whose shape uses '" + v->name + "', e.g. pl.Tensor[[" + v->name +
                         ", 16], pl.FP32]");
  }

  void no_task_id_tensor(DataType d, const Span& span) const {
    if (d != DataType::TASK_ID) return;
    throw UserError(std::string("a tensor of ") + to_string(d) + " elements cannot be created in orchestration code", span,
                    "TaskIds live in pl.array.create(N, pl.TASK_ID), not in tensors");
  }

  static bool carry_type_ok(const TypePtr& t) { return t->is<TensorType>() || t->is<ScalarType>(); }

  void stmt(const StmtPtr& s) {
    switch (s->kind) {
      case NodeKind::SeqStmts:
        for (auto& c : s->as<SeqStmts>()->stmts) stmt(c);
        return;
      case NodeKind::AssignStmt: assign(*s->as<AssignStmt>()); return;
      case NodeKind::EvalStmt: {
        const ExprPtr& e = s->as<EvalStmt>()->expr;
        auto* c = e->as<Call>();
        PYPTO_USER_CHECK(e->is<Submit>() || (c && !c->is_op), s->span,
                         "this expression statement has no effect in an orchestration function",
                         "assign the result of an op to a variable");
        task(*e);
        return;
      }
      case NodeKind::ForStmt: loop(*s->as<ForStmt>()); return;
      case NodeKind::IfStmt: branch(*s->as<IfStmt>()); return;
      case NodeKind::YieldStmt: yield(*s->as<YieldStmt>()); return;
      case NodeKind::RuntimeScopeStmt: stmt(s->as<RuntimeScopeStmt>()->body); return;
      case NodeKind::ReturnStmt: return;
      case NodeKind::ScopeStmt:   // outlined by OutlineIncoreScopes / OutlineClusterScopes
      case NodeKind::Var:
      case NodeKind::IterArg:
      case NodeKind::ConstInt:
      case NodeKind::ConstFloat:
      case NodeKind::ConstBool:
      case NodeKind::BinaryExpr:
      case NodeKind::UnaryExpr:
      case NodeKind::Cast:
      case NodeKind::Call:
      case NodeKind::Submit:
      case NodeKind::MakeTuple:
      case NodeKind::TupleGetItem: PYPTO_CHECK(false, "VerifyOrchestrationProgram: unexpected statement " << to_string(s->kind));
    }
  }

  void assign(const AssignStmt& a) {
    const ExprPtr& value = a.value;
    if (auto* c = value->as<Call>()) {
      if (!c->is_op) return task(*c);
      PYPTO_USER_CHECK(SupportedOrchestrationOps().count(c->callee), value->span,
                       "operation '" << c->callee << "' is not supported in an orchestration function",
                       "tile operations belong in kernels (FunctionType.InCore / AIC / AIV); orchestration supports "
                       "tensor.create/read/slice/transpose/dim/assemble");
      return op(*c, *a.var);
    }
    if (value->is<Submit>()) return task(*value);
    if (value->is<TupleGetItem>() || as_var(value)) return;
    if (value->is<MakeTuple>()) {
      throw UserError("tuple values are not supported in orchestration functions", value->span,
                      "unpack the results of a multi-output call directly: a, b = self.kernel(...)");
    }
    PYPTO_USER_CHECK(a.var->type->is<ScalarType>(), value->span, "unsupported assignment in an orchestration function",
                     "");
    exprs_.check(value);
  }

  void tensor_arg(const Call& c, size_t i) const {
    const Var* v = i < c.args.size() ? as_var(c.args[i]) : nullptr;
    PYPTO_USER_CHECK(v, c.span, c.callee << ": argument " << i << " must be a tensor variable",
                     "assign it to a variable first");
  }

  void list_exprs(const Call& c, size_t i) const {
    if (i >= c.args.size()) return;
    if (auto* t = c.args[i]->as<MakeTuple>()) {
      for (auto& x : t->elements) exprs_.check(x);
    }
  }

  void op(const Call& c, const Var& result) {
    const std::string& name = c.callee;
    if (name == "tensor.create") {
      list_exprs(c, 0);
      if (auto* tt = result.type->as<TensorType>()) no_task_id_tensor(tt->dtype, c.span);
    } else if (name == "tensor.read") {
      tensor_arg(c, 0);
      list_exprs(c, 1);
    } else if (name == "tensor.slice") {
      tensor_arg(c, 0);
      list_exprs(c, 1);
      list_exprs(c, 2);
    } else if (name == "tensor.transpose" || name == "tensor.dim") {
      tensor_arg(c, 0);
    } else if (name == "tensor.assemble") {
      tensor_arg(c, 0);
      tensor_arg(c, 1);
    } else if (name == "array.get_element" || name == "array.update_element") {
      PYPTO_USER_CHECK(!c.args.empty() && as_var(c.args[0]), c.span, name << " needs an array variable", "");
      if (name == "array.update_element" && c.args.size() > 2 && !is_task_id(c.args[2]->type)) exprs_.check(c.args[2]);
      if (c.args.size() > 1) exprs_.check(c.args[1]);
    }
  }

  void task(const Expr& e) {
    const Call* call = e.as<Call>();
    const Submit* sub = e.as<Submit>();
    const std::string& callee = call ? call->callee : sub->callee;
    const auto& args = call ? call->args : sub->args;
    FunctionPtr f = program_.get(callee);
    PYPTO_CHECK(f, "call to unknown function '" << callee << "'");
    PYPTO_USER_CHECK(f->is_kernel() || f->type == FunctionType::Group, e.span,
                     "orchestration function '" << fn_.name << "' calls '" << callee << "', a " << to_string(f->type)
                                                << " function, which cannot be submitted as a task",
                     "call kernels (FunctionType.InCore / AIC / AIV) or Group functions from an Orchestration function");
    for (size_t i = 0; i < args.size() && i < f->params.size(); ++i) {
      if (args[i]->type->is<TensorType>()) continue;
      auto* pt = f->params[i]->type->as<ScalarType>();
      PYPTO_USER_CHECK(pt && pt->dtype != DataType::TASK_ID, args[i]->span,
                       "argument " << i << " of '" << callee << "' must be a tensor or a number",
                       "pass TaskIds through deps=, not as kernel arguments");
      exprs_.check(args[i]);
    }
    for (size_t i = args.size(); i < f->params.size(); ++i) {   // runtime-allocated trailing outputs
      if (auto* tt = f->params[i]->type->as<TensorType>()) {
        for (auto& d : tt->shape) exprs_.check(d);
        no_task_id_tensor(tt->dtype, e.span);
      }
    }
    if (sub && sub->core_num) exprs_.check(sub->core_num);
    if (sub && sub->predicate) predicate(*sub->predicate);
    if (f->type == FunctionType::Group) group(*f);
  }

  void predicate(const Expr& p) const {
    auto* cmp = p.as<BinaryExpr>();
    PYPTO_USER_CHECK(cmp, p.span, "predicate= must be a comparison", kPredicateHelp);
    const Call* read = predicate_read(cmp->a);
    if (read) {
      PYPTO_USER_CHECK(int_literal(cmp->b), p.span, "predicate= must compare with an integer literal", kPredicateHelp);
    } else {
      read = predicate_read(cmp->b);
      PYPTO_USER_CHECK(read && int_literal(cmp->a), p.span,
                       "predicate= must compare one tensor element with an integer literal", kPredicateHelp);
    }
    const Var* t = read->args.empty() ? nullptr : as_var(read->args[0]);
    PYPTO_USER_CHECK(t && t->type->is<TensorType>(), read->span, "the predicate operand must be a named tensor",
                     kPredicateHelp);
    list_exprs(*read, 1);
    PYPTO_USER_CHECK(is_comparison(cmp->op), p.span, "predicate= must compare with one of == != > < >= <=",
                     kPredicateHelp);
  }

  // A Group body calls one AIC kernel and/or one AIV kernel (MixedKernels).
  void group(const Function& g) const {
    std::vector<std::string> order;
    std::function<void(const StmtPtr&)> walk = [&](const StmtPtr& s) {
      for (auto& st : flatten_stmts(s)) {
        const Expr* e = nullptr;
        if (auto* a = st->as<AssignStmt>()) e = a->value.get();
        if (auto* ev = st->as<EvalStmt>()) e = ev->expr.get();
        if (auto* c = e ? e->as<Call>() : nullptr) {
          if (!c->is_op) order.push_back(c->callee);
        }
        if (auto* rs = st->as<RuntimeScopeStmt>()) walk(rs->body);
      }
    };
    walk(g.body);
    std::string aic, aiv;
    for (auto& name : order) {
      FunctionPtr k = program_.get(name);
      PYPTO_USER_CHECK(k && k->is_kernel(), g.span,
                       "Group function '" << g.name << "' calls '" << name << "', which is not a kernel",
                       "a Group body calls one AIC kernel and one AIV kernel");
      std::string ct = codegen::InferCoreType(program_, *k);
      std::string& slot = ct == "AIC" ? aic : aiv;
      PYPTO_USER_CHECK(slot.empty() || slot == name, g.span,
                       "Group function '" << g.name << "' calls two " << ct << " kernels ('" << slot << "' and '"
                                          << name << "')",
                       "a Group body calls exactly one AIC kernel and one AIV kernel");
      slot = name;
    }
    PYPTO_USER_CHECK(!aic.empty() || !aiv.empty(), g.span,
                     "Group function '" << g.name << "' must call an AIC kernel and/or an AIV kernel",
                     "AIC: FunctionType.AIC or an InCore kernel using Left/Right/Acc/Mat tiles; AIV otherwise");
  }

  void loop(const ForStmt& f) {
    std::vector<bool> printed;   // which yield values the generator prints
    for (size_t i = 0; i < f.iter_args.size(); ++i) {
      const IterArg* ia = f.iter_args[i].get();
      const bool* rebind = attr_get<bool>(f.attrs, "iter_arg_rebind_" + std::to_string(i));
      PYPTO_CHECK(rebind, "ForStmt lacks iter_arg_rebind_" << i << " (ClassifyIterArgCarry did not run)");
      printed.push_back(*rebind);
      if (!*rebind) {
        exprs_.check(ia->init);
      } else if (!is_task_id(ia->type)) {
        PYPTO_USER_CHECK(carry_type_ok(ia->type), ia->span,
                         "loop-carried value '" << ia->name << "' has an unsupported type", "");
        exprs_.check(ia->init);
      }
    }
    exprs_.check(f.start);
    exprs_.check(f.stop);
    exprs_.check(f.step);
    yields_.push_back(printed);
    stmt(f.body);
    yields_.pop_back();
  }

  void branch(const IfStmt& s) {
    for (auto& rv : s.return_vars) {
      if (!carry_type_ok(rv->type)) throw UserError("if result '" + rv->name + "' has an unsupported type", rv->span, "");
    }
    exprs_.check(s.cond);
    yields_.push_back(std::vector<bool>(s.return_vars.size(), true));
    stmt(s.then_body);
    if (s.else_body) stmt(s.else_body);
    yields_.pop_back();
  }

  void yield(const YieldStmt& y) {
    PYPTO_CHECK(!yields_.empty(), "yield outside a loop or if");
    const std::vector<bool>& printed = yields_.back();
    for (size_t i = 0; i < y.values.size() && i < printed.size(); ++i) {
      if (printed[i]) exprs_.check(y.values[i]);
    }
  }

  const Program& program_;
  const Function& fn_;
  ScalarExprChecker exprs_;
  std::unordered_set<const Var*> declared_dims_;
  std::vector<std::vector<bool>> yields_;
};

}  // namespace

void VerifyOrchestrationProgram(const ProgramPtr& program, const std::string& func_name) {
  PYPTO_CHECK(program, "VerifyOrchestrationProgram: null program");
  FunctionPtr fn = program->get(func_name);
  PYPTO_USER_CHECK(fn, program->span, "program '" << program->name << "' has no function named '" << func_name << "'",
                   "pass the name of an @pl.function(type=pl.FunctionType.Orchestration) method");
  PYPTO_USER_CHECK(fn->type == FunctionType::Orchestration, fn->span,
                   "function '" << func_name << "' is " << to_string(fn->type) << ", not Orchestration",
                   "generate orchestration code for an @pl.function(type=pl.FunctionType.Orchestration) method");
  auto problems = VerifyCodegenPreconditions(program, func_name);
  if (!problems.empty()) {
    std::ostringstream os;
    for (auto& p : problems) os << "\n  " << p;
    PYPTO_CHECK(false, "orchestration codegen preconditions do not hold (run the default pipeline first):" << os.str());
  }
  OrchestrationVerifier(*program, *fn).Run();
}

}  // namespace pypto::transforms
