// Builders for the printer tests: short spellings of the IR factories.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pypto/ir/function.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/printer.h"

namespace pypto::ir::ptest {

inline ExprPtr I(int64_t v) { return ConstInt::make(v); }
inline ExprPtr ints(std::vector<int64_t> v) {
  std::vector<ExprPtr> e;
  for (auto x : v) e.push_back(I(x));
  return MakeTuple::make(e);
}
inline TypePtr scalar(DataType d) { return ScalarType::make(d); }
inline TypePtr tensor(std::vector<int64_t> shape, DataType d = DataType::FP32) {
  std::vector<ExprPtr> s;
  for (auto x : shape) s.push_back(I(x));
  return TensorType::make(s, d);
}
inline TypePtr tile(std::vector<int64_t> shape, DataType d = DataType::FP32, MemorySpace m = MemorySpace::Vec) {
  std::vector<ExprPtr> s;
  for (auto x : shape) s.push_back(I(x));
  return TileType::make(s, d, m);
}
inline TypePtr task_id() { return ScalarType::make(DataType::TASK_ID); }
inline VarPtr var(const std::string& name, TypePtr t) { return Var::make(name, std::move(t)); }
inline ExprPtr bin(BinaryOp op, ExprPtr a, ExprPtr b) { return BinaryExpr::make(op, std::move(a), std::move(b)); }
inline CallPtr op(const std::string& name, std::vector<ExprPtr> args, Attrs attrs = {}) {
  return Call::make_op(name, std::move(args), std::move(attrs));
}
inline StmtPtr assign(VarPtr v, ExprPtr e) { return AssignStmt::make(std::move(v), std::move(e)); }
inline StmtPtr ret(std::vector<ExprPtr> v) { return ReturnStmt::make(std::move(v)); }
inline StmtPtr seq(std::vector<StmtPtr> v) { return SeqStmts::make(std::move(v)); }

// An InCore kernel `name(x: In, out: Out) -> out type` that stores x into out (for callees).
inline FunctionPtr copy_kernel(const std::string& name, std::vector<int64_t> shape = {16, 16}) {
  auto x = var("x", tensor(shape));
  auto out = var("out", tensor(shape));
  auto t = var("t", tile(shape));
  auto stored = var("out", out->type);
  std::vector<int64_t> zeros(shape.size(), 0);
  return Function::make(name, FunctionType::InCore, {x, out}, {ParamDirection::In, ParamDirection::Out},
                        {out->type},
                        seq({assign(t, op("tile.load", {x, ints(zeros), ints(shape)})),
                             assign(stored, op("tile.store", {t, ints(zeros), out})), ret({stored})}));
}

// Prints `body` as the body of an Orchestration function `f(self, <params>)` and returns the
// body lines only (the function's own two header lines removed, indentation of 4 removed).
inline std::string body_text(const std::vector<VarPtr>& params, StmtPtr body) {
  std::vector<ParamDirection> dirs(params.size(), ParamDirection::In);
  auto f = Function::make("f", FunctionType::Orchestration, params, dirs, {}, std::move(body));
  std::string text = python_print(f);
  // Drop the decorator and the def line(s): up to the first line ending in ':'.
  text = text.substr(text.find('\n') + 1);
  text = text.substr(text.find(":\n") + 2);
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string ln = text.substr(pos, nl - pos);
    out += (ln.rfind("    ", 0) == 0 ? ln.substr(4) : ln) + "\n";
    pos = nl + 1;
  }
  return out;
}

}  // namespace pypto::ir::ptest
