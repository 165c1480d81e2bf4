// Defined Vars: every Var a statement defines, nested statements included (assignment targets,
// loop vars, iter_args, loop / if result Vars, a scope's task_id and block vars).
//
//   for i, (acc,) in pl.range(4, init_values=(x,)):    DefinedVars dv; dv.visit_stmt(loop);
//       y = acc + 1                                     dv.defs == {i, acc, y, r}
//       r = pl.yield_(y)                                (r: the loop's result Var)
//
// The loop-copying passes (UnrollLoops, SplitChunkedLoops) give exactly these Vars fresh copies,
// so two copies of one body never share a Var. Private to src/transforms.
#pragma once

#include <unordered_set>

#include "pypto/ir/visitor.h"

namespace pypto::transforms {

struct DefinedVars : ir::IRVisitor {
  std::unordered_set<const ir::Var*> defs;
  void visit_(const ir::AssignStmt* op) override {
    defs.insert(op->var.get());
    IRVisitor::visit_(op);
  }
  void visit_(const ir::ForStmt* op) override {
    defs.insert(op->loop_var.get());
    for (auto& ia : op->iter_args) defs.insert(ia.get());
    for (auto& rv : op->return_vars) defs.insert(rv.get());
    IRVisitor::visit_(op);
  }
  void visit_(const ir::IfStmt* op) override {
    for (auto& rv : op->return_vars) defs.insert(rv.get());
    IRVisitor::visit_(op);
  }
  void visit_(const ir::ScopeStmt* op) override {
    if (op->task_id_var) defs.insert(op->task_id_var.get());
    if (op->block_var) defs.insert(op->block_var.get());
    IRVisitor::visit_(op);
  }
};

}  // namespace pypto::transforms
