// VarLineageCollector: traces each Var of an Orchestration body back to the function
// parameter it is (by pointer), through simple Var-to-Var assignments and non-rebound loop
// carries / loop results. Used for identity decisions (is this tensor parameter N?), never
// names.
//
//   VarLineage l = VarLineageCollector::Collect(fn);
//   l.param_of(v) == fn.params[2].get()   // or nullptr
#pragma once
#include <unordered_map>

#include "pypto/ir/function.h"

namespace pypto::codegen::orchestration {

class VarLineage {
 public:
  // The parameter Var `v` is the same value as, or null.
  const ir::Var* param_of(const ir::Var* v) const;

 private:
  friend class VarLineageCollector;
  std::unordered_map<const ir::Var*, const ir::Var*> parent_;
  std::unordered_map<const ir::Var*, int> params_;
};

class VarLineageCollector {
 public:
  static VarLineage Collect(const ir::Function& fn);
};

}  // namespace pypto::codegen::orchestration
