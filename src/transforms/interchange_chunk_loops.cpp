// InterchangeChunkLoops
//
// What: replaces every `pl.at(level=CORE_GROUP, optimizations=[pl.auto_chunk])` scope (attr
//   auto_chunk) by its statements, with the kernel boundaries picked (spec anchor_features §7):
//     - a chunk chain (a loop with loop_origin "chunk_outer" whose body is its "chunk_inner"
//       loop): when the inner loop is parallel, the outer loop stays in the orchestration and the
//       inner loop with the body becomes one InCore scope (one task per outer iteration); a
//       chain with a sequential inner loop is wrapped whole;
//     - a remainder loop ("chunk_remainder") gets an InCore scope of its own;
//     - the other statements are grouped into InCore scopes (runs of consecutive statements),
//       except yields, returns and pure scalar assignments, which stay in the orchestration.
//   Each produced scope is `pl.at(level=CORE_GROUP)` with the auto_chunk scope's split /
//   slot_num / name_hint; OutlineIncoreScopes then outlines them as usual.
//       with pl.at(level=CORE_GROUP, optimizations=[pl.auto_chunk]):     for co in pl.parallel(0, 4, 1):
//           for co in pl.parallel(0, 4, 1):                    ==>            with pl.at(level=CORE_GROUP):
//               for ci in pl.parallel(0, 4, 1): body                              for ci in pl.parallel(0, 4, 1): body
// Input invariants: SplitChunkedLoops ran.
// Output invariants: no ScopeStmt has the auto_chunk attr.
// Why: the reference's auto_chunk: the compiler, not the user, picks the kernel boundaries.
//   (Ours wraps one chunk level per task: a chain of several chunked loops is not interchanged
//   so that all outer loops come first; the nested chunk loops run inside the kernel.)
#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

std::string Origin(const ForStmt& f) {
  auto* o = attr_get<std::string>(f.attrs, "loop_origin");
  return o ? *o : "";
}

// A scalar assignment computing on scalars only (tensor.dim reads a shape, not data).
bool PureScalarAssign(const Stmt& s) {
  auto* a = s.as<AssignStmt>();
  if (!a || !a->var->type->is<ScalarType>()) return false;
  struct CallFinder : IRVisitor {
    bool found = false;
    void visit_(const Call* op) override {
      if (!(op->is_op && op->callee == "tensor.dim")) found = true;
      IRVisitor::visit_(op);
    }
    void visit_(const Submit* op) override { found = true; }
  } finder;
  finder.visit_expr(a->value);
  return !finder.found;
}

class Interchanger : public IRMutator {
 public:
  Interchanger() { statements_only_ = true; }   // rewrites scopes only
  StmtPtr mutate_(const ScopeStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);
    auto* sc = s->as<ScopeStmt>();
    auto* ac = attr_get<bool>(sc->attrs, "auto_chunk");
    if (!ac || !*ac) return s;
    Attrs kernel_attrs{{"level", std::string("CORE_GROUP")}};
    for (const char* k : {"split", "slot_num", "name_hint"}) {
      if (auto it = sc->attrs.find(k); it != sc->attrs.end()) kernel_attrs[k] = it->second;
    }
    auto wrap = [&](std::vector<StmtPtr> stmts, const Span& sp) {
      return ScopeStmt::make(ScopeKind::At, kernel_attrs, make_seq(std::move(stmts), sp), nullptr, nullptr, sp);
    };
    std::vector<StmtPtr> out, pending;
    auto flush = [&]() {
      if (pending.empty()) return;
      out.push_back(wrap(pending, pending.front()->span));
      pending.clear();
    };
    for (const StmtPtr& st : flatten_stmts(sc->body)) {
      auto* f = st->as<ForStmt>();
      if (f && Origin(*f) == "chunk_outer") {
        flush();
        out.push_back(Chain(*f, st, wrap));
      } else if (f && Origin(*f) == "chunk_remainder") {
        flush();
        out.push_back(wrap({st}, st->span));
      } else if (st->is<YieldStmt>() || st->is<ReturnStmt>() || PureScalarAssign(*st)) {
        flush();
        out.push_back(st);
      } else {
        pending.push_back(st);
      }
    }
    flush();
    return make_seq(out, sc->span);
  }

 private:
  // A chunk chain: the outer loop keeps the orchestration when its inner loop is parallel.
  template <class Wrap>
  static StmtPtr Chain(const ForStmt& outer, const StmtPtr& self, const Wrap& wrap) {
    auto body = flatten_stmts(outer.body);
    auto* inner = body.empty() ? nullptr : body[0]->as<ForStmt>();
    const bool tail_ok = body.size() == 1 || (body.size() == 2 && body[1]->is<YieldStmt>());
    if (!inner || !tail_ok || Origin(*inner) != "chunk_inner" || inner->for_kind != ForKind::Parallel) {
      return wrap({self}, outer.span);
    }
    std::vector<StmtPtr> nb{wrap({body[0]}, inner->span)};
    if (body.size() == 2) nb.push_back(body[1]);
    return ForStmt::make(outer.loop_var, outer.start, outer.stop, outer.step, outer.iter_args, make_seq(nb, outer.span),
                         outer.return_vars, outer.for_kind, outer.attrs, outer.span);
  }
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    Interchanger x;
    FunctionPtr nf = x.mutate_function(fn);
    if (nf != fn) out = out->with_function(nf);
  }
  return out;
}

}  // namespace

Pass InterchangeChunkLoops() { return Pass{"InterchangeChunkLoops", {}, {IRProperty::AutoChunkScopesInterchanged}, Run, /*invalidated=*/{}}; }

}  // namespace pypto::transforms
