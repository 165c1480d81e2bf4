// Small builders shared by the IR unit tests.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pypto/ir/error.h"
#include "pypto/ir/function.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/structural_equal.h"

namespace pypto::ir::test {

inline ExprPtr I(int64_t v) { return ConstInt::make(v); }
inline ExprPtr F(double v) { return ConstFloat::make(v); }
inline ExprPtr list(std::vector<int64_t> v) {
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
inline VarPtr var(const std::string& name, TypePtr t) { return Var::make(name, std::move(t)); }
inline Span span_at(int line, int col, int end_col, const std::string& text) {
  Span s;
  s.file = "prog.py";
  s.line = line;
  s.col = col;
  s.end_line = line;
  s.end_col = end_col;
  s.source_line = text;
  return s;
}
inline CallPtr op(const std::string& name, std::vector<ExprPtr> args, Attrs attrs = {}, Span span = {}) {
  return Call::make_op(name, std::move(args), std::move(attrs), std::move(span));
}

// Runs `f`, expects a UserError whose message contains `needle`; returns the error.
template <class F>
UserError expect_user_error(F&& f, const std::string& needle) {
  try {
    f();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find(needle), std::string::npos) << "message: " << e.message() << "\nexpected: " << needle;
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected UserError containing '" << needle << "', got: " << e.what();
    return UserError("", {});
  }
  ADD_FAILURE() << "expected UserError containing '" << needle << "', nothing thrown";
  return UserError("", {});
}

}  // namespace pypto::ir::test
