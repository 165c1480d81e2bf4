// OutlineIncoreScopes
//
// What: in Orchestration (and Opaque) functions, replaces every
//   `with pl.at(level=pl.Level.CORE_GROUP, ...) [as tid]:` and `with pl.spmd(N, ...) [as tid]:` /
//   `for i in pl.spmd(N, ...):` scope by a task:
//     - the body becomes a new InCore function `<fn>_incore_<k>` / `<fn>_spmd_<k>` (or the
//       scope's `name_hint=`, minus a trailing `_spmd`; ScopeOutliner::OutlinedName): the Vars
//       the body reads from outside become parameters (tensors written by tile.store /
//       tensor.assemble -> Out, or InOut when also read; everything else In), it returns the
//       written parameters; a `for i in pl.spmd` block index becomes `i = tile.get_block_idx()`;
//     - the scope becomes a Submit of that function (the typed ScopeStmt::options deps / predicate /
//       allow_early_resolve move onto it; core_num / sync_start for pl.spmd), `as tid` binds
//       its TaskId element, and every tensor the body wrote that is used after the scope binds
//       to the matching result element. `no_dep_args=` entries become NoDep arg directions.
//     - a pl.at scope with no deps / tid / predicate / early resolve becomes a plain Call.
//     - the scope's `dump_vars` entries (dumps= plus pl.dump_tag tags at scope entry, spec
//       anchor_features §6) that the task takes as arguments become its dump marks (by
//       identity, in the scope's order, after the marks of a single call body); the rest drop.
//     - a body that is exactly one call to a kernel (or Group) function is not outlined again:
//       the Submit targets that kernel directly.
//   `with pl.at(level=<other level>)` (a hierarchy scope, not a task) is replaced by its body.
//       with pl.at(level=pl.Level.CORE_GROUP, deps=[t0]) as t1:     r = Submit(main_incore_0, [x, out], deps=[t0])
//           out = pl.store(pl.load(x, [0], [64]), [0], out)   ==>   out_1 = r[0];  t1 = r[1]
// Input invariants: the parser's scope checks hold (no CORE_GROUP pl.at / pl.spmd nested in
//   pl.cluster / pl.spmd / another CORE_GROUP pl.at; OutlineClusterScopes ran first).
// Output invariants: no At / Spmd ScopeStmt is left in Orchestration / Opaque functions.
//   A tensor the body computes and the function uses after the scope is returned as well
//   (ConvertTensorToTileOps then applies rule 5 of spec anchor_features §9: a trailing Out
//   parameter and a caller-side tensor.create).
//   A Var the body only hands on from outside (`ta, tb = tb, ta`, a loop passing a tensor
//   along) and the body does not write is bound to that outside value after the call.
// Errors: a non-tensor value computed inside the scope used after it.
// Why: only a task can carry dependencies, a predicate or a launch spec; codegen and the
//   runtime know tasks (Submits of kernels), not scopes.
#include <algorithm>
#include <unordered_set>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"
#include "scope_outlining.h"

namespace pypto::transforms {

using namespace ir;
using namespace outlining;

namespace {

std::vector<ExprPtr> attr_list(const Attrs& a, const std::string& k) {
  auto* v = attr_get<std::vector<ExprPtr>>(a, k);
  return v ? *v : std::vector<ExprPtr>{};
}

ExprPtr attr_expr(const Attrs& a, const std::string& k) {
  auto* v = attr_get<ExprPtr>(a, k);
  return v ? *v : nullptr;
}

class Outliner : public ScopeOutliner {
 public:
  using ScopeOutliner::ScopeOutliner;

  StmtPtr mutate_(const ScopeStmt* op, const StmtPtr& self) override {
    PYPTO_CHECK(op->scope_kind != ScopeKind::Cluster, "OutlineIncoreScopes: pl.cluster left in '" << fn_.name
                                                         << "' (OutlineClusterScopes runs first)");
    StmtPtr body = mutate_stmt(op->body);
    const std::string* level = attr_get<std::string>(op->attrs, "level");
    if (op->scope_kind == ScopeKind::At && !(level && *level == "CORE_GROUP")) {
      PYPTO_USER_CHECK(!op->task_id_var && op->options.deps.empty() && !op->options.allow_early_resolve,
                       op->span, "pl.at(level=pl.Level." << (level ? *level : "?")
                                                         << ") is not a task: it cannot take deps=, allow_early_resolve= or `as tid`",
                       "use level=pl.Level.CORE_GROUP to make the scope its own task");
      return body;
    }
    return Outline(op, body);
  }

 private:
  std::vector<ArgDirection> directions(const std::vector<ExprPtr>& args, std::vector<ArgDirection> dirs,
                                       const std::vector<ExprPtr>& no_dep) const {
    if (dirs.size() != args.size()) dirs.assign(args.size(), ArgDirection::Unset);
    for (size_t i = 0; i < args.size(); ++i) {
      for (auto& n : no_dep) {
        if (as_var(n) && as_var(n) == as_var(args[i])) dirs[i] = ArgDirection::NoDep;
      }
    }
    // Nothing known yet: the parser's spelling of "not derived" (an empty list), so the
    // outlined call prints and re-parses to an equal IR.
    bool none = std::all_of(dirs.begin(), dirs.end(), [](ArgDirection d) { return d == ArgDirection::Unset; });
    if (none) dirs.clear();
    return dirs;
  }

  // The body is `y = self.k(...)` / `self.k(...)` (+ tuple unpacking of y) with k a kernel or
  // Group function: returns that call.
  const Call* single_kernel_call(const ScopeStmt* op, const StmtPtr& body, VarPtr* result) const {
    auto stmts = flatten_stmts(body);
    if (stmts.empty()) return nullptr;
    const Call* call = nullptr;
    if (auto* a = stmts[0]->as<AssignStmt>()) {
      call = a->value->as<Call>();
      *result = a->var;
    } else if (auto* ev = stmts[0]->as<EvalStmt>()) {
      call = ev->expr->as<Call>();
    }
    if (!call || call->is_op) return nullptr;
    FunctionPtr f = program_.get(call->callee);
    if (!f || !(f->is_kernel() || f->type == FunctionType::Group)) return nullptr;
    for (size_t i = 1; i < stmts.size(); ++i) {
      auto* a = stmts[i]->as<AssignStmt>();
      auto* g = a ? a->value->as<TupleGetItem>() : nullptr;
      if (!g || !*result || as_var(g->tuple) != result->get()) return nullptr;
    }
    if (op->block_var) {
      for (auto& arg : call->args) {
        if (as_var(arg) == op->block_var.get()) return nullptr;
      }
    }
    return call;
  }

  // The tensor Vars `body` defines, not on a write chain of a capture, that the function uses
  // after the scope, in definition order.
  std::vector<VarPtr> ComputedTensorsUsedAfter(const UseDef& body_ud, const ScopeCaptures& c) {
    std::vector<VarPtr> out;
    for (auto& v : body_ud.def_order) {
      if (v->is<IterArg>() || !v->type->is<TensorType>() || c.chain.count(v.get())) continue;
      if (UsedAfterScope(v.get(), fn_uses(), body_ud)) out.push_back(v);
    }
    return out;
  }

  StmtPtr Outline(const ScopeStmt* op, const StmtPtr& body) {
    const bool spmd = op->scope_kind == ScopeKind::Spmd;
    const std::vector<ExprPtr>& deps = op->options.deps;
    const std::vector<ExprPtr>& no_dep = op->options.no_dep_args;
    const ExprPtr& pred = op->options.predicate;
    ExprPtr core_num = spmd ? attr_expr(op->attrs, "core_num") : nullptr;
    PYPTO_CHECK(!spmd || core_num, "pl.spmd scope without core_num");
    const bool aer = op->options.allow_early_resolve;
    const bool sync = op->options.sync_start;
    const bool as_submit = spmd || op->task_id_var || !deps.empty() || pred || aer;
    const UseDef body_ud = CollectUseDef(op->body);
    std::vector<StmtPtr> out;

    // Dump marks (spec anchor_features §6): the scope's entries the task takes as arguments,
    // after the marks the body's single call already has.
    const std::vector<ExprPtr> scope_dumps = attr_list(op->attrs, "dump_vars");
    auto dumps_for = [&](const std::vector<ExprPtr>& args, std::vector<ExprPtr> marks) {
      for (auto& d : scope_dumps) {
        bool is_arg = std::any_of(args.begin(), args.end(), [&](const ExprPtr& a) { return as_var(a) == as_var(d); });
        bool seen = std::any_of(marks.begin(), marks.end(), [&](const ExprPtr& m) { return as_var(m) == as_var(d); });
        if (is_arg && !seen) marks.push_back(d);
      }
      return marks;
    };
    auto with_dumps = [&](ExprPtr task, const std::vector<ExprPtr>& marks) {
      return marks.empty() ? task : with_dump_vars(task, marks);
    };

    auto make_submit = [&](const std::string& callee, const std::vector<ExprPtr>& args, const std::vector<TypePtr>& rets,
                           std::vector<ArgDirection> dirs, const std::vector<ExprPtr>& marks) {
      ExprPtr sub = with_dumps(Submit::make(callee, args, rets, deps, core_num, sync, aer, -1, pred, std::move(dirs),
                                            op->span), marks);
      VarPtr tmp = Var::make(callee + "_task", sub->type, op->span);
      out.push_back(AssignStmt::make(tmp, sub, op->span));
      if (op->task_id_var) {
        out.push_back(AssignStmt::make(op->task_id_var, TupleGetItem::make(tmp, static_cast<int>(rets.size()), op->span),
                                       op->span));
      }
      return tmp;
    };

    VarPtr call_result;
    if (const Call* call = single_kernel_call(op, body, &call_result)) {
      FunctionPtr f = program_.get(call->callee);
      auto dirs = directions(call->args, call->arg_directions, no_dep);
      const std::vector<ExprPtr> marks = dumps_for(call->args, call->dump_vars);
      if (!as_submit) {
        ExprPtr c = with_dumps(Call::make_func(call->callee, call->args, call->type, dirs, call->span, call->attrs), marks);
        auto stmts = flatten_stmts(body);
        if (auto* a = stmts[0]->as<AssignStmt>()) stmts[0] = AssignStmt::make(a->var, c, a->span);
        else stmts[0] = EvalStmt::make(c, stmts[0]->span);
        return make_seq(stmts, op->span);
      }
      VarPtr tmp = make_submit(call->callee, call->args, f->return_types, dirs, marks);
      auto stmts = flatten_stmts(body);
      if (call_result && f->return_types.size() == 1) {
        out.push_back(AssignStmt::make(call_result, TupleGetItem::make(tmp, 0, op->span), op->span));
      }
      for (size_t i = 1; i < stmts.size(); ++i) {
        auto* a = stmts[i]->as<AssignStmt>();
        auto* g = a->value->as<TupleGetItem>();
        out.push_back(AssignStmt::make(a->var, TupleGetItem::make(tmp, g->index, g->span), a->span));
      }
      return make_seq(out, op->span);
    }

    // Outline the body into a new InCore function.
    ScopeCaptures c = AnalyzeScopeBody(program_, body);
    std::string name = OutlinedName(op->attrs, spmd ? "_spmd" : "_incore", spmd);
    OutlinedSignature sig = MakeOutlinedSignature(c, op->block_var.get(), [&](const VarPtr& x) {
      PYPTO_USER_CHECK(!is_task_id(x->type), x->span,
                       "TaskId '" << x->name << "' is used inside a " << (spmd ? "pl.spmd" : "pl.at")
                                  << " body, which becomes a kernel",
                       "pass TaskIds through deps= of the scope");
    });
    // Tensors the body computes (not a write of a capture) and the function uses after the
    // scope are returned too (spec anchor_features §9): ConvertTensorToTileOps gives each a
    // trailing pl.Out parameter and this call a tensor.create for it (rule 5).
    std::vector<VarPtr> computed = ComputedTensorsUsedAfter(body_ud, c);
    std::vector<StmtPtr> kbody;
    if (op->block_var) {
      auto idx = Call::make_op("tile.get_block_idx", {}, {}, op->block_var->span);
      VarPtr bv = Var::make(op->block_var->name, idx->type, op->block_var->span);
      sig.sub.add(op->block_var, bv);
      kbody.push_back(AssignStmt::make(bv, idx, op->block_var->span));
    }
    sig.sub.fresh_defs(body);
    for (auto& s : flatten_stmts(sig.sub.mutate_stmt(body))) kbody.push_back(s);
    for (auto& v : computed) {
      sig.return_types.push_back(v->type);
      sig.return_values.push_back(sig.sub.mapped(v.get()));
    }
    if (!sig.return_values.empty()) kbody.push_back(ReturnStmt::make(sig.return_values, op->span));
    // split / slot_num (spec anchor_features §5) move to the kernel's attrs; a no-op on the CPU.
    Attrs fattrs;
    for (const char* k : {"split", "slot_num"}) {
      if (auto it = op->attrs.find(k); it != op->attrs.end()) fattrs[k] = it->second;
    }
    new_fns_->push_back(Function::make(name, FunctionType::InCore, sig.params, sig.param_directions, sig.return_types,
                                       make_seq(kbody, op->span), Level::None, Role::None, fattrs, op->span));

    // Results used after the scope.
    auto dirs = directions(sig.args, {}, no_dep);
    const size_t written_returns = sig.return_types.size() - computed.size();
    auto outs = ScopeResults(fn_uses(), body_ud, c, sig, [&](const VarPtr& v) {
      auto at = std::find(computed.begin(), computed.end(), v);
      if (at != computed.end()) return written_returns + static_cast<size_t>(at - computed.begin());
      PYPTO_USER_CHECK(false, v->span,
                       "'" << v->name << "' is computed inside the " << (spmd ? "pl.spmd" : "pl.at")
                           << " scope and used after it; only tensors the scope writes flow out of it",
                       "write the value into a tensor (pl.store into an Out tensor) and read that tensor after the scope");
      return size_t{0};
    });
    const std::vector<ExprPtr> marks = dumps_for(sig.args, {});
    std::vector<StmtPtr> unchanged = UnchangedCaptureResults(fn_uses(), body_ud, c, sig);
    if (as_submit) {
      VarPtr tmp = make_submit(name, sig.args, sig.return_types, dirs, marks);
      BindTupleResults(tmp, outs, &out);
    } else {
      out.push_back(CallOutlined(name, sig, dirs, outs, op->span, marks));
    }
    out.insert(out.end(), unchanged.begin(), unchanged.end());
    return make_seq(out, op->span);
  }
};

}  // namespace

Pass OutlineIncoreScopes() { return Pass{"OutlineIncoreScopes", {}, {IRProperty::IncoreScopesOutlined}, OutlineScopesWith<Outliner>,
              /*invalidated=*/{IRProperty::ReturnParamsExplicit, IRProperty::CallDirectionsDerived}}; }

}  // namespace pypto::transforms
