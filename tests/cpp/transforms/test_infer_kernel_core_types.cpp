// InferKernelCoreTypes: the typed core type stamped on each kernel / Group function, its
// property verifier, and what code generators read (StampedCoreType).
#include "orch_test_util.h"
#include "pypto/ir/printer.h"
#include "pypto/transforms/ir_property.h"
#include "pypto/transforms/pass.h"
#include "pypto/transforms/passes.h"

using namespace pypto::orch_test;
using namespace pypto::transforms;

namespace {

ProgramPtr four_kernels() {
  return Program::make("P", {kernel("vec", 1, 1, true), kernel("cube", 1, 1, true, FunctionType::InCore, MemorySpace::Left),
                             kernel("aic", 1, 1, true, FunctionType::AIC), kernel("aiv", 1, 1, true, FunctionType::AIV)});
}

}  // namespace

TEST(InferKernelCoreTypes, StampsEachKernel) {
  auto p = RunPass(InferKernelCoreTypes(), four_kernels());
  EXPECT_EQ(p->get("vec")->core_type, CoreType::AIV);
  EXPECT_EQ(p->get("cube")->core_type, CoreType::AIC);
  EXPECT_EQ(p->get("aic")->core_type, CoreType::AIC);
  EXPECT_EQ(p->get("aiv")->core_type, CoreType::AIV);
  EXPECT_EQ(StampedCoreType(*p->get("cube")), CoreType::AIC);
}

TEST(InferKernelCoreTypes, PropertyAndStampedCoreTypeRefuseUnstampedKernels) {
  auto before = four_kernels();
  EXPECT_FALSE(VerifyProperty(IRProperty::KernelCoreTypesInferred, before).empty());
  EXPECT_THROW(StampedCoreType(*before->get("vec")), InternalError);
  auto after = RunPass(InferKernelCoreTypes(), before);
  EXPECT_TRUE(VerifyProperty(IRProperty::KernelCoreTypesInferred, after).empty());
  // A wrong stamp is a violation too.
  auto wrong = after->with_function(after->get("cube")->with_core_type(CoreType::AIV));
  EXPECT_EQ(VerifyProperty(IRProperty::KernelCoreTypesInferred, wrong).size(), 1u);
}

TEST(InferKernelCoreTypes, StampIsComparedPrintedAndKeptByMutators) {
  auto before = four_kernels();
  auto after = RunPass(InferKernelCoreTypes(), before);
  EXPECT_FALSE(structural_equal(before, after));
  EXPECT_NE(python_print(after).find("core_type=pl.CoreType.AIC"), std::string::npos);
  // A mutator that rebuilds every function keeps the stamp.
  struct RebuildConsts : IRMutator {
    ExprPtr mutate_(const ConstInt* op, const ExprPtr&) override { 
      return ConstInt::make(op->value, op->type->as<ScalarType>()->dtype, op->span);
    }
  } rebuild;
  auto rebuilt = rebuild.mutate_program(after);
  EXPECT_NE(rebuilt->get("cube"), after->get("cube"));
  EXPECT_EQ(rebuilt->get("cube")->core_type, CoreType::AIC);
  EXPECT_TRUE(structural_equal(rebuilt, after));
}

TEST(InferKernelCoreTypes, IsTheKernelPipelineAndEndsTheDefaultOne) {
  auto kernel_passes = KernelPipeline();
  ASSERT_FALSE(kernel_passes.empty());
  EXPECT_EQ(kernel_passes[0].name, "InferKernelCoreTypes");
  EXPECT_EQ(DefaultPipeline().back().name, kernel_passes.back().name);
  auto p = RunDefaultPipeline(orch_basic(), PassOptions{});
  EXPECT_EQ(p->get("kernel_add")->core_type, CoreType::AIV);
  EXPECT_EQ(p->get("orch_basic")->core_type, CoreType::Unknown);
}
