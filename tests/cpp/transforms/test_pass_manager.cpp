// PassManager and the default pipeline: contracts, verification, IR dumps, and the codegen
// precondition verifier.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "orch_test_util.h"
#include "pypto/transforms/pass.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/verifier.h"

using namespace pypto::orch_test;
using namespace pypto::transforms;

TEST(PassManager, DefaultPipelineIsFlatAndOrdered) {
  std::vector<std::string> names;
  for (auto& p : DefaultPipeline()) names.push_back(p.name);
  // The orchestration passes appear in this relative order (others may sit in between).
  std::vector<std::string> order = {"NormalizeReturnOrder", "LowerTensorAssemble", "DeriveCallDirections",
                                    "MaterializeRuntimeScopes", "ClassifyIterArgCarry"};
  size_t at = 0;
  for (auto& n : names) {
    if (at < order.size() && n == order[at]) ++at;
  }
  EXPECT_EQ(at, order.size()) << ::testing::PrintToString(names);
}

TEST(PassManager, MissingRequirementIsInternalError) {
  PassManager pm({ClassifyIterArgCarry()});
  EXPECT_THROW(pm.Run(orch_basic()), InternalError);
}

TEST(PassManager, VerifyCatchesABrokenPass) {
  Pass liar{"Liar", {}, {IRProperty::CallDirectionsDerived}, [](const ProgramPtr& p) { return p; }};
  EXPECT_THROW(PassManager({liar}).Run(orch_basic()), InternalError);
  PassOptions no_verify;
  no_verify.verify = false;
  EXPECT_NO_THROW(PassManager({liar}, no_verify).Run(orch_basic()));
}

TEST(PassManager, PipelineEstablishesCodegenPreconditions) {
  EXPECT_FALSE(VerifyCodegenPreconditions(orch_basic(), "orch_basic").empty());
  PassOptions o;
  auto p = RunDefaultPipeline(orch_basic(), o);
  EXPECT_EQ(VerifyCodegenPreconditions(p, "orch_basic"), std::vector<std::string>{});
  EXPECT_FALSE(VerifyCodegenPreconditions(p, "kernel_add").empty());   // not an Orchestration function
}

TEST(PassManager, DumpsPrintedIrAfterEachPass) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("pypto_dump_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  setenv("PYPTO_DUMP_IR", dir.c_str(), 1);
  RunDefaultPipeline(orch_basic());
  unsetenv("PYPTO_DUMP_IR");
  std::vector<std::string> files = {"00_Input.py"};
  auto passes = DefaultPipeline();
  for (size_t i = 0; i < passes.size(); ++i) {
    char prefix[8];
    std::snprintf(prefix, sizeof prefix, "%02zu_", i + 1);
    files.push_back(prefix + passes[i].name + ".py");
  }
  std::string scopes_file;
  for (auto& f : files) {
    std::ifstream in(dir / f);
    ASSERT_TRUE(in.good()) << f;
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("orch_basic"), std::string::npos) << f;
    if (f.find("MaterializeRuntimeScopes") != std::string::npos) scopes_file = f;
  }
  std::ifstream last(dir / scopes_file);
  std::string text((std::istreambuf_iterator<char>(last)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("pl.scope()"), std::string::npos) << text;
  fs::remove_all(dir);
}
