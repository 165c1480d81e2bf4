// The shared scalar C++ expression printer (include/pypto/codegen/cpp_scalar_expr.h): its default
// (orchestration) spellings, and the kernel spellings the CPU kernel emitter substitutes through
// its hooks while sharing the walk and the infix operators.
#include <cmath>

#include "pypto/codegen/cpp_scalar_expr.h"
#include "pypto/codegen/kernel_cpu.h"
#include "pypto/transforms/pass.h"
#include "pypto/transforms/passes.h"
#include "../transforms/orch_test_util.h"
#include "name_printer.h"

using namespace pypto::orch_test;
using pypto::codegen_test::has;
using pypto::codegen_test::NamePrinter;
using pypto::codegen::GenerateKernelCpu;
using pypto::codegen::common::CppRuntimeDType;
using pypto::codegen::common::CppScalarType;

namespace {

ExprPtr Bin(BinaryOp op, ExprPtr a, ExprPtr b) { return BinaryExpr::make(op, std::move(a), std::move(b)); }

}  // namespace

TEST(CppScalarExpr, DefaultSpellingsAreTheOrchestrationOnes) {
  NamePrinter p;
  auto n = V("n", S(DataType::INT64)), m = V("m", S(DataType::INT64));
  EXPECT_EQ(p.print_scalar(Bin(BinaryOp::Add, n, I(-1))), "(n + -1)");
  // n may be negative: the runtime's Python-rounding helpers (they check the divisor too).
  EXPECT_EQ(p.print_scalar(Bin(BinaryOp::FloorDiv, n, I(4))), "pto2_floordiv<int64_t>(n, 4, \"\", 0)");
  EXPECT_EQ(p.print_scalar(Bin(BinaryOp::Mod, n, m)), "pto2_mod<int64_t>(n, m, \"\", 0)");
  EXPECT_EQ(p.print_scalar(Bin(BinaryOp::Div, n, m)), "((float)n / (float)m)");
  EXPECT_EQ(p.print_scalar(Bin(BinaryOp::Min, n, m)), "(m < n ? m : n)");   // Python's: n unless m is below it
  EXPECT_EQ(p.print_scalar(Cast::make(n, DataType::INT32)), "((int32_t)(n))");
  EXPECT_EQ(p.print_scalar(ConstFloat::make(0.5, DataType::FP32)), "0.5f");
  EXPECT_EQ(p.print_scalar(UnaryExpr::make(UnaryOp::Not, Bin(BinaryOp::Lt, n, m))), "(!(n < m))");
  EXPECT_THROW(p.print_scalar(Call::make_op("tile.get_block_idx", {})), UserError);
}

TEST(CppScalarExpr, DtypeTablesAreShared) {
  EXPECT_EQ(CppScalarType(DataType::UINT16, "Tid"), "uint16_t");
  EXPECT_EQ(CppScalarType(DataType::BF16, "Tid"), "float");
  EXPECT_EQ(CppScalarType(DataType::TASK_ID, "Tid"), "Tid");
  EXPECT_EQ(CppRuntimeDType(DataType::BF16), "DataType::BFLOAT16");
  EXPECT_EQ(CppRuntimeDType(DataType::INDEX), "DataType::INT64");
  EXPECT_THROW(CppRuntimeDType(DataType::TASK_ID), InternalError);
}

// kernel k(x, y: Out, n: Scalar[INT64]): scalar locals over n, then y = store(load(x)).
TEST(CppScalarExpr, KernelEmitterPrintsTheKernelSpellings) {
  auto x = V("x", T16()), y = V("y", T16()), n = V("n", S(DataType::INT64));
  std::vector<StmtPtr> body;
  auto let = [&](const std::string& name, ExprPtr value) {
    auto v = V(name, value->type);
    body.push_back(AssignStmt::make(v, std::move(value)));
  };
  let("q", Bin(BinaryOp::FloorDiv, n, I(4)));
  let("r", Bin(BinaryOp::Mod, n, I(4)));
  let("lo", Bin(BinaryOp::Min, n, I(-3)));
  let("big", Bin(BinaryOp::Add, n, I(5000000000)));
  let("c", Cast::make(n, DataType::INT32));
  let("h", Bin(BinaryOp::Div, Cast::make(n, DataType::FP32), ConstFloat::make(0.5, DataType::FP32)));
  let("inf", ConstFloat::make(INFINITY, DataType::FP32));
  let("b", Bin(BinaryOp::Add, Call::make_op("tile.get_block_idx", {}), I(1)));
  auto t = V("t", tile16());
  body.push_back(AssignStmt::make(t, Call::make_op("tile.load", {x, ilist({0, 0}), ilist({16, 16})})));
  auto st = V("y_st", T16());
  body.push_back(AssignStmt::make(st, Call::make_op("tile.store", {t, ilist({0, 0}), y})));
  body.push_back(ReturnStmt::make({st}));
  auto k = Function::make("k", FunctionType::InCore, {x, y, n},
                          {ParamDirection::In, ParamDirection::Out, ParamDirection::In}, {T16()}, SeqStmts::make(body));
  std::string code = GenerateKernelCpu(pypto::transforms::RunPass(pypto::transforms::KernelParamSlots(), Program::make("P", {k})), "k");
  for (const char* want : {
           // n // 4, n % 4: a zero divisor fails the run at the expression's line (none here)
           "pypto_kernel::floordiv_checked<int64_t>(ctx, \"\", 0, static_cast<int64_t>(n), static_cast<int64_t>(4))",
           "pypto_kernel::pymod_checked<int64_t>(ctx, \"\", 0, static_cast<int64_t>(n), static_cast<int64_t>(4))",
           "std::min<int64_t>(static_cast<int64_t>(n), static_cast<int64_t>((-3)))",              // min(n, -3)
           "(n + INT64_C(5000000000))",                                                            // beyond int32
           "static_cast<int32_t>(n)",                                                              // cast
           "(static_cast<float>(static_cast<float>(n)) / static_cast<float>((0.5f)))",             // float n / 0.5
           "std::numeric_limits<float>::infinity()",                                               // inf
           "(static_cast<int64_t>(ctx->block_idx) + 1)",                                           // block index
       }) {
    EXPECT_TRUE(has(code, want)) << "missing: " << want << "\n" << code;
  }
}

TEST(CppScalarExpr, KernelScalarCallingAFunctionIsLocatedUserError) {
  // kernel k(x, y: Out): v = g() + 1 (a scalar from another function), then y = store(load(x)).
  auto x = V("x", T16()), y = V("y", T16());
  Span at{"prog.py", 7, 9, 7, 12, "        v = g() + 1"};
  auto v = V("v", S(DataType::INDEX));
  auto t = V("t", tile16());
  auto st = V("y_st", T16());
  auto k = Function::make(
      "k", FunctionType::InCore, {x, y}, {ParamDirection::In, ParamDirection::Out}, {T16()},
      SeqStmts::make({AssignStmt::make(v, Bin(BinaryOp::Add, Call::make_func("g", {}, S(DataType::INDEX), {}, at), I(1))),
                      AssignStmt::make(t, Call::make_op("tile.load", {x, ilist({0, 0}), ilist({16, 16})})),
                      AssignStmt::make(st, Call::make_op("tile.store", {t, ilist({0, 0}), y})), ReturnStmt::make({st})}));
  try {
    GenerateKernelCpu(Program::make("P", {k}), "k");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), "'g' cannot be used as a scalar inside a kernel");
    EXPECT_EQ(e.span().line, 7);
    EXPECT_EQ(e.help(), "calls to other functions are not supported inside a kernel");
  }
}
