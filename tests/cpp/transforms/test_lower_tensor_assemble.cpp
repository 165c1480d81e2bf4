// LowerTensorAssemble: a copy task into the target's view when the source is a separate
// tensor; nothing when the source already is that view.
#include "orch_test_util.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/return_lineage.h"

using namespace pypto::orch_test;
using namespace pypto::transforms;

namespace {

TypePtr T3216() { return TensorType::make({I(32), I(16)}, DataType::FP32); }

// orch(x, out: Out):  part = create([16,16]); part = k(x, part); out = assemble(out, part, [16, 0])
// lowered:            ... dst = slice(out, [16,16], [16,0]); dst = pypto_copy_fp32_16x16(part, dst);
//                     out = assemble(out, dst, [16, 0])
ProgramPtr build(bool lowered) {
  auto k = kernel("k", 1, 1, true);
  auto x = V("x", T16()), out = V("out", T3216());
  auto part0 = V("part", T16()), part1 = V("part", T16()), out1 = V("out", T3216());
  auto offs = ilist({16, 0});
  std::vector<StmtPtr> body = {AssignStmt::make(part0, create16()),
                               AssignStmt::make(part1, Call::make_func("k", {x, part0}, T16()))};
  std::vector<FunctionPtr> fns = {k};
  if (!lowered) {
    body.push_back(AssignStmt::make(out1, Call::make_op("tensor.assemble", {out, part1, offs})));
  } else {
    auto src = V("src", T16()), dst = V("dst", T16());
    auto t = V("t", tile16());
    auto copy = Function::make(
        "pypto_copy_fp32_16x16", FunctionType::InCore, {src, dst}, {ParamDirection::In, ParamDirection::Out}, {T16()},
        SeqStmts::make({AssignStmt::make(t, Call::make_op("tile.load", {src, ilist({0, 0}), ilist({16, 16})})),
                        AssignStmt::make(V("dst_1", T16()), Call::make_op("tile.store", {t, ilist({0, 0}), dst})),
                        ReturnStmt::make({dst})}));
    auto view = V("out_dst", T16()), written = V("out_dst", T16());
    body.push_back(AssignStmt::make(view, Call::make_op("tensor.slice", {out, ilist({16, 16}), offs})));
    body.push_back(AssignStmt::make(written, Call::make_func(copy->name, {part1, view}, T16())));
    body.push_back(AssignStmt::make(out1, Call::make_op("tensor.assemble", {out, written, offs})));
    fns.push_back(copy);
  }
  body.push_back(ReturnStmt::make({out}));
  auto orch = Function::make("orch", FunctionType::Orchestration, {x, out}, {ParamDirection::In, ParamDirection::Out},
                             {T3216()}, SeqStmts::make(body));
  fns.insert(fns.begin() + 1, orch);
  return Program::make("P", fns);
}

}  // namespace

TEST(LowerTensorAssemble, SeparateSourceGetsCopyTask) {
  auto got = LowerTensorAssemble().run(build(false));
  EXPECT_TRUE(StructEq(got, build(true)));
  EXPECT_EQ(ExplicitReturnedParamIndices(*got->get("pypto_copy_fp32_16x16")), std::vector<int>{1});
}

TEST(LowerTensorAssemble, InPlaceViewUnchanged) {
  // blk = slice(out, [16,16], [16,0]); blk = k(x, blk); out = assemble(out, blk, [16, 0])
  auto k = kernel("k", 1, 1, true);
  auto x = V("x", T16()), out = V("out", T3216());
  auto blk0 = V("blk", T16()), blk1 = V("blk", T16()), out1 = V("out", T3216());
  auto orch = Function::make(
      "orch", FunctionType::Orchestration, {x, out}, {ParamDirection::In, ParamDirection::Out}, {T3216()},
      SeqStmts::make({AssignStmt::make(blk0, Call::make_op("tensor.slice", {out, ilist({16, 16}), ilist({16, 0})})),
                      AssignStmt::make(blk1, Call::make_func("k", {x, blk0}, T16())),
                      AssignStmt::make(out1, Call::make_op("tensor.assemble", {out, blk1, ilist({16, 0})})),
                      ReturnStmt::make({out})}));
  auto p = Program::make("P", {k, orch});
  EXPECT_EQ(LowerTensorAssemble().run(p), p);
}

TEST(LowerTensorAssemble, ViewAtOtherOffsetsIsCopied) {
  auto k = kernel("k", 1, 1, true);
  auto x = V("x", T16()), out = V("out", T3216());
  auto blk0 = V("blk", T16()), blk1 = V("blk", T16()), out1 = V("out", T3216());
  auto orch = Function::make(
      "orch", FunctionType::Orchestration, {x, out}, {ParamDirection::In, ParamDirection::Out}, {T3216()},
      SeqStmts::make({AssignStmt::make(blk0, Call::make_op("tensor.slice", {out, ilist({16, 16}), ilist({0, 0})})),
                      AssignStmt::make(blk1, Call::make_func("k", {x, blk0}, T16())),
                      AssignStmt::make(out1, Call::make_op("tensor.assemble", {out, blk1, ilist({16, 0})})),
                      ReturnStmt::make({out})}));
  auto got = LowerTensorAssemble().run(Program::make("P", {k, orch}));
  EXPECT_TRUE(got->get("pypto_copy_fp32_16x16"));
}
