// Python bindings of the passes: `pypto._core.passes` (user-facing: pypto.ir.passes).
//
//   from pypto.ir import passes
//   p = passes.NormalizeReturnOrder()        # a Pass: name, required, produced, invalidated
//   out = p(program)                         # RunPass: checks requirements, verifies results
//   passes.verify_well_formed(program)       # [] when well formed
//   passes.default_pipeline()                # the Pass list RunDefaultPipeline runs
#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "pypto/ir/function.h"
#include "pypto/transforms/ir_property.h"
#include "pypto/transforms/pass.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/static_task_graph.h"
#include "pypto/transforms/well_formed.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace pypto::bindings {

namespace {

std::vector<std::string> names(const std::vector<transforms::IRProperty>& ps) {
  std::vector<std::string> out;
  for (auto p : ps) out.push_back(transforms::to_string(p));
  return out;
}

}  // namespace

void bind_passes(nb::module_& parent) {
  using namespace pypto::transforms;
  nb::module_ m = parent.def_submodule("passes", "The IR passes, one callable per pass (src/transforms).");

  nb::enum_<IRProperty>(m, "IRProperty")
      .value("ReturnParamsExplicit", IRProperty::ReturnParamsExplicit)
      .value("CallDirectionsDerived", IRProperty::CallDirectionsDerived)
      .value("RuntimeScopesMaterialized", IRProperty::RuntimeScopesMaterialized)
      .value("IterArgCarryClassified", IRProperty::IterArgCarryClassified)
      .value("ManualDepsOnSubmitOnly", IRProperty::ManualDepsOnSubmitOnly)
      .value("KernelCoreTypesInferred", IRProperty::KernelCoreTypesInferred)
      .value("StaticTripCountsStamped", IRProperty::StaticTripCountsStamped)
      .value("KernelGroupSyncResolved", IRProperty::KernelGroupSyncResolved)
      .value("InPlaceCarriesFound", IRProperty::InPlaceCarriesFound)
      .value("TileMoveSharingStamped", IRProperty::TileMoveSharingStamped)
      .value("InPlaceMatmulLoadsStamped", IRProperty::InPlaceMatmulLoadsStamped)
      .value("LoopInitLendingStamped", IRProperty::LoopInitLendingStamped)
      .value("KernelProgramVerified", IRProperty::KernelProgramVerified)
      .value("TaskIdsResolved", IRProperty::TaskIdsResolved)
      .value("CrossScopeTaskIdsHoisted", IRProperty::CrossScopeTaskIdsHoisted)
      .value("ReturnedParamsStamped", IRProperty::ReturnedParamsStamped)
      .value("LoopsUnrolled", IRProperty::LoopsUnrolled)
      .value("ClusterScopesOutlined", IRProperty::ClusterScopesOutlined)
      .value("IncoreScopesOutlined", IRProperty::IncoreScopesOutlined)
      .value("KernelTensorOpsConverted", IRProperty::KernelTensorOpsConverted)
      .value("TensorOperandsNamed", IRProperty::TensorOperandsNamed)
      .value("TensorDimsFolded", IRProperty::TensorDimsFolded)
      .value("TensorAssemblesInPlace", IRProperty::TensorAssemblesInPlace)
      .value("WrittenParamDirectionsUpgraded", IRProperty::WrittenParamDirectionsUpgraded)
      .value("PhaseFencesExpanded", IRProperty::PhaseFencesExpanded)
      .value("AutoDepsAnalysed", IRProperty::AutoDepsAnalysed)
      .value("ChunkedLoopsSplit", IRProperty::ChunkedLoopsSplit)
      .value("AutoChunkScopesInterchanged", IRProperty::AutoChunkScopesInterchanged)
      .value("PeerBufferBasesResolved", IRProperty::PeerBufferBasesResolved)
      .value("KernelParamSlotsResolved", IRProperty::KernelParamSlotsResolved)
      .value("TaskStatementsCounted", IRProperty::TaskStatementsCounted)
      .value("GroupKernelsStamped", IRProperty::GroupKernelsStamped)
      .value("AllocationBatchesStamped", IRProperty::AllocationBatchesStamped)
      .value("ArrayBackingsStamped", IRProperty::ArrayBackingsStamped)
      .value("ScopeExitsStamped", IRProperty::ScopeExitsStamped)
      .value("NonNegativeVarsStamped", IRProperty::NonNegativeVarsStamped)
      .value("CallResultsNamed", IRProperty::CallResultsNamed)
      .value("CallOperandsStamped", IRProperty::CallOperandsStamped)
      .value("CountedLoopsStamped", IRProperty::CountedLoopsStamped)
      .value("OrchestrationProgramVerified", IRProperty::OrchestrationProgramVerified)
      .value("HostProgramVerified", IRProperty::HostProgramVerified)
      .value("DestinationReadsChecked", IRProperty::DestinationReadsChecked);

  nb::class_<Pass>(m, "Pass")
      .def_ro("name", &Pass::name)
      .def_prop_ro("required", [](const Pass& p) { return names(p.required); })
      .def_prop_ro("produced", [](const Pass& p) { return names(p.produced); })
      .def_prop_ro("invalidated", [](const Pass& p) { return names(p.invalidated); })
      .def(
          "__call__",
          [](const Pass& p, const ir::ProgramPtr& program, bool verify_well_formed) {
            PassOptions o = PassOptions::FromEnv();
            o.verify_well_formed = o.verify_well_formed || verify_well_formed;
            return RunPass(p, program, o);
          },
          "program"_a, "verify_well_formed"_a = false,
          "Run the pass on a Program: InternalError if its required properties do not hold on the input, or its "
          "produced ones (or, with verify_well_formed / $PYPTO_VERIFY_PASSES, well-formedness) do not hold after.")
      .def("__repr__", [](const Pass& p) { return "<Pass " + p.name + ">"; });

  m.def("verify_property", [](IRProperty p, const ir::ProgramPtr& program) { return VerifyProperty(p, program); },
        "property"_a, "program"_a, "Violations of one IR property (empty list = holds).");
  m.def("verify_well_formed", &VerifyWellFormed, "program"_a,
        "Violations of SSA, dominance, iter_arg/yield arity and spans (empty list = well formed).");
  m.def("default_pipeline", [](bool analyze) { return DefaultPipeline(analyze); }, "analyze_auto_scopes_for_deps"_a = false,
        "The passes of the default pipeline, in order.");
  m.def("kernel_pipeline", &KernelPipeline, "The kernel pipeline's passes, in order (part of the default one).");

#define PYPTO_BIND_PASS(Name) m.def(#Name, &Name, "The " #Name " pass (src/transforms); call it on a Program.")
  PYPTO_BIND_PASS(OutlineClusterScopes);
  PYPTO_BIND_PASS(OutlineIncoreScopes);
  PYPTO_BIND_PASS(FoldTensorDims);
  PYPTO_BIND_PASS(NameNestedTensorCalls);
  PYPTO_BIND_PASS(ConvertTensorToTileOps);
  PYPTO_BIND_PASS(NormalizeReturnOrder);
  PYPTO_BIND_PASS(UpgradeWrittenParamDirections);
  PYPTO_BIND_PASS(LowerTensorAssemble);
  PYPTO_BIND_PASS(DeriveCallDirections);
  PYPTO_BIND_PASS(VerifyManualDepsOnSubmitOnly);
  PYPTO_BIND_PASS(VerifyDestinationReads);
  PYPTO_BIND_PASS(ExpandManualPhaseFence);
  PYPTO_BIND_PASS(MaterializeRuntimeScopes);
  PYPTO_BIND_PASS(AutoDeriveTaskDependencies);
  PYPTO_BIND_PASS(PrepareCrossScopeTaskIdHoists);
  PYPTO_BIND_PASS(ClassifyIterArgCarry);
  PYPTO_BIND_PASS(ResolveTaskIds);
  PYPTO_BIND_PASS(StampReturnedParams);
  PYPTO_BIND_PASS(InferKernelCoreTypes);
  PYPTO_BIND_PASS(StampStaticTripCounts);
  PYPTO_BIND_PASS(UnrollLoops);
  PYPTO_BIND_PASS(SplitChunkedLoops);
  PYPTO_BIND_PASS(InterchangeChunkLoops);
  PYPTO_BIND_PASS(KernelGroupSync);
  PYPTO_BIND_PASS(KernelInPlaceCarries);
  PYPTO_BIND_PASS(KernelShareTileMoves);
  PYPTO_BIND_PASS(KernelInPlaceMatmulLoads);
  PYPTO_BIND_PASS(KernelLendLoopInits);
  PYPTO_BIND_PASS(VerifyKernelProgram);
  PYPTO_BIND_PASS(ResolvePeerBufferBases);
  PYPTO_BIND_PASS(KernelParamSlots);
  PYPTO_BIND_PASS(CountTaskStatements);
  PYPTO_BIND_PASS(StampGroupKernels);
  PYPTO_BIND_PASS(StampAllocationBatches);
  PYPTO_BIND_PASS(StampArrayBackings);
  PYPTO_BIND_PASS(StampScopeExits);
  PYPTO_BIND_PASS(StampNonNegativeVars);
  PYPTO_BIND_PASS(StampCallOperands);
  PYPTO_BIND_PASS(NameCallResults);
  PYPTO_BIND_PASS(StampCountedLoops);
  PYPTO_BIND_PASS(VerifyOrchestrationProgram);
  PYPTO_BIND_PASS(VerifyHostProgram);
#undef PYPTO_BIND_PASS

  // The static task graph (an analysis, src/transforms/static_task_graph.cpp): DOT text.
  m.def(
      "static_task_graph",
      [](const ir::ProgramPtr& program, const std::string& entry, const std::map<std::string, int64_t>& dims,
         const std::map<std::string, int64_t>& int_scalars, const std::map<std::string, double>& float_scalars) {
        return StaticTaskGraphDot(*program, entry, StaticGraphInputs{dims, int_scalars, float_scalars});
      },
      "program"_a, "entry"_a, "dims"_a, "int_scalars"_a, "float_scalars"_a,
      "DOT text of the task graph orchestration `entry` of a prepared program runs, read from the IR "
      "(static_task_graph(codegen.run_pipeline(P), 'main', {'M': 96}, {}, {})); PyptoError when there is none.");
}

}  // namespace pypto::bindings
