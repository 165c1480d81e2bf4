// The HOST orchestration emitter's shared state (private to src/codegen/host).
//
// One HostEmitter generates one HOST-level Orchestration function against pto_l3_api.h.
// Pieces: entry and prologue (host_codegen.cpp), statements and next-level submits
// (host_statements.cpp), TaskId values — deps=, task_dummy barriers, arrays, pl.parallel
// fences (host_task_ids.cpp) — and scalar expressions (host_expr.cpp).
//
// Values are bound to C++ text by Var identity: tensors to the external tensor (or a Tensor
// loop/if carry) they name, TaskIds to a `TaskHandle` variable, scalars to a C++ scalar,
// arrays (and pl.parallel TaskId fences) to a C++ array. A
// submit's tensor results alias the Out/InOut arguments passed for the callee's returned
// parameters (L3 allocates nothing).
#pragma once
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "pypto/codegen/cpp_scalar_expr.h"
#include "pypto/codegen/control_flow_printer.h"
#include "../common/task_id_lowering.h"
#include "pypto/codegen/host.h"
#include "pypto/ir/function.h"
#include "pypto/ir/stmt.h"

namespace pypto::codegen::host {

class HostEmitter;

// The shared TaskId lowering's view of a HostEmitter (host_task_ids.cpp).
class HostTaskIdWriter : public common::TaskIdWriter {
 public:
  explicit HostTaskIdWriter(HostEmitter& e) : e_(e) {}
  void line(const std::string& text) override;
  void open_block(const std::string& header) override;
  void close_block() override;
  std::string slot_index() override;

 private:
  HostEmitter& e_;
};

// Where a loop / branch yield writes one value (the HOST target of the shared control-flow
// printer): a scalar, Tensor or array variable, the slot of the current iteration in a
// pl.parallel TaskId fence (`fence_loop` set), or a TaskId phi array of an if (`phi` set: a
// branch's array is copied slot by slot, one TaskId is broadcast into every slot).
struct HostCarry {
  std::string text;
  int64_t array_size = 0;
  const ir::ForStmt* fence_loop = nullptr;
  bool phi = false;
};

class HostEmitter : public common::CppScalarExprPrinter, public common::ControlFlowPrinter<HostCarry> {
 public:
  HostEmitter(ir::ProgramPtr program, ir::FunctionPtr fn);
  std::string Generate();
  const std::map<std::string, int>& target_ids() const { return target_ids_; }

  // ---- output: common::CppWriter (line, open_block, close_block, block_just_opened);
  // loops and branches: common::ControlFlowPrinter (print_for, print_if, print_yield) ----
  // A fresh C++ identifier based on `base` (unique in the whole function, never a reserved name).
  std::string fresh(const std::string& base);

  // ---- bindings ----
  void bind(const ir::Var* v, const std::string& text) { bindings_[v] = text; }
  std::string ref(const ir::Var* v, const ir::Span& span);

  // ---- statements (host_statements.cpp) ----
  void emit_stmt(const ir::StmtPtr& s);
  void emit_seq(const std::vector<ir::StmtPtr>& stmts);   // a block's statements (long entries: chunks)
  void emit_assign(const ir::AssignStmt& a);
  // A next-level submit (Submit, or a plain Call of a chip-level Orchestration function);
  // `result` is the assigned Var (null for an EvalStmt).
  void emit_submit(const ir::Expr& call_expr, const ir::Var* result);
  // Declares the C++ carries of loop iter_args / if return_vars; returns their names.
  std::string declare_carry(const ir::Var* v, const std::string& init_text, const ir::Span& span);


  // ---- TaskId values (host_task_ids.cpp) ----
  // The add_dep_wait lines of TaskArgs `args` for the deps= entries `deps`.
  void emit_dep_waits(const std::string& args, const std::vector<ir::ExprPtr>& deps);
  void emit_task_dummy(const ir::Var* result, const ir::Call& call);   // pl.system.task_dummy
  void emit_array_create(const ir::Var* result);                         // pl.array.create
  void emit_array_get(const ir::Var* result, const ir::Call& call);      // v = arr[k]
  void emit_array_update(const ir::Var* result, const ir::Call& call);   // arr[k] = v
  // The N-slot TaskHandle array that carries TaskId iter_arg `i` of pl.parallel loop `f`
  // (ForStmt::carries[i] = pl.slots(N), stamped by ClassifyIterArgCarry).
  HostCarry declare_fence(const ir::ForStmt& f, size_t i, int64_t n);
  // N when `v` names a C++ array of N TaskHandles, else 0 (ResolveTaskIds' slots).
  int64_t handle_array_size(const ir::Var* v) const { return stamps_.slots(v); }

  // ---- expressions (host_expr.cpp) ----
  std::string expr(const ir::ExprPtr& e);
  // `site_args` (common::ArgumentSiteArgs): a value the integer parameter cannot hold fails the run there.
  std::string scalar_slot(const ir::ExprPtr& e, ir::DataType param_dtype, const std::string& site_args = "");
  static std::string ctype(ir::DataType d);

 private:
  // common::CppScalarExprPrinter (host_expr.cpp)
  std::string var_text(const ir::Var* v, const ir::Span& span) override;
  std::string scalar_type(ir::DataType d) const override { return ctype(d); }
  [[noreturn]] void unsupported(const ir::ExprPtr& e) override;
  // common::ControlFlowPrinter (host_statements.cpp; yields of TaskIds: host_task_ids.cpp)
  HostCarry loop_carry(const ir::ForStmt& f, size_t i) override;
  void open_loop(const ir::ForStmt& f, const std::vector<HostCarry>& carries) override;
  void bind_loop_results(const ir::ForStmt& f, const std::vector<HostCarry>& carries) override;
  HostCarry branch_result(const ir::IfStmt& s, size_t k) override;
  std::string condition(const ir::ExprPtr& cond) override { return common::CppTruthText(expr(cond), common::ScalarDtypeOf(cond)); }
  void bind_branch_results(const ir::IfStmt& s, const std::vector<HostCarry>& results) override;
  void print_body(const ir::StmtPtr& body) override { emit_stmt(body); }
  std::optional<common::CarryMove> yield_value(Frame& frame, size_t i, const ir::ExprPtr& value) override;
  std::string fresh_name(const std::string& base) override { return fresh(base); }

  ir::ProgramPtr program_;
  ir::FunctionPtr fn_;
  std::map<std::string, int> target_ids_;
  std::map<const ir::Var*, std::string> bindings_;
  // the texts bound to each Submit result tuple's elements (tensor results)
  std::map<const ir::Var*, std::vector<std::string>> tuple_elems_;
  std::set<std::string> names_;
  // base -> the suffix fresh(base) last took: names_ only grows, so every smaller suffix is still
  // taken and the next search starts above it (n copies of a name: O(n), not O(n^2)).
  std::map<std::string, int> taken_upto_;
  std::set<const ir::Var*> used_;              // Vars whose binding was referenced
  std::set<std::string> submitted_;            // callees actually submitted
  std::ostringstream body_;
  bool needs_optional_header_ = false;   // an if/else Tensor result (emit_if)
  int task_count_ = 0;
  // 64 task statements or more (Function::task_statements): the body is printed unoptimised and
  // each submission's TaskArgs in a block of its own.
  const bool long_;
  // While emit_seq prints a chunk: the handle declarations it prints before it.
  std::vector<std::string>* handle_decls_ = nullptr;
  HostTaskIdWriter task_id_writer_{*this};
  common::TaskIdLowering task_ids_{task_id_writer_, common::HostTaskIds()};   // TaskHandle spelling
  common::TaskIdStamps stamps_;   // ResolveTaskIds: slots, fresh (no is_valid() guard), read
};

}  // namespace pypto::codegen::host
