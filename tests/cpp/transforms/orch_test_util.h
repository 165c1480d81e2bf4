// Builders shared by the pass and orchestration-codegen tests: small IR programs written
// with the IR API (the DSL equivalent is in each builder's comment).
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pypto/ir/error.h"
#include "pypto/ir/function.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/structural_equal.h"

namespace pypto::orch_test {

using namespace pypto::ir;

inline ExprPtr I(int64_t v) { return ConstInt::make(v); }
inline ExprPtr ilist(std::vector<int64_t> v) {
  std::vector<ExprPtr> e;
  for (auto x : v) e.push_back(I(x));
  return MakeTuple::make(e);
}
inline TypePtr T16(DataType d = DataType::FP32) { return TensorType::make({I(16), I(16)}, d); }
inline TypePtr tile16(MemorySpace m = MemorySpace::Vec) { return TileType::make({I(16), I(16)}, DataType::FP32, m); }
inline TypePtr S(DataType d) { return ScalarType::make(d); }
inline VarPtr V(const std::string& n, TypePtr t) { return Var::make(n, std::move(t)); }
inline CallPtr create16(DataType d = DataType::FP32, bool manual_dep = false) {
  Attrs a{{"dtype", std::string(to_string(d))}};
  if (manual_dep) a["manual_dep"] = true;
  return Call::make_op("tensor.create", {ilist({16, 16})}, a);
}

// kernel `name`(ins..., outs: Out) -> one tensor per out; each out is written with tile.store
// of (the first in + 1), and returned as the store's result (not the param: NormalizeReturnOrder
// makes it explicit). `explicit_return` builds the normalized form directly.
inline FunctionPtr kernel(const std::string& name, int n_in, int n_out, bool explicit_return = false,
                          FunctionType type = FunctionType::InCore, MemorySpace mem = MemorySpace::Vec,
                          std::vector<DataType> scalars = {}, ParamDirection out_dir = ParamDirection::Out) {
  std::vector<VarPtr> params;
  std::vector<ParamDirection> dirs;
  for (int i = 0; i < n_in; ++i) {
    params.push_back(V("x" + std::to_string(i), T16()));
    dirs.push_back(ParamDirection::In);
  }
  std::vector<VarPtr> outs;
  for (int i = 0; i < n_out; ++i) {
    outs.push_back(V("y" + std::to_string(i), T16()));
    params.push_back(outs.back());
    dirs.push_back(out_dir);
  }
  for (size_t i = 0; i < scalars.size(); ++i) {
    params.push_back(V("s" + std::to_string(i), S(scalars[i])));
    dirs.push_back(ParamDirection::In);
  }
  std::vector<StmtPtr> body;
  auto src = n_in > 0 ? params[0] : outs[0];
  auto t = V("t", tile16());
  body.push_back(AssignStmt::make(t, Call::make_op("tile.load", {src, ilist({0, 0}), ilist({16, 16})})));
  if (mem != MemorySpace::Vec) {
    auto m = Call::make_op("tile.move", {t}, Attrs{{"target_memory", std::string(to_string(mem))}});
    body.push_back(AssignStmt::make(V("tm", m->type), m));
  }
  std::vector<ExprPtr> rets;
  std::vector<TypePtr> rtypes;
  for (auto& o : outs) {
    auto st = V(o->name + "_st", T16());
    body.push_back(AssignStmt::make(st, Call::make_op("tile.store", {t, ilist({0, 0}), o})));
    rets.push_back(explicit_return ? ExprPtr(o) : ExprPtr(st));
    rtypes.push_back(T16());
  }
  body.push_back(ReturnStmt::make(rets));
  return Function::make(name, type, params, dirs, rtypes, SeqStmts::make(body));
}

// The spec's complete example:
//   def orch_basic(self, a, b, d: Out):
//       c = pl.create_tensor([16, 16], dtype=pl.FP32)
//       c = self.kernel_add(a, b, c)
//       d = self.kernel_add(c, b, d)
//       return d
inline ProgramPtr orch_basic() {
  auto k = kernel("kernel_add", 2, 1);
  auto a = V("a", T16()), b = V("b", T16()), d = V("d", T16());
  auto c0 = V("c", T16()), c1 = V("c", T16()), d1 = V("d", T16());
  auto body = SeqStmts::make({
      AssignStmt::make(c0, create16()),
      AssignStmt::make(c1, Call::make_func("kernel_add", {a, b, c0}, T16())),
      AssignStmt::make(d1, Call::make_func("kernel_add", {c1, b, d}, T16())),
      ReturnStmt::make({d1}),
  });
  auto orch = Function::make("orch_basic", FunctionType::Orchestration, {a, b, d},
                             {ParamDirection::In, ParamDirection::In, ParamDirection::Out}, {T16()}, body);
  return Program::make("OrchBasic", {k, orch});
}

inline ::testing::AssertionResult StructEq(const ProgramPtr& got, const ProgramPtr& want) {
  std::string why;
  if (structural_equal_explain(got, want, &why)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << why;
}

// Runs `f`, expects a UserError whose message contains `needle`.
template <class F>
void ExpectUserError(F&& f, const std::string& needle) {
  try {
    f();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find(needle), std::string::npos) << "message: " << e.message();
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected UserError containing '" << needle << "', got: " << e.what();
    return;
  }
  ADD_FAILURE() << "expected UserError containing '" << needle << "', nothing thrown";
}

}  // namespace pypto::orch_test
