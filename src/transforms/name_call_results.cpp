// NameCallResults
//
// What: in every chip-level Orchestration function of at least kCallChunkMin task statements
//   (the ones the L2 generator chunks), a kernel / Group call written as a statement of its own,
//   without a result, gets one: a fresh Var `<callee>_out`, when the call's one result
//   is one of its arguments (Function::returned_params), as every kernel's Out / InOut result is.
//
//     @pl.function(type=pl.FunctionType.Orchestration)      (the same function, and)
//     def main(self, a, b, t):                      ==>           add_out = self.add(s, b, t)
//         s = pl.tensor.slice(a, [16, 16], [0, 0])
//         self.add(s, b, t)
//         ... (64 task statements or more)
//
// Input invariants: ReturnedParamsStamped, TaskStatementsCounted.
// Output invariants: CallResultsNamed (running it again changes nothing); the program means the
//   same, and the generated code is the same text (a call's result is bound to the argument it
//   writes back: it declares nothing).
// Why: StampCallOperands names by its result Var each call a chunk of calls must not end after
//   (Function::open_calls) or must end after (Function::cut_calls). A value live across a call
//   without a result could not be held in a chunk, and in a chain of such calls (each reading
//   its own slice and the previous one) every slice printed between one-call chunks, in the
//   optimised function: 300 calls made 299 chunks, and the build time grew as before chunking.
#include "pypto/ir/mutator.h"
#include "pypto/transforms/flat_stmts.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

class Namer : public IRMutator {
 public:
  explicit Namer(const Program& program) : program_(program) {}

  StmtPtr mutate_(const EvalStmt* op, const StmtPtr& self) override {
    auto* c = op->expr->as<Call>();
    if (!c || c->is_op || !c->type || !c->type->is<TensorType>() || !returns_an_argument(*c)) return self;
    return AssignStmt::make(Var::make(c->callee + "_out", c->type, op->span), op->expr, op->span);
  }

 private:
  // True when the callee's one result is an argument the call passes as a variable (the L2
  // generator binds the result to it).
  bool returns_an_argument(const Call& c) const {
    FunctionPtr callee = program_.get(c.callee);
    if (!callee || callee->returned_params.size() != 1) return false;
    const int64_t p = callee->returned_params[0];
    return p >= 0 && static_cast<size_t>(p) < c.args.size() && as_var(c.args[p]) != nullptr;
  }

  const Program& program_;
};

// True when some block of `s` has a kernel call statement without a result (a cheap statement
// scan that spares the rebuilding walk for the usual program, whose calls all have one).
bool has_unnamed_call(const StmtPtr& s) {
  return AnyNestedStmt(s, [](const Stmt*, const Stmt& st) {
    auto* e = st.as<EvalStmt>();
    return e && e->expr->is<Call>() && !e->expr->as<Call>()->is_op;
  });
}

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (fn->type != FunctionType::Orchestration || fn->level == Level::HOST || !fn->body ||
        fn->task_statements < kCallChunkMin || !has_unnamed_call(fn->body))
      continue;
    FunctionPtr named = Namer(*program).mutate_function(fn);
    if (named != fn) out = out->with_function(named);
  }
  return out;
}

}  // namespace

Pass NameCallResults() {
  return Pass{"NameCallResults", {IRProperty::ReturnedParamsStamped, IRProperty::TaskStatementsCounted},
              {IRProperty::CallResultsNamed}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
