// PassManager and the default pipeline: contracts, verification, IR dumps, and the codegen
// precondition verifier.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

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

// A verifier pass (checks_produced) checked its properties as it ran: verify mode does not
// check them a second time.
TEST(PassManager, AVerifierPassIsNotVerifiedAgain) {
  Pass checked{"SelfChecked", {}, {IRProperty::CallDirectionsDerived}, [](const ProgramPtr& p) { return p; },
               /*invalidated=*/{}, /*checks_produced=*/true};
  EXPECT_NO_THROW(PassManager({checked}).Run(orch_basic()));
}

// A fixed-point property is verified by re-running its pass; the re-run is skipped only when
// that same pass just returned its input unchanged (a deterministic pass would again).
TEST(PassManager, FixedPointIsReverifiedUnlessItsOwnPassLeftTheInput) {
  EXPECT_STREQ(FixedPointPassOf(IRProperty::WrittenParamDirectionsUpgraded), "UpgradeWrittenParamDirections");
  EXPECT_EQ(FixedPointPassOf(IRProperty::CallDirectionsDerived), nullptr);
  // A kernel that stores to a parameter declared In: UpgradeWrittenParamDirections would change it.
  auto writes_in = kernel("k", 1, 1, false, FunctionType::InCore, MemorySpace::Vec, {}, ParamDirection::In);
  auto program = Program::make("p", {writes_in}, {});
  auto identity = [](const ProgramPtr& p) { return p; };
  Pass liar{"Liar", {}, {IRProperty::WrittenParamDirectionsUpgraded}, identity};
  EXPECT_THROW(PassManager({liar}).Run(program), InternalError);   // re-run of the real pass changes it
  Pass same_name{"UpgradeWrittenParamDirections", {}, {IRProperty::WrittenParamDirectionsUpgraded}, identity};
  EXPECT_NO_THROW(PassManager({same_name}).Run(program));         // trusted: it returned its input
  // The real pass upgrades the parameter (a new program), and the re-run verifies the result.
  auto out = PassManager({UpgradeWrittenParamDirections()}).Run(program);
  EXPECT_NE(out, program);
  EXPECT_EQ(out->get("k")->param_directions[1], ParamDirection::Out);
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

// ---- contracts: invalidated properties, well-formedness ----

namespace {

PassOptions well_formed_mode() {
  PassOptions o;
  o.verify_well_formed = true;
  return o;
}

}  // namespace

TEST(PassManager, InvalidatedPropertyIsDroppedAndNamedInTheError) {
  Pass breaker{"Breaker", {}, {}, [](const ProgramPtr& p) { return p; }, {IRProperty::CallDirectionsDerived}};
  try {
    PassManager({DeriveCallDirections(), breaker, ExpandManualPhaseFence()}).Run(orch_basic());
    FAIL() << "expected InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("which pass Breaker invalidated"), std::string::npos) << e.what();
  }
  // Produced again later: the requirement is met.
  EXPECT_NO_THROW(PassManager({DeriveCallDirections(), breaker, DeriveCallDirections(), ExpandManualPhaseFence()})
                      .Run(orch_basic()));
}

TEST(PassManager, ProducedAndInvalidatedAtOnceIsRefused) {
  Pass both{"Both", {}, {IRProperty::CallDirectionsDerived}, [](const ProgramPtr& p) { return p; },
            {IRProperty::CallDirectionsDerived}};
  EXPECT_THROW(PassManager({both}).Run(orch_basic()), InternalError);
  EXPECT_THROW(RunPass(both, orch_basic()), InternalError);
}

TEST(PassManager, UndeclaredInvalidationIsCaughtInWellFormedMode) {
  // Drops every derived direction but declares nothing.
  Pass sneaky{"Sneaky", {}, {}, [](const ProgramPtr&) { return orch_basic(); }, {}};
  auto derived = PassManager({DeriveCallDirections()}).Run(orch_basic());
  PassOptions o = well_formed_mode();
  o.assumed = {IRProperty::CallDirectionsDerived};
  EXPECT_THROW(PassManager({sneaky}, o).Run(derived), InternalError);
  o.verify_well_formed = false;
  EXPECT_NO_THROW(PassManager({sneaky}, o).Run(derived));
}

TEST(PassManager, EveryPipelinePassDeclaresAConsistentContract) {
  for (const Pass& p : DefaultPipeline()) {
    for (IRProperty prod : p.produced) {
      EXPECT_EQ(std::count(p.invalidated.begin(), p.invalidated.end(), prod), 0) << p.name;
    }
  }
  EXPECT_NO_THROW(RunDefaultPipeline(orch_basic(), well_formed_mode()));
}

TEST(PassManager, RunPassChecksRequirementsOnTheInput) {
  EXPECT_THROW(RunPass(ExpandManualPhaseFence(), orch_basic()), InternalError);   // directions not derived
  auto derived = RunPass(DeriveCallDirections(), orch_basic());
  EXPECT_NO_THROW(RunPass(ExpandManualPhaseFence(), derived));
}

TEST(PassManager, VerifyPassesEnvironmentVariable) {
  const char* before = std::getenv("PYPTO_VERIFY_PASSES");
  std::string saved = before ? before : "";
  setenv("PYPTO_VERIFY_PASSES", "1", 1);
  EXPECT_TRUE(PassOptions::FromEnv().verify_well_formed);
  setenv("PYPTO_VERIFY_PASSES", "0", 1);
  EXPECT_FALSE(PassOptions::FromEnv().verify_well_formed);
  unsetenv("PYPTO_VERIFY_PASSES");
  EXPECT_FALSE(PassOptions::FromEnv().verify_well_formed);
  if (before) setenv("PYPTO_VERIFY_PASSES", saved.c_str(), 1);
}

TEST(PassManager, TimePassesPrintsOneLinePerPass) {
  const char* before = std::getenv("PYPTO_TIME_PASSES");
  std::string saved = before ? before : "";
  setenv("PYPTO_TIME_PASSES", "1", 1);
  EXPECT_TRUE(PassOptions::FromEnv().time_passes);
  setenv("PYPTO_TIME_PASSES", "0", 1);
  EXPECT_FALSE(PassOptions::FromEnv().time_passes);
  if (before) setenv("PYPTO_TIME_PASSES", saved.c_str(), 1); else unsetenv("PYPTO_TIME_PASSES");
  PassOptions o;
  o.time_passes = true;
  ::testing::internal::CaptureStderr();
  PassManager(DefaultPipeline(), o).Run(orch_basic());
  std::string err = ::testing::internal::GetCapturedStderr();
  for (auto& p : DefaultPipeline()) {
    EXPECT_NE(err.find("pypto: pass " + p.name + " "), std::string::npos) << p.name << " missing in:\n" << err;
  }
  EXPECT_NE(err.find(" ms\n"), std::string::npos) << err;
  o.time_passes = false;
  ::testing::internal::CaptureStderr();
  PassManager(DefaultPipeline(), o).Run(orch_basic());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

// Issue 11: every pass declares what it produces (so the manager can check each one did its job).
TEST(PassManager, EveryPassDeclaresWhatItProduces) {
  std::vector<Pass> all = DefaultPipeline(/*analyze_auto_scopes_for_deps=*/true);
  all.push_back(VerifyKernelProgram());
  for (const Pass& p : all) EXPECT_FALSE(p.produced.empty()) << p.name << " declares no produced property";
  EXPECT_NO_THROW(RunDefaultPipeline(orch_basic(), well_formed_mode()));
}
