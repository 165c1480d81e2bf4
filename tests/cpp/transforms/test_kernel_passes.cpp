// The kernel pipeline's analyses and the kernel verify pass: KernelParamSlots
// (Function::param_slots), KernelGroupSync (Function::group_sync), KernelInPlaceCarries
// (ForStmt::inplace_carries), KernelInPlaceMatmulLoads (Call::reads_in_place),
// KernelLendLoopInits (ForStmt::lent_inits) and
// VerifyKernelFunction / VerifyKernelProgram; what the CPU kernel backend reads from them.
#include "orch_test_util.h"
#include "pypto/codegen/kernel_cpu.h"
#include "pypto/ir/printer.h"
#include "pypto/transforms/ir_property.h"
#include "pypto/transforms/pass.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/verify_program.h"

using namespace pypto::orch_test;
using namespace pypto::transforms;

namespace {

// Group g(x, c: InOut, out: Out): c1 = mm(x, c) [AIC, writes c]; o1 = act(c1, out) [AIV, reads c].
ProgramPtr group_program() {
  auto mm = kernel("mm", 1, 1, true, FunctionType::AIC);     // mm(x0, y0: Out)
  auto act = kernel("act", 1, 1, true, FunctionType::AIV);   // act(x0, y0: Out)
  auto x = V("x", T16()), c = V("c", T16()), out = V("out", T16());
  auto c1 = V("c1", T16()), o1 = V("o1", T16());
  auto g = Function::make("g", FunctionType::Group, {x, c, out},
                          {ParamDirection::In, ParamDirection::InOut, ParamDirection::Out}, {T16()},
                          SeqStmts::make({AssignStmt::make(c1, Call::make_func("mm", {x, c}, T16())),
                                          AssignStmt::make(o1, Call::make_func("act", {c1, out}, T16())),
                                          ReturnStmt::make({out})}));
  return RunPass(InferKernelCoreTypes(), Program::make("P", {mm, act, g}));
}

// kernel k(x, y: Out): t = load(x); for i, (acc,) in range(0, 4, 1, init=(t,)): n = add(acc, t);
// yield n; store(acc_out, y).
ProgramPtr loop_program() {
  auto x = V("x", T16()), y = V("y", T16());
  auto t = V("t", tile16()), n = V("n", tile16()), out = V("acc_out", tile16()), st = V("y_st", T16());
  auto acc = IterArg::make("acc", tile16(), t);
  auto body = SeqStmts::make({AssignStmt::make(n, Call::make_op("tile.add", {acc, t})), YieldStmt::make({n})});
  auto loop = ForStmt::make(V("i", S(DataType::INDEX)), I(0), I(4), I(1), {acc}, body, {out});
  auto k = Function::make(
      "k", FunctionType::InCore, {x, y}, {ParamDirection::In, ParamDirection::Out}, {T16()},
      SeqStmts::make({AssignStmt::make(t, Call::make_op("tile.load", {x, ilist({0, 0}), ilist({16, 16})})), loop,
                      AssignStmt::make(st, Call::make_op("tile.store", {out, ilist({0, 0}), y})), ReturnStmt::make({y})}));
  return Program::make("P", {k});
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const ForStmt* first_loop(const ProgramPtr& p) {
  for (auto& s : flatten_stmts(p->get("k")->body)) {
    if (auto* f = s->as<ForStmt>()) return f;
  }
  return nullptr;
}

}  // namespace

TEST(KernelGroupSync, StampsSlotsAndOneFlagPerCrossCoreConflict) {
  auto before = group_program();
  EXPECT_FALSE(VerifyProperty(IRProperty::KernelGroupSyncResolved, before).empty());
  EXPECT_FALSE(VerifyProperty(IRProperty::KernelParamSlotsResolved, before).empty());
  auto after = RunPass(KernelGroupSync(), RunPass(KernelParamSlots(), before));
  const GroupSync& mm = after->get("mm")->group_sync;
  const GroupSync& act = after->get("act")->group_sync;
  EXPECT_EQ(after->get("mm")->param_slots, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(mm.signals, (std::vector<int64_t>{0}));
  EXPECT_TRUE(mm.waits.empty());
  EXPECT_EQ(after->get("act")->param_slots, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(act.waits, (std::vector<int64_t>{0}));
  EXPECT_TRUE(after->get("g")->param_slots.empty());   // not a kernel
  EXPECT_TRUE(VerifyProperty(IRProperty::KernelGroupSyncResolved, after).empty());
  EXPECT_TRUE(VerifyProperty(IRProperty::KernelParamSlotsResolved, after).empty());
  EXPECT_FALSE(structural_equal(before, after));
  EXPECT_NE(python_print(after).find("param_slots=[1, 2], group_waits=[0]"), std::string::npos);
  // The backend prints what it reads.
  EXPECT_NE(pypto::codegen::GenerateKernelCpu(after, "act").find("pto2_group_wait(ctx, 0)"), std::string::npos);
  EXPECT_NE(pypto::codegen::GenerateKernelCpu(after, "mm").find("pto2_group_signal(ctx, 0)"), std::string::npos);
}

TEST(KernelGroupSync, BackendRefusesAGroupKernelWithoutTheStamp) {
  EXPECT_THROW(pypto::codegen::GenerateKernelCpu(group_program(), "act"), InternalError);
}

TEST(KernelParamSlots, PlainKernelsCountTensorsAndScalarsApart) {
  auto x = V("x", T16()), y = V("y", T16());
  auto n = V("n", S(DataType::INT32)), f = V("f", S(DataType::FP32));
  auto st = V("y_st", T16()), t = V("t", tile16());
  auto k = Function::make(
      "k", FunctionType::InCore, {x, n, y, f},
      {ParamDirection::In, ParamDirection::In, ParamDirection::Out, ParamDirection::In}, {T16()},
      SeqStmts::make({AssignStmt::make(t, Call::make_op("tile.load", {x, ilist({0, 0}), ilist({16, 16})})),
                      AssignStmt::make(st, Call::make_op("tile.store", {t, ilist({0, 0}), y})), ReturnStmt::make({st})}));
  auto after = RunPass(KernelParamSlots(), Program::make("P", {k}));
  EXPECT_EQ(after->get("k")->param_slots, (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_NE(python_print(after).find("param_slots=[0, 0, 1, 1]"), std::string::npos);
  const std::string code = pypto::codegen::GenerateKernelCpu(after, "k");
  EXPECT_NE(code.find("ctx->scalars[1]"), std::string::npos) << code;   // f
  EXPECT_NE(code.find("ctx->tensors[1]"), std::string::npos) << code;   // y
  EXPECT_THROW(pypto::codegen::GenerateKernelCpu(Program::make("P", {k}), "k"), InternalError);   // not stamped
}

TEST(KernelInPlaceCarries, StampsTheAccumulatorAndTheBackendDropsTheCopy) {
  auto before = RunPass(KernelParamSlots(), loop_program());
  EXPECT_FALSE(VerifyProperty(IRProperty::InPlaceCarriesFound, before).empty());
  const std::string copied = pypto::codegen::GenerateKernelCpu(before, "k");
  auto after = RunPass(KernelInPlaceCarries(), before);
  EXPECT_EQ(first_loop(after)->inplace_carries, (std::vector<int64_t>{0}));
  EXPECT_TRUE(VerifyProperty(IRProperty::InPlaceCarriesFound, after).empty());
  EXPECT_NE(python_print(after).find("inplace_carries=[0]"), std::string::npos);
  EXPECT_FALSE(structural_equal(before, after));
  // Both copy the init into the carry; without the stamp the yield copies too, with it the
  // add writes the carry directly.
  EXPECT_EQ(count(copied, "pypto_kernel::copy("), 2u);
  EXPECT_EQ(count(pypto::codegen::GenerateKernelCpu(after, "k"), "pypto_kernel::copy("), 1u);
}

// kernel k(x, w, y: Out): a = load(x); b = load(w); m = matmul(a, b); store(m, y).
ProgramPtr matmul_program() {
  auto x = V("x", T16()), w = V("w", T16()), y = V("y", T16());
  auto a = V("a", tile16()), b = V("b", tile16()), m = V("m", tile16(MemorySpace::Acc)), st = V("y_st", T16());
  auto k = Function::make(
      "k", FunctionType::InCore, {x, w, y}, {ParamDirection::In, ParamDirection::In, ParamDirection::Out}, {T16()},
      SeqStmts::make({AssignStmt::make(a, Call::make_op("tile.load", {x, ilist({0, 0}), ilist({16, 16})})),
                      AssignStmt::make(b, Call::make_op("tile.load", {w, ilist({0, 0}), ilist({16, 16})})),
                      AssignStmt::make(m, Call::make_op("tile.matmul", {a, b})),
                      AssignStmt::make(st, Call::make_op("tile.store", {m, ilist({0, 0}), y})), ReturnStmt::make({st})}));
  return Program::make("P", {k});
}

TEST(KernelInPlaceMatmulLoads, StampsTheMatmulOperandsAndTheBackendReadsThemInPlace) {
  auto before = RunPass(KernelParamSlots(), matmul_program());
  EXPECT_EQ(VerifyProperty(IRProperty::InPlaceMatmulLoadsStamped, before).size(), 2u);   // one per load
  EXPECT_EQ(count(pypto::codegen::GenerateKernelCpu(before, "k"), "load_view"), 0u);
  auto after = RunPass(KernelInPlaceMatmulLoads(), before);
  EXPECT_TRUE(VerifyProperty(IRProperty::InPlaceMatmulLoadsStamped, after).empty());
  auto stmts = flatten_stmts(after->get("k")->body);
  EXPECT_TRUE(stmts[0]->as<AssignStmt>()->value->as<Call>()->reads_in_place);
  EXPECT_TRUE(stmts[1]->as<AssignStmt>()->value->as<Call>()->reads_in_place);
  EXPECT_EQ(count(python_print(after), "reads_in_place=True"), 2u);
  EXPECT_FALSE(structural_equal(before, after));
  EXPECT_EQ(count(pypto::codegen::GenerateKernelCpu(after, "k"), "load_view"), 2u);
}

TEST(KernelLendLoopInits, StampsAnInitReadOnlyByTheLoopAndTheBackendDropsItsCopy) {
  // loop_program with the init z = add(t, t): read by nothing but the loop (t is read again).
  auto p = loop_program();
  auto k = p->get("k");
  auto stmts = flatten_stmts(k->body);
  auto t = stmts[0]->as<AssignStmt>()->var;
  auto z = V("z", tile16());
  auto* loop = stmts[1]->as<ForStmt>();
  auto acc = IterArg::make("acc", tile16(), z);
  auto n = V("n", tile16());
  auto body = SeqStmts::make({AssignStmt::make(n, Call::make_op("tile.add", {acc, t})), YieldStmt::make({n})});
  auto lending = ForStmt::make(loop->loop_var, I(0), I(4), I(1), {acc}, body, loop->return_vars);
  auto fn = Function::make("k", FunctionType::InCore, k->params, k->param_directions, k->return_types,
                           SeqStmts::make({stmts[0], AssignStmt::make(z, Call::make_op("tile.add", {t, t})), lending,
                                           stmts[2], stmts[3]}));
  auto before = RunPass(KernelParamSlots(), Program::make("P", {fn}));
  EXPECT_FALSE(VerifyProperty(IRProperty::LoopInitLendingStamped, before).empty());
  auto after = RunPass(KernelLendLoopInits(), before);
  EXPECT_EQ(first_loop(after)->lent_inits, (std::vector<int64_t>{0}));
  EXPECT_TRUE(VerifyProperty(IRProperty::LoopInitLendingStamped, after).empty());
  EXPECT_NE(python_print(after).find("lent_inits=[0]"), std::string::npos);
  EXPECT_FALSE(structural_equal(before, after));
  // Without the stamp the init is copied into the carry's slot and the yield copies; with it
  // only the yield copies. loop_program's init t is read again by the body: never lent.
  EXPECT_EQ(count(pypto::codegen::GenerateKernelCpu(before, "k"), "pypto_kernel::copy("), 2u);
  EXPECT_EQ(count(pypto::codegen::GenerateKernelCpu(after, "k"), "pypto_kernel::copy("), 1u);
  EXPECT_TRUE(first_loop(RunPass(KernelLendLoopInits(), loop_program()))->lent_inits.empty());
}

TEST(VerifyKernelProgram, RefusesWhatTheBackendCannotPrintWithTheSpan) {
  Span at{"k.py", 3, 11, 3, 12, "    def k(a"};
  auto a = Var::make("a", ArrayType::make(4, DataType::INT32), at);
  auto y = V("y", T16());
  auto k = Function::make("k", FunctionType::InCore, {a, y}, {ParamDirection::In, ParamDirection::Out}, {T16()},
                          SeqStmts::make({ReturnStmt::make({y})}));
  auto p = Program::make("P", {k});
  try {
    VerifyKernelFunction(p, "k");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), "kernel parameter 'a' must be a tensor or a scalar");
    EXPECT_EQ(e.span().line, 3);
  }
  EXPECT_THROW(RunPass(VerifyKernelProgram(), p), UserError);
  EXPECT_THROW(pypto::codegen::GenerateKernelCpu(p, "k"), UserError);
  EXPECT_EQ(VerifyProperty(IRProperty::KernelProgramVerified, p).size(), 1u);
  EXPECT_TRUE(VerifyProperty(IRProperty::KernelProgramVerified, loop_program()).empty());
}
