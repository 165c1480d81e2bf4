// Rewriting traversal: each mutate_ returns a new node, or the same pointer when nothing
// below it changed (so unchanged subtrees are shared). The default recurses; override the
// node you change and fall back to the base (`return IRMutator::mutate_(op, self)`).
// Var definitions (params, assignment targets, loop vars, iter_args, return vars) are
// visited through mutate_expr too, so a subclass can substitute Vars consistently via a map.
//
//   struct RenameCallee : IRMutator {
//     ExprPtr mutate_(const Call* op, const ExprPtr& self) override {
//       auto e = IRMutator::mutate_(op, self);
//       ...
//     }
//   };
//
// Definitions and uses stay consistent: when a definition site (mutate_def) yields a different
// Var, later uses of the old Var are replaced by the new one (var_remap_). An AssignStmt whose
// value's type changed gets a fresh Var of the new type the same way. A statement mutated to
// null is dropped from its SeqStmts; one mutated to a SeqStmts is spliced in. An IterArg's init
// is mutated by its ForStmt (once), not at the IterArg's uses.
#pragma once
#include <unordered_map>
#include <utility>

#include "pypto/ir/function.h"

namespace pypto::ir {

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual ExprPtr mutate_expr(const ExprPtr& e);
  virtual StmtPtr mutate_stmt(const StmtPtr& s);
  virtual TypePtr mutate_type(const TypePtr& t);
  virtual FunctionPtr mutate_function(const FunctionPtr& f);
  ProgramPtr mutate_program(const ProgramPtr& p);

#define PYPTO_EXPR_NODE(Name) virtual ExprPtr mutate_(const Name* op, const ExprPtr& self);
#define PYPTO_STMT_NODE(Name) virtual StmtPtr mutate_(const Name* op, const StmtPtr& self);
#include "pypto/ir/node_kinds.def"

 protected:
  // Helpers for subclasses: mutate a list, reporting whether anything changed.
  std::vector<ExprPtr> mutate_exprs(const std::vector<ExprPtr>& v, bool* changed);
  Attrs mutate_attrs(const Attrs& a, bool* changed);
  // Mutates every element of `v`; when one changed, fills `out` with the new list and returns
  // true, else leaves `out` untouched and returns false (no copy of an unchanged list).
  bool mutate_exprs_if_changed(const std::vector<ExprPtr>& v, std::vector<ExprPtr>* out);
  // Mutate a var at its definition site and remember old -> new for the uses that follow.
  VarPtr mutate_def(const VarPtr& v);
  // old Var -> (old, new); the old pointer is kept alive so the key cannot be reused.
  std::unordered_map<const Var*, std::pair<VarPtr, VarPtr>> var_remap_;
  // A mutator that only rewrites statements (loops, scopes, branches) sets this: mutate_expr
  // then returns its argument untouched, so a pass reads statement nodes only (no expression
  // holds a statement), and no definition is renamed.
  //   class Stamper : public IRMutator { public: Stamper() { statements_only_ = true; } ... };
  bool statements_only_ = false;
};

// Flatten a statement into a list (SeqStmts children inline; null -> empty).
std::vector<StmtPtr> flatten_stmts(const StmtPtr& s);
// The YieldStmt ending a loop or branch body, looking through RuntimeScopeStmt wrappers
// (null when the body does not end with one): `trailing_yield(loop->body)->values`.
const YieldStmt* trailing_yield(const StmtPtr& body);
// Build a SeqStmts, or return the single statement when there is one.
StmtPtr make_seq(std::vector<StmtPtr> stmts, Span span = {});

}  // namespace pypto::ir
