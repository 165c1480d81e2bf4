// Distributed HOST codegen on hand-built IR: submits of a chip-level orchestration lower to
// TaskArgs + add_dep_wait + submit_next_level (compiled against pto_l3_api.h), target ids,
// and the UserErrors for what the L3 runtime cannot express.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../transforms/orch_test_util.h"
#include "pypto/codegen/host.h"
#include "pypto/transforms/pass.h"

using namespace pypto::orch_test;
using namespace pypto::codegen;
using pypto::transforms::PassOptions;
using pypto::transforms::RunDefaultPipeline;

namespace {

FunctionPtr chip(const std::string& name) {
  // def <name>(self, a, b, c: Out): c = self.kernel_add(a, b, c); return c
  auto a = V("a", T16()), b = V("b", T16()), c = V("c", T16()), c1 = V("c", T16());
  auto body = SeqStmts::make({AssignStmt::make(c1, Call::make_func("kernel_add", {a, b, c}, T16())), ReturnStmt::make({c})});
  return Function::make(name, FunctionType::Orchestration, {a, b, c},
                        {ParamDirection::In, ParamDirection::In, ParamDirection::Out}, {T16()}, body);
}

// def host_main(self, x, y, z: Out, w: Out):            (level=pl.Level.HOST)
//     z, t0 = pl.submit(self.<callee>, x, y, z)
//     w, t1 = pl.submit(self.chip_b, z, y, w, deps=[t0])
//     return w
ProgramPtr host_program(const std::string& callee = "chip_a", bool early = false) {
  auto x = V("x", T16()), y = V("y", T16()), z = V("z", T16()), w = V("w", T16());
  auto s0 = Submit::make(callee, {x, y, z}, {T16()}, {}, nullptr, false, early);
  auto tup0 = V("z_t0_tuple", s0->type);
  auto z1 = V("z", T16()), t0 = V("t0", S(DataType::TASK_ID));
  auto s1 = Submit::make("chip_b", {z1, y, w}, {T16()}, {t0});
  auto tup1 = V("w_t1_tuple", s1->type);
  auto w1 = V("w", T16()), t1 = V("t1", S(DataType::TASK_ID));
  auto body = SeqStmts::make({
      AssignStmt::make(tup0, s0),
      AssignStmt::make(z1, TupleGetItem::make(tup0, 0)),
      AssignStmt::make(t0, TupleGetItem::make(tup0, 1)),
      AssignStmt::make(tup1, s1),
      AssignStmt::make(w1, TupleGetItem::make(tup1, 0)),
      AssignStmt::make(t1, TupleGetItem::make(tup1, 1)),
      ReturnStmt::make({w1}),
  });
  auto host = Function::make("host_main", FunctionType::Orchestration, {x, y, z, w},
                             {ParamDirection::In, ParamDirection::In, ParamDirection::Out, ParamDirection::Out}, {T16()},
                             body, Level::HOST);
  return Program::make("Dist", {kernel("kernel_add", 2, 1), chip("chip_a"), chip("chip_b"), host});
}

HostResult generate(const ProgramPtr& p) { return GenerateHostOrchestration(RunDefaultPipeline(p, PassOptions{}), "host_main"); }

::testing::AssertionResult Compiles(const std::string& code, const std::string& tag) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("pypto_host_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path src = dir / (tag + ".cpp"), obj = dir / (tag + ".o"), log = dir / (tag + ".log");
  std::ofstream(src) << code;
  std::string cmd = "g++ -std=c++17 -Wall -Werror -c -I " + std::string(PYPTO_RUNTIME_INCLUDE_DIR) + " " + src.string() +
                    " -o " + obj.string() + " > " + log.string() + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream lf(log);
  std::string msg((std::istreambuf_iterator<char>(lf)), std::istreambuf_iterator<char>());
  if (rc == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << msg << "\n--- code ---\n" << code;
}

bool has(const std::string& code, const std::string& needle) { return code.find(needle) != std::string::npos; }

}  // namespace

TEST(HostCodegen, SubmitsLowerToSubmitNextLevel) {
  HostResult r = generate(host_program());
  const std::string& c = r.code;
  EXPECT_TRUE(has(c, "#include \"pto_l3_api.h\"")) << c;
  EXPECT_TRUE(has(c, "void host_orchestration_entry(const ChipStorageTaskArgs& orch_args) {")) << c;
  EXPECT_TRUE(has(c, "Tensor ext_x = from_tensor_arg(orch_args.tensor(0));")) << c;
  EXPECT_TRUE(has(c, "TaskArgs args_t0;\n    args_t0.add_tensor(ext_x);\n    args_t0.add_tensor(ext_y);\n"
                     "    args_t0.add_tensor(ext_z);\n    TaskHandle t0 = submit_next_level(0, args_t0);")) << c;
  // The second submit reads z through the first one's result, waits on t0, targets chip_b.
  EXPECT_TRUE(has(c, "args_t1.add_tensor(ext_z);\n    args_t1.add_tensor(ext_y);\n    args_t1.add_tensor(ext_w);\n"
                     "    args_t1.add_dep_wait(t0);\n    TaskHandle t1 = submit_next_level(1, args_t1);\n    (void)t1;")) << c;
  EXPECT_FALSE(has(c, "PTO2_SCOPE")) << c;  // L3 has no runtime scopes
  EXPECT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files.begin()->first, "host/host_main.cpp");
  EXPECT_EQ(r.target_ids, (std::map<std::string, int>{{"chip_a", 0}, {"chip_b", 1}}));
  ASSERT_EQ(r.signature.size(), 4u);
  EXPECT_EQ(r.signature[3].direction, "Out");
  EXPECT_TRUE(Compiles(c, "host_basic"));
}

TEST(HostCodegen, TargetIdsAreChipOrchestrationsInOrder) {
  auto ids = HostTargetIds(*host_program());
  EXPECT_EQ(ids, (std::map<std::string, int>{{"chip_a", 0}, {"chip_b", 1}}));
}

TEST(HostCodegen, SubmittingAKernelDirectlyIsRejected) {
  ExpectUserError([] { generate(host_program("kernel_add")); },
                  "a HOST-level orchestration can only submit chip-level Orchestration functions; 'kernel_add' is InCore");
}

TEST(HostCodegen, OptionsOtherThanDepsAreRejected) {
  ExpectUserError([] { generate(host_program("chip_a", /*early=*/true)); },
                  "only deps= is supported by pl.submit in a HOST-level orchestration");
}

TEST(HostCodegen, ChipLevelFunctionIsNotAHostEntry) {
  ExpectUserError([] { GenerateHostOrchestration(RunDefaultPipeline(host_program(), PassOptions{}), "chip_a"); },
                  "is not a HOST-level Orchestration function");
}
