// OutlineClusterScopes
//
// What: in Orchestration (and Opaque) functions, replaces every `with pl.cluster():` scope by
//   a call to a new Group function `<fn>_cluster_<k>` (or its `name_hint=`) whose body is the scope body (a pl.spmd
//   scope nested inside is expanded into it: a cluster is one gang-started task, launched with
//   the nested scope's core_num / sync_start as a Submit). The Vars the
//   body reads from outside become parameters; a tensor passed to an Out / InOut parameter of
//   a kernel call (or stored into) is Out, or InOut when the body also reads it; the Group
//   returns the written parameters, and every written tensor used after the scope binds to the
//   matching result.
//       with pl.cluster():                       out_1 = self.main_cluster_0(a, b, out)
//           t = self.k_aic(a, b, t)        ==>   (Group main_cluster_0(a, b, out: InOut):
//           out = self.k_aiv(t, out)                 t = ...; out = ...; return out)
// Input invariants: parser checks (no pl.at CORE_GROUP inside a cluster; predicate= /
//   allow_early_resolve= rejected on a nested pl.spmd).
// Output invariants: no Cluster ScopeStmt is left in Orchestration / Opaque functions.
// Why: the runtime launches a cluster as one MixedKernels task of a Group function; codegen
//   knows Group calls, not scopes.
#include <unordered_set>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"
#include "scope_outlining.h"

namespace pypto::transforms {

using namespace ir;
using namespace outlining;

namespace {

// Splices nested pl.spmd scopes into the cluster body.
class ExpandNestedSpmd : public IRMutator {
 public:
  StmtPtr mutate_(const ScopeStmt* op, const StmtPtr& self) override {
    PYPTO_USER_CHECK(op->scope_kind == ScopeKind::Spmd && !op->block_var && !op->task_id_var, op->span,
                     "only a plain `with pl.spmd(...)` can be nested inside pl.cluster()",
                     "the cluster is one task: its body calls one AIC and one AIV kernel");
    if (auto* cn = attr_get<ExprPtr>(op->attrs, "core_num")) core_num = *cn;
    sync_start = sync_start || op->options.sync_start;
    return mutate_stmt(op->body);
  }
  ExprPtr core_num;         // the launch spec of the nested pl.spmd, if any
  bool sync_start = false;
};

class ClusterOutliner : public ScopeOutliner {
 public:
  using ScopeOutliner::ScopeOutliner;

  StmtPtr mutate_(const ScopeStmt* op, const StmtPtr& self) override {
    if (op->scope_kind != ScopeKind::Cluster) return IRMutator::mutate_(op, self);
    ExpandNestedSpmd expand;
    StmtPtr body = expand.mutate_stmt(op->body);
    const UseDef body_ud = CollectUseDef(op->body);
    ScopeCaptures c = AnalyzeScopeBody(program_, body);
    std::string name = OutlinedName(op->attrs, "_cluster", false);
    OutlinedSignature sig = MakeOutlinedSignature(c, nullptr, [](const VarPtr& x) {
      PYPTO_USER_CHECK(!is_task_id(x->type), x->span, "TaskId '" << x->name << "' is used inside pl.cluster()",
                       "a cluster is one task; TaskIds go to deps= of task submissions");
    });
    sig.sub.fresh_defs(body);
    std::vector<StmtPtr> gbody = flatten_stmts(sig.sub.mutate_stmt(body));
    if (!sig.return_values.empty()) gbody.push_back(ReturnStmt::make(sig.return_values, op->span));
    new_fns_->push_back(Function::make(name, FunctionType::Group, sig.params, sig.param_directions, sig.return_types,
                                       make_seq(gbody, op->span), Level::None, Role::None, {}, op->span));

    auto outs = ScopeResults(fn_uses(), body_ud, c, sig, [](const VarPtr& v) {
      PYPTO_USER_CHECK(false, v->span,
                       "'" << v->name << "' is computed inside pl.cluster() and used after it; only tensors the "
                                         "cluster writes flow out of it",
                       "write the value into a tensor argument and read that tensor after the scope");
      return size_t{0};
    });
    std::vector<StmtPtr> out;
    if (expand.core_num) {   // a nested pl.spmd: the cluster task launches on N blocks
      auto sub = Submit::make(name, sig.args, sig.return_types, {}, expand.core_num, expand.sync_start, false, -1,
                              nullptr, {}, op->span);
      VarPtr tmp = Var::make(name + "_task", sub->type, op->span);
      out.push_back(AssignStmt::make(tmp, sub, op->span));
      BindTupleResults(tmp, outs, &out);
    } else {
      out.push_back(CallOutlined(name, sig, {}, outs, op->span));
    }
    for (auto& s : UnchangedCaptureResults(fn_uses(), body_ud, c, sig)) out.push_back(s);
    return make_seq(out, op->span);
  }
};

}  // namespace

Pass OutlineClusterScopes() { return Pass{"OutlineClusterScopes", {}, {IRProperty::ClusterScopesOutlined}, OutlineScopesWith<ClusterOutliner>,
              /*invalidated=*/{IRProperty::ReturnParamsExplicit, IRProperty::CallDirectionsDerived}}; }

}  // namespace pypto::transforms
