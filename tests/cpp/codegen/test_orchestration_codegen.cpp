// Orchestration codegen: the spec's complete example, generated code compiled against the
// runtime header, and the construct-level pieces (names, core types, kernel ids).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../transforms/orch_test_util.h"
#include "pypto/codegen/orchestration.h"
#include "pypto/transforms/pass.h"

using namespace pypto::orch_test;
using namespace pypto::codegen;
using pypto::transforms::PassOptions;
using pypto::transforms::RunDefaultPipeline;

namespace {

// Lines that are not blank and not comment-only, trailing spaces trimmed.
std::vector<std::string> significant(const std::string& code) {
  std::vector<std::string> out;
  std::istringstream in(code);
  std::string l;
  while (std::getline(in, l)) {
    while (!l.empty() && (l.back() == ' ' || l.back() == '\r')) l.pop_back();
    size_t first = l.find_first_not_of(' ');
    if (first == std::string::npos || l.compare(first, 2, "//") == 0) continue;
    out.push_back(l);
  }
  return out;
}

OrchestrationResult generate(const ProgramPtr& p, const std::string& fn) {
  return GenerateOrchestration(RunDefaultPipeline(p, PassOptions{}), fn);
}

// Compiles `code` with g++ -std=c++17 -Wall -Werror against the runtime header.
::testing::AssertionResult Compiles(const std::string& code, const std::string& tag) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("pypto_cg_" + std::to_string(::getpid()));
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

const char* kSpecOrchBasic = R"(// Orchestration Function: orch_basic
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipStorageTaskArgs& orch_args) {
    (void)orch_args;
    return PTO2OrchestrationConfig{ .expected_arg_count = 3 };
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipStorageTaskArgs& orch_args) {
    // External tensors (from ChipStorageTaskArgs)
    Tensor ext_a = from_tensor_arg(orch_args.tensor(0));
    Tensor ext_b = from_tensor_arg(orch_args.tensor(1));
    Tensor ext_d = from_tensor_arg(orch_args.tensor(2));

    PTO2_SCOPE() {
        // Internal tensor — pre-allocated via alloc_tensors at scope entry
        uint32_t c_ci_shapes[2] = {16, 16};
        TensorCreateInfo c_ci(c_ci_shapes, 2, DataType::FLOAT32);
        TaskOutputTensors alloc_0 = alloc_tensors(c_ci);
        const Tensor& c = alloc_0.get_ref(0);

        // Task 0: kernel_add (a + b → c)
        Arg params_t0;
        params_t0.add_input(ext_a);
        params_t0.add_input(ext_b);
        params_t0.add_output(c);
        rt_submit_aiv_task(0, params_t0);

        // Task 1: kernel_add (c + b → d)
        Arg params_t1;
        params_t1.add_input(c);
        params_t1.add_input(ext_b);
        params_t1.add_output(ext_d);
        rt_submit_aiv_task(0, params_t1);
    }
}

}  // extern "C"
)";

}  // namespace

TEST(OrchestrationCodegen, SpecCompleteExample) {
  auto r = generate(orch_basic(), "orch_basic");
  EXPECT_EQ(significant(r.code), significant(kSpecOrchBasic)) << r.code;
  EXPECT_EQ(r.files.size(), 2u);   // the orchestration and kernel_config.py
  EXPECT_EQ(r.files.at("orchestration/orch_basic.cpp"), r.code);
  EXPECT_EQ(r.files.at("kernel_config.py"), KernelConfigPy(r));
  EXPECT_EQ(r.func_name_to_signature.at("kernel_add"), (std::vector<std::string>{"IN", "IN", "OUT"}));
  EXPECT_EQ(r.kernel_ids, (std::map<std::string, int>{{"kernel_add", 0}}));
  EXPECT_EQ(r.core_types.at("kernel_add"), CoreType::AIV);
  ASSERT_EQ(r.signature.size(), 3u);
  EXPECT_EQ(r.signature[2].name, "d");
  EXPECT_EQ(r.signature[2].direction, "Out");
  EXPECT_EQ(r.signature[2].shape, (std::vector<std::string>{"16", "16"}));
  EXPECT_TRUE(Compiles(r.code, "orch_basic"));
}

TEST(OrchestrationCodegen, RefusesUnpreparedIr) {
  EXPECT_THROW(GenerateOrchestration(orch_basic(), "orch_basic"), InternalError);
  ExpectUserError([] { generate(orch_basic(), "nope"); }, "no function named 'nope'");
  ExpectUserError([] { generate(orch_basic(), "kernel_add"); }, "not Orchestration");
}

TEST(OrchestrationCodegen, SSABaseNames) {
  EXPECT_EQ(GetSSABaseName("c"), "c");
  EXPECT_EQ(GetSSABaseName("x_2"), "x_2");   // a user's name is kept
  EXPECT_EQ(GetSSABaseName("acc_1"), "acc_1");
  EXPECT_EQ(GetSSABaseName("x_y"), "x_y");
  EXPECT_EQ(GetSSABaseName("3d"), "v3d");
}

// Core types are a pass result now: tests/cpp/transforms/test_infer_kernel_core_types.cpp.
