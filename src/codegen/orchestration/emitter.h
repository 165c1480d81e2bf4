// The orchestration emitter's shared state (private to src/codegen/orchestration).
//
// One Emitter generates one Orchestration function. Its pieces live in one file per
// construct: entry/phases (orchestration_codegen.cpp), names (names.cpp), expressions
// (emit_expr.cpp), tasks (emit_tasks.cpp), buffers (emit_buffers.cpp), control flow
// (emit_control_flow.cpp), tensor ops (op_handlers.cpp via op_registry.h), kernel ids and
// core types (kernel_ids.cpp), and the dependency seam
// (manual_dependencies.h).
//
// Identity is the Var pointer: `bindings_` maps each IR Var to the C++ text that names it.
// A result that aliases an argument (an in-place Out/InOut write, tensor.assemble, a Var
// copy, a non-rebound loop carry) is *bound to the same text* — no alias declaration.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pypto/codegen/cpp_scalar_expr.h"
#include "pypto/codegen/cpp_scopes.h"
#include "pypto/codegen/control_flow_printer.h"
#include "../common/task_id_lowering.h"
#include "manual_dependencies.h"
#include "pypto/codegen/orchestration.h"
#include "pypto/ir/function.h"
#include "pypto/transforms/scope_carries.h"

namespace pypto::codegen::orchestration {

// C++ text naming an IR value, plus the declared identifiers it mentions.
struct Binding {
  std::string text;
  std::vector<std::string> idents;
};

// Elements of a tuple-valued call (`_tc_<N>` key): one binding per element; `task_outs`
// names the TaskOutputTensors of a Submit (its last element is the TaskId).
struct TupleRecord {
  std::string key;
  std::vector<Binding> elements;
  std::vector<bool> runtime_allocated;   // per element: `task_outs.get_ref(k)` (gets a const Tensor& name)
  std::string task_outs;   // "" for a plain Call
};

// ---- per-construct state: each class's data is private behind a few named operations, which
// only the construct file named on it calls (others at most read through a const Emitter
// accessor); the Emitter holds one instance of each (it lives for one function's emission).

// Tuple-valued calls seen so far (emit_tasks.cpp): the elements of each, by the tuple Var.
class TupleValues {
 public:
  void record(const ir::Var* v, TupleRecord rec);
  TupleRecord& of(const ir::Var* v);   // checked: `v` was recorded
 private:
  std::unordered_map<const ir::Var*, TupleRecord> records_;
};

// Allocation batches (emit_buffers.cpp): which creates StampAllocationBatches put in a block's
// entry batch (Function::batched_creates, a const view), and which of them are allocated so far.
class AllocationBatches {
 public:
  explicit AllocationBatches(const ir::Function& fn);
  bool stamped(const ir::Var* v) const { return stamped_.count(v) > 0; }
  bool allocated(const ir::Var* v) const { return allocated_.count(v) > 0; }
  void mark_allocated(const ir::Var* v) { allocated_.insert(v); }
 private:
  const std::unordered_set<const ir::Var*> stamped_;
  std::unordered_set<const ir::Var*> allocated_;
};

// Runtime scope exits (emit_control_flow.cpp): the C++ names declared before a PTO2_SCOPE for
// what leaves it — a TaskId its following yield carries out (RuntimeScopeStmt::carried_task_ids),
// and the exit slots of values read after it (RuntimeScopeStmt::exit_values), per assignment /
// loop / if {result index, slot}, assigned after that statement.
class ScopeExits {
 public:
  using Slots = std::vector<std::pair<size_t, std::string>>;
  void hoist_task_id(const ir::Var* v, const std::string& name) { task_ids_[v] = name; }
  const std::string* hoisted_task_id(const ir::Var* v) const {
    auto it = task_ids_.find(v);
    return it == task_ids_.end() ? nullptr : &it->second;
  }
  void add_slot(const ir::Stmt* defining, size_t index, const std::string& slot) {
    slots_[defining].emplace_back(index, slot);
  }
  const Slots* slots(const ir::Stmt* defining) const {
    auto it = slots_.find(defining);
    return it == slots_.end() ? nullptr : &it->second;
  }
 private:
  std::unordered_map<const ir::Var*, std::string> task_ids_;
  std::unordered_map<const ir::Stmt*, Slots> slots_;
};

// The generator's output besides the text (KernelTable, kernel_ids.cpp, writes it as
// emit_tasks.cpp prints each submission; GenerateOrchestration reads it): kernel ids per callee in
// order of first use (spec README decision 3), each callee's core type, and each kernel's run-time
// direction per tensor argument ("IN" / "OUT" / "INOUT"), in add_* order, as printed at its first
// submission (anchor §15).
struct KernelTableResult {
  std::map<std::string, int> kernel_ids;
  std::map<std::string, ir::CoreType> core_types;
  std::map<std::string, std::vector<std::string>> kernel_signatures;
};

class KernelTable {
 public:
  // A function's stamped core type (a Group's own, besides its kernels').
  void set_core_type(const std::string& callee, ir::CoreType core);
  // A submitted kernel: records its core type and (at its first submission) its signature;
  // returns its id (assigned at first use).
  int submit(const std::string& kernel, ir::CoreType core, const std::vector<std::string>& signature);
  const KernelTableResult& result() const { return result_; }
 private:
  KernelTableResult result_;
};

class Emitter;

// The shared TaskId lowering's view of an Emitter (task_ids.cpp): slot-loop indices are
// declared in a C++ block of their own.
class L2TaskIdWriter : public common::TaskIdWriter {
 public:
  explicit L2TaskIdWriter(Emitter& e) : e_(e) {}
  void line(const std::string& text) override;
  void open_block(const std::string& header) override;
  void close_block() override;
  std::string slot_index() override;
  void release_slot_index() override;

 private:
  Emitter& e_;
};

// Where a loop / branch yield writes one value (the orchestration target of the shared
// control-flow printer): the C++ variable `name` ("" = no assignment: a non-rebound carry, an
// if's array result that is the pre-if array) of the iter_arg / if result `var`.
struct CarryTarget {
  std::string name;
  const ir::Var* var = nullptr;
  std::optional<Binding> result;   // what the loop result names, when not the iter_arg's binding
  std::string tensor;              // a Tensor if result: the Tensor read out of `name` (an optional) after the if
};

class Emitter : public common::CppScalarExprPrinter, public common::ControlFlowPrinter<CarryTarget> {
 public:
  Emitter(const ir::ProgramPtr& program, const ir::FunctionPtr& fn);
  std::string Generate();

  // ---- output: common::CppWriter (line, blank, open_block, close_block, reopen_block);
  // each block is a C++ name scope (on_open_block / on_close_block); loops and branches:
  // common::ControlFlowPrinter (print_for, print_if, print_yield) ----

  // ---- names and bindings (names.cpp) ----
  // The C++ name scopes of the blocks being printed: printer state (which identifiers the
  // generated text declares and uses), not a fact about the program; every construct file
  // declares its temporaries here so names stay unique along the block chain.
  CppScopes& scopes() { return scopes_; }
  std::string declare(const ir::Var* v, const std::string& base = "", bool voidable = true);
  void bind(const ir::Var* v, Binding b);
  bool bound(const ir::Var* v) const { return bindings_.count(v) > 0; }
  const Binding* find_binding(const ir::Var* v) const;   // null when `v` is not bound yet
  const Binding& binding_of(const ir::Var* v) const;
  std::string ref(const ir::Var* v);           // text, marking its identifiers used
  Binding capture(const ir::ExprPtr& e);       // an expression's text without marking uses
  void mark_used(const Binding& b);
  std::string base_name(const ir::Var* v) const;

  // ---- expressions (emit_expr.cpp) ----
  std::string expr(const ir::ExprPtr& e);
  static std::string ctype(ir::DataType d);
  static std::string runtime_dtype(ir::DataType d, const ir::Span& span);
  // `16`, `(uint32_t)(M)` for an argument's extent, else checked at full width naming the DSL
  // line of `span`: `pto2_extent_u32(n, "prog.py", 12)`.
  std::string u32(const ir::ExprPtr& e, const ir::Span& span = {});
  std::string i64(const ir::ExprPtr& e);        // `16` or `(int64_t)(expr)`
  // `site_args` (common::ArgumentSiteArgs): a value the integer parameter cannot hold fails the run there.
  std::string scalar_slot(const ir::ExprPtr& e, ir::DataType param_dtype, const std::string& site_args = "");   // add_scalar operand
  bool non_negative(const ir::ExprPtr& e, ir::DataType as) const override;
  static std::string strip_parens(const std::string& text);   // "(a + b)" -> "a + b"

  // ---- statements ----
  void emit_stmt(const ir::StmtPtr& s);
  void emit_block_body(const ir::StmtPtr& body);    // batched allocs, then the statements (long runs of calls chunked)
  // stmts[i] is a call, a Function::call_operands value, or a task with a tuple result whose
  // elements are (chunked with calls).
  bool in_call_chunk(const std::vector<ir::StmtPtr>& stmts, size_t i) const;
  // The statement whose Var names stmts[i] in the stamps: a task with a tuple result is named by
  // its first element (the statement after it), anything else by itself.
  static const ir::Stmt& named_stmt(const std::vector<ir::StmtPtr>& stmts, size_t i);
  bool is_open_call(const ir::Stmt& named) const;   // a call of Function::open_calls: no chunk ends after it
  bool is_cut_call(const ir::Stmt& named) const;    // a call of Function::cut_calls: a chunk ends after it
  // The end of the chunk of calls starting at stmts[i] (one past its last statement).
  size_t chunk_end(const std::vector<ir::StmtPtr>& stmts, size_t i) const;
  void emit_call_chunk(const std::vector<ir::StmtPtr>& stmts, size_t begin, size_t end);
  static std::string carried_type(const ir::Var& v);   // a chunk's handed-on member: `Tensor`, `int64_t`
  void emit_assign(const ir::AssignStmt& s);

  // ---- tasks (emit_tasks.cpp) ----
  // True when the function has 64 or more task statements (Function::task_statements, stamped
  // by CountTaskStatements; emit_statements.cpp): each task then gets its own `{ }` block (one
  // stack slot for all their Args) and long runs of Calls are chunked.
  bool calls_in_own_blocks() const;
  // `"prog.py", 42` for the run-time checks and PTO2_SOURCE_SITE that name a DSL line.
  static std::string source_site_args(const ir::Span& span);
  void emit_task(const ir::Expr& call_or_submit, const ir::Var* result);
  void emit_tuple_element(const ir::Var* target, const ir::TupleGetItem& g);

  // ---- buffers (emit_buffers.cpp) ----
  struct CreateSite {
    const ir::Var* var;
    const ir::Call* call;
  };
  void emit_alloc_batch(const std::vector<CreateSite>& creates);
  std::vector<CreateSite> batchable_creates(const std::vector<ir::StmtPtr>& stmts);
  bool is_batched(const ir::Var* v) const { return batches_.allocated(v); }

  // ---- control flow (emit_control_flow.cpp) ----
  void emit_runtime_scope(const ir::RuntimeScopeStmt& s);
  // The C++ variable declared before a PTO2_SCOPE for a TaskId the scope's following yield
  // carries out (RuntimeScopeStmt::carried_task_ids), or null.
  const std::string* hoisted_task_id(const ir::Var* v) const { return scope_exits_.hoisted_task_id(v); }

  // ---- shared state ----
  const ir::ProgramPtr& program() const { return program_; }
  const ir::Function& function() const { return *fn_; }
  int next_task() { return task_counter_++; }
  int next_alloc() { return alloc_counter_++; }
  int next_tuple() { return tuple_counter_++; }
  const KernelTableResult& kernel_table() const { return kernels_.result(); }   // after Generate
  // The shared PTO2TaskId spelling (common/task_id_lowering.h): printer state, it writes lines.
  common::TaskIdLowering& task_ids() { return task_ids_; }
  const common::TaskIdStamps& task_id_stamps() const { return task_id_stamps_; }   // ResolveTaskIds
 private:
  // common::ControlFlowPrinter (emit_control_flow.cpp)
  CarryTarget loop_carry(const ir::ForStmt& f, size_t i) override;
  void open_loop(const ir::ForStmt& f, const std::vector<CarryTarget>& carries) override;
  void bind_loop_results(const ir::ForStmt& f, const std::vector<CarryTarget>& carries) override;
  CarryTarget branch_result(const ir::IfStmt& s, size_t k) override;
  std::string condition(const ir::ExprPtr& cond) override {
    return strip_parens(common::CppTruthText(expr(cond), common::ScalarDtypeOf(cond)));
  }
  void bind_branch_results(const ir::IfStmt& s, const std::vector<CarryTarget>& results) override;
  void open_statement(const ir::Stmt& s) override;    // emit_statements.cpp
  void close_statement(const ir::Stmt& s) override;
  void print_body(const ir::StmtPtr& body) override { emit_block_body(body); }
  std::optional<common::CarryMove> yield_value(Frame& frame, size_t i, const ir::ExprPtr& value) override;
  std::string fresh_name(const std::string& base) override { return scopes_.declare(base, false); }
  // common::CppScalarExprPrinter (emit_expr.cpp)
  std::string var_text(const ir::Var* v, const ir::Span& span) override;
  std::string scalar_type(ir::DataType d) const override { return ctype(d); }
  [[noreturn]] void unsupported(const ir::ExprPtr& e) override;
  // common::CppWriter: a block is a C++ name scope; unused names get `(void)name;` at its end.
  void on_open_block() override;
  void on_close_block() override;

  ir::ProgramPtr program_;
  ir::FunctionPtr fn_;
  // True when `v` is a dynamic-dim symbol a tensor parameter declares (read from the argument
  // at entry; the entry prologue defines it): an argument's extent, below 2^32.
  bool is_parameter_dim(const ir::Var* v) const;
  // The Var whose C array the pl.Array version `v` lives in (Function::array_backings, stamped by
  // StampArrayBackings), `v` itself when it is its own storage (a create, a phi if-result).
  const ir::Var* array_storage(const ir::Var* v) const;
  const std::unordered_map<const ir::Var*, const ir::Var*> array_backings_;
  void emit_slot_copy(const std::string& dst, const std::string& src, int64_t n);
  common::StringStream body_;   // (moved out by Generate: no copy of the body's text)
  bool needs_optional_header_ = false;   // an if/else Tensor result (emit_if)
  int unoptimised_depth_ = 0;            // inside a chunk of calls or a loop / if printed unoptimised
  std::vector<bool> statement_wrapped_;  // per open loop / if: printed in a function of its own
  CppScopes scopes_;
  std::unordered_map<const ir::Var*, Binding> bindings_;
  const std::unordered_set<const ir::Var*> non_negative_vars_;   // Function::non_negative_vars (StampNonNegativeVars)
  const std::unordered_set<const ir::Var*> call_operands_;       // Function::call_operands (StampCallOperands)
  const std::unordered_set<const ir::Var*> open_calls_;          // Function::open_calls (StampCallOperands)
  const std::unordered_set<const ir::Var*> cut_calls_;           // Function::cut_calls (StampCallOperands)
  const std::unordered_set<const ir::Var*> carried_operands_;    // Function::carried_operands (StampCallOperands)
  TupleValues tuples_;          // emit_tasks.cpp
  AllocationBatches batches_;   // emit_buffers.cpp
  ScopeExits scope_exits_;      // emit_control_flow.cpp
  void assign_exit_slots(const ir::Stmt& s, const std::vector<ir::VarPtr>& results);
  KernelTable kernels_;         // emit_tasks.cpp (defined in kernel_ids.cpp)
  common::TaskIdStamps task_id_stamps_;
  L2TaskIdWriter task_id_writer_{*this};
  common::TaskIdLowering task_ids_{task_id_writer_, common::L2TaskIds()};
  bool marking_ = true;
  ir::Span stmt_span_;           // the statement being emitted (where a use is reported)
  int task_counter_ = 0, alloc_counter_ = 0, tuple_counter_ = 0;
};

}  // namespace pypto::codegen::orchestration
