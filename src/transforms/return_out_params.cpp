// The caller side of rule 5 (spec anchor_features §9); see return_out_params.h.
//
//   r = self.k(a, b)                  ==>   ret0_out = pl.tensor.create([16, 16], dtype=pl.FP32)
//                                           r = self.k(a, b, ret0_out)
#include "return_out_params.h"

#include <utility>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"

namespace pypto::transforms {

using namespace ir;

FunctionPtr WithParams(const Function& fn, std::vector<VarPtr> params, std::vector<ParamDirection> dirs) {
  auto f = std::make_shared<Function>(fn);
  f->params = std::move(params);
  f->param_directions = std::move(dirs);
  return f;
}

namespace {

// Rewrites the calls of the functions in `added` inside one function.
class CallerThreader : public IRMutator {
 public:
  CallerThreader(const Function& fn, const std::map<std::string, std::vector<TypePtr>>& added)
      : added_(added), creates_(fn.type == FunctionType::Orchestration || fn.type == FunctionType::Opaque) {}

  StmtPtr mutate_(const AssignStmt* op, const StmtPtr& self) override {
    std::vector<StmtPtr> pre;
    ExprPtr value = Thread(op->value, &pre);
    if (value == op->value) return IRMutator::mutate_(op, self);
    pre.push_back(AssignStmt::make(mutate_def(op->var), value, op->span));
    return make_seq(pre, op->span);
  }

  StmtPtr mutate_(const EvalStmt* op, const StmtPtr& self) override {
    std::vector<StmtPtr> pre;
    ExprPtr value = Thread(op->expr, &pre);
    if (value == op->expr) return IRMutator::mutate_(op, self);
    pre.push_back(EvalStmt::make(value, op->span));
    return make_seq(pre, op->span);
  }

  // The Out parameters this (non-orchestration) caller gained, in order.
  const std::vector<VarPtr>& NewParams() const { return new_params_; }

 private:
  // `e` with the extra arguments when it is a Call / Submit of a threaded function (args
  // mutated first); the tensor.create statements go to `pre`.
  ExprPtr Thread(const ExprPtr& e, std::vector<StmtPtr>* pre) {
    std::string callee;
    if (auto* c = e->as<Call>(); c && !c->is_op) callee = c->callee;
    if (auto* s = e->as<Submit>()) callee = s->callee;
    auto it = added_.find(callee);
    if (it == added_.end()) return e;
    ExprPtr m = mutate_expr(e);
    std::vector<ExprPtr> extra;
    for (const TypePtr& t : it->second) extra.push_back(NewTensor(t, e->span, pre));
    auto extend_dirs = [&](std::vector<ArgDirection> dirs) {
      if (!dirs.empty()) dirs.insert(dirs.end(), extra.size(), ArgDirection::Out);
      return dirs;
    };
    ExprPtr out;
    if (auto* c = m->as<Call>()) {
      std::vector<ExprPtr> args = c->args;
      args.insert(args.end(), extra.begin(), extra.end());
      out = Call::make_func(c->callee, args, c->type, extend_dirs(c->arg_directions), c->span, c->attrs);
    } else {
      auto* s = m->as<Submit>();
      std::vector<ExprPtr> args = s->args;
      args.insert(args.end(), extra.begin(), extra.end());
      auto* tt = s->type->as<TupleType>();
      std::vector<TypePtr> rets(tt->elements.begin(), tt->elements.end() - 1);   // minus the TaskId
      out = Submit::make(s->callee, args, rets, s->deps, s->core_num, s->sync_start, s->allow_early_resolve,
                         s->timing_slot, s->predicate, extend_dirs(s->arg_directions), s->span);
    }
    if (!compiler_dep_edges(*m).empty()) out = with_compiler_dep_edges(out, compiler_dep_edges(*m));
    if (!dump_vars(*m).empty()) out = with_dump_vars(out, dump_vars(*m));
    return out;
  }

  ExprPtr NewTensor(const TypePtr& t, const Span& span, std::vector<StmtPtr>* pre) {
    std::string name = "ret" + std::to_string(count_++) + "_out";
    if (!creates_) {   // a wrapper forwards a parameter of its own
      VarPtr p = Var::make(name, t, span);
      new_params_.push_back(p);
      return p;
    }
    auto* tt = t->as<TensorType>();
    Attrs attrs{{"dtype", std::string(to_string(tt->dtype))}};
    if (tt->layout != Layout::ND) attrs["layout"] = std::string(to_string(tt->layout));
    ExprPtr create = Call::make_op("tensor.create", {MakeTuple::make(tt->shape, span)}, attrs, span);
    VarPtr v = Var::make(name, create->type, span);
    pre->push_back(AssignStmt::make(v, create, span));
    return v;
  }

  const std::map<std::string, std::vector<TypePtr>>& added_;
  const bool creates_;
  std::vector<VarPtr> new_params_;
  int count_ = 0;
};

}  // namespace

ProgramPtr ThreadReturnOutParams(const ProgramPtr& program, std::map<std::string, std::vector<TypePtr>> added) {
  ProgramPtr out = program;
  // Each round threads the functions added last; a wrapper that gained parameters is threaded
  // in the next round. Call chains are acyclic, so this ends.
  for (int round = 0; !added.empty(); ++round) {
    PYPTO_CHECK(round <= static_cast<int>(program->functions.size()), "ThreadReturnOutParams: a call cycle");
    std::map<std::string, std::vector<TypePtr>> next;
    const ProgramPtr before = out;   // `out` is replaced while its functions are visited
    for (const FunctionPtr& fn : before->functions) {
      CallerThreader t(*fn, added);
      FunctionPtr nf = t.mutate_function(fn);
      if (nf == fn) continue;
      if (!t.NewParams().empty()) {
        std::vector<VarPtr> params = nf->params;
        std::vector<ParamDirection> dirs = nf->param_directions;
        for (auto& p : t.NewParams()) {
          params.push_back(p);
          dirs.push_back(ParamDirection::Out);
          next[fn->name].push_back(p->type);
        }
        nf = WithParams(*nf, std::move(params), std::move(dirs));
      }
      out = out->with_function(nf);
    }
    added = std::move(next);
  }
  return out;
}

}  // namespace pypto::transforms
