// Shared pieces of OutlineIncoreScopes and OutlineClusterScopes (private to src/transforms):
// use/def collection, the captures of a scope body, which captured tensors the body writes,
// and the rewrite of a body onto fresh parameters.
//
//   ScopeCaptures c = AnalyzeScopeBody(program, body);
//   c.captures            outer Vars the body reads, in order of first use
//   c.written[i]          the body writes captures[i] (tile.store / tensor.assemble target,
//                         or an Out/InOut argument of a kernel call)
//   c.read[i]             the body reads it (anything but being the written target)
//   c.chain[v] == i       body Var v is capture i's storage after a write
#pragma once
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

// Uses and definitions of Vars in `s` (ScopeStmt attrs count as uses).
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
};

// A function name not yet used in `program` (and not in `taken`): base, base_1, base_2, ...
std::string FreshFunctionName(const ir::Program& program, const std::unordered_set<std::string>& taken,
                              const std::string& base);

}  // namespace pypto::transforms::outlining
