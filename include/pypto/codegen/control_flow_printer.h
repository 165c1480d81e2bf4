// Structured control flow for the orchestration, HOST and CPU kernel code generators: loops
// and branches whose values are carried through C++ variables (SSA iter_args / if results).
//
// One printer owns the shape every generator prints:
//
//   <carry declarations>                    // loop_carry(f, i): declared, initialised, bound
//   for (int64_t i = 0; i < n; i += 1) {    // open_loop(f, carries) (ForHeader / RangeLoop*)
//       ... body ...                        // print_body, under the loop's yield targets
//       <yield: carry = value;>             // yield_value per value, then the moves
//   }
//   <loop results bound>                    // bind_loop_results(f, carries)
//
//   <result declarations>                   // branch_result(s, k)
//   if (cond) {                             // condition(s.cond)
//       ... yield ...
//   } else {
//       ... yield ...
//   }
//   <results bound>                         // bind_branch_results(s, results)
//
// and the yield-target stack: a YieldStmt writes the targets of the innermost loop or if. A
// generator derives from ControlFlowPrinter<Target> (Target: what one carry is in its code —
// a C++ variable, a tile buffer, a TaskId array ...) and says in the hooks below how a value,
// a type and a name are spelled. A yielded value that is a plain assignment comes back from
// yield_value as a CarryMove; the printer prints the moves of one yield as a simultaneous
// assignment (temporaries when a value reads a carry the same yield already reassigned, so
// swapped carries stay correct):
//
//   int64_t a_next = b;     // only on a hazard (or always, for CarryMove::always_temp)
//   int64_t b_next = a;
//   a = a_next;
//   b = b_next;
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pypto/codegen/cpp_writer.h"
#include "pypto/ir/error.h"
#include "pypto/ir/function.h"
#include "pypto/ir/stmt.h"

namespace pypto::codegen::common {

// One assignment of a yield: `target = value;`.
struct CarryMove {
  std::string target;               // the carry's C++ name
  std::string value;                // the yielded value's C++ text
  std::vector<std::string> reads;   // the identifiers `value` reads (the hazard check)
  // The temporary that holds `value` when the assignment cannot be made in place:
  // `temp_type temp = value;` with temp a fresh name from `temp_base` (default target + "_next").
  std::string temp_type = "auto";
  std::string temp_base;
  bool always_temp = false;   // snapshot even without a hazard (the kernel's scalar carries)
  // Prints the write itself instead of `target = value;`, at the move's place among the
  // assignments (a tile copy, an array copied slot by slot); never takes a temporary.
  std::function<void()> print;
};

// The identifiers C++ text reads, for CarryMove::reads: "a_1 + n * (int64_t)b" -> {a_1, n,
// int64_t, b}; a member or qualified name (`t.value()`, `TaskHandle::invalid()`) counts by its
// first part only.
std::vector<std::string> CppIdentifiers(const std::string& text);

// `text` as the body of a C++ string literal: '"' and '\\' escaped, control characters dropped,
// and no trigraph: CppStringBody("what??!") == "what?\\?!".
std::string CppStringBody(const std::string& text);

// `"prog.py", 12`: the DSL file (base name, quoted for a C++ string) and line of `span`, the
// arguments of the run-time checks that name a DSL line (pto2_range_count, PTO2_SOURCE_SITE).
std::string CppSourceSiteArgs(const ir::Span& span);

// The arguments after the condition of a DSL `assert` (op system.assert) in generated C++: its
// message and site, `"n must be positive", "prog.py", 12` (pto2_assert, pypto_kernel::assert_true).
std::string CppAssertArgs(const ir::Call& assert_call);

// The slot index `index` (printed `text`) of a pl.array of `size` slots, as C++ text: a constant
// as it is (the array ops refuse one outside 0..size-1 when the IR is built), anything else
// through pto2_array_slot, which throws naming the DSL line when it is out of range (a C array
// would be read or written outside its slots): `w[pto2_array_slot(i, 4, "prog.py", 9)]`. `span`
// is the array op's (the statement indexing the array, not where the index was defined).
std::string CppArraySlot(const std::string& text, const ir::ExprPtr& index, int64_t size, const ir::Span& span);

// The declaration of a pl.array: `[[maybe_unused]] float w[4] = {};` (init " = {}" or "";
// `ctype` the element's C++ type). An array of numbers written and never read is a program g++
// -Wall reports as "set but not used", an error under -Werror.
std::string ArrayDecl(const std::string& ctype, const std::string& name, int64_t size, const std::string& init);

// `for (int64_t i = start; i < stop; i += step)` (`i > stop` for a descending constant step).
// Only where the loop is not ForStmt::counted (StampCountedLoops): otherwise the last `i += step`
// can pass INT64_MAX (signed overflow: the loop wraps around and never ends), and the generators
// print the counted form.
std::string ForHeader(const std::string& var, const std::string& start, const std::string& stop,
                      const std::string& step, bool descending);

// The loop bound `stop` as printed, cast to int64_t when its dtype is UINT64: compared with the
// int64_t loop variable it would be compared as unsigned (`pl.range(-2, n)` would run no
// iteration, and g++ warns -Wsign-compare); the DSL compares in the promoted INDEX dtype.
//   LoopStop(n_u64, "n") == "static_cast<int64_t>(n)"
std::string LoopStop(const ir::ExprPtr& stop, const std::string& printed);

// The C++ names of a loop whose step is known only at run time (Python's range semantics):
//   const int64_t i_start = <start>;                                          // RangeLoopPrologue
//   const int64_t i_step = <step>;
//   const uint64_t i_count = pto2_range_count(i_start, <stop>, i_step, "prog.py", 12);
//   for (uint64_t i_k = 0; i_k < i_count; ++i_k) {                            // RangeLoopHeader
//       const int64_t i = (int64_t)((uint64_t)i_start + i_k * (uint64_t)i_step);   // RangeLoopVarLine
// (a zero step fails the run naming the DSL line; the bounds and the step are read once). The
// orchestration and HOST loops print it; a kernel, which has no pto2_range_count, its own form.
struct RangeLoopNames {
  std::string var, start, step, count, k;
};
void RangeLoopPrologue(CppWriter& w, const RangeLoopNames& n, const std::string& start, const std::string& step,
                       const std::string& stop, const ir::Span& span);
std::string RangeLoopHeader(const RangeLoopNames& n);
std::string RangeLoopVarLine(const RangeLoopNames& n);

template <class Target>
class ControlFlowPrinter : public CppWriter {
 public:
  // The targets a yield writes: the innermost loop's carries or if's results.
  struct Frame {
    const ir::ForStmt* loop = nullptr;   // null for an if
    std::vector<Target> targets;
  };

  void print_for(const ir::ForStmt& f);
  void print_if(const ir::IfStmt& s);
  void print_yield(const ir::YieldStmt& y);

 protected:
  // ---- loops ----
  // Declares (before the loop) and binds iter_arg `i` of `f`; returns where its yields go.
  virtual Target loop_carry(const ir::ForStmt& f, size_t i) = 0;
  // Names the loop variable, prints the loop header (ForHeader, RangeLoop*) and opens its
  // block.
  virtual void open_loop(const ir::ForStmt& f, const std::vector<Target>& carries) = 0;
  // After the loop: binds f.return_vars to what the carries hold.
  virtual void bind_loop_results(const ir::ForStmt& f, const std::vector<Target>& carries) = 0;
  // ---- branches ----
  // Declares (before the if) result `k` of `s`; returns where the branches' yields go.
  virtual Target branch_result(const ir::IfStmt& s, size_t k) = 0;
  // The C++ text of an if condition.
  virtual std::string condition(const ir::ExprPtr& cond) = 0;
  // After the if: binds s.return_vars to the results (and prints what reads them out).
  virtual void bind_branch_results(const ir::IfStmt& s, const std::vector<Target>& results) = 0;
  // ---- the statement proper ----
  // Around the loop or if itself (after the carries or results are declared, before they are
  // bound): a generator may print it in a function of its own. Nothing by default.
  virtual void open_statement(const ir::Stmt&) {}
  virtual void close_statement(const ir::Stmt&) {}
  // ---- bodies and yields ----
  virtual void print_body(const ir::StmtPtr& body) = 0;
  // Yielded value `value` into target `i` of `frame`: the move that writes it, or nullopt
  // when nothing is left to print (the value is the carry, or the hook printed the write
  // itself, before the moves: an array copy, a TaskId phi array, a tile snapshot).
  virtual std::optional<CarryMove> yield_value(Frame& frame, size_t i, const ir::ExprPtr& value) = 0;
  // A fresh C++ identifier from `base` (a move's temporary).
  virtual std::string fresh_name(const std::string& base) = 0;

 private:
  void print_moves(std::vector<CarryMove>& moves);
  void take_temp(CarryMove& m);
  std::vector<Frame> frames_;   // innermost loop / if last
};

// ---------------------------------------------------------------------------------------------

template <class Target>
void ControlFlowPrinter<Target>::print_for(const ir::ForStmt& f) {
  Frame frame{&f, {}};
  for (size_t i = 0; i < f.iter_args.size(); ++i) frame.targets.push_back(loop_carry(f, i));
  open_statement(f);
  open_loop(f, frame.targets);
  frames_.push_back(std::move(frame));
  print_body(f.body);
  frame = std::move(frames_.back());
  frames_.pop_back();
  close_block();
  close_statement(f);
  bind_loop_results(f, frame.targets);
}

template <class Target>
void ControlFlowPrinter<Target>::print_if(const ir::IfStmt& s) {
  Frame frame;
  for (size_t k = 0; k < s.return_vars.size(); ++k) frame.targets.push_back(branch_result(s, k));
  open_statement(s);
  open_block("if (" + condition(s.cond) + ")");
  frames_.push_back(std::move(frame));
  print_body(s.then_body);
  if (s.else_body) {
    close_block("} else {");
    reopen_block();
    print_body(s.else_body);
  }
  frame = std::move(frames_.back());
  frames_.pop_back();
  close_block();
  close_statement(s);
  bind_branch_results(s, frame.targets);
}

template <class Target>
void ControlFlowPrinter<Target>::print_yield(const ir::YieldStmt& y) {
  PYPTO_CHECK(!frames_.empty(), "codegen: a yield outside a loop or branch");
  Frame& frame = frames_.back();
  PYPTO_CHECK(frame.targets.size() == y.values.size(),
              "codegen: a yield of " << y.values.size() << " values for " << frame.targets.size() << " targets");
  std::vector<CarryMove> moves;
  for (size_t i = 0; i < y.values.size(); ++i) {
    std::optional<CarryMove> m = yield_value(frame, i, y.values[i]);
    if (!m || (!m->print && m->value == m->target)) continue;   // already in place
    if (m->always_temp) take_temp(*m);   // in yield order, between the forms yield_value prints
    moves.push_back(std::move(*m));
  }
  print_moves(moves);
}

// Simultaneous assignment: when a value reads a target an earlier move of the same yield
// reassigns, every value goes through a temporary first.
template <class Target>
void ControlFlowPrinter<Target>::print_moves(std::vector<CarryMove>& moves) {
  bool hazard = false;
  for (size_t j = 0; j < moves.size() && !hazard; ++j) {
    for (size_t k = 0; k < j && !hazard; ++k) {
      for (const std::string& r : moves[j].reads) hazard = hazard || r == moves[k].target;
    }
  }
  if (hazard) {
    for (CarryMove& m : moves) {
      if (!m.print && !m.always_temp) take_temp(m);
    }
  }
  for (const CarryMove& m : moves) {
    if (m.print) m.print();
    else line(m.target + " = " + m.value + ";");
  }
}

template <class Target>
void ControlFlowPrinter<Target>::take_temp(CarryMove& m) {
  std::string temp = fresh_name(m.temp_base.empty() ? m.target + "_next" : m.temp_base);
  line(m.temp_type + " " + temp + " = " + m.value + ";");
  m.value = temp;
  m.reads = {temp};
}

}  // namespace pypto::codegen::common
