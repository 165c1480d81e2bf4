// VerifyManualDepsOnSubmitOnly
//
// What: checks the ManualDepsOnSubmitOnly invariant: user-written dependency edges live only
//   in Submit::deps. No Call to a program function carries attrs["manual_dep_edges"] or
//   Call::manual_dep_edges; among op calls only system.task_dummy (the barrier, whose fan-in
//   contract is Call::manual_dep_edges) may carry them; and no scope is left that still holds
//   deps= in its attrs (outlining moved them).
//       Call("kernel", attrs={"manual_dep_edges": [t]})   -> violation
//       Call op "system.task_dummy" manual_dep_edges=[t]  -> fine
// Input invariants: none. Output: the program, unchanged. A violation is a compiler bug
//   (the parser and the passes never build one): InternalError listing every violation.
// Why: codegen reads dependency edges from Submits only; an edge on a plain Call would be
//   silently dropped, leaving its consumer unordered.
#include <sstream>

#include "pypto/ir/error.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

struct Checker : IRVisitor {
  std::string fn;
  std::vector<std::string> out;
  std::string where(const Span& s) const {
    return s.known() ? " at " + (s.file.empty() ? std::string("<unknown>") : s.file.str()) + ":" + std::to_string(s.line) : "";
  }
  void visit_(const Call* op) override {
    // A function call's attrs are free-form: a "manual_dep_edges" key there is a misplaced edge list.
    if (op->attrs.count("manual_dep_edges") || !op->manual_dep_edges.empty()) {
      if (!op->is_op) {
        out.push_back("function '" + fn + "': call to '" + op->callee + "'" + where(op->span) +
                      " carries manual_dep_edges (only Submit::deps may hold user edges)");
      } else if (op->callee != "system.task_dummy") {
        out.push_back("function '" + fn + "': op '" + op->callee + "'" + where(op->span) +
                      " carries manual_dep_edges (only system.task_dummy may)");
      }
    }
    IRVisitor::visit_(op);
  }
  // A type's shape holds no call or scope: skip the type walk at every Var use.
  void visit_(const Var*) override {}
  void visit_(const IterArg*) override {}
  void visit_(const ScopeStmt* op) override {
    if (op->scope_kind != ScopeKind::Cluster && !op->options.deps.empty()) {
      out.push_back("function '" + fn + "': a scope" + where(op->span) + " still carries deps= (not outlined)");
    }
    IRVisitor::visit_(op);
  }
};

}  // namespace

std::vector<std::string> CheckManualDepsOnSubmitOnly(const ProgramPtr& program) {
  Checker c;
  for (auto& fn : program->functions) {
    c.fn = fn->name;
    if (fn->body) c.visit_stmt(fn->body);
  }
  return c.out;
}

Pass VerifyManualDepsOnSubmitOnly() {
  return Pass{"VerifyManualDepsOnSubmitOnly", {}, {IRProperty::ManualDepsOnSubmitOnly}, [](const ProgramPtr& program) {
                auto problems = CheckManualDepsOnSubmitOnly(program);
                if (!problems.empty()) {
                  std::ostringstream os;
                  for (auto& p : problems) os << "\n  " << p;
                  PYPTO_CHECK(false, "ManualDepsOnSubmitOnly does not hold:" << os.str());
                }
                return program;
              },
              /*invalidated=*/{}, /*checks_produced=*/true};
}

}  // namespace pypto::transforms
