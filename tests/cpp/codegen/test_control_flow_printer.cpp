// The structured control-flow printer (pypto/codegen/control_flow_printer.h) shared by the
// orchestration, HOST and CPU kernel code generators, through a toy generator whose carries are
// plain int64_t variables: carry declarations before a loop / if, the loop header shapes, the
// yield-target stack of nested loops and branches, and yields printed as one simultaneous
// assignment (temporaries only on a hazard, or always for CarryMove::always_temp; a move with
// its own print keeps its place among the assignments).
#include <map>
#include <sstream>

#include "pypto/codegen/control_flow_printer.h"
#include "../transforms/orch_test_util.h"
#include "name_printer.h"

using namespace pypto::orch_test;
using pypto::codegen::common::CarryMove;
using pypto::codegen::common::ControlFlowPrinter;
using pypto::codegen::common::CppIdentifiers;
using pypto::codegen::common::ForHeader;
using pypto::codegen::common::RangeLoopHeader;
using pypto::codegen::common::RangeLoopNames;
using pypto::codegen::common::RangeLoopPrologue;
using pypto::codegen::common::RangeLoopVarLine;
using pypto::codegen::common::StripOuterParens;
using pypto::codegen_test::NamePrinter;

namespace {

// A generator of int64_t scalars: a carry is the C++ variable named after its IR Var.
class ToyPrinter : public NamePrinter, public ControlFlowPrinter<std::string> {
 public:
  explicit ToyPrinter(bool snapshot_all = false) : snapshot_all_(snapshot_all) { write_to(&out_, 0, 4); }
  std::string print(const StmtPtr& s) {
    print_body(s);
    return out_.str();
  }

 private:
  std::string text(const ExprPtr& e) { return StripOuterParens(print_scalar(e)); }
  // The C++ names an expression reads (the hazard check).
  void reads(const ExprPtr& e, std::vector<std::string>& out) {
    if (const Var* v = as_var(e)) out.push_back(var_text(v, e->span));
    if (auto* b = e->as<BinaryExpr>()) {
      reads(b->a, out);
      reads(b->b, out);
    }
  }
  std::string var_text(const Var* v, const Span&) override {
    auto it = names_.find(v);
    return it == names_.end() ? v->name : it->second;
  }

  std::string loop_carry(const ForStmt& f, size_t i) override {
    const IterArgPtr& ia = f.iter_args[i];
    line("int64_t " + ia->name + " = " + text(ia->init) + ";");
    return names_[ia.get()] = ia->name;
  }
  void open_loop(const ForStmt& f, const std::vector<std::string>&) override {
    const std::string i = f.loop_var->name;
    if (auto* c = f.step->as<ConstInt>()) {
      open_block(ForHeader(i, text(f.start), text(f.stop), text(f.step), c->value < 0));
      return;
    }
    RangeLoopNames n{i, i + "_start", i + "_step", i + "_count", i + "_k"};
    RangeLoopPrologue(*this, n, text(f.start), text(f.step), text(f.stop), f.span);
    open_block(RangeLoopHeader(n));
    line(RangeLoopVarLine(n));
  }
  void bind_loop_results(const ForStmt& f, const std::vector<std::string>& carries) override {
    for (size_t k = 0; k < f.return_vars.size(); ++k) names_[f.return_vars[k].get()] = carries[k];
  }
  std::string branch_result(const IfStmt& s, size_t k) override {
    line("int64_t " + s.return_vars[k]->name + " = 0;");
    return s.return_vars[k]->name;
  }
  std::string condition(const ExprPtr& cond) override { return text(cond); }
  void bind_branch_results(const IfStmt& s, const std::vector<std::string>& results) override {
    for (size_t k = 0; k < s.return_vars.size(); ++k) names_[s.return_vars[k].get()] = results[k];
  }
  void print_body(const StmtPtr& s) override {
    if (auto* seq = s->as<SeqStmts>()) {
      for (const StmtPtr& c : seq->stmts) print_body(c);
    } else if (auto* a = s->as<AssignStmt>()) {
      line("int64_t " + a->var->name + " = " + text(a->value) + ";");
    } else if (auto* f = s->as<ForStmt>()) {
      print_for(*f);
    } else if (auto* b = s->as<IfStmt>()) {
      print_if(*b);
    } else if (auto* y = s->as<YieldStmt>()) {
      print_yield(*y);
    } else {
      FAIL() << "unexpected statement";
    }
  }
  std::optional<CarryMove> yield_value(Frame& frame, size_t i, const ExprPtr& value) override {
    CarryMove m;
    m.target = frame.targets[i];
    m.value = text(value);
    reads(value, m.reads);
    m.temp_type = "int64_t";
    if (m.target.rfind("arr", 0) == 0) {   // an "array": copied slot by slot, at its place
      m.print = [this, dst = m.target, src = m.value] { line("copy(" + dst + ", " + src + ");"); };
      return m;
    }
    m.always_temp = snapshot_all_;
    if (snapshot_all_) m.temp_base = "yield_tmp";
    return m;
  }
  std::string fresh_name(const std::string& base) override {
    const int n = used_[base]++;
    return n == 0 ? base : base + "_" + std::to_string(n);
  }

  std::ostringstream out_;
  std::map<const Var*, std::string> names_;
  std::map<std::string, int> used_;
  bool snapshot_all_;
};

ExprPtr Bin(BinaryOp op, ExprPtr a, ExprPtr b) { return BinaryExpr::make(op, std::move(a), std::move(b)); }
TypePtr i64() { return S(DataType::INT64); }

// for i in range(0, 10): a, b = b, a + b   (Fibonacci: the second value reads the first carry)
StmtPtr fibonacci(const VarPtr& out) {
  auto i = V("i", i64());
  auto a = IterArg::make("a", i64(), I(0)), b = IterArg::make("b", i64(), I(1));
  auto a_out = V("a_out", i64()), b_out = V("b_out", i64());
  StmtPtr body = YieldStmt::make({b, Bin(BinaryOp::Add, a, b)});
  return SeqStmts::make({ForStmt::make(i, I(0), I(10), I(1), {a, b}, body, {a_out, b_out}),
                         AssignStmt::make(out, Bin(BinaryOp::Add, a_out, b_out))});
}

}  // namespace

TEST(ControlFlowPrinter, ASwapOfLoopCarriesGoesThroughTemporaries) {
  auto out = V("out", i64());
  EXPECT_EQ(ToyPrinter().print(fibonacci(out)),
            "int64_t a = 0;\n"
            "int64_t b = 1;\n"
            "for (int64_t i = 0; i < 10; i += 1) {\n"
            "    int64_t a_next = b;\n"
            "    int64_t b_next = a + b;\n"
            "    a = a_next;\n"
            "    b = b_next;\n"
            "}\n"
            "int64_t out = a + b;\n");
}

TEST(ControlFlowPrinter, AlwaysTempMovesAreSnapshotInYieldOrderAndNeverTwice) {
  auto out = V("out", i64());
  EXPECT_EQ(ToyPrinter(/*snapshot_all=*/true).print(fibonacci(out)),
            "int64_t a = 0;\n"
            "int64_t b = 1;\n"
            "for (int64_t i = 0; i < 10; i += 1) {\n"
            "    int64_t yield_tmp = b;\n"
            "    int64_t yield_tmp_1 = a + b;\n"
            "    a = yield_tmp;\n"
            "    b = yield_tmp_1;\n"
            "}\n"
            "int64_t out = a + b;\n");
}

// for i in range(8, 0, -2): s = (s + i if i > 4 else (s if i > 2 else s - i));  n = n (unchanged)
// A descending loop; an if with a result nested in an if with a result; the yields of each
// level write that level's targets; a carry yielded as itself prints nothing; results bind.
TEST(ControlFlowPrinter, NestedBranchResultsYieldToTheirOwnLevel) {
  auto i = V("i", i64());
  auto s = IterArg::make("s", i64(), I(0)), n = IterArg::make("n", i64(), I(3));
  auto t = V("t", i64()), u = V("u", i64()), s_out = V("s_out", i64()), n_out = V("n_out", i64()), r = V("r", i64());
  StmtPtr inner = IfStmt::make(Bin(BinaryOp::Gt, i, I(2)), YieldStmt::make({s}), YieldStmt::make({Bin(BinaryOp::Sub, s, i)}), {u});
  StmtPtr outer = IfStmt::make(Bin(BinaryOp::Gt, i, I(4)), YieldStmt::make({Bin(BinaryOp::Add, s, i)}),
                               SeqStmts::make({inner, YieldStmt::make({u})}), {t});
  StmtPtr loop = ForStmt::make(i, I(8), I(0), I(-2), {s, n}, SeqStmts::make({outer, YieldStmt::make({t, n})}), {s_out, n_out});
  EXPECT_EQ(ToyPrinter().print(SeqStmts::make({loop, AssignStmt::make(r, Bin(BinaryOp::Mul, s_out, n_out))})),
            "int64_t s = 0;\n"
            "int64_t n = 3;\n"
            "for (int64_t i = 8; i > 0; i += -2) {\n"
            "    int64_t t = 0;\n"
            "    if (i > 4) {\n"
            "        t = s + i;\n"
            "    } else {\n"
            "        int64_t u = 0;\n"
            "        if (i > 2) {\n"
            "            u = s;\n"
            "        } else {\n"
            "            u = s - i;\n"
            "        }\n"
            "        t = u;\n"
            "    }\n"
            "    s = t;\n"
            "}\n"
            "int64_t r = s * n;\n");
}

// A move that reads only a carry assigned after it needs no temporary: a, b = b, 5.
TEST(ControlFlowPrinter, NoTemporariesWithoutAHazard) {
  auto i = V("i", i64());
  auto a = IterArg::make("a", i64(), I(0)), b = IterArg::make("b", i64(), I(1));
  StmtPtr loop = ForStmt::make(i, I(0), I(4), I(1), {a, b}, YieldStmt::make({b, I(5)}), {V("a2", i64()), V("b2", i64())});
  EXPECT_EQ(ToyPrinter().print(loop),
            "int64_t a = 0;\n"
            "int64_t b = 1;\n"
            "for (int64_t i = 0; i < 4; i += 1) {\n"
            "    a = b;\n"
            "    b = 5;\n"
            "}\n");
}

// A step known only at run time: Python's range through pto2_range_count, naming the DSL line.
TEST(ControlFlowPrinter, ARunTimeStepCountsIterations) {
  auto i = V("i", i64()), step = V("step", i64()), n = V("n", i64());
  Span span;
  span.file = "/home/u/prog.py";
  span.line = 7;
  StmtPtr loop = ForStmt::make(i, I(1), n, step, {}, SeqStmts::make({}), {}, ForKind::Sequential, {}, span);
  EXPECT_EQ(ToyPrinter().print(loop),
            "const int64_t i_start = 1;\n"
            "const int64_t i_step = step;\n"
            "const uint64_t i_count = pto2_range_count(i_start, n, i_step, \"prog.py\", 7);\n"
            "for (uint64_t i_k = 0; i_k < i_count; ++i_k) {\n"
            "    const int64_t i = (int64_t)((uint64_t)i_start + i_k * (uint64_t)i_step);\n"
            "}\n");
}

TEST(ControlFlowPrinter, AYieldOutsideALoopOrOfTheWrongArityIsAnInternalError) {
  EXPECT_THROW(ToyPrinter().print(YieldStmt::make({I(1)})), InternalError);
  auto i = V("i", i64());
  auto a = IterArg::make("a", i64(), I(0));
  StmtPtr loop = ForStmt::make(i, I(0), I(4), I(1), {a}, YieldStmt::make({a, I(2)}), {V("a2", i64())});
  EXPECT_THROW(ToyPrinter().print(loop), InternalError);
}

// A move with its own print (an array copy) keeps its place among the assignments and takes no
// temporary, while the scalars around it do: b, arr, c = c, arr2, b.
TEST(ControlFlowPrinter, AMoveWithItsOwnPrintKeepsItsPlace) {
  auto i = V("i", i64());
  auto b = IterArg::make("b", i64(), I(0)), arr = IterArg::make("arr", i64(), I(0)), c = IterArg::make("c", i64(), I(1));
  auto arr2 = V("arr2", i64());
  StmtPtr loop = ForStmt::make(i, I(0), I(4), I(1), {b, arr, c}, YieldStmt::make({c, arr2, b}),
                               {V("b2", i64()), V("arr3", i64()), V("c2", i64())});
  EXPECT_EQ(ToyPrinter().print(loop),
            "int64_t b = 0;\n"
            "int64_t arr = 0;\n"
            "int64_t c = 1;\n"
            "for (int64_t i = 0; i < 4; i += 1) {\n"
            "    int64_t b_next = c;\n"
            "    int64_t c_next = b;\n"
            "    b = b_next;\n"
            "    copy(arr, arr2);\n"
            "    c = c_next;\n"
            "}\n");
}

TEST(ControlFlowPrinter, CppIdentifiersSkipsMembersAndNumbers) {
  EXPECT_EQ(CppIdentifiers("a_1 + n * (int64_t)b"), (std::vector<std::string>{"a_1", "n", "int64_t", "b"}));
  EXPECT_EQ(CppIdentifiers("t.value() + p->x + TaskHandle::invalid() + 2.5e3f"),
            (std::vector<std::string>{"t", "p", "TaskHandle"}));
}
