// Verifiers of the IR properties (ir_property.h). Each returns one message per violation.
#include "pypto/transforms/ir_property.h"

#include <unordered_set>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/at_location.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/return_lineage.h"
#include "pypto/transforms/verify_program.h"

namespace pypto::transforms {

using namespace ir;

const char* to_string(IRProperty p) {
  switch (p) {
    case IRProperty::ReturnParamsExplicit: return "ReturnParamsExplicit";
    case IRProperty::CallDirectionsDerived: return "CallDirectionsDerived";
    case IRProperty::RuntimeScopesMaterialized: return "RuntimeScopesMaterialized";
    case IRProperty::IterArgCarryClassified: return "IterArgCarryClassified";
    case IRProperty::ManualDepsOnSubmitOnly: return "ManualDepsOnSubmitOnly";
    case IRProperty::KernelCoreTypesInferred: return "KernelCoreTypesInferred";
    case IRProperty::StaticTripCountsStamped: return "StaticTripCountsStamped";
    case IRProperty::KernelGroupSyncResolved: return "KernelGroupSyncResolved";
    case IRProperty::InPlaceCarriesFound: return "InPlaceCarriesFound";
    case IRProperty::TileMoveSharingStamped: return "TileMoveSharingStamped";
    case IRProperty::InPlaceMatmulLoadsStamped: return "InPlaceMatmulLoadsStamped";
    case IRProperty::LoopInitLendingStamped: return "LoopInitLendingStamped";
    case IRProperty::KernelProgramVerified: return "KernelProgramVerified";
    case IRProperty::TaskIdsResolved: return "TaskIdsResolved";
    case IRProperty::ReturnedParamsStamped: return "ReturnedParamsStamped";
    case IRProperty::ScopeExitsStamped: return "ScopeExitsStamped";
    case IRProperty::NonNegativeVarsStamped: return "NonNegativeVarsStamped";
    case IRProperty::CallResultsNamed: return "CallResultsNamed";
    case IRProperty::CallOperandsStamped: return "CallOperandsStamped";
    case IRProperty::CountedLoopsStamped: return "CountedLoopsStamped";
    case IRProperty::OrchestrationProgramVerified: return "OrchestrationProgramVerified";
    case IRProperty::HostProgramVerified: return "HostProgramVerified";
    case IRProperty::DestinationReadsChecked: return "DestinationReadsChecked";
    case IRProperty::CrossScopeTaskIdsHoisted: return "CrossScopeTaskIdsHoisted";
    case IRProperty::LoopsUnrolled: return "LoopsUnrolled";
    case IRProperty::ClusterScopesOutlined: return "ClusterScopesOutlined";
    case IRProperty::IncoreScopesOutlined: return "IncoreScopesOutlined";
    case IRProperty::KernelTensorOpsConverted: return "KernelTensorOpsConverted";
    case IRProperty::TensorOperandsNamed: return "TensorOperandsNamed";
    case IRProperty::TensorDimsFolded: return "TensorDimsFolded";
    case IRProperty::TensorAssemblesInPlace: return "TensorAssemblesInPlace";
    case IRProperty::WrittenParamDirectionsUpgraded: return "WrittenParamDirectionsUpgraded";
    case IRProperty::PhaseFencesExpanded: return "PhaseFencesExpanded";
    case IRProperty::AutoDepsAnalysed: return "AutoDepsAnalysed";
    case IRProperty::ChunkedLoopsSplit: return "ChunkedLoopsSplit";
    case IRProperty::AutoChunkScopesInterchanged: return "AutoChunkScopesInterchanged";
    case IRProperty::PeerBufferBasesResolved: return "PeerBufferBasesResolved";
    case IRProperty::KernelParamSlotsResolved: return "KernelParamSlotsResolved";
    case IRProperty::TaskStatementsCounted: return "TaskStatementsCounted";
    case IRProperty::GroupKernelsStamped: return "GroupKernelsStamped";
    case IRProperty::AllocationBatchesStamped: return "AllocationBatchesStamped";
    case IRProperty::ArrayBackingsStamped: return "ArrayBackingsStamped";
  }
  return "?";
}

namespace {

std::vector<std::string> verify_return_params(const Program& p) {
  std::vector<std::string> out;
  for (auto& fn : p.functions) {
    auto traced = ReturnedParamIndices(p, *fn);
    auto explicit_ = ExplicitReturnedParamIndices(*fn);
    for (size_t i = 0; i < traced.size(); ++i) {
      if (traced[i] < 0 || !fn->params[traced[i]]->type->is<TensorType>()) continue;
      if (i >= explicit_.size() || explicit_[i] != traced[i]) {
        out.push_back("function '" + fn->name + "': return value " + std::to_string(i) + " writes back parameter '" +
                      fn->params[traced[i]]->name + "' but is not that parameter");
      }
    }
  }
  return out;
}

struct DirectionChecker : IRVisitor {
  std::vector<std::string> out;
  std::string fn;
  // A type's shape holds no call: skip the type walk at every Var use.
  void visit_(const Var*) override {}
  void visit_(const IterArg*) override {}
  void check(const std::string& callee, size_t nargs, const std::vector<ArgDirection>& dirs, const Span& span) {
    bool ok = dirs.size() == nargs;
    for (auto d : dirs) ok = ok && d != ArgDirection::Unset;
    if (!ok) out.push_back("function '" + fn + "': call to '" + callee + "'" + AtLocation(span) + " has no derived arg directions");
  }
  void visit_(const Call* op) override {
    if (!op->is_op) check(op->callee, op->args.size(), op->arg_directions, op->span);
    IRVisitor::visit_(op);
  }
  void visit_(const Submit* op) override {
    check(op->callee, op->args.size(), op->arg_directions, op->span);
    IRVisitor::visit_(op);
  }
};

struct ScopeChecker : IRVisitor {
  ScopeChecker() { statements_only_ = true; }   // checks statements only
  std::vector<std::string> out;
  std::string fn;
  int manual = 0;
  static bool wrapped(const StmtPtr& s) {
    auto v = flatten_stmts(s);
    return v.size() == 1 && v[0]->is<RuntimeScopeStmt>();
  }
  void visit_(const RuntimeScopeStmt* op) override {
    manual += op->mode == RuntimeScopeMode::Manual;
    IRVisitor::visit_(op);
    manual -= op->mode == RuntimeScopeMode::Manual;
  }
  void visit_(const ForStmt* op) override {
    if (!manual && !wrapped(op->body)) out.push_back("function '" + fn + "': for loop" + AtLocation(op->span) + " body has no runtime scope");
    IRVisitor::visit_(op);
  }
  void visit_(const IfStmt* op) override {
    if (!manual && (!wrapped(op->then_body) || (op->else_body && !wrapped(op->else_body)))) {
      out.push_back("function '" + fn + "': if" + AtLocation(op->span) + " branch has no runtime scope");
    }
    IRVisitor::visit_(op);
  }
};

struct InPlaceChecker : IRVisitor {
  InPlaceChecker() { statements_only_ = true; }   // checks statements only
  std::vector<std::string> out;
  std::string fn;
  void visit_(const ForStmt* op) override {
    if (op->inplace_carries != InPlaceCarriesOf(*op)) {
      out.push_back("function '" + fn + "': for loop" + AtLocation(op->span) + " has stale inplace_carries");
    }
    IRVisitor::visit_(op);
  }
};

struct TileMoveChecker : IRVisitor {
  std::vector<std::string> out;
  std::string fn;
  std::set<const Call*> shared;   // SharedTileMovesOf the function checked
  void visit_(const Var*) override {}   // (a type's shape holds no call)
  void visit_(const IterArg*) override {}
  void visit_(const Call* op) override {
    if (op->is_op && op->callee == "tile.move" && op->shares_source_tile != (shared.count(op) != 0)) {
      out.push_back("function '" + fn + "': tile.move" + AtLocation(op->span) + " has a stale shares_source_tile");
    }
    IRVisitor::visit_(op);
  }
};

// A tile.load whose reads_in_place is not the one KernelInPlaceMatmulLoads computes.
struct InPlaceLoadChecker : IRVisitor {
  std::vector<std::string> out;
  std::string fn;
  std::set<const Call*> in_place;   // InPlaceMatmulLoadsOf the function checked
  void visit_(const Var*) override {}   // (a type's shape holds no call)
  void visit_(const IterArg*) override {}
  void visit_(const Call* op) override {
    if (op->is_op && op->callee == "tile.load" && op->reads_in_place != (in_place.count(op) != 0)) {
      out.push_back("function '" + fn + "': tile.load" + AtLocation(op->span) + " has a stale reads_in_place");
    }
    IRVisitor::visit_(op);
  }
};

// A loop whose lent_inits is not the one KernelLendLoopInits computes.
struct LentInitsChecker : IRVisitor {
  LentInitsChecker() { statements_only_ = true; }   // checks statements only
  std::vector<std::string> out;
  std::string fn;
  std::map<const ForStmt*, std::vector<int64_t>> lent;   // LentLoopInitsOf the function checked
  void visit_(const ForStmt* op) override {
    auto it = lent.find(op);
    if (op->lent_inits != (it == lent.end() ? std::vector<int64_t>{} : it->second)) {
      out.push_back("function '" + fn + "': for loop" + AtLocation(op->span) + " has stale lent_inits");
    }
    IRVisitor::visit_(op);
  }
};

struct CarryChecker : IRVisitor {
  CarryChecker() { statements_only_ = true; }   // checks statements only
  std::vector<std::string> out;
  std::string fn;
  void visit_(const ForStmt* op) override {
    if (op->carries.size() != op->iter_args.size()) {
      out.push_back("function '" + fn + "': for loop" + AtLocation(op->span) + " has " + std::to_string(op->carries.size()) +
                    " carry classifications for " + std::to_string(op->iter_args.size()) + " iter_args");
    }
    IRVisitor::visit_(op);
  }
};

struct TripCountChecker : IRVisitor {
  TripCountChecker() { statements_only_ = true; }   // checks statements only
  std::vector<std::string> out;
  std::string fn;
  void visit_(const ForStmt* op) override {
    if (op->trip_count != StaticTripCount(*op)) {
      out.push_back("function '" + fn + "': for loop" + AtLocation(op->span) + " has trip_count " + std::to_string(op->trip_count) +
                    ", expected " + std::to_string(StaticTripCount(*op)));
    }
    IRVisitor::visit_(op);
  }
};

// Compiler edges name TaskId Vars bound earlier in an enclosing block; no task_ref is left.
// Only TaskId Vars are recorded (10,000 tasks: 10,000 entries, not every tensor and view).
struct HoistChecker {
  std::vector<std::string> out;
  std::string fn;
  std::vector<std::unordered_set<const Var*>> scopes;
  void define(const Var* v) {
    if (is_task_id(v->type)) scopes.back().insert(v);
  }
  bool visible(const Var* v) const {
    for (auto& s : scopes) {
      if (s.count(v)) return true;
    }
    return false;
  }
  void check_task(const ExprPtr& e) {
    if (!e) return;
    if (auto* c = e->as<Call>(); c && c->is_op && c->callee == "system.task_ref") {
      out.push_back("function '" + fn + "': system.task_ref placeholder left" + AtLocation(c->span));
      return;
    }
    if (!e->is<Call>() && !e->is<Submit>()) return;
    for (auto& d : compiler_dep_edges(*e)) {
      const Var* v = as_var(d);
      if (!v || !visible(v)) {
        out.push_back("function '" + fn + "': compiler edge '" + (v ? v->name : std::string("?")) + "'" + AtLocation(e->span) +
                      " names a TaskId not visible there");
      }
    }
  }
  void block(const StmtPtr& s) {
    for (const StmtPtr& st : flatten_stmts(s)) {
      if (auto* a = st->as<AssignStmt>()) {
        check_task(a->value);
        define(a->var.get());
      } else if (auto* e = st->as<EvalStmt>()) {
        check_task(e->expr);
      } else if (auto* f = st->as<ForStmt>()) {
        scopes.emplace_back();
        for (auto& ia : f->iter_args) define(ia.get());
        block(f->body);
        scopes.pop_back();
        for (auto& rv : f->return_vars) define(rv.get());
      } else if (auto* i = st->as<IfStmt>()) {
        for (const StmtPtr& b : {i->then_body, i->else_body}) {
          if (!b) continue;
          scopes.emplace_back();
          block(b);
          scopes.pop_back();
        }
        for (auto& rv : i->return_vars) define(rv.get());
      } else if (auto* r = st->as<RuntimeScopeStmt>()) {
        block(r->body);
      }
    }
  }
};

struct UnrollChecker : IRVisitor {
  UnrollChecker() { statements_only_ = true; }   // checks statements only
  std::vector<std::string> out;
  std::string fn;
  void visit_(const ForStmt* op) override {
    if (op->for_kind == ForKind::Unroll) out.push_back("function '" + fn + "': pl.unroll loop" + AtLocation(op->span) + " is left");
    IRVisitor::visit_(op);
  }
};

// Loops with a `chunk` attr and scopes with the `auto_chunk` attr (both gone after the
// pl.auto_chunk passes); a ForStmt::chunk_stride only on the outer loop of a chunked loop.
struct ChunkChecker : IRVisitor {
  ChunkChecker() { statements_only_ = true; }   // checks statements only
  std::vector<std::string> out;
  std::string fn;
  bool loops = true;   // else scopes
  void visit_(const ForStmt* op) override {
    if (loops && op->chunk.chunk > 0) out.push_back("function '" + fn + "': chunked loop" + AtLocation(op->span) + " is left");
    if (loops && op->chunk_stride && op->loop_origin != LoopOrigin::ChunkOuter) {
      out.push_back("function '" + fn + "': for loop" + AtLocation(op->span) + " has chunk_stride " +
                    std::to_string(op->chunk_stride) + " but is not the outer loop of a chunked loop");
    }
    IRVisitor::visit_(op);
  }
  void visit_(const ScopeStmt* op) override {
    if (!loops && op->attrs.count("auto_chunk")) {
      out.push_back("function '" + fn + "': pl.auto_chunk scope" + AtLocation(op->span) + " is left");
    }
    IRVisitor::visit_(op);
  }
};

// ScopeStmts of the kinds `outlined` claims are gone, in Orchestration / Opaque functions.
std::vector<std::string> verify_scopes_outlined(const Program& p, std::vector<ScopeKind> outlined) {
  struct Checker : IRVisitor {
    Checker() { statements_only_ = true; }   // checks statements only
    std::vector<std::string> out;
    std::string fn;
    std::vector<ScopeKind> kinds;
    void visit_(const ScopeStmt* op) override {
      for (ScopeKind k : kinds) {
        if (op->scope_kind != k) continue;
        const char* name = k == ScopeKind::At ? "pl.at" : k == ScopeKind::Spmd ? "pl.spmd" : "pl.cluster";
        out.push_back("function '" + fn + "': " + name + " scope" + AtLocation(op->span) + " is left");
      }
      IRVisitor::visit_(op);
    }
  } c;
  c.kinds = std::move(outlined);
  for (auto& f : p.functions) {
    if (f->type != FunctionType::Orchestration && f->type != FunctionType::Opaque) continue;
    c.fn = f->name;
    c.visit_function(*f);
  }
  return c.out;
}

// The property of a rewrite that is at its fixed point once it ran: running `pass` again on
// `program` must change nothing (the first difference is the violation).
std::vector<std::string> verify_fixed_point(const Pass& pass, const ProgramPtr& program) {
  ProgramPtr again;
  try {
    again = pass.run(program);
  } catch (const std::exception& e) {
    return {"running " + pass.name + " again fails: " + e.what()};
  }
  std::string why;
  if (structural_equal_explain(program, again, &why)) return {};
  return {"running " + pass.name + " again changes the program: " + why};
}

}  // namespace

const char* FixedPointPassOf(IRProperty p) {
  // (the verify_fixed_point cases of VerifyProperty below)
  if (p == IRProperty::KernelTensorOpsConverted) return "ConvertTensorToTileOps";
  if (p == IRProperty::TensorOperandsNamed) return "NameNestedTensorCalls";
  if (p == IRProperty::TensorAssemblesInPlace) return "LowerTensorAssemble";
  if (p == IRProperty::WrittenParamDirectionsUpgraded) return "UpgradeWrittenParamDirections";
  if (p == IRProperty::PhaseFencesExpanded) return "ExpandManualPhaseFence";
  if (p == IRProperty::CallResultsNamed) return "NameCallResults";
  return nullptr;
}

std::vector<std::string> VerifyProperty(IRProperty p, const ProgramPtr& program) {
  std::vector<std::string> out;
  switch (p) {
    case IRProperty::ReturnParamsExplicit: return verify_return_params(*program);
    case IRProperty::CallDirectionsDerived: {
      DirectionChecker c;
      for (auto& f : program->functions) {
        c.fn = f->name;
        c.visit_function(*f);
      }
      return c.out;
    }
    case IRProperty::RuntimeScopesMaterialized: {
      ScopeChecker c;
      for (auto& f : program->functions) {
        if (f->type != FunctionType::Orchestration) continue;
        // @pl.function(auto_scope=False): the author's scopes are the materialized ones (§4).
        if (const bool* a = attr_get<bool>(f->attrs, "auto_scope"); a && !*a) continue;
        c.fn = f->name;
        auto stmts = flatten_stmts(f->body);
        if (!stmts.empty() && stmts.back()->is<ReturnStmt>()) stmts.pop_back();
        if (stmts.size() != 1 || !stmts[0]->is<RuntimeScopeStmt>()) {
          c.out.push_back("function '" + f->name + "': body is not wrapped in a runtime scope");
        }
        c.visit_function(*f);
      }
      return c.out;
    }
    case IRProperty::IterArgCarryClassified: {
      CarryChecker c;
      for (auto& f : program->functions) {
        if (f->type != FunctionType::Orchestration) continue;
        c.fn = f->name;
        c.visit_function(*f);
      }
      return c.out;
    }
    case IRProperty::StaticTripCountsStamped: {
      TripCountChecker c;
      for (auto& f : program->functions) {
        if (f->type != FunctionType::Orchestration) continue;
        c.fn = f->name;
        c.visit_function(*f);
      }
      return c.out;
    }
    case IRProperty::ManualDepsOnSubmitOnly: return CheckManualDepsOnSubmitOnly(program);
    case IRProperty::DestinationReadsChecked: return CheckDestinationReads(program);
    case IRProperty::KernelCoreTypesInferred: {
      for (auto& f : program->functions) {
        CoreType want = KernelCoreTypeOf(*f);
        if (want != CoreType::Unknown && f->core_type != want) {
          out.push_back("function '" + f->name + "': core_type is " + to_string(f->core_type) + ", expected " +
                        to_string(want));
        }
      }
      return out;
    }
    case IRProperty::KernelGroupSyncResolved:
      for (auto& f : program->functions) {
        if (f->is_kernel() && f->group_sync != KernelGroupSyncOf(*program, *f)) {
          out.push_back("function '" + f->name + "': group_sync is not the one KernelGroupSync computes");
        }
      }
      return out;
    case IRProperty::KernelParamSlotsResolved:
      for (auto& f : program->functions) {
        if (f->param_slots != KernelParamSlotsOf(*program, *f)) {
          out.push_back("function '" + f->name + "': param_slots is not the one KernelParamSlots computes");
        }
      }
      return out;
    case IRProperty::TileMoveSharingStamped: {
      TileMoveChecker c;
      for (auto& f : program->functions) {
        if (!f->is_kernel()) continue;
        c.fn = f->name;
        c.shared = SharedTileMovesOf(*f);
        c.visit_function(*f);
      }
      return c.out;
    }
    case IRProperty::InPlaceMatmulLoadsStamped: {
      InPlaceLoadChecker c;
      for (auto& f : program->functions) {
        if (!f->is_kernel() || !f->body) continue;
        c.fn = f->name;
        c.in_place = InPlaceMatmulLoadsOf(*f);
        c.visit_function(*f);
      }
      return c.out;
    }
    case IRProperty::LoopInitLendingStamped: {
      LentInitsChecker c;
      for (auto& f : program->functions) {
        if (!f->is_kernel() || !f->body) continue;
        c.fn = f->name;
        c.lent = LentLoopInitsOf(*f);
        c.visit_function(*f);
      }
      return c.out;
    }
    case IRProperty::InPlaceCarriesFound: {
      InPlaceChecker c;
      for (auto& f : program->functions) {
        if (!f->is_kernel()) continue;
        c.fn = f->name;
        c.visit_function(*f);
      }
      return c.out;
    }
    case IRProperty::ReturnedParamsStamped:
      for (auto& f : program->functions) {
        if (f->returned_params != ReturnedParamsOf(*f)) {
          out.push_back("function '" + f->name + "': returned_params is not the one StampReturnedParams computes");
        }
      }
      return out;
    case IRProperty::TaskIdsResolved:
      for (auto& f : program->functions) {
        if (f->type != FunctionType::Orchestration) continue;
        for (auto& m : CheckTaskIdsResolved(*f)) out.push_back(m);
      }
      return out;
    case IRProperty::ScopeExitsStamped:
      for (auto& f : program->functions) {
        if (f->type != FunctionType::Orchestration) continue;
        for (auto& m : CheckScopeExitsStamped(*program, *f)) out.push_back(m);
      }
      return out;
    case IRProperty::OrchestrationProgramVerified:
    case IRProperty::HostProgramVerified: {
      const bool host = p == IRProperty::HostProgramVerified;
      for (auto& f : program->functions) {
        if (f->type != FunctionType::Orchestration || (f->level == Level::HOST) != host) continue;
        try {
          if (host) VerifyHostFunction(program, f->name);
          else VerifyOrchestrationFunction(program, f->name);
        } catch (const UserError& e) {
          out.push_back("function '" + f->name + "': " + e.message());
        }
      }
      return out;
    }
    case IRProperty::KernelProgramVerified:
      for (auto& f : program->functions) {
        if (!f->is_kernel()) continue;
        try {
          VerifyKernelFunction(program, f->name);
        } catch (const UserError& e) {
          out.push_back("function '" + f->name + "': " + e.message());
        }
      }
      return out;
    case IRProperty::CrossScopeTaskIdsHoisted: {
      HoistChecker c;
      for (auto& f : program->functions) {
        if (f->type != FunctionType::Orchestration) continue;
        c.fn = f->name;
        c.scopes.assign(1, {});
        for (auto& p : f->params) c.define(p.get());
        c.block(f->body);
      }
      return c.out;
    }
    case IRProperty::LoopsUnrolled: {
      UnrollChecker c;
      for (auto& f : program->functions) {
        c.fn = f->name;
        c.visit_function(*f);
      }
      return c.out;
    }
    case IRProperty::ClusterScopesOutlined: return verify_scopes_outlined(*program, {ScopeKind::Cluster});
    case IRProperty::IncoreScopesOutlined: return verify_scopes_outlined(*program, {ScopeKind::At, ScopeKind::Spmd});
    case IRProperty::KernelTensorOpsConverted: return verify_fixed_point(ConvertTensorToTileOps(), program);
    case IRProperty::TensorOperandsNamed: return verify_fixed_point(NameNestedTensorCalls(), program);
    case IRProperty::CallResultsNamed: return verify_fixed_point(NameCallResults(), program);
    case IRProperty::TensorDimsFolded: return verify_fixed_point(FoldTensorDims(), program);
    case IRProperty::TensorAssemblesInPlace: return verify_fixed_point(LowerTensorAssemble(), program);
    case IRProperty::WrittenParamDirectionsUpgraded: return verify_fixed_point(UpgradeWrittenParamDirections(), program);
    case IRProperty::PhaseFencesExpanded: return verify_fixed_point(ExpandManualPhaseFence(), program);
    case IRProperty::ChunkedLoopsSplit:
    case IRProperty::AutoChunkScopesInterchanged: {
      ChunkChecker c;
      c.loops = p == IRProperty::ChunkedLoopsSplit;
      for (auto& f : program->functions) {
        c.fn = f->name;
        c.visit_function(*f);
      }
      return c.out;
    }
    case IRProperty::PeerBufferBasesResolved: return CheckPeerBufferBases(*program);
    case IRProperty::TaskStatementsCounted:
      for (auto& f : program->functions) {
        if (f->task_statements != TaskStatementsOf(*f)) {
          out.push_back("function '" + f->name + "': task_statements " + std::to_string(f->task_statements) +
                        " is not the " + std::to_string(TaskStatementsOf(*f)) + " CountTaskStatements computes");
        }
      }
      return out;
    case IRProperty::AllocationBatchesStamped:
      for (auto& f : program->functions) {
        if (f->batched_creates != BatchedCreatesOf(*f)) {
          out.push_back("function '" + f->name + "': batched_creates is not the one StampAllocationBatches computes");
        }
      }
      return out;
    case IRProperty::CountedLoopsStamped: return StaleCountedLoops(*program);
    case IRProperty::NonNegativeVarsStamped:
      for (auto& f : program->functions) {
        if (f->non_negative_vars != NonNegativeVarsOf(*f)) {
          out.push_back("function '" + f->name + "': non_negative_vars is not the one StampNonNegativeVars computes");
        }
      }
      return out;
    case IRProperty::CallOperandsStamped:
      for (auto& f : program->functions) {
        const CallOperands want = CallOperandsOf(*program, *f);
        if (f->call_operands != want.values || f->open_calls != want.open_calls || f->cut_calls != want.cut_calls ||
            f->carried_operands != want.carried) {
          out.push_back("function '" + f->name +
                        "': call_operands / open_calls / cut_calls / carried_operands are not the ones StampCallOperands computes");
        }
      }
      return out;
    case IRProperty::ArrayBackingsStamped:
      for (auto& f : program->functions) {
        if (!SameArrayBackings(f->array_backings, ArrayBackingsOf(*f))) {
          out.push_back("function '" + f->name + "': array_backings is not the one StampArrayBackings computes");
        }
      }
      return out;
    case IRProperty::GroupKernelsStamped:
      for (auto& f : program->functions) {
        if (f->group_kernels != GroupKernelsOf(*program, *f)) {
          out.push_back("function '" + f->name + "': group_kernels is not the one StampGroupKernels computes");
        }
      }
      return out;
    case IRProperty::AutoDepsAnalysed:   // not a fixed point: its MANUAL scopes read as the user's on a re-run
      for (auto& f : program->functions) {
        if (f->type != FunctionType::Orchestration || f->level == Level::HOST) continue;
        if (!attr_get<std::string>(f->attrs, "auto_deps")) {
          out.push_back("function '" + f->name + "' has no auto_deps verdict of AutoDeriveTaskDependencies");
        }
      }
      return out;
  }
  return out;
}

}  // namespace pypto::transforms
