// Printer tests: statements, functions, programs, name uniquification, tuple unpacking,
// loops/branches in the explicit iter_args form, scopes and the dependency surface.
#include "printer_test_util.h"

namespace pypto::ir::ptest {
namespace {

TEST(PrintProgram, VectorAddExample) {
  // docs/dsl.md's first example, as the parser builds it.
  auto a = var("a", tensor({16, 16}));
  auto b = var("b", tensor({16, 16}));
  auto c = var("c", tensor({16, 16}));
  auto ta = var("ta", tile({16, 16}));
  auto tb = var("tb", tile({16, 16}));
  auto c2 = var("c", tensor({16, 16}));
  auto kernel = Function::make(
      "kernel_add", FunctionType::InCore, {a, b, c}, {ParamDirection::In, ParamDirection::In, ParamDirection::Out},
      {tensor({16, 16})},
      seq({assign(ta, op("tile.load", {a, ints({0, 0}), ints({16, 16})})),
           assign(tb, op("tile.load", {b, ints({0, 0}), ints({16, 16})})),
           assign(c2, op("tile.store", {op("tile.add", {ta, tb}), ints({0, 0}), c})), ret({c2})}));
  auto ma = var("a", tensor({16, 16}));
  auto mb = var("b", tensor({16, 16}));
  auto md = var("d", tensor({16, 16}));
  auto mc = var("c", tensor({16, 16}));
  auto mc2 = var("c", tensor({16, 16}));
  auto md2 = var("d", tensor({16, 16}));
  auto main = Function::make(
      "main", FunctionType::Orchestration, {ma, mb, md}, {ParamDirection::In, ParamDirection::In, ParamDirection::Out},
      {tensor({16, 16})},
      seq({assign(mc, op("tensor.create", {ints({16, 16})}, {{"dtype", std::string("FP32")}})),
           assign(mc2, Call::make_func("kernel_add", {ma, mb, mc}, tensor({16, 16}))),
           assign(md2, Call::make_func("kernel_add", {mc2, mb, md}, tensor({16, 16}))), ret({md2})}));
  auto prog = Program::make("VectorAdd", {kernel, main});
  EXPECT_EQ(python_print(prog),
            "import pypto.language as pl\n"
            "\n"
            "\n"
            "@pl.program\n"
            "class VectorAdd:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            "    def kernel_add(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],\n"
            "                   c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
            "        ta: pl.Tile[[16, 16], pl.FP32] = pl.load(a, [0, 0], [16, 16])\n"
            "        tb: pl.Tile[[16, 16], pl.FP32] = pl.load(b, [0, 0], [16, 16])\n"
            "        c_1: pl.Tensor[[16, 16], pl.FP32] = pl.store(pl.add(ta, tb), [0, 0], c)\n"
            "        return c_1\n"
            "\n"
            "    @pl.function(type=pl.FunctionType.Orchestration)\n"
            "    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],\n"
            "             d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
            "        c: pl.Tensor[[16, 16], pl.FP32] = pl.create_tensor([16, 16], dtype=pl.FP32)\n"
            "        c_1: pl.Tensor[[16, 16], pl.FP32] = self.kernel_add(a, b, c)\n"
            "        d_1: pl.Tensor[[16, 16], pl.FP32] = self.kernel_add(c_1, b, d)\n"
            "        return d_1\n");
}

TEST(PrintProgram, DynamicDimsLevelRoleInOutAndMultiReturn) {
  auto m = var("M", scalar(DataType::INDEX));
  TypePtr tm = TensorType::make({m, I(16)}, DataType::FP32);
  auto x = var("x", tm);
  auto y = var("y", tm);
  auto n = var("n", scalar(DataType::INDEX));
  auto f = Function::make("k2", FunctionType::AIV, {x, y, n}, {ParamDirection::InOut, ParamDirection::Out, ParamDirection::In},
                          {tm, tm}, ret({x, y}), Level::AIV, Role::Worker);
  auto prog = Program::make("Dyn", {f}, {m});
  EXPECT_EQ(python_print(prog),
            "import pypto.language as pl\n"
            "\n"
            "M = pl.dynamic(\"M\")\n"
            "\n"
            "\n"
            "@pl.program\n"
            "class Dyn:\n"
            "    @pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.Worker)\n"
            "    def k2(self, x: pl.InOut[pl.Tensor[[M, 16], pl.FP32]], y: pl.Out[pl.Tensor[[M, 16], pl.FP32]],\n"
            "           n: pl.Scalar[pl.INDEX]) -> tuple[pl.Tensor[[M, 16], pl.FP32], pl.Tensor[[M, 16], pl.FP32]]:\n"
            "        return x, y\n");
}

TEST(PrintNames, UniquifiedPerFunctionAvoidingExistingNamesAndKeywords) {
  auto x1 = var("x", scalar(DataType::INDEX));
  auto x2 = var("x", scalar(DataType::INDEX));
  auto x3 = var("x", scalar(DataType::INDEX));
  auto x_1 = var("x_1", scalar(DataType::INDEX));   // an existing name the suffixes must skip
  auto kw = var("lambda", scalar(DataType::INDEX));
  auto empty = var("", scalar(DataType::INDEX));
  auto body = seq({assign(x2, bin(BinaryOp::Add, x1, I(1))), assign(x3, bin(BinaryOp::Add, x2, x_1)),
                   assign(kw, x3), assign(empty, kw), EvalStmt::make(Call::make_func("g", {empty}, TupleType::unit()))});
  EXPECT_EQ(body_text({x1, x_1}, body),
            "x_2 = x + 1\n"
            "x_3 = x_2 + x_1\n"
            "lambda_ = x_3\n"
            "v = lambda_\n"
            "self.g(v)\n");
}

TEST(PrintStmts, TupleUnpackingOfCallsAndSubmits) {
  auto s = var("s", tensor({16}));
  auto p = var("p", tensor({16}));
  TypePtr pair = TupleType::make({tensor({16}), tensor({16})});
  auto tup = var("tup", pair);
  auto p1 = var("p", tensor({16}));
  auto m1 = var("m", tensor({16}));
  auto call = Call::make_func("kernel_softmax", {s, p}, pair);
  auto sub = Submit::make("kernel", {p1}, {tensor({16})});
  auto st = var("st", sub->type);
  auto out = var("out", tensor({16}));
  auto tid = var("tid", task_id());
  auto body = seq({assign(tup, call), assign(p1, TupleGetItem::make(tup, 0)), assign(m1, TupleGetItem::make(tup, 1)),
                   assign(st, sub), assign(out, TupleGetItem::make(st, 0)), assign(tid, TupleGetItem::make(st, 1)),
                   ret({})});
  EXPECT_EQ(body_text({s, p}, body),
            "p_1, m = self.kernel_softmax(s, p)\n"
            "out, tid = pl.submit(self.kernel, p_1)\n"
            "return\n");
}

TEST(PrintStmts, TupleReadsOutOfOrderOrPartialKeepTheirShape) {
  // Outlined submits read the TaskId first, or only some elements. Such reads of a call print
  // `t = ...; t[i]` (the shape survives parsing); a submit without derived directions must
  // unpack to parse, so it does.
  auto s = var("s", tensor({16}));
  TypePtr pair = TupleType::make({tensor({16}), tensor({16})});
  auto tup = var("tup", pair);
  auto a = var("a", tensor({16}));
  auto b = var("b", tensor({16}));
  auto sub = Submit::make("k2", {s}, {tensor({16})});
  auto st = var("st", sub->type);
  auto tid = var("tid", task_id());
  auto body = seq({assign(tup, Call::make_func("k", {s}, pair)), assign(b, TupleGetItem::make(tup, 1)),
                   assign(a, TupleGetItem::make(tup, 0)), assign(st, sub), assign(tid, TupleGetItem::make(st, 1)),
                   ret({})});
  EXPECT_EQ(body_text({s}, body),
            "tup = self.k(s)\n"
            "b: pl.Tensor[[16], pl.FP32] = tup[1]\n"
            "a: pl.Tensor[[16], pl.FP32] = tup[0]\n"
            "_, tid = pl.submit(self.k2, s)\n"
            "return\n");
}

TEST(PrintStmts, TupleVarWithOtherUsesIsNotUnpacked) {
  auto s = var("s", tensor({16}));
  TypePtr pair = TupleType::make({tensor({16}), tensor({16})});
  auto tup = var("tup", pair);
  auto a = var("a", tensor({16}));
  auto x = var("x", tensor({16}));
  auto body = seq({assign(tup, Call::make_func("k", {s}, pair)), assign(x, Call::make_func("g", {s}, tensor({16}))),
                   assign(a, TupleGetItem::make(tup, 0)), ret({})});
  EXPECT_EQ(body_text({s}, body),
            "tup = self.k(s)\n"
            "x: pl.Tensor[[16], pl.FP32] = self.g(s)\n"
            "a: pl.Tensor[[16], pl.FP32] = tup[0]\n"
            "return\n");
}

TEST(PrintStmts, YieldInsideMaterializedRuntimeScopes) {
  // MaterializeRuntimeScopes wraps a loop body, yield included, in AUTO scopes.
  auto a = var("a", tensor({16}));
  auto i = var("i", scalar(DataType::INDEX));
  auto acc = IterArg::make("acc", tensor({16}), a);
  auto nxt = var("acc", tensor({16}));
  auto out = var("acc", tensor({16}));
  auto inner = RuntimeScopeStmt::make(
      RuntimeScopeMode::Auto,
      seq({assign(nxt, Call::make_func("k", {acc}, tensor({16}))), YieldStmt::make({nxt})}));
  auto loop = ForStmt::make(i, I(0), I(2), I(1), {acc}, RuntimeScopeStmt::make(RuntimeScopeMode::Auto, inner), {out});
  EXPECT_EQ(body_text({a}, seq({loop, ret({out})})),
            "for i, (acc,) in pl.range(0, 2, 1, init_values=(a,)):\n"
            "    with pl.scope():\n"
            "        with pl.scope():\n"
            "            acc_1: pl.Tensor[[16], pl.FP32] = self.k(acc)\n"
            "            acc_2 = pl.yield_(acc_1)\n"
            "return acc_2\n");
}

TEST(PrintStmts, ForWithIterArgsYieldsIntoReturnVars) {
  auto a = var("a", tensor({16}));
  auto acc0 = var("acc", tensor({16}));
  auto i = var("i", scalar(DataType::INDEX));
  auto acc = IterArg::make("acc", tensor({16}), acc0);
  auto tids0 = var("t", task_id());
  auto tids = IterArg::make("t", task_id(), tids0);
  auto nxt = var("acc", tensor({16}));
  auto acc_out = var("acc", tensor({16}));
  auto t_out = var("t", task_id());
  auto loop = ForStmt::make(i, I(0), I(4), I(1), {acc, tids},
                            seq({assign(nxt, Call::make_func("kernel_add", {a, acc, acc}, tensor({16}))),
                                 YieldStmt::make({nxt, tids})}),
                            {acc_out, t_out});
  auto body = seq({loop, ret({acc_out})});
  EXPECT_EQ(body_text({a, acc0, tids0}, body),
            "for i, (acc_1, t_1) in pl.range(0, 4, 1, init_values=(acc, t)):\n"
            "    acc_2: pl.Tensor[[16], pl.FP32] = self.kernel_add(a, acc_1, acc_1)\n"
            "    acc_3, t_2 = pl.yield_(acc_2, t_1)\n"
            "return acc_3\n");
}

TEST(PrintStmts, ForSingleIterArgParallelWithAttrs) {
  auto x0 = var("x", scalar(DataType::INDEX));
  auto i = var("i", scalar(DataType::INDEX));
  auto x = IterArg::make("x", scalar(DataType::INDEX), x0);
  auto x_out = var("r", scalar(DataType::INDEX));
  Attrs attrs{{"iter_arg_rebind_0", true}, {"iter_arg_array_size_0", int64_t(4)}};
  auto loop = ForStmt::make(i, I(0), I(8), I(2), {x}, YieldStmt::make({bin(BinaryOp::Add, x, i)}), {x_out},
                            ForKind::Parallel, attrs);
  EXPECT_EQ(body_text({x0}, seq({loop, ret({})})),
            "for i, (x_1,) in pl.parallel(0, 8, 2, init_values=(x,), attrs={\"iter_arg_array_size_0\": 4, "
            "\"iter_arg_rebind_0\": True}):\n"
            "    r = pl.yield_(x_1 + i)\n"
            "return\n");
}

TEST(PrintStmts, ChunkRequestAndPeerBasePrintAsTheirKeywords) {
  auto x0 = var("x", scalar(DataType::INDEX));
  auto i = var("i", scalar(DataType::INDEX));
  auto x = IterArg::make("x", scalar(DataType::INDEX), x0);
  auto x_out = var("r", scalar(DataType::INDEX));
  auto loop = ForStmt::make(i, I(0), I(10), I(1), {x}, YieldStmt::make({bin(BinaryOp::Add, x, i)}), {x_out}, ForKind::Parallel)
                  ->with_chunk({4, ChunkPolicy::LeadingFull});
  auto p = var("p", scalar(DataType::INT32));
  ExprPtr imp = Call::make_op("system.import_peer_buffer", {}, {{"name", std::string("ring")}, {"peer_func", std::string("c")}});
  auto stamped = AssignStmt::make(p, with_cpu_base(with_peer_base(imp, -1), 0));
  EXPECT_EQ(body_text({x0}, seq({loop, stamped, ret({})})),
            "for i, (x_1,) in pl.parallel(0, 10, 1, init_values=(x,), chunk=4, chunk_policy=\"leading_full\"):\n"
            "    r = pl.yield_(x_1 + i)\n"
            "p = pl.system.import_peer_buffer(base=-1, name=\"ring\", peer_func=\"c\", cpu_base=0)\n"
            "return\n");
}

TEST(PrintStmts, ForWithoutIterArgsHasNoYield) {
  auto a = var("a", tensor({16}));
  auto n = var("n", scalar(DataType::INDEX));
  auto i = var("i", scalar(DataType::INDEX));
  auto loop = ForStmt::make(i, I(1), n, I(1), {},
                            seq({EvalStmt::make(Call::make_func("k", {a}, TupleType::unit())), YieldStmt::make({})}), {});
  auto empty = ForStmt::make(var("j", scalar(DataType::INDEX)), I(0), I(2), I(1), {}, YieldStmt::make({}), {});
  EXPECT_EQ(body_text({a, n}, seq({loop, empty, ret({})})),
            "for i in pl.range(1, n, 1):\n"
            "    self.k(a)\n"
            "for j in pl.range(0, 2, 1):\n"
            "    pass\n"
            "return\n");
}

TEST(PrintStmts, IfElseWithReturnVarsAndElif) {
  auto c = var("c", scalar(DataType::INDEX));
  auto x = var("x", tensor({16}));
  auto y = var("y", tensor({16}));
  auto r = var("r", tensor({16}));
  auto cond = bin(BinaryOp::Gt, c, I(0));
  auto branch = IfStmt::make(cond, YieldStmt::make({x}), YieldStmt::make({y}), {r});
  auto e1 = EvalStmt::make(Call::make_func("k", {x}, TupleType::unit()));
  auto e2 = EvalStmt::make(Call::make_func("k", {y}, TupleType::unit()));
  auto chain = IfStmt::make(bin(BinaryOp::Eq, c, I(1)), e1, IfStmt::make(bin(BinaryOp::Eq, c, I(2)), e2, nullptr));
  EXPECT_EQ(body_text({c, x, y}, seq({branch, chain, ret({r})})),
            "if c > 0:\n"
            "    r = pl.yield_(x)\n"
            "else:\n"
            "    r = pl.yield_(y)\n"
            "if c == 1:\n"
            "    self.k(x)\n"
            "elif c == 2:\n"
            "    self.k(y)\n"
            "return r\n");
}

TEST(PrintStmts, RuntimeScopes) {
  auto a = var("a", tensor({16}));
  auto call = EvalStmt::make(Call::make_func("k", {a}, TupleType::unit()));
  auto body = seq({RuntimeScopeStmt::make(RuntimeScopeMode::Manual, call),
                   RuntimeScopeStmt::make(RuntimeScopeMode::Auto, seq({call, call})), ret({})});
  EXPECT_EQ(body_text({a}, body),
            "with pl.manual_scope():\n"
            "    self.k(a)\n"
            "with pl.scope():\n"
            "    self.k(a)\n"
            "    self.k(a)\n"
            "return\n");
}

TEST(PrintStmts, ScopeStmtForms) {
  auto a = var("a", tensor({16}));
  auto t0 = var("t0", task_id());
  auto call = EvalStmt::make(Call::make_func("k", {a}, TupleType::unit()));
  auto tid = var("tid", task_id());
  ScopeOptions at_opts;
  at_opts.deps = {t0};
  at_opts.no_dep_args = {a};
  at_opts.allow_early_resolve = true;
  auto at = ScopeStmt::make(ScopeKind::At, {{"level", std::string("CORE_GROUP")}, {"name_hint", std::string("k")}}, call,
                            tid)
                ->with_options(at_opts);
  auto tid2 = var("tid", task_id());
  ScopeOptions spmd_opts;
  spmd_opts.deps = {tid};
  spmd_opts.sync_start = true;
  auto spmd = ScopeStmt::make(ScopeKind::Spmd, {{"core_num", ExprPtr(I(4))}}, call, tid2)->with_options(spmd_opts);
  auto blk = var("i", scalar(DataType::INDEX));
  auto spmd_for = ScopeStmt::make(ScopeKind::Spmd, {{"core_num", ExprPtr(I(8))}}, call, nullptr, blk);
  auto cluster = ScopeStmt::make(ScopeKind::Cluster, {}, call);
  EXPECT_EQ(body_text({a, t0}, seq({at, spmd, spmd_for, cluster, ret({})})),
            "with pl.at(level=pl.Level.CORE_GROUP, allow_early_resolve=True, deps=[t0], name_hint=\"k\", no_dep_args=[a]) "
            "as tid:\n"
            "    self.k(a)\n"
            "with pl.spmd(4, deps=[tid], sync_start=True) as tid_1:\n"
            "    self.k(a)\n"
            "for i in pl.spmd(8):\n"
            "    self.k(a)\n"
            "with pl.cluster():\n"
            "    self.k(a)\n"
            "return\n");
}

TEST(PrintStmts, SubmitOptionsAndPredicate) {
  auto x = var("x", tensor({16}));
  auto out = var("out", tensor({16}));
  auto rc = var("rc", TensorType::make({I(1), I(1)}, DataType::INT32));
  auto t0 = var("t0", task_id());
  auto read = op("tensor.read", {rc, ints({0, 0})});
  auto pred = bin(BinaryOp::Gt, Cast::make(read, DataType::INT64), ConstInt::make(0, DataType::INT64));
  auto sub = Submit::make("k", {x, out}, {tensor({16})}, {t0}, nullptr, false, true, 3, pred,
                          {ArgDirection::NoDep, ArgDirection::Unset});
  auto st = var("st", sub->type);
  auto o1 = var("out", tensor({16}));
  auto tid = var("tid", task_id());
  auto spmd = Submit::make("k", {x, o1}, {tensor({16})}, {tid}, I(4), true);
  auto st2 = var("st", spmd->type);
  auto o2 = var("out", tensor({16}));
  auto tid2 = var("tid", task_id());
  auto body = seq({assign(st, sub), assign(o1, TupleGetItem::make(st, 0)), assign(tid, TupleGetItem::make(st, 1)),
                   assign(st2, spmd), assign(o2, TupleGetItem::make(st2, 0)), assign(tid2, TupleGetItem::make(st2, 1)),
                   ret({o2})});
  EXPECT_EQ(body_text({x, out, rc, t0}, body),
            "out_1, tid = pl.submit(self.k, pl.no_dep(x), out, deps=[t0], allow_early_resolve=True, timing_slot=3, "
            "predicate=(rc[0, 0] > 0))\n"
            "out_2, tid_1 = pl.spmd_submit(self.k, x, out_1, core_num=4, sync_start=True, deps=[tid])\n"
            "return out_2\n");
}

TEST(PrintStmts, DependencySurfaceOps) {
  auto k = var("k", scalar(DataType::INDEX));
  auto inv = var("prev", task_id());
  auto arr_call = op("array.create", {}, {{"size", int64_t(4)}, {"dtype", std::string("TASK_ID")}});
  auto tids = var("tids", arr_call->type);
  auto tids1 = var("tids", arr_call->type);
  auto prev = var("prev", task_id());
  auto barrier = var("barrier", task_id());
  auto body = seq({assign(inv, op("system.task_invalid", {})), assign(tids, arr_call),
                   assign(tids1, op("array.update_element", {tids, k, inv})),
                   assign(prev, op("array.get_element", {tids1, k})),
                   assign(barrier, op("system.task_dummy", {}, {{"manual_dep_edges", std::vector<ExprPtr>{inv, prev}},
                                                                 {"dummy_task", true}})),
                   ret({})});
  EXPECT_EQ(body_text({k}, body),
            "prev = pl.system.task_invalid()\n"
            "tids = pl.array.create(4, pl.TASK_ID)\n"
            "tids_1 = pl.array.update_element(tids, k, prev)\n"
            "prev_1 = tids_1[k]\n"
            "barrier = pl.system.task_dummy(deps=[prev, prev_1])\n"
            "return\n");
}

TEST(PrintStmts, PassProducedDirectionsAsKeyword) {
  // DeriveCallDirections output: arg_directions=[...] lists every slot (NoDep included, the
  // argument then prints plain); frontend-only NoDep marks keep the pl.no_dep(x) form.
  auto a = var("a", tensor({16}));
  auto b = var("b", tensor({16}));
  auto n = var("n", scalar(DataType::INDEX));
  auto r = var("r", tensor({16}));
  auto r2 = var("r2", tensor({16}));
  auto r3 = var("r3", tensor({16}));
  auto derived = Call::make_func("k", {a, b}, tensor({16}), {ArgDirection::In, ArgDirection::Out});
  auto mixed = Call::make_func("k3", {a, n, b}, tensor({16}),
                               {ArgDirection::NoDep, ArgDirection::Scalar, ArgDirection::InOut});
  auto frontend = Call::make_func("k", {a, b}, tensor({16}), {ArgDirection::NoDep, ArgDirection::Unset});
  EXPECT_EQ(body_text({a, b, n}, seq({assign(r, derived), assign(r2, mixed), assign(r3, frontend), ret({})})),
            "r: pl.Tensor[[16], pl.FP32] = self.k(a, b, arg_directions=[pl.In, pl.Out])\n"
            "r2: pl.Tensor[[16], pl.FP32] = self.k3(a, n, b, arg_directions=[pl.NoDep, pl.Scalar, pl.InOut])\n"
            "r3: pl.Tensor[[16], pl.FP32] = self.k(pl.no_dep(a), b)\n"
            "return\n");
}

TEST(PrintStmts, SubmitDirectionsAndOutOfOrderReads) {
  auto a = var("a", tensor({16}));
  auto b = var("b", tensor({16}));
  auto t0 = var("t0", task_id());
  auto sub = Submit::make("k", {a, b}, {tensor({16})}, {t0}, nullptr, false, false, -1, nullptr,
                          {ArgDirection::In, ArgDirection::Out});
  auto st = var("st", sub->type);
  auto out = var("out", tensor({16}));
  auto tid = var("tid", task_id());
  // In order: unpacked, the keyword after the arguments.
  EXPECT_EQ(body_text({a, b, t0}, seq({assign(st, sub), assign(out, TupleGetItem::make(st, 0)),
                                       assign(tid, TupleGetItem::make(st, 1)), ret({})})),
            "out, tid = pl.submit(self.k, a, b, arg_directions=[pl.In, pl.Out], deps=[t0])\n"
            "return\n");
  // Only the TaskId read: one name, then the read.
  EXPECT_EQ(body_text({a, b, t0}, seq({assign(st, sub), assign(tid, TupleGetItem::make(st, 1)), ret({})})),
            "st = pl.submit(self.k, a, b, arg_directions=[pl.In, pl.Out], deps=[t0])\n"
            "tid = st[1]\n"
            "return\n");
  // TaskId read first (an outlined `with pl.at(...) as tid`): one name, then the reads.
  EXPECT_EQ(body_text({a, b, t0}, seq({assign(st, sub), assign(tid, TupleGetItem::make(st, 1)),
                                       assign(out, TupleGetItem::make(st, 0)), ret({})})),
            "st = pl.submit(self.k, a, b, arg_directions=[pl.In, pl.Out], deps=[t0])\n"
            "tid = st[1]\n"
            "out: pl.Tensor[[16], pl.FP32] = st[0]\n"
            "return\n");
}

TEST(PrintFunction, FunctionAndCallAttrsAsKeywords) {
  auto a = var("a", tensor({16}));
  auto r = var("r", tensor({16}));
  auto call = Call::make_func("k", {a}, tensor({16}), {}, {}, {{"inline", true}, {"tag", std::string("x")}});
  auto f = Function::make("f", FunctionType::Orchestration, {a}, {ParamDirection::In}, {},
                          seq({assign(r, call), ret({})}), Level::None, Role::None, {{"outlined_from", std::string("main")}});
  EXPECT_EQ(python_print(f),
            "@pl.function(type=pl.FunctionType.Orchestration, attrs={\"outlined_from\": \"main\"})\n"
            "def f(self, a: pl.Tensor[[16], pl.FP32]):\n"
            "    r: pl.Tensor[[16], pl.FP32] = self.k(a, attrs={\"inline\": True, \"tag\": \"x\"})\n"
            "    return\n");
}

TEST(PrintFunction, EmptyBodyPrintsPass) {
  auto f = Function::make("noop", FunctionType::InCore, {}, {}, {}, nullptr);
  EXPECT_EQ(python_print(f), "@pl.function(type=pl.FunctionType.InCore)\ndef noop(self):\n    pass\n");
}

}  // namespace
}  // namespace pypto::ir::ptest

namespace pypto::ir::ptest {
namespace {

TEST(PrintFunction, LongSignaturesWrapAt100ColumnsAlignedWithTheParen) {
  std::vector<VarPtr> params;
  for (const char* n : {"alpha", "beta", "gamma", "delta", "epsilon"}) params.push_back(var(n, tensor({128, 128})));
  std::vector<ParamDirection> dirs(params.size(), ParamDirection::In);
  dirs.back() = ParamDirection::Out;
  auto f = Function::make("kernel", FunctionType::InCore, params, dirs, {params.back()->type}, ret({params.back()}));
  std::string text = python_print(f);
  EXPECT_EQ(text,
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def kernel(self, alpha: pl.Tensor[[128, 128], pl.FP32], beta: pl.Tensor[[128, 128], pl.FP32],\n"
            "           gamma: pl.Tensor[[128, 128], pl.FP32], delta: pl.Tensor[[128, 128], pl.FP32],\n"
            "           epsilon: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:\n"
            "    return epsilon\n");
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    EXPECT_LE(nl - pos, 100u) << text.substr(pos, nl - pos);
    pos = nl + 1;
  }
}

}  // namespace
}  // namespace pypto::ir::ptest

namespace pypto::ir::ptest {
namespace {

TEST(PrintNames, HintsThatAreNotIdentifiersAreSanitized) {
  auto dotted = var("a.b", scalar(DataType::INDEX));
  auto digit = var("1x", scalar(DataType::INDEX));
  auto pl_name = var("pl", scalar(DataType::INDEX));     // would shadow the module
  auto self_name = var("self", scalar(DataType::INDEX));
  auto r = var("r", scalar(DataType::INDEX));
  auto body = seq({assign(r, bin(BinaryOp::Add, bin(BinaryOp::Add, dotted, digit), bin(BinaryOp::Mul, pl_name, self_name))),
                   ret({})});
  EXPECT_EQ(body_text({dotted, digit, pl_name, self_name}, body), "r = a_b + v1x + pl_ * self_\nreturn\n");
}

}  // namespace
}  // namespace pypto::ir::ptest
