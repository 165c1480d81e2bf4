// A small but complete program used by the equality and mutator tests. Each call builds
// fresh Vars, so two calls give structurally equal, pointer-distinct programs.
//
//   M = pl.dynamic("M")
//   class P:
//     @pl.function(type=InCore)
//     def k(self, a: Tensor[[M, 16], FP32], c: Out[Tensor[[M, 16], FP32]]) -> Tensor[[M, 16], FP32]:
//       t = pl.load(a, [0, 0], [16, 16]); u = pl.exp(t); c1 = pl.store(u, [0, 0], c); return c1
//     @pl.function(type=Orchestration)
//     def main(self, a, out: Out[...]) -> Tensor[[M, 16], FP32]:
//       n = pl.tensor.dim(a, 0)
//       for i, (acc, prev) in pl.range(0, 4, 1, init_values=(out, task_invalid())):
//         acc1, tid = pl.submit(self.k, a, acc, deps=[prev])
//         acc2, prev2 = pl.yield_(acc1, tid)
//       if n > 2: r = pl.yield_(acc2) else: r = pl.yield_(out)
//       return r
#pragma once
#include "ir_test_util.h"

namespace pypto::ir::test {

struct SampleOptions {
  std::string kernel_name = "k";
  std::string submit_callee = "k";
  int64_t trip = 4;
  int timing_slot = -1;
  bool swap_yield = false;   // else branch yields acc2 instead of out
};

inline ProgramPtr sample_program(const SampleOptions& o = {}) {
  auto M = Var::make("M", ScalarType::make(DataType::INDEX));
  auto tt = TensorType::make({M, ConstInt::make(16)}, DataType::FP32);
  auto tile_t = TileType::make({ConstInt::make(16), ConstInt::make(16)}, DataType::FP32);

  // kernel
  auto ka = Var::make("a", tt);
  auto kc = Var::make("c", tt);
  auto t = Var::make("t", tile_t);
  auto u = Var::make("u", tile_t);
  auto c1 = Var::make("c1", tt);
  auto kbody = SeqStmts::make({
      AssignStmt::make(t, Call::make_op("tile.load", {ka, list({0, 0}), list({16, 16})})),
      AssignStmt::make(u, Call::make_op("tile.exp", {t})),
      AssignStmt::make(c1, Call::make_op("tile.store", {u, list({0, 0}), kc})),
      ReturnStmt::make({c1}),
  });
  auto kernel = Function::make(o.kernel_name, FunctionType::InCore, {ka, kc}, {ParamDirection::In, ParamDirection::Out},
                               {tt}, kbody);

  // main
  auto a = Var::make("a", tt);
  auto out = Var::make("out", tt);
  auto n = Var::make("n", ScalarType::make(DataType::INDEX));
  auto i = Var::make("i", ScalarType::make(DataType::INDEX));
  auto invalid = Call::make_op("system.task_invalid", {});
  auto acc = IterArg::make("acc", tt, out);
  auto prev = IterArg::make("prev", ScalarType::make(DataType::TASK_ID), invalid);
  auto sub = Submit::make(o.submit_callee, {a, acc}, {tt}, {prev}, nullptr, false, false, o.timing_slot);
  auto st = Var::make("st", sub->type);
  auto acc1 = Var::make("acc1", tt);
  auto tid = Var::make("tid", ScalarType::make(DataType::TASK_ID));
  auto loop_body = SeqStmts::make({
      AssignStmt::make(st, sub),
      AssignStmt::make(acc1, TupleGetItem::make(st, 0)),
      AssignStmt::make(tid, TupleGetItem::make(st, 1)),
      YieldStmt::make({acc1, tid}),
  });
  auto acc2 = Var::make("acc2", tt);
  auto prev2 = Var::make("prev2", ScalarType::make(DataType::TASK_ID));
  auto loop = ForStmt::make(i, ConstInt::make(0), ConstInt::make(o.trip), ConstInt::make(1), {acc, prev}, loop_body,
                            {acc2, prev2});
  auto r = Var::make("r", tt);
  auto cond = BinaryExpr::make(BinaryOp::Gt, n, ConstInt::make(2));
  auto iff = IfStmt::make(cond, YieldStmt::make({acc2}), YieldStmt::make({o.swap_yield ? ExprPtr(acc2) : ExprPtr(out)}), {r});
  auto body = SeqStmts::make({
      AssignStmt::make(n, Call::make_op("tensor.dim", {a, ConstInt::make(0)})),
      loop,
      iff,
      ReturnStmt::make({r}),
  });
  auto main = Function::make("main", FunctionType::Orchestration, {a, out}, {ParamDirection::In, ParamDirection::Out}, {tt},
                             body);
  return Program::make("P", {kernel, main}, {M});
}

}  // namespace pypto::ir::test
