// The literals of generated C++ (include/pypto/codegen/cpp_scalar_expr.h): the spellings, a
// program of every edge case compiled with -Wall -Werror and run to check each value bit for
// bit, and orchestration code whose kernel arguments are such constants (INT64_MIN, NaN,
// infinity), which includes <limits> only when it needs it.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "../transforms/orch_test_util.h"
#include "name_printer.h"
#include "pypto/codegen/orchestration.h"
#include "pypto/transforms/pass.h"

using namespace pypto::orch_test;
using pypto::codegen_test::has;
using pypto::codegen_test::NamePrinter;
using pypto::codegen::common::CppFloatLiteral;
using pypto::codegen::common::CppFloatLiteralNeedsLimits;
using pypto::codegen::common::CppIntLiteral;

namespace {

namespace fs = std::filesystem;

constexpr double kFltMax = std::numeric_limits<float>::max();
const double kInf = std::numeric_limits<double>::infinity();
// Halfway between FLT_MAX and 2^128: from here on a double rounds to infinity as a float.
const double kFloatOverflow = std::ldexp(1.0, 128) - std::ldexp(1.0, 103);

// Runs `cmd` (output to `log`); returns the exit status and the log text.
int Run(const std::string& cmd, const fs::path& log, std::string* text) {
  int rc = std::system((cmd + " > " + log.string() + " 2>&1").c_str());
  std::ifstream in(log);
  text->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return rc;
}

fs::path ScratchDir() {
  fs::path dir = fs::temp_directory_path() / ("pypto_lit_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

// Compiles `code` with `cxx` -std=c++17 -Wall -Werror against the runtime header; with `run`,
// also links and runs it and returns its output in `out`.
::testing::AssertionResult Builds(const std::string& cxx, const std::string& code, const std::string& tag, bool run,
                                  std::string* out = nullptr) {
  fs::path dir = ScratchDir();
  fs::path src = dir / (tag + ".cpp"), bin = dir / tag, log = dir / (tag + ".log");
  std::ofstream(src) << code;
  std::string msg;
  std::string cmd = cxx + " -std=c++17 -Wall -Werror -I " + std::string(PYPTO_RUNTIME_INCLUDE_DIR) + " " +
                    src.string() + (run ? " -o " : " -c -o ") + bin.string();
  if (Run(cmd, log, &msg) != 0) return ::testing::AssertionFailure() << cxx << ": " << msg << "\n--- code ---\n" << code;
  if (run && Run(bin.string(), log, out) != 0) return ::testing::AssertionFailure() << "running failed: " << *out;
  return ::testing::AssertionSuccess();
}

// g++ always (the tests' compiler); clang++ too when installed (its -Wliteral-range differs).
std::vector<std::string> Compilers() {
  std::vector<std::string> cxx = {"g++"};
  if (std::system("command -v clang++ > /dev/null 2>&1") == 0) cxx.push_back("clang++");
  return cxx;
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// The float an FP32 constant `v` holds (round to nearest even; overflow to infinity).
float Nearest(double v) {
  if (std::fabs(v) >= kFloatOverflow) return v > 0 ? INFINITY : -INFINITY;
  if (std::fabs(v) > kFltMax) return static_cast<float>(v > 0 ? kFltMax : -kFltMax);
  return static_cast<float>(v);
}

// Just above the midpoint of two floats (1 + 12 and 1 + 14 ulps of 2^-23): the double rounds
// up to 1.00000083f, but its 9 significant digits ("1.00000077") round down to 1.00000072f.
const double kAboveMidpoint = std::nextafter(1.0 + 13 * std::ldexp(1.0, -24), 2.0);

const std::vector<double> kFloats = {
    0.0, -0.0, 0.5, -2.0, 0.1, 1.0 / 3.0, 3.14159265358979, 1e-40 /* subnormal */, 1e-45, -1e-50 /* underflows */,
    1e-50, 16777217.0, kAboveMidpoint, kFltMax, -kFltMax, kFltMax * (1 + 1e-9) /* rounds to FLT_MAX */,
    kFloatOverflow /* ties to infinity */, 1e39, -1e300, kInf, -kInf, std::nan(""),
};

const std::vector<int64_t> kInts = {
    0, 1, -1, INT32_MAX, INT32_MIN, int64_t{INT32_MAX} + 1, int64_t{INT32_MIN} - 1, 5000000000, -5000000000,
    INT64_MAX, INT64_MIN, INT64_MIN + 1,
};

}  // namespace

TEST(CppLiterals, IntegerSpellings) {
  EXPECT_EQ(CppIntLiteral(0), "0");
  EXPECT_EQ(CppIntLiteral(-1), "-1");
  EXPECT_EQ(CppIntLiteral(INT32_MAX), "2147483647");
  // an int in C++ too: `-2147483648` is the negation of 2147483648, a long, and an INT32 expression
  // with it computed in 64 bits (typed scalar fuzzer seed 3029)
  EXPECT_EQ(CppIntLiteral(INT32_MIN), "(-2147483647 - 1)");
  EXPECT_EQ(CppIntLiteral(int64_t{INT32_MAX} + 1), "INT64_C(2147483648)");
  EXPECT_EQ(CppIntLiteral(-5000000000), "INT64_C(-5000000000)");
  EXPECT_EQ(CppIntLiteral(INT64_MAX), "INT64_C(9223372036854775807)");
  EXPECT_EQ(CppIntLiteral(INT64_MIN), "INT64_MIN");
}

TEST(CppLiterals, FloatSpellings) {
  EXPECT_EQ(CppFloatLiteral(0.5), "0.5f");
  EXPECT_EQ(CppFloatLiteral(2.0), "2.0f");
  EXPECT_EQ(CppFloatLiteral(0.1), "0.1f");   // the digits as written when they give the same float
  EXPECT_EQ(CppFloatLiteral(0.0), "0.0f");
  EXPECT_EQ(CppFloatLiteral(-0.0), "-0.0f");
  EXPECT_EQ(CppFloatLiteral(1e-50), "0.0f");
  EXPECT_EQ(CppFloatLiteral(-1e-50), "-0.0f");
  EXPECT_EQ(CppFloatLiteral(kAboveMidpoint), "1.00000083f");   // the float's own digits
  EXPECT_EQ(CppFloatLiteral(kFltMax * (1 + 1e-9)), "3.40282347e+38f");
  EXPECT_EQ(CppFloatLiteral(1e39), "std::numeric_limits<float>::infinity()");
  EXPECT_EQ(CppFloatLiteral(-kInf), "(-std::numeric_limits<float>::infinity())");
  EXPECT_EQ(CppFloatLiteral(std::nan("")), "std::numeric_limits<float>::quiet_NaN()");
  for (double v : kFloats) {
    EXPECT_EQ(CppFloatLiteralNeedsLimits(v), has(CppFloatLiteral(v), "numeric_limits")) << v;
  }
}

TEST(CppLiterals, PrinterNegatesNegativeLiteralsAndNotesLimits) {
  NamePrinter p;
  EXPECT_EQ(p.print_scalar(UnaryExpr::make(UnaryOp::Neg, I(-1))), "(-(-1))");   // not the decrement "(--1)"
  EXPECT_EQ(p.print_scalar(UnaryExpr::make(UnaryOp::Neg, ConstFloat::make(-0.5, DataType::FP32))), "(-(-0.5f))");
  EXPECT_EQ(p.print_scalar(I(INT64_MIN)), "INT64_MIN");
  EXPECT_FALSE(p.needs_limits_header());
  p.print_scalar(ConstFloat::make(1e30, DataType::FP32));
  EXPECT_FALSE(p.needs_limits_header());
  EXPECT_EQ(p.print_scalar(ConstFloat::make(-kInf, DataType::FP32)), "(-std::numeric_limits<float>::infinity())");
  EXPECT_TRUE(p.needs_limits_header());
}

// Every edge case as C++: compiles warning-free and holds exactly the intended value.
TEST(CppLiterals, EveryLiteralCompilesAndHoldsItsValue) {
  NamePrinter p;
  std::ostringstream code;
  code << "#include <stdint.h>\n#include <cmath>\n#include <cstdio>\n#include <cstring>\n#include <limits>\n"
       << "static void f(float x) {\n  if (std::isnan(x)) { std::printf(\"nan\\n\"); return; }\n"
       << "  uint32_t u;\n  std::memcpy(&u, &x, 4);\n  std::printf(\"%08x\\n\", u);\n}\n"
       << "int main() {\n";
  for (double v : kFloats) code << "  f(" << CppFloatLiteral(v) << ");\n";
  for (int64_t v : kInts) code << "  std::printf(\"%lld\\n\", (long long)" << CppIntLiteral(v) << ");\n";
  // Through the printer: a negated negative literal and arithmetic on the extremes.
  code << "  std::printf(\"%lld\\n\", (long long)" << p.print_scalar(UnaryExpr::make(UnaryOp::Neg, I(-7))) << ");\n";
  code << "  std::printf(\"%lld\\n\", (long long)"
       << p.print_scalar(BinaryExpr::make(BinaryOp::Add, I(INT64_MIN), I(5000000000))) << ");\n";
  code << "  return 0;\n}\n";

  std::ostringstream want;
  for (double v : kFloats) {
    if (std::isnan(v)) want << "nan\n";
    else {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%08x\n", Bits(Nearest(v)));
      want << buf;
    }
  }
  for (int64_t v : kInts) want << v << "\n";
  want << 7 << "\n" << INT64_MIN + 5000000000 << "\n";

  for (const std::string& cxx : Compilers()) {
    std::string out;
    ASSERT_TRUE(Builds(cxx, code.str(), "literals", /*run=*/true, &out));
    EXPECT_EQ(out, want.str()) << cxx << "\n" << code.str();
  }
}

// kernel k(x, y: Out, s: Scalar[FP32], n: Scalar[INT64]); main(x, y: Out) calls it with the
// constants `s`, `n`: the generated orchestration compiles and includes <limits> only if used.
TEST(CppLiterals, OrchestrationKernelArgumentsAreValidCpp) {
  auto build = [](ExprPtr s, ExprPtr n) {
    auto k = kernel("k", 1, 1, false, FunctionType::InCore, MemorySpace::Vec, {DataType::FP32, DataType::INT64});
    auto x = V("x", T16()), y = V("y", T16()), y1 = V("y", T16());
    auto body = SeqStmts::make({AssignStmt::make(y1, Call::make_func("k", {x, y, s, n}, T16())), ReturnStmt::make({y1})});
    auto main = Function::make("main", FunctionType::Orchestration, {x, y}, {ParamDirection::In, ParamDirection::Out},
                               {T16()}, body);
    auto prepared = pypto::transforms::RunDefaultPipeline(Program::make("P", {k, main}), pypto::transforms::PassOptions{});
    return pypto::codegen::GenerateOrchestration(prepared, "main").code;
  };
  std::string special = build(ConstFloat::make(std::nan(""), DataType::FP32), I(INT64_MIN));
  EXPECT_TRUE(has(special, "#include <limits>\n#include \"pto_orchestration_api.h\"")) << special;
  EXPECT_TRUE(has(special, "to_u64(std::numeric_limits<float>::quiet_NaN())")) << special;
  EXPECT_TRUE(has(special, "(uint64_t)INT64_MIN")) << special;
  EXPECT_TRUE(Builds("g++", special, "orch_special", /*run=*/false));

  std::string inf = build(ConstFloat::make(-kInf, DataType::FP32), I(-5000000000));
  EXPECT_TRUE(has(inf, "to_u64((-std::numeric_limits<float>::infinity()))")) << inf;
  EXPECT_TRUE(has(inf, "(uint64_t)(INT64_C(-5000000000))")) << inf;
  EXPECT_TRUE(Builds("g++", inf, "orch_inf", /*run=*/false));

  std::string plain = build(ConstFloat::make(-0.0, DataType::FP32), I(-1));
  EXPECT_FALSE(has(plain, "<limits>")) << plain;
  EXPECT_TRUE(has(plain, "to_u64(-0.0f)")) << plain;
  EXPECT_TRUE(Builds("g++", plain, "orch_plain", /*run=*/false));
}
