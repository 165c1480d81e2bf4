// IR properties: facts a pass establishes about a Program and later passes (or codegen) rely
// on. Each pass declares the properties it requires and the ones it produces; the pass
// manager checks the declarations and, in verify mode, runs the property's verifier after
// the pass that claims to produce it.
//
//   ReturnParamsExplicit       every tensor return value that writes back a parameter is that
//                              parameter Var itself (NormalizeReturnOrder)
//   CallDirectionsDerived      every Call/Submit to a program function has one ArgDirection
//                              per argument, none Unset (DeriveCallDirections)
//   RuntimeScopesMaterialized  Orchestration bodies and their for/if bodies are wrapped in AUTO
//                              RuntimeScopeStmt nodes (MaterializeRuntimeScopes)
//   IterArgCarryClassified     every ForStmt of an Orchestration function has one
//                              ForStmt::carries entry per iter_arg (ClassifyIterArgCarry)
//   StaticTripCountsStamped    every ForStmt of an Orchestration function has
//                              ForStmt::trip_count = len(range(...)) of literal bounds, else -1
//                              (StampStaticTripCounts)
//   ManualDepsOnSubmitOnly     only Submits and system.task_dummy carry user dependency edges
//                              (VerifyManualDepsOnSubmitOnly)
//   KernelCoreTypesInferred    every kernel and Group function has its Function::core_type
//                              (AIC / AIV / MIXED) stamped (InferKernelCoreTypes)
//   KernelParamSlotsResolved   every kernel has the Function::param_slots KernelParamSlots
//                              computes (KernelParamSlots)
//   KernelGroupSyncResolved    every kernel a Group calls has its Function::group_sync (group
//                              flags) stamped (KernelGroupSync)
//   InPlaceCarriesFound        every kernel loop has its ForStmt::inplace_carries stamped
//                              (KernelInPlaceCarries)
//   TileMoveSharingStamped     every tile.move in a kernel has the Call::shares_source_tile
//                              KernelShareTileMoves computes (KernelShareTileMoves)
//   InPlaceMatmulLoadsStamped  every tile.load in a kernel has the Call::reads_in_place
//                              KernelInPlaceMatmulLoads computes (KernelInPlaceMatmulLoads)
//   LoopInitLendingStamped     every kernel loop has the ForStmt::lent_inits KernelLendLoopInits
//                              computes (KernelLendLoopInits)
//   PeerBufferBasesResolved    every system.import_peer_buffer has the Call::peer_base of its peer's
//                              reservation stamped, and every import and reservation its
//                              Call::cpu_base (ResolvePeerBufferBases)
//   KernelProgramVerified      every kernel is one the CPU kernel backend can print
//                              (VerifyKernelProgram)
//   TaskIdsResolved            every Orchestration function has Function::task_ids, one entry
//                              per TaskId it defines, and no compiler edge naming an
//                              out-of-scope TaskId (ResolveTaskIds)
//   CrossScopeTaskIdsHoisted   no system.task_ref placeholder is left and every compiler edge
//                              names a TaskId Var visible at its consumer
//                              (PrepareCrossScopeTaskIdHoists)
//   ReturnedParamsStamped      every function with a return has the Function::returned_params
//                              StampReturnedParams computes (StampReturnedParams)
//   LoopsUnrolled              no ForStmt has ForKind::Unroll (UnrollLoops)
//   ClusterScopesOutlined      no Cluster ScopeStmt in Orchestration / Opaque functions
//                              (OutlineClusterScopes)
//   IncoreScopesOutlined       no At / Spmd ScopeStmt in Orchestration / Opaque functions
//                              (OutlineIncoreScopes)
// The next ones are "the pass is at its fixed point": running the pass again changes nothing.
//   KernelTensorOpsConverted   no kernel calls a tensor op ConvertTensorToTileOps lowers
//   TensorOperandsNamed        no Orchestration call has a call as a tensor argument (NameNestedTensorCalls)
//   TensorDimsFolded           no Orchestration tensor.dim reads a literal extent or a dim symbol a
//                              tensor parameter declares (FoldTensorDims)
//   TensorAssemblesInPlace     every statically shaped tensor.assemble is in place (LowerTensorAssemble)
//   WrittenParamDirectionsUpgraded  no kernel writes a tensor param declared In
//                              (UpgradeWrittenParamDirections)
//   PhaseFencesExpanded        every profitable manual phase fence has its barrier
//                              (ExpandManualPhaseFence)
//   AutoDepsAnalysed           every (non-HOST) Orchestration function has the verdict of
//                              AutoDeriveTaskDependencies stamped (attrs["auto_deps"])
//   ChunkedLoopsSplit          no ForStmt has a chunk request (ForStmt::chunk); ForStmt::chunk_stride only on the
//                              outer loop of a chunked loop (SplitChunkedLoops)
//   AutoChunkScopesInterchanged  no ScopeStmt has the `auto_chunk` attr (InterchangeChunkLoops)
//   TaskStatementsCounted      every function has the Function::task_statements
//                              CountTaskStatements computes (CountTaskStatements)
//   GroupKernelsStamped        every function has the Function::group_kernels StampGroupKernels
//                              computes (StampGroupKernels)
//   AllocationBatchesStamped   every function has the Function::batched_creates
//                              StampAllocationBatches computes (StampAllocationBatches)
//   ArrayBackingsStamped       every function has the Function::array_backings
//                              StampArrayBackings computes (StampArrayBackings)
//   NonNegativeVarsStamped     every function has the Function::non_negative_vars
//                              StampNonNegativeVars computes (StampNonNegativeVars)
//   CallResultsNamed           running NameCallResults again changes nothing (every call statement
//                              of a chunked function whose result is an argument has a result)
//   CallOperandsStamped        every function has the Function::call_operands, open_calls,
//                              cut_calls and carried_operands StampCallOperands computes
//                              (StampCallOperands)
//   CountedLoopsStamped        every ForStmt has the ForStmt::counted StampCountedLoops
//                              computes (StampCountedLoops)
//   OrchestrationProgramVerified  every chip-level Orchestration function is one the L2 code
//                              generator can print (VerifyOrchestrationProgram)
//   HostProgramVerified        every HOST-level Orchestration function is one the HOST code
//                              generator can print (VerifyHostProgram)
//   DestinationReadsChecked    no tile is read after a destination-passing tile op wrote into
//                              it (VerifyDestinationReads)
//   ScopeExitsStamped          every runtime scope of an Orchestration function has the
//                              RuntimeScopeStmt::exit_values StampScopeExits computes
#pragma once
#include <string>
#include <vector>

#include "pypto/ir/function.h"

namespace pypto::transforms {

enum class IRProperty {
  ReturnParamsExplicit,
  CallDirectionsDerived,
  RuntimeScopesMaterialized,
  IterArgCarryClassified,
  ManualDepsOnSubmitOnly,
  KernelCoreTypesInferred,
  StaticTripCountsStamped,
  KernelGroupSyncResolved,
  InPlaceCarriesFound,
  TileMoveSharingStamped,
  InPlaceMatmulLoadsStamped,
  LoopInitLendingStamped,
  KernelProgramVerified,
  TaskIdsResolved,
  CrossScopeTaskIdsHoisted,
  ReturnedParamsStamped,
  LoopsUnrolled,
  ClusterScopesOutlined,
  IncoreScopesOutlined,
  KernelTensorOpsConverted,
  TensorOperandsNamed,
  TensorDimsFolded,
  TensorAssemblesInPlace,
  WrittenParamDirectionsUpgraded,
  PhaseFencesExpanded,
  AutoDepsAnalysed,
  ChunkedLoopsSplit,
  AutoChunkScopesInterchanged,
  PeerBufferBasesResolved,
  KernelParamSlotsResolved,
  TaskStatementsCounted,
  GroupKernelsStamped,
  AllocationBatchesStamped,
  ArrayBackingsStamped,
  ScopeExitsStamped,
  NonNegativeVarsStamped,
  CallResultsNamed,
  CallOperandsStamped,
  CountedLoopsStamped,
  OrchestrationProgramVerified,
  HostProgramVerified,
  DestinationReadsChecked,
};

const char* to_string(IRProperty p);

// Checks that `p` holds on `program`; returns one message per violation (empty = holds).
std::vector<std::string> VerifyProperty(IRProperty p, const ir::ProgramPtr& program);

// The name of the pass VerifyProperty(p) re-runs, expecting no change (the property is that
// rewrite's fixed point), or null when `p` is checked otherwise. Passes are deterministic, so
// when that very pass just returned its input object unchanged, the re-run would too: the pass
// manager skips the check then.
//   FixedPointPassOf(IRProperty::TensorOperandsNamed)   // "NameNestedTensorCalls"
const char* FixedPointPassOf(IRProperty p);

}  // namespace pypto::transforms

namespace pypto::transforms {

// Proven properties: the pass manager records, for the program a pipeline returns, which
// properties were verified after the pass that produced them (and kept by every later pass),
// so a later check of the same immutable program object (VerifyCodegenPreconditions) need not
// walk it again. Only the last few programs are remembered (weakly: a freed program is never
// matched, even by a new one at the same address).
//   RecordProvenProperties(prepared, {IRProperty::TaskIdsResolved});
//   PropertyProven(IRProperty::TaskIdsResolved, prepared)   // true
void RecordProvenProperties(const ir::ProgramPtr& program, const std::vector<IRProperty>& proven);
bool PropertyProven(IRProperty p, const ir::ProgramPtr& program);

}  // namespace pypto::transforms
