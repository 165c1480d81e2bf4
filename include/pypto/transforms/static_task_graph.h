// The static task graph: the task graph a chip-level orchestration will run, read from the IR
// after the pass pipeline, without building or running anything (an analysis, not a pass: it
// changes nothing). What `CompiledProgram.task_graph(static=True)` and `pypto graph --static`
// show.
//
// It interprets the orchestration as the runtime would execute it: loops are unrolled, `if`
// takes the branch its condition selects, every kernel / Group call or submission is a task
// (an SPMD or cluster submission is one task, as in the executed graph), `pl.system.task_dummy`
// is a barrier and `tensor.read` / `tensor.write` a get_tensor_data wait. Its edges are the
// ones the runtime's race checker records (runtime/src/race_checker.h): automatic edges from
// overlapping regions of the same storage (views, transposes, reshapes and assembled slices
// compared by their strided boxes, as region.cpp does) outside MANUAL scopes, explicit edges
// from `deps=` and from the compiler's AutoDeriveTaskDependencies edges, and wait edges.
//
// A HOST orchestration's graph is the L3 runtime's: one node per next-level task (a submission
// of a chip-level orchestration, labelled with it and core type CHIP), barriers, explicit
// edges from deps= (add_dep_wait) and chain edges (kind "chain": the L3 runtime runs the tasks
// of one target in submission order); tensors add no order at that level.
//
// Values that exist only at run time (a scalar parameter not given, a dynamic dimension not
// given, a value read by `tensor.read`) may flow into kernel arguments freely; only when one
// decides control flow (a loop bound, an `if` condition), a shape, a view offset or a slot
// index is there no static graph: a located UserError says which value and why.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "pypto/ir/function.h"

namespace pypto::transforms {

// Known values of the program's run-time inputs: dynamic dimensions and scalar parameters
// by name (integers, or floats for float scalars).
struct StaticGraphInputs {
  std::map<std::string, int64_t> dims;
  std::map<std::string, int64_t> int_scalars;
  std::map<std::string, double> float_scalars;
};

// The task graph of orchestration `entry` of `prepared` (a program after the pass pipeline)
// as Graphviz DOT text in the executed graph's format (runtime/src/task_graph.cpp), with
// `graph [static=true];`. UserError when `entry` has no static graph (see above).
//
//   std::string dot = StaticTaskGraphDot(*prepared, "main", {{{"M", 96}}, {}, {}});
//   // digraph pypto_tasks { ... t1 [label="mm\nAIC  #1\nprog.py:30", kind="task", task=1, ...
std::string StaticTaskGraphDot(const ir::Program& prepared, const std::string& entry, const StaticGraphInputs& inputs);

}  // namespace pypto::transforms
