// DeriveCallDirections: per-call-site directions from the callee's parameters.
#include "orch_test_util.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/ir_property.h"
#include "pypto/transforms/passes.h"

using namespace pypto::orch_test;
using namespace pypto::transforms;

namespace {

// orch(a, io: InOut, o: Out, s: Scalar[FP32]): r = k(a, io, o, s) with k(x0, y0: InOut, y1: Out, s0)
ProgramPtr build(std::vector<ArgDirection> dirs, bool submit) {
  std::vector<VarPtr> kp = {V("x0", T16()), V("y0", T16()), V("y1", T16()), V("s0", S(DataType::FP32))};
  auto k = Function::make("k", FunctionType::InCore, kp,
                          {ParamDirection::In, ParamDirection::InOut, ParamDirection::Out, ParamDirection::In},
                          {T16(), T16()}, ReturnStmt::make({kp[1], kp[2]}));
  auto a = V("a", T16()), io = V("io", T16()), o = V("o", T16()), s = V("s", S(DataType::FP32));
  ExprPtr call;
  if (submit) {
    call = Submit::make("k", {a, io, o, s}, {T16(), T16()}, {}, nullptr, false, false, -1, nullptr, dirs);
  } else {
    call = Call::make_func("k", {a, io, o, s}, k->call_result_type(), dirs);
  }
  auto r = V("r", call->type);
  auto orch = Function::make("orch", FunctionType::Orchestration, {a, io, o, s},
                             {ParamDirection::In, ParamDirection::InOut, ParamDirection::Out, ParamDirection::In}, {},
                             SeqStmts::make({AssignStmt::make(r, call), ReturnStmt::make({})}));
  return Program::make("P", {k, orch});
}

}  // namespace

TEST(DeriveCallDirections, FromCalleeParams) {
  auto got = DeriveCallDirections().run(build({}, false));
  auto expected = build({ArgDirection::In, ArgDirection::InOut, ArgDirection::Out, ArgDirection::Scalar}, false);
  EXPECT_TRUE(StructEq(got, expected));
  EXPECT_TRUE(VerifyProperty(IRProperty::CallDirectionsDerived, got).empty());
  EXPECT_FALSE(VerifyProperty(IRProperty::CallDirectionsDerived, build({}, false)).empty());
}

TEST(DeriveCallDirections, KeepsParserNoDep) {
  auto before = build({ArgDirection::NoDep, ArgDirection::Unset, ArgDirection::NoDep, ArgDirection::Unset}, false);
  auto got = DeriveCallDirections().run(before);
  EXPECT_TRUE(StructEq(got, build({ArgDirection::NoDep, ArgDirection::InOut, ArgDirection::NoDep, ArgDirection::Scalar}, false)));
}

TEST(DeriveCallDirections, Submit) {
  auto got = DeriveCallDirections().run(build({}, true));
  EXPECT_TRUE(StructEq(got, build({ArgDirection::In, ArgDirection::InOut, ArgDirection::Out, ArgDirection::Scalar}, true)));
}

TEST(DeriveCallDirections, Idempotent) {
  auto once = DeriveCallDirections().run(build({}, false));
  EXPECT_EQ(DeriveCallDirections().run(once), once);
}
