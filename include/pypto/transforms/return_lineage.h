// Return lineage: which parameter a function's return value writes back.
//
//   kernel_add(a, b, c: Out) { t = tile.store(x, [0, 0], c); return t }
//   ReturnedParamIndices(prog, kernel_add)          == {2}   (traced: t is c's storage)
//   ExplicitReturnedParamIndices(kernel_add)        == {-1}  (t is not a param Var)
//   ... after NormalizeReturnOrder (`return c`):    == {2}
//
// ReturnedParamIndices is the interprocedural tracer used by passes that run before
// ReturnParamsExplicit holds (through Var copies, tile.store, tensor.assemble, tensor.write, calls to other
// functions, tuple elements, loop carries and if results). ExplicitReturnedParamIndices is
// the O(#returns) lookup codegen uses once the property holds: no SSA walk, no recursion.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "pypto/ir/function.h"
#include "pypto/transforms/ptr_map.h"

namespace pypto::transforms {

// For each return position of `fn`: the index of the parameter the returned value is, by
// pointer identity, or -1.
std::vector<int> ExplicitReturnedParamIndices(const ir::Function& fn);

// For each return position of `fn`: the index of the parameter whose storage the returned
// value is (traced), or -1 when it is not a parameter's storage.
std::vector<int> ReturnedParamIndices(const ir::Program& program, const ir::Function& fn);

// The final ReturnStmt of `fn` (looking through SeqStmts and RuntimeScopeStmt), or null.
const ir::ReturnStmt* FindReturn(const ir::Function& fn);

// Where a Var of a function body gets its value: an AssignStmt, iter_arg / result `index` of
// a loop, or result `index` of an if.
struct VarDef {
  enum Kind { Assign, ForIter, ForReturn, IfReturn } kind;
  const ir::AssignStmt* assign = nullptr;
  const ir::ForStmt* loop = nullptr;
  const ir::IfStmt* branch = nullptr;
  size_t index = 0;
};

// The definitions of one statement tree (through SeqStmts, loops, ifs and scopes), for the
// passes that follow values back to their definitions by Var pointer:
//   VarDefs d = CollectVarDefs(fn.body);
//   if (const VarDef* def = d.find(v); def && def->kind == VarDef::Assign) ... def->assign->value
struct VarDefs {
  std::vector<const ir::ForStmt*> loops;   // every ForStmt, in pre-order
  // The definition of `v`, or null when the tree does not define it.
  const VarDef* find(const ir::Var* v) const { return defs_.find(v); }
  // How many Vars have a definition.
  size_t size() const { return defs_.size(); }
  // Records `def` as the definition of `v` (a later one replaces an earlier one).
  void set(const ir::Var* v, const VarDef& def) { defs_[v] = def; }
  // Room for `vars` definitions without regrowing (CountVarDefs).
  void reserve(size_t vars) { defs_.reserve(vars); }

 private:
  PtrMap<ir::Var, VarDef> defs_;   // a node-based map allocated a node per Var of a long body
};
VarDefs CollectVarDefs(const ir::StmtPtr& body);
// How many Vars `body` defines (assignments, loop iter_args and results, if results): what a
// per-Var table of it is reserved to, so filling it never rehashes (a 100,000-statement body
// otherwise rehashes its tables ~17 times, scattering them over memory).
size_t CountVarDefs(const ir::StmtPtr& body);

}  // namespace pypto::transforms
