// StampNonNegativeVars
//
// What: stamps Function::non_negative_vars on every chip-level Orchestration function: the
//   scalar Vars known to be >= 0 wherever they are read, in program order:
//     - the dynamic-dim symbols of its tensor parameters (a dimension is never negative), in
//       parameter order, each once;
//     - the loop variable of every ForStmt whose start is a literal >= 0 and whose step is a
//       literal > 0 (the variable only grows from its start).
//       @pl.function(type=pl.FunctionType.Orchestration)         @pl.function(..., non_negative_vars=["M", "i"])
//       def main(self, x: pl.Tensor[[M, 16], pl.FP32], ...): ==>  def main(self, x: pl.Tensor[[M, 16], pl.FP32], ...):
//           for i in pl.range(0, 8, 2): ...                           for i in pl.range(0, 8, 2): ...
//           for j in pl.range(8, 0, -1): ...                          for j in pl.range(8, 0, -1): ...   (j not stamped)
//   ProvablyNonNegative(e, vars) folds the stamp over an expression (a literal >= 0, a stamped
//   Var, a cast of one, + * // % min max of two such).
// Input invariants: none (run last among the orchestration passes: loops are final).
// Output invariants: NonNegativeVarsStamped; nothing else changes.
// Why: `//` and `%` keep Python's floor semantics in generated C++; over operands >= 0 they are
//   the plain C++ `/` and `%`. The L2 generator reads this stamp instead of recording sign facts
//   while it prints (its dynamic-dim declarations, the loops it has opened).
#include <unordered_set>

#include "pypto/ir/const_integer.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

class LoopVars : public IRVisitor {
 public:
  explicit LoopVars(std::vector<VarPtr>* out) : out_(out) { statements_only_ = true; }
  void visit_(const ForStmt* op) override {
    auto* start = op->start->as<ConstInt>();
    auto* step = op->step->as<ConstInt>();
    if (start && step && start->value >= 0 && step->value > 0) out_->push_back(op->loop_var);
    IRVisitor::visit_(op);
  }

 private:
  std::vector<VarPtr>* out_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    std::vector<VarPtr> vars = NonNegativeVarsOf(*fn);
    if (vars == fn->non_negative_vars) continue;
    out = out->with_function(fn->with_non_negative_vars(std::move(vars)));
  }
  return out;
}

}  // namespace

std::vector<VarPtr> NonNegativeVarsOf(const Function& fn) {
  std::vector<VarPtr> out;
  if (fn.type != FunctionType::Orchestration || fn.level == Level::HOST) return out;
  std::unordered_set<const Var*> seen;
  for (const VarPtr& p : fn.params) {
    auto* tt = p->type->as<TensorType>();
    if (!tt) continue;
    for (const ExprPtr& d : tt->shape) {
      if (d->kind != NodeKind::Var || !seen.insert(static_cast<const Var*>(d.get())).second) continue;
      out.push_back(std::static_pointer_cast<const Var>(d));
    }
  }
  if (fn.body) LoopVars(&out).visit_stmt(fn.body);
  return out;
}

namespace {

DataType dtype_of(const ExprPtr& e) {
  auto* s = e->type ? e->type->as<ScalarType>() : nullptr;
  return s ? s->dtype : DataType::INDEX;
}

// Every non-negative value of dtype `from` is the same value in dtype `to` (a wider type, or a
// signed one of the width). 65535 is -1 as an INT8, and a UINT8 200 is -56 as an INT8.
bool keeps_non_negative_values(DataType from, DataType to) {
  if (from == DataType::BOOL || !is_signed(to)) return true;
  if (!is_integer(from)) return false;
  return bit_width(to) > bit_width(from) || (bit_width(to) == bit_width(from) && is_signed(from));
}

}  // namespace

bool ProvablyNonNegativeAs(const ExprPtr& e, DataType as, const std::unordered_set<const Var*>& non_negative_vars) {
  return keeps_non_negative_values(dtype_of(e), as) && ProvablyNonNegative(e, non_negative_vars);
}

bool ProvablyNonNegative(const ExprPtr& e, const std::unordered_set<const Var*>& non_negative_vars) {
  const DataType d = dtype_of(e);
  if (d == DataType::BOOL || (is_integer(d) && !is_signed(d))) return true;   // 0 / 1; an unsigned value
  if (!is_integer(d)) return false;
  if (auto* v = as_var(e)) return non_negative_vars.count(v) > 0;
  if (auto value = ConstIntegerValue(e)) return *value >= 0;    // a literal, or literal arithmetic, in its dtype
  if (auto* c = e->as<Cast>()) return ProvablyNonNegativeAs(c->value, d, non_negative_vars);
  auto* b = e->as<BinaryExpr>();
  if (!b) return false;
  // an operand as the operation computes it: converted to the result dtype
  const auto operand = [&](const ExprPtr& x) { return ProvablyNonNegativeAs(x, d, non_negative_vars); };
  switch (b->op) {
    case BinaryOp::FloorDiv:   // these never leave the range of their non-negative operands
    case BinaryOp::Mod:
    case BinaryOp::Min:
    case BinaryOp::Max:
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor: return operand(b->a) && operand(b->b);
    case BinaryOp::Shr: return operand(b->a);   // a negative count fails the run
    // + and * of 64-bit values >= 0 (loop indices, extents, their sums and multiples): negative
    // only past 2^63, which no index reaches. A narrower type wraps at once (INT8 100 + 100 is
    // -56), so there they prove nothing.
    case BinaryOp::Add:
    case BinaryOp::Mul: return bit_width(d) == 64 && operand(b->a) && operand(b->b);
    case BinaryOp::Shl: return false;   // shifts into the sign bit
    case BinaryOp::Sub:
    case BinaryOp::Div:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::And:
    case BinaryOp::Or: return false;
  }
  return false;
}

Pass StampNonNegativeVars() {
  return Pass{"StampNonNegativeVars", {}, {IRProperty::NonNegativeVarsStamped}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
