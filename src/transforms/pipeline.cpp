// The default orchestration pipeline: one flat list, in order (STYLE.md habit 5).
#include <algorithm>

#include "pypto/transforms/pass.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

std::vector<Pass> DefaultPipeline() { return DefaultPipeline(false); }

std::vector<Pass> DefaultPipeline(bool analyze_auto_scopes_for_deps) {
  std::vector<Pass> passes{
      UnrollLoops(),                // pl.unroll loops -> one body copy per iteration value
      SplitChunkedLoops(),          // chunk=C loops -> outer chunk loop + inner loop (anchor §7)
      InterchangeChunkLoops(),      // pl.auto_chunk scope -> InCore scopes per chunk
      OutlineClusterScopes(),       // pl.cluster -> Group function + call
      OutlineIncoreScopes(),        // pl.at CORE_GROUP / pl.spmd -> InCore function + Submit
      FoldTensorDims(),             // tensor.dim of a literal / parameter-declared extent -> that extent
      NameNestedTensorCalls(),      // tensor calls nested in orchestration call args -> named first
      VerifyDestinationReads(),     // no read of a tile a matmul_acc / scatter wrote into (reference_ops §1.7)
      ConvertTensorToTileOps(),     // tensor ops in kernels -> tile ops (anchor_features §9)
      NormalizeReturnOrder(),       // return values that write back a param are the param
      LowerTensorAssemble(),        // assemble from a separate tensor -> copy task into the view
      UpgradeWrittenParamDirections(),   // written kernel params declared In -> Out / InOut
      DeriveCallDirections(),       // per-call-site arg directions from callee params
      StampStaticTripCounts(),      // ForStmt::trip_count of loops with literal bounds
      VerifyManualDepsOnSubmitOnly(),   // user dep edges only on Submits / task_dummy
      ExpandManualPhaseFence(),     // stable full-array TaskId deps -> one dummy barrier
      AutoDeriveTaskDependencies(), // (switch) compiler edges in AUTO regions; removed below when off
      PrepareCrossScopeTaskIdHoists(),   // (switch) TaskId carries / fences for those edges
      MaterializeRuntimeScopes(),   // AUTO runtime scopes around bodies / loop / branch bodies
      ClassifyIterArgCarry(),       // carry variable vs alias, TaskId array sizes
      ResolveTaskIds(),             // Function::task_ids: how code names each TaskId
      StampReturnedParams(),        // Function::returned_params: the return -> parameter map
      StampGroupKernels(),          // Function::group_kernels: a Group's AIC and AIV kernels
      CountTaskStatements(),        // Function::task_statements: the L2 one-block-per-task choice
      StampAllocationBatches(),     // Function::batched_creates: creates allocated at block entry
      StampArrayBackings(),         // Function::array_backings: which C array each pl.Array version uses
      StampScopeExits(),            // RuntimeScopeStmt::exit_values: loop / if results read after their block
      StampNonNegativeVars(),       // Function::non_negative_vars: scalars known >= 0 (plain C++ `/`, `%`)
      NameCallResults(),            // a result Var for each call statement of a chunked function
      StampCallOperands(),          // Function::call_operands: values the L2 generator may chunk with calls
      // ---- the kernel pipeline (KernelPipeline()) runs last, over every kernel ----
      InferKernelCoreTypes(),       // Function::core_type of each kernel / Group
      KernelParamSlots(),           // Function::param_slots of each kernel (Group slots when a Group calls it)
      KernelGroupSync(),            // Function::group_sync (group flags) of each kernel a Group calls
      KernelInPlaceCarries(),       // ForStmt::inplace_carries of each kernel loop
      KernelShareTileMoves(),       // Call::shares_source_tile of each kernel tile.move
      KernelInPlaceMatmulLoads(),   // Call::reads_in_place of each kernel tile.load a matmul reads in place
      KernelLendLoopInits(),        // ForStmt::lent_inits of each kernel loop (carry takes its init's buffer)
      ResolvePeerBufferBases(),     // attr `base` of each system.import_peer_buffer
      StampCountedLoops(),          // ForStmt::counted: loops printed counted (no wrap at INT64_MAX)
  };
  if (!analyze_auto_scopes_for_deps) {
    passes.erase(std::remove_if(passes.begin(), passes.end(),
                                [](const Pass& p) {
                                  return p.name == "AutoDeriveTaskDependencies" ||
                                         p.name == "PrepareCrossScopeTaskIdHoists";
                                }),
                 passes.end());
  }
  return passes;
}

std::vector<Pass> KernelPipeline() {
  return {
      InferKernelCoreTypes(),       // Function::core_type of each kernel / Group
      KernelParamSlots(),           // Function::param_slots of each kernel (Group slots when a Group calls it)
      KernelGroupSync(),            // Function::group_sync (group flags) of each kernel a Group calls
      KernelInPlaceCarries(),       // ForStmt::inplace_carries of each kernel loop
      KernelShareTileMoves(),       // Call::shares_source_tile of each kernel tile.move
      KernelInPlaceMatmulLoads(),   // Call::reads_in_place of each kernel tile.load a matmul reads in place
      KernelLendLoopInits(),        // ForStmt::lent_inits of each kernel loop (carry takes its init's buffer)
      ResolvePeerBufferBases(),     // attr `base` of each system.import_peer_buffer
      StampCountedLoops(),          // ForStmt::counted: loops printed counted (no wrap at INT64_MAX)
  };
}

ir::ProgramPtr RunDefaultPipeline(const ir::ProgramPtr& program) {
  return RunDefaultPipeline(program, PassOptions::FromEnv());
}

ir::ProgramPtr RunDefaultPipeline(const ir::ProgramPtr& program, const PassOptions& options) {
  PassManager pm(DefaultPipeline(options.analyze_auto_scopes_for_deps), options);
  return pm.Run(program);
}

}  // namespace pypto::transforms
