// Array backing (spec anchor_features §13): which C array a `pl.Array` SSA value lives in.
// Arrays are updated in place, so every version of an array shares one storage:
//
//   w = pl.array.create(4, pl.FP32)              backing(w)   == w
//   w_1 = pl.array.update_element(w, 0, 1.0)     backing(w_1) == w   (same C array, slot written)
//   for i, (w_2,) in pl.range(n, init_values=(w_1,)):   backing(w_2) == w  (the carry reuses it)
//   if c: r = pl.yield_(w_1)  else: r = pl.yield_(z)    backing(r) == r   (branches differ: a phi
//                                                          array `float r[4];` with slot copies)
//
// Used by StampArrayBackings (Function::array_backings, which the orchestration code generator
// prints) and by VerifyOrchestrationProgram / VerifyArrayVersions (no read of an older version
// after an in-place update).
#pragma once
#include <map>
#include <unordered_map>
#include <utility>

#include "pypto/ir/function.h"

namespace pypto::transforms {

class ArrayBacking {
 public:
  // Analyses every array-typed Var of `fn`.
  explicit ArrayBacking(const ir::Function& fn);
  // The Var whose C array `v` lives in (`v` itself for an array.create result, a phi if-result
  // or anything not traced). Example: Backing(w_1) == w for w_1 = update_element(w, 0, x).
  const ir::Var* Backing(const ir::Var* v) const;
  // True when result `i` of `s` needs its own array: its branches yield values of different
  // backings (or it has no else branch yielding one).
  bool IfResultIsPhi(const ir::IfStmt& s, size_t i) const;

 private:
  void collect(const ir::StmtPtr& s);
  std::unordered_map<const ir::Var*, const ir::Var*> parent_;                      // next step toward the backing
  std::unordered_map<const ir::Var*, std::pair<const ir::IfStmt*, size_t>> if_result_;
  mutable std::unordered_map<const ir::Var*, const ir::Var*> memo_;
};

// The YieldStmt ending a for / if body, looking through a trailing runtime scope (where
// MaterializeRuntimeScopes puts it); null when the body ends without one.
const ir::YieldStmt* BodyYield(const ir::StmtPtr& body);

}  // namespace pypto::transforms
