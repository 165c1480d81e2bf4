// VarLineageCollector (var_lineage.h).
#include "var_lineage.h"

#include "pypto/ir/visitor.h"

namespace pypto::codegen::orchestration {

using namespace ir;

const Var* VarLineage::param_of(const Var* v) const {
  for (int guard = 0; v && guard < 100000; ++guard) {
    if (params_.count(v)) return v;
    auto it = parent_.find(v);
    if (it == parent_.end()) return nullptr;
    v = it->second;
  }
  return nullptr;
}

namespace {

struct Collector : IRVisitor {
  VarLineage* out;
  std::unordered_map<const Var*, const Var*>* parent;
  void visit_(const AssignStmt* op) override {
    if (auto* src = as_var(op->value)) (*parent)[op->var.get()] = src;
    IRVisitor::visit_(op);
  }
  void visit_(const ForStmt* op) override {
    for (size_t i = 0; i < op->iter_args.size(); ++i) {
      const bool* rebind = attr_get<bool>(op->attrs, "iter_arg_rebind_" + std::to_string(i));
      if (rebind && !*rebind) {
        if (auto* init = as_var(op->iter_args[i]->init)) {
          (*parent)[op->iter_args[i].get()] = init;
          (*parent)[op->return_vars[i].get()] = init;
        }
      }
    }
    IRVisitor::visit_(op);
  }
};

}  // namespace

VarLineage VarLineageCollector::Collect(const Function& fn) {
  VarLineage l;
  for (size_t i = 0; i < fn.params.size(); ++i) l.params_[fn.params[i].get()] = static_cast<int>(i);
  Collector c;
  c.out = &l;
  c.parent = &l.parent_;
  if (fn.body) c.visit_stmt(fn.body);
  return l;
}

}  // namespace pypto::codegen::orchestration
