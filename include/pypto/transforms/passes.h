// The passes, one per file in src/transforms/ (file normalize_return_order.cpp = pass
// NormalizeReturnOrder). Each function returns the Pass descriptor; run it with
// `NormalizeReturnOrder().run(program)` or through a PassManager. See each file's header
// comment for what it does, its input / output invariants and why it exists.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "pypto/transforms/pass.h"

namespace pypto::transforms {

// Rewrites each return value that writes back a tensor parameter to that parameter Var.
// Produces ReturnParamsExplicit.
Pass NormalizeReturnOrder();

// tensor.assemble whose source is not already the target's view at its offsets -> a
// synthesized InCore copy kernel writing that view. Requires ReturnParamsExplicit.
Pass LowerTensorAssemble();

// Kernel params declared In that the body writes -> Out / InOut; callers' In params passed
// into such slots follow (an Orchestration's are refused). Runs before DeriveCallDirections.
Pass UpgradeWrittenParamDirections();

// Fills Call/Submit::arg_directions from the callee's ParamDirection (keeps NoDep).
// Produces CallDirectionsDerived.
Pass DeriveCallDirections();

// Wraps Orchestration bodies and their for/if bodies in AUTO RuntimeScopeStmt nodes.
// Produces RuntimeScopesMaterialized.
Pass MaterializeRuntimeScopes();

// Stamps ForStmt::carries (alias / rebind / slots(N)) on Orchestration ForStmts.
// Requires ReturnParamsExplicit and StaticTripCountsStamped; produces IterArgCarryClassified.
Pass ClassifyIterArgCarry();

// Stamps Function::task_ids (how generated code names each TaskId: slots, fresh, read) on
// Orchestration functions and drops compiler edges naming an out-of-scope TaskId. Requires
// IterArgCarryClassified and RuntimeScopesMaterialized; produces TaskIdsResolved.
Pass ResolveTaskIds();
// What ResolveTaskIds stamps on `fn` (one entry per TaskId Var the body defines):
//   ResolvedTaskIds(*program->get("orch"))[0].fresh == true   // `out, t = pl.submit(...)`
std::vector<ir::TaskIdInfo> ResolvedTaskIds(const ir::Function& fn);
// Why `fn`'s stamps are not what ResolveTaskIds computes (empty when they are), including
// compiler edges it would drop.
std::vector<std::string> CheckTaskIdsResolved(const ir::Function& fn);

// Stamps RuntimeScopeStmt::exit_values (the tensor / number loop and if results at the top of a
// scope body that code after the block reads, also through a value naming the same tensor) on
// Orchestration functions. Requires
// IterArgCarryClassified, RuntimeScopesMaterialized and ArrayBackingsStamped; produces ScopeExitsStamped.
Pass StampScopeExits();
// Why `fn`'s scope stamps are not what StampScopeExits computes (empty when they are).
//   CheckScopeExitsStamped(*program, *program->get("main")) == {}   // after StampScopeExits
std::vector<std::string> CheckScopeExitsStamped(const ir::Program& program, const ir::Function& fn);

// Stamps Function::returned_params (per return value, the parameter it writes back; -1 none) on
// every function with a return. Requires ReturnParamsExplicit; produces ReturnedParamsStamped.
Pass StampReturnedParams();
// What StampReturnedParams stamps on `fn`:  ReturnedParamsOf(*program->get("k")) == {2}
std::vector<int64_t> ReturnedParamsOf(const ir::Function& fn);

// Replaces every pl.unroll loop (ForKind::Unroll) by one copy of its body per iteration value,
// the loop variable a constant and carries threaded copy to copy (anchor_features.md §12):
//   for i in pl.unroll(2): y = self.k(x, i, y)   ==>   y_1 = self.k(x, 0, y); y_2 = self.k(x, 1, y_1)
// Runs first; no later pass or code generator sees an Unroll loop.
Pass UnrollLoops();
// Splits each loop with chunk=C (inside a pl.auto_chunk scope, anchor_features §7) into an outer
// loop over chunks and an inner loop of C trips (guarded: body under `if i < stop`;
// leading_full: full chunks plus a remainder loop). Runs after UnrollLoops.
Pass SplitChunkedLoops();
// Replaces each pl.auto_chunk scope by InCore (CORE_GROUP pl.at) scopes around its chunk loops
// and other statements; runs after SplitChunkedLoops, before the outlining passes.
Pass InterchangeChunkLoops();

// Stamps ForStmt::trip_count on Orchestration loops with literal bounds (-1 otherwise).
// Produces StaticTripCountsStamped.
Pass StampStaticTripCounts();
// len(range(start, stop, step)) of a loop with literal bounds, else -1:
//   StaticTripCount(*loop) == 4   // for i in pl.parallel(0, 8, 2)
int64_t StaticTripCount(const ir::ForStmt& f);

// ---- manual dependencies (issue 6) ----
// pl.cluster() scopes -> Group functions + calls. Runs before OutlineIncoreScopes.
Pass OutlineClusterScopes();
// pl.at(CORE_GROUP) / pl.spmd scopes -> InCore functions + Submits (or Calls); scope deps /
// predicate / allow_early_resolve / core_num / sync_start move onto the Submit.
Pass OutlineIncoreScopes();
// In Orchestration functions, tensor.dim(t, k) -> the extent t's type declares on axis k when it
// is a literal or a dynamic-dim symbol a tensor parameter declares (what the DSL parser folds);
// other extents stay tensor.dim. Requires ClusterScopesOutlined and IncoreScopesOutlined;
// produces TensorDimsFolded:  n = tensor.dim(x, 0) ==> n = M   (x: pl.Tensor[[M, 16], pl.FP32])
Pass FoldTensorDims();
// The dynamic-dim symbols `fn`'s tensor parameters declare (bare Vars of their shapes, read from
// the arguments at entry), in parameter order, each once:  TensorParamDimSymbols(*main) == {M}
std::vector<ir::VarPtr> TensorParamDimSymbols(const ir::Function& fn);
// In Orchestration functions, a tensor-valued call written as another call's argument -> bound
// to a fresh variable before the statement (`pl.assemble(o, pl.create_tensor(...), ...)`).
Pass NameNestedTensorCalls();
// Refuses a read of a tile that a destination-passing tile op (matmul_acc, gemv_acc,
// batch_matmul_acc, scatter, scatter_update, scatter_mask) wrote into: on the accelerator the
// op's result shares its argument 0's buffer (spec reference_ops.md §1.7), on the CPU it does not.
//   d = pl.matmul_acc(c, a, b); out = pl.store(c, ...)   -> UserError located at the store
// Runs before ConvertTensorToTileOps (tensor ops give new values); the program is unchanged.
Pass VerifyDestinationReads();
std::vector<std::string> CheckDestinationReads(const ir::ProgramPtr& program);   // the refusal's text, or empty
// Lowers the tensor-level ops of kernels (spec anchor_features §9: tensor.add, tensor.slice,
// tensor.assemble, tensor.create, ...) to tile ops. Runs after OutlineIncoreScopes.
Pass ConvertTensorToTileOps();
// Checks that only Submits (and system.task_dummy) carry user dependency edges.
Pass VerifyManualDepsOnSubmitOnly();
std::vector<std::string> CheckManualDepsOnSubmitOnly(const ir::ProgramPtr& program);   // one message per violation
// Rewrites a profitable stable full-array TaskId dependency in a manual scope through one
// system.task_dummy barrier. Requires CallDirectionsDerived.
Pass ExpandManualPhaseFence();

// Compiler-derived task dependencies in AUTO regions (analyze_auto_scopes_for_deps): typed
// compiler_manual_dep_edges, TaskId carries, MANUAL scope when fully covered, argument
// demotion otherwise. Requires CallDirectionsDerived, ReturnParamsExplicit.
Pass AutoDeriveTaskDependencies();
// Turns AutoDeriveTaskDependencies' system.task_ref placeholders into TaskIds the consumer can
// name: TaskId carries declared at the lowest common scope of producer and consumer, a phase
// fence behind a pl.parallel(N >= 4) fan-in. Requires CallDirectionsDerived; produces
// CrossScopeTaskIdsHoisted.
Pass PrepareCrossScopeTaskIdHoists();

// Stamps Function::task_statements on every Orchestration function (the L2 generator's
// one-block-per-task / chunking choice reads it). Produces TaskStatementsCounted.
Pass CountTaskStatements();
// What CountTaskStatements stamps on `fn` (0 for a non-Orchestration function):
//   TaskStatementsOf(*program->get("main")) == 3
int64_t TaskStatementsOf(const ir::Function& fn);

// Stamps Function::group_kernels (its AIC and AIV kernels, by stamped or else inferred core
// type) on every Group function. Produces GroupKernelsStamped.
Pass StampGroupKernels();
// What StampGroupKernels stamps on `fn` (empty for a non-Group function, or a Group calling two
// kernels of one core type or a non-kernel):  GroupKernelsOf(*program, *program->get("grp")).aic == "mm"
ir::GroupKernels GroupKernelsOf(const ir::Program& program, const ir::Function& fn);
// Why GroupKernelsOf is empty for a Group function (nullopt for a valid Group or a non-Group):
// the first problem in call order. VerifyOrchestrationProgram reports it; the decision is the
// pass's.  GroupKernelsProblemOf(*program, *program->get("grp"))->kind == Kind::TwoOnOneCore
struct GroupKernelsProblem {
  enum class Kind { NotAKernel, TwoOnOneCore, NoKernel };
  Kind kind;
  std::string callee;   // NotAKernel / TwoOnOneCore: the callee refused
  std::string other;    // TwoOnOneCore: the kernel already on that core
  ir::CoreType core;    // TwoOnOneCore: the core both run on
};
std::optional<GroupKernelsProblem> GroupKernelsProblemOf(const ir::Program& program, const ir::Function& fn);

// Stamps Function::batched_creates on every Orchestration function (the creates the L2 generator
// allocates at their block's entry). Produces AllocationBatchesStamped.
Pass StampAllocationBatches();
// What StampAllocationBatches stamps on `fn` (empty for a non-Orchestration function):
//   BatchedCreatesOf(*program->get("main")) == {c}
std::vector<ir::VarPtr> BatchedCreatesOf(const ir::Function& fn);

// Stamps Function::array_backings on every Orchestration function (which C array each pl.Array
// version lives in; transforms::ArrayBacking decides). Produces ArrayBackingsStamped.
Pass StampArrayBackings();
// What StampArrayBackings stamps on `fn` (empty for a non-Orchestration function), in program
// order:  ArrayBackingsOf(*program->get("main"))[0].backing == w   (for w_1 = update_element(w, ...))
std::vector<ir::ArrayBackingEntry> ArrayBackingsOf(const ir::Function& fn);
// True when both lists name the same Vars in the same order.
bool SameArrayBackings(const std::vector<ir::ArrayBackingEntry>& a, const std::vector<ir::ArrayBackingEntry>& b);

// Stamps Function::non_negative_vars on every chip-level Orchestration function (its tensor
// parameters' dim symbols, then the loop variables of loops with a literal start >= 0 and step
// > 0). Produces NonNegativeVarsStamped.
Pass StampNonNegativeVars();
// What StampNonNegativeVars stamps on `fn` (empty for other functions), in program order:
//   NonNegativeVarsOf(*program->get("main")) == {M, i}
std::vector<ir::VarPtr> NonNegativeVarsOf(const ir::Function& fn);
// True when `e` is >= 0 given that every Var of `non_negative_vars` is: a literal >= 0 (in its
// dtype), such a Var, an unsigned or bool value, a cast of one that keeps it, // % min max & | ^ >>
// of such, and + * of such in a 64-bit dtype. `i // 4` -> true for a stamped `i`; `i - 1` ->
// false (the L2 generator then prints Python's floor `//`, `%`); `pl.cast(65535, pl.INT8)` -> false.
bool ProvablyNonNegative(const ir::ExprPtr& e, const std::unordered_set<const ir::Var*>& non_negative_vars);
// The same for `e`'s value converted to dtype `as` (the operand of an operation computing in
// it): a UINT8 200 is >= 0, but not as an INT8 (-56).
bool ProvablyNonNegativeAs(const ir::ExprPtr& e, ir::DataType as,
                           const std::unordered_set<const ir::Var*>& non_negative_vars);

// Stamps Function::call_operands on every chip-level Orchestration function of kCallChunkMin
// task statements or more: the values between kernel calls (slices, views, scalar expressions,
// copies, in-place assembles) the L2 generator may print inside a chunk of calls, and the
// elements of its pl.submits (a submission and the statements right after it taking its results
// are one unit, which no chunk splits); and Function::open_calls, the calls
// after which one of them is still read (no chunk ends there, unless it is a cut); and
// Function::cut_calls (every kCallChunkMin-th call of a run that a value is live across: a chunk
// ends there) with Function::carried_operands (the values live across one, handed to the next
// chunk). Requires ReturnedParamsStamped and TaskStatementsCounted; produces CallOperandsStamped.
Pass StampCallOperands();
// In every chip-level Orchestration function of kCallChunkMin task statements or more, gives a
// kernel / Group call statement without a result one (a fresh Var `<callee>_out`) when
// its one result is an argument it passes (Function::returned_params): StampCallOperands names
// the calls a chunk may not end after, or must end after, by their result. Requires
// ReturnedParamsStamped and TaskStatementsCounted; produces CallResultsNamed.
//   `self.add(s, b, t)` ==> `add_out = self.add(s, b, t)`
Pass NameCallResults();
// What StampCallOperands stamps on `fn` (empty for other functions), in program order:
//   CallOperandsOf(*program, *program->get("main")).values == {s0, s1, ...}
struct CallOperands {
  std::vector<ir::VarPtr> values;       // Function::call_operands
  std::vector<ir::VarPtr> open_calls;   // Function::open_calls
  std::vector<ir::VarPtr> cut_calls;    // Function::cut_calls
  std::vector<ir::VarPtr> carried;      // Function::carried_operands
};
CallOperands CallOperandsOf(const ir::Program& program, const ir::Function& fn);
// A kernel / Group call (no op) or a pl.submit whose result is not a tuple, as an EvalStmt or
// AssignStmt: the L2 generator prints it as one self-contained `{ }` block (nothing it declares
// is used after it), so a run of them can move into a function of its own.
bool IsSelfContainedTask(const ir::Stmt& s);
// The tuple Var a task statement binds (`out, tid = pl.submit(...)`, a call of several
// results), or null. With the statements right after it that take its elements (up to
// ElementsEnd) it is a *unit*, which no chunk splits.
const ir::Var* TupleResult(const ir::Stmt& s);
// The index after stmts[i] and the statements right after it that take an element of its tuple
// result (i + 1 when stmts[i] has none): `ElementsEnd({tup = submit, out = tup[0], t = tup[1], ...}, 0) == 3`.
size_t ElementsEnd(const std::vector<ir::StmtPtr>& stmts, size_t i);
// The fewest calls in a row (with the values StampCallOperands stamps between them) that the L2
// generator prints in chunks; also the number of task statements from which it prints each task
// in a block of its own (Function::task_statements).
constexpr int64_t kCallChunkMin = 64;

// Stamps ForStmt::counted on every loop of every function the generators must print counted
// (Python's range) rather than `i += step` up to the stop: a run-time step, or a last step that
// could pass INT64_MAX. Produces CountedLoopsStamped.
Pass StampCountedLoops();
// The loops of `program` whose ForStmt::counted is not the one StampCountedLoops computes, one
// message each (empty: CountedLoopsStamped holds).
std::vector<std::string> StaleCountedLoops(const ir::Program& program);

// ---- kernel pipeline (KernelPipeline(), pipeline.cpp) ----
// Stamps Function::core_type on every kernel (InCore / AIC / AIV) and Group function.
// Produces KernelCoreTypesInferred.
Pass InferKernelCoreTypes();
// The core type InferKernelCoreTypes stamps on `fn` (Unknown for a non-kernel):
//   KernelCoreTypeOf(*program->get("matmul")) == ir::CoreType::AIC
ir::CoreType KernelCoreTypeOf(const ir::Function& fn);
// The core type stamped on kernel / Group `fn` (what code generators read). InternalError
// when it is Unknown: the pipeline (InferKernelCoreTypes) did not run on this program.
ir::CoreType StampedCoreType(const ir::Function& fn);

// Stamps Function::param_slots on every kernel: the task tensor / scalar slot each parameter
// reads (the Group's slots for a kernel a Group calls). Produces KernelParamSlotsResolved.
Pass KernelParamSlots();
// What KernelParamSlots stamps on `fn` (empty for a non-kernel); UserError when a Group passes
// the kernel something other than its own params:
//   KernelParamSlotsOf(*program, *program->get("k")) == std::vector<int64_t>{0, 0, 1}
std::vector<int64_t> KernelParamSlotsOf(const ir::Program& program, const ir::Function& fn);

// Stamps Function::group_sync (group flags to wait for / signal) on every kernel a Group
// calls. Requires KernelCoreTypesInferred; produces KernelGroupSyncResolved.
Pass KernelGroupSync();
// What KernelGroupSync stamps on kernel `fn` (empty when no Group calls it); UserError on a
// Group the CPU runtime cannot run:
//   KernelGroupSyncOf(*program, *program->get("mm")).signals == std::vector<int64_t>{0}
ir::GroupSync KernelGroupSyncOf(const ir::Program& program, const ir::Function& fn);

// Stamps ForStmt::inplace_carries on the loops of every kernel. Produces InPlaceCarriesFound.
Pass KernelInPlaceCarries();
// What KernelInPlaceCarries stamps on `loop`: the iter_arg indices whose yielded tile the
// body computes straight into the carry's storage:  InPlaceCarriesOf(*loop) == {0}
std::vector<int64_t> InPlaceCarriesOf(const ir::ForStmt& loop);
// pl.move between tiles of one dtype (a no-op on the CPU: the result shares the source's
// storage):  IsPlainTileMove(*call)
bool IsPlainTileMove(const ir::Call& call);
// tile.write, tile.fillpad_inplace and tile.gather_row: the tile ops that write into their first
// operand's buffer on the CPU (reference_ops.md §1.7):  WritesArg0InPlace(*call)
bool WritesArg0InPlace(const ir::Call& call);
// The tile.moves of kernel `fn` whose result shares its source's buffer on the CPU: plain moves
// (IsPlainTileMove) where neither tile is written in place (tile.write, fillpad_inplace,
// gather_row: a write into one would show in the other):  SharedTileMovesOf(*fn).count(call)
std::set<const ir::Call*> SharedTileMovesOf(const ir::Function& fn);
// Stamps Call::shares_source_tile on every tile.move of every kernel (SharedTileMovesOf decides).
// Produces TileMoveSharingStamped:  pl.move(t, target_memory=...) ==> pl.move(t, ..., shares_source_tile=True)
Pass KernelShareTileMoves();
// Stamps Call::reads_in_place on the tile.loads of every kernel that a matmul reads in place
// (only matmul operands read the tile, no tensor write before the last; a move is looked
// through when stamped by KernelShareTileMoves). Produces InPlaceMatmulLoadsStamped:
//   ta = pl.load(a, [0, k], [TM, TK])  ==>  ta = pl.load(a, [0, k], [TM, TK], reads_in_place=True)
Pass KernelInPlaceMatmulLoads();
// What KernelInPlaceMatmulLoads stamps on kernel `fn`: its tile.load calls read in place.
//   InPlaceMatmulLoadsOf(*fn).count(load_call) == 1
std::set<const ir::Call*> InPlaceMatmulLoadsOf(const ir::Function& fn);
// Stamps ForStmt::lent_inits on the loops of every kernel: the iter_args whose init tile (read
// nowhere else) the carry takes as its storage. Produces LoopInitLendingStamped:
//   pl.range(0, 4, 1, init_values=(acc0,))  ==>  pl.range(0, 4, 1, init_values=(acc0,), lent_inits=[0])
Pass KernelLendLoopInits();
// What KernelLendLoopInits stamps on the loops of kernel `fn` (loops lending nothing are absent):
//   LentLoopInitsOf(*fn).at(loop) == std::vector<int64_t>{0}
std::map<const ir::ForStmt*, std::vector<int64_t>> LentLoopInitsOf(const ir::Function& fn);

// Stamps attr `base` on every system.import_peer_buffer: the base of the peer function's
// reserve_buffer of that name (-1 for pl.AUTO). Produces PeerBufferBasesResolved.
Pass ResolvePeerBufferBases();
// The base ResolvePeerBufferBases stamps on `import` (a system.import_peer_buffer call);
// UserError when its peer_func is unknown or reserves no buffer of that name:
//   PeerBufferBaseOf(*program, *import_call) == 256
int64_t PeerBufferBaseOf(const ir::Program& program, const ir::Call& import);
// One message per import_peer_buffer whose `base` is not the one ResolvePeerBufferBases stamps.
std::vector<std::string> CheckPeerBufferBases(const ir::Program& program);

// Checks every kernel against what the CPU kernel code generator can express (UserError at
// the first violation; see VerifyKernelFunction in verify_program.h). Produces KernelProgramVerified.
Pass VerifyKernelProgram();

// Checks every chip-level Orchestration function against what the L2 orchestration code
// generator can express (VerifyOrchestrationFunction, verify_program.h); the program comes back
// unchanged or the first violation is a UserError. Requires the codegen preconditions; produces
// OrchestrationProgramVerified.
Pass VerifyOrchestrationProgram();
// Checks every HOST-level Orchestration function against what the HOST code generator can
// express (VerifyHostFunction); requires the codegen preconditions; produces HostProgramVerified.
Pass VerifyHostProgram();

}  // namespace pypto::transforms
