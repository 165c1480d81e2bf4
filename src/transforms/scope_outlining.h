// Shared pieces of OutlineIncoreScopes and OutlineClusterScopes (private to src/transforms):
// use/def collection, the captures of a scope body, which captured tensors the body writes,
// and the rewrite of a body onto fresh parameters.
//
//   ScopeCaptures c = AnalyzeScopeBody(program, body);
//   c.captures            outer Vars the body reads, in order of first use
//   c.written[i]          the body writes captures[i] (tile.store / tensor.assemble /
//                         tensor.write / tile.mscatter target, or an Out/InOut argument of a
//                         kernel call)
//   c.read[i]             the body reads it (anything but being the written target)
//   c.chain[v] == i       body Var v is capture i's storage after a write, or capture i
//                         itself handed on (a copy, a loop or branch result passing it along)
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pypto/ir/function.h"
#include "pypto/ir/mutator.h"

namespace pypto::transforms::outlining {

struct UseDef {
  std::vector<ir::VarPtr> use_order;                       // first use order
  std::unordered_map<const ir::Var*, int> uses;
  std::unordered_set<const ir::Var*> defs;
  std::vector<ir::VarPtr> def_order;                       // definition order
};

// Uses and definitions of Vars in `s` (ScopeStmt attrs and task options count as uses).
UseDef CollectUseDef(const ir::StmtPtr& s);

struct ScopeCaptures {
  std::vector<ir::VarPtr> captures;
  std::vector<bool> written, read;
  std::unordered_map<const ir::Var*, size_t> chain;
};

ScopeCaptures AnalyzeScopeBody(const ir::Program& program, const ir::StmtPtr& body);

// A mutator that replaces Vars by a fixed map (captures -> params) and keeps SSA defs as-is.
class VarSubstituter : public ir::IRMutator {
 public:
  void add(const ir::VarPtr& from, const ir::VarPtr& to) { var_remap_[from.get()] = {from, to}; }
  // Gives every plain Var `body` defines a fresh copy, so the outlined function shares no Var
  // with the function it came from (the caller keeps the originals for the results it binds;
  // a Var defined in two functions does not survive print -> parse). IterArgs are left to the
  // mutator (they never leave the body).
  void fresh_defs(const ir::StmtPtr& body);
  using ir::IRMutator::mutate_;
  // An assignment whose value's type changed under the substitution re-types its fresh Var.
  ir::StmtPtr mutate_(const ir::AssignStmt* op, const ir::StmtPtr& self) override;
  // The Var `v` is replaced by (null when it is not mapped): sub.mapped(body_var.get()).
  ir::VarPtr mapped(const ir::Var* v) const {
    auto it = var_remap_.find(v);
    return it == var_remap_.end() ? nullptr : it->second.second;
  }
};

// The signature of a function outlined from a scope body: one parameter per capture (but
// `skip`, e.g. a pl.spmd block index), a fresh Var substituted for it in the body; a tensor the
// body writes is Out (InOut when it also reads it) and returned, in capture order.
// `check(x)` runs on each capture first (it reports captures the scope may not take).
struct OutlinedSignature {
  VarSubstituter sub;
  std::vector<ir::VarPtr> params;
  std::vector<ir::ParamDirection> param_directions;
  std::vector<ir::ExprPtr> args;                 // the captures, in parameter order
  std::vector<ir::TypePtr> return_types;         // the written parameters, in return order
  std::vector<ir::ExprPtr> return_values;
  std::unordered_map<size_t, size_t> result_of;  // capture index -> return position
};
OutlinedSignature MakeOutlinedSignature(const ScopeCaptures& c, const ir::Var* skip,
                                        const std::function<void(const ir::VarPtr&)>& check);

// True when the enclosing function (`fn_uses`) uses `v` more often than the scope body does.
bool UsedAfterScope(const ir::Var* v, const UseDef& fn_uses, const UseDef& body_ud);

// The Vars the body defines that are used after the scope, each with the return position of
// the written tensor it is the storage of; `other(v)` gives the return position of any other
// one, or reports (throws for) it.
std::vector<std::pair<ir::VarPtr, size_t>> ScopeResults(const UseDef& fn_uses, const UseDef& body_ud,
                                                        const ScopeCaptures& c, const OutlinedSignature& sig,
                                                        const std::function<size_t(const ir::VarPtr&)>& other);

// `v = capture` for each Var the body defines, uses after the scope, that is a capture the
// body does not write, handed on unchanged (`ta, tb = tb, ta`, a loop passing it along): the
// caller binds it to the capture itself (ScopeResults skips these).
std::vector<ir::StmtPtr> UnchangedCaptureResults(const UseDef& fn_uses, const UseDef& body_ud,
                                                 const ScopeCaptures& c, const OutlinedSignature& sig);

// Appends `v = tuple[k]` for each (v, k) of `results` to `out`.
void BindTupleResults(const ir::VarPtr& tuple, const std::vector<std::pair<ir::VarPtr, size_t>>& results,
                      std::vector<ir::StmtPtr>* out);

// The scope as a plain call `callee(args)` (an EvalStmt when nothing is returned), then
// `v = result` / `v = result[k]` for each of `results`; `dumps` are the call's dump marks.
ir::StmtPtr CallOutlined(const std::string& callee, const OutlinedSignature& sig,
                         const std::vector<ir::ArgDirection>& dirs,
                         const std::vector<std::pair<ir::VarPtr, size_t>>& results, const ir::Span& span,
                         const std::vector<ir::ExprPtr>& dumps = {});

// Runs `outline(fn, &new_functions, &taken_names)` (returning fn when nothing changed) on every Orchestration / Opaque function and
// adds the new functions and the rewritten function (when it changed) to the program.
using FunctionOutliner = std::function<ir::FunctionPtr(const ir::FunctionPtr&, std::vector<ir::FunctionPtr>*,
                                                       std::unordered_set<std::string>*)>;
ir::ProgramPtr OutlineInOrchestrationFunctions(const ir::ProgramPtr& program, const FunctionOutliner& outline);

// What every scope outliner (a mutator of one Orchestration / Opaque function) keeps: the
// program, the function and its Var uses, where outlined functions go, the names taken.
class ScopeOutliner : public ir::IRMutator {
 public:
  ScopeOutliner(const ir::Program& program, const ir::Function& fn, std::vector<ir::FunctionPtr>* new_fns,
                std::unordered_set<std::string>* taken)
      : program_(program), fn_(fn), new_fns_(new_fns), taken_(taken) {}

 protected:
  // The name of the function a scope is outlined into, marked taken (spec anchor_features §1).
  // Without a `name_hint` attr: FreshFunctionName(<fn>_<unhinted_suffix>). With one: the hint
  // (minus a trailing "_spmd" when `strip_spmd`); a repeat of the hint in this function gets
  // `_0`, `_1`, ...; a hint another function's outlining already took becomes `<fn>_<hint>`;
  // any other clash (a user function) a numeric suffix.
  //   OutlinedName(scope->attrs, "_incore", false)   // "softmax", then "softmax_0", ...
  std::string OutlinedName(const ir::Attrs& attrs, const std::string& unhinted_suffix, bool strip_spmd);

  std::unordered_map<std::string, std::pair<std::string, int>> hints_;   // hint -> (base name, uses)
  const ir::Program& program_;
  const ir::Function& fn_;
  std::vector<ir::FunctionPtr>* new_fns_;
  std::unordered_set<std::string>* taken_;

  // The function's Var uses and definitions, collected when the first scope is outlined: a
  // function without scopes (a long straight-line orchestration) never walks its body twice.
  const UseDef& fn_uses() const {
    if (!fn_uses_) fn_uses_ = CollectUseDef(fn_.body);
    return *fn_uses_;
  }

 private:
  mutable std::optional<UseDef> fn_uses_;
};

// A whole-program pass running the ScopeOutliner subclass `Outliner` on every Orchestration /
// Opaque function:  Pass{"OutlineClusterScopes", {}, {}, OutlineScopesWith<ClusterOutliner>}
template <class Outliner>
ir::ProgramPtr OutlineScopesWith(const ir::ProgramPtr& program) {
  return OutlineInOrchestrationFunctions(program, [&](const ir::FunctionPtr& fn, std::vector<ir::FunctionPtr>* new_fns,
                                                      std::unordered_set<std::string>* taken) {
    return Outliner(*program, *fn, new_fns, taken).mutate_function(fn);
  });
}

// A function name not yet used in `program` (and not in `taken`): base, base_1, base_2, ...
std::string FreshFunctionName(const ir::Program& program, const std::unordered_set<std::string>& taken,
                              const std::string& base);

}  // namespace pypto::transforms::outlining
