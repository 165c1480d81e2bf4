// VerifyKernelProgram (kernel pipeline; verify_program.h): what the CPU kernel code generator
// (src/codegen/kernel_cpu) can express, checked before it prints. The walk follows the
// generator's order (parameters, then the body statement by statement, operands left to right),
// so the first violation reported is the one it would meet first. Messages, spans and help
// lines are the user-facing contract (test_diagnostics*.py, tests/cpp/codegen).
//
//   entry        the function exists and is a kernel (InCore / AIC / AIV)
//   parameters   tensors (ND layout: pl.Layout.DN is refused) and scalars only; no TASK_ID scalar
//   values       each value is a tile (computed by a tile op of the CPU backend), a tensor
//                parameter (or a pl.store of one) or a scalar expression the kernel can print
//   tiles        at least one dimension, constant dimensions positive
//   carries      loop carries / if results are tiles, scalars or tensors; a carried tensor stays
//                one tensor parameter; pl.range step is not 0
//   statements   expression statements are op calls; a kernel returns its tensor parameters; no
//                pl.at / pl.spmd / pl.cluster scope inside a kernel
//   outputs      every pl.Out tensor parameter is stored to (verify_kernel_outputs.cpp)
// Which ops a kernel may evaluate, and as what, is the one kernel op table (pypto/ir/kernel_ops.h)
// that the backend's handler tables match (test_kernel_op_table): this walk checks an op's
// operands by their types, so a new op needs no edit here.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "pypto/ir/error.h"
#include "pypto/ir/kernel_ops.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/op_registry.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/verify_program.h"
#include "../ir/describe.h"

namespace pypto::transforms {

// The largest kernel tile (bytes); the kernel prelude checks run-time shapes against the same bound.
constexpr int64_t kMaxTileBytes = int64_t{1} << 32;

using namespace ir;

namespace {

// The kind of C++ entity a kernel value becomes in the generated code (kernel_emitter.h).
class KernelChecker {
 public:
  KernelChecker(const Program& program, const Function& fn) : program_(program), fn_(fn) {}

  void Run() {
    Params();
    Stmt(fn_.body);
  }

 private:
  struct Slot {
    enum Kind { kTile, kScalar, kTensor } kind;
    int tensor = -1;
  };

  // pypto_kernel's C++ spelling of a dtype exists for every dtype but TASK_ID.
  static void CheckDtype(DataType t, const Span& span, const char* what) {
    PYPTO_USER_CHECK(t != DataType::TASK_ID, span, what, "");
  }

  void Params() {
    // A stamped (or hand-written) param_slots= names one task slot per parameter.
    const auto& slots = fn_.param_slots;
    PYPTO_USER_CHECK(slots.empty() || slots.size() == fn_.params.size(), fn_.span,
                     "param_slots= of kernel '" << fn_.name << "' has " << slots.size() << " entries for "
                                                << fn_.params.size() << " parameters",
                     "param_slots= is KernelParamSlots' result: drop it and let the pass compute it");
    int tensor_slot = 0;
    for (const VarPtr& p : fn_.params) {
      if (auto* tt = p->type->as<TensorType>()) {
        // The CPU kernel prelude addresses tensors row-major (ND); a column-major view would be
        // read as ND, so it is refused rather than silently misread.
        PYPTO_USER_CHECK(tt->layout == Layout::ND, p->span,
                         "pl.Layout.DN (a column-major view) is not supported by the CPU kernel backend: parameter '"
                             << p->name << "' of kernel '" << fn_.name << "'",
                         "pass the tensor in the default ND layout (transpose a loaded tile with pl.tile.transpose)");
        tensors_[p.get()] = tensor_slot++;
      } else if (auto* st = p->type->as<ScalarType>()) {
        CheckDtype(st->dtype, p->span, "TASK_ID values cannot be used inside a kernel");
        scalars_[p.get()] = true;
      } else {
        throw UserError("kernel parameter '" + p->name + "' must be a tensor or a scalar", p->span,
                        "pass tiles between kernels through tensors");
      }
    }
    // Dynamic-dim symbols: bound from the first tensor param that declares each.
    for (const VarPtr& p : fn_.params) {
      auto* tt = p->type->as<TensorType>();
      if (!tt) continue;
      for (auto& d : tt->shape) {
        if (const Var* sym = as_var(d)) scalars_[sym] = true;
      }
    }
  }

  void DeclareTile(const TileType& tt, const Span& span) {
    int64_t bytes = byte_width(tt.dtype);
    bool too_big = false;
    for (size_t i = 0; i < tt.shape.size(); ++i) {
      const ExprPtr& d = tt.shape[i];
      if (auto* c = d->as<ConstInt>()) {
        PYPTO_USER_CHECK(c->value > 0, span,
                         "a tile of extent " << c->value << " on axis " << i << "; every tile extent must be positive", "");
        too_big = too_big || __builtin_mul_overflow(bytes, c->value, &bytes) || bytes > kMaxTileBytes;
      } else {
        Scalar(d);
      }
    }
    PYPTO_USER_CHECK(!too_big, span,
                     "a tile of shape " << detail::describe_shape(tt.shape) << " and dtype " << to_string(tt.dtype)
                                        << " holds more than " << kMaxTileBytes << " bytes, the most a kernel tile can",
                     "split the work into smaller tiles (pl.load / pl.slice blocks in a loop)");
    PYPTO_USER_CHECK(!tt.shape.empty(), span, "a tile must have at least one dimension", "");
    for (auto& d : tt.valid_shape) {   // valid extents are kernel scalars (§10)
      if (!d->is<ConstInt>()) Scalar(d);
    }
    CheckDtype(tt.dtype, span, "TASK_ID values cannot be used inside a kernel");
  }

  // ---- values ----
  void Tile(const ExprPtr& e) {
    if (const Var* v = as_var(e)) {
      PYPTO_USER_CHECK(tiles_.count(v), e->span, "'" << v->name << "' is not a tile value here",
                       "tile ops take tiles (pl.load results and tile op values)");
      return;
    }
    auto* call = e->as<Call>();
    auto* tt = e->type ? e->type->as<TileType>() : nullptr;
    PYPTO_USER_CHECK(call && tt, e->span, "expected a tile value", "");
    if (IsPlainTileMove(*call)) return Tile(call->args[0]);
    DeclareTile(*tt, e->span);
    TileOp(*call);
  }

  int TensorIndex(const ExprPtr& e) {
    if (const Var* v = as_var(e)) {
      auto it = tensors_.find(v);
      PYPTO_USER_CHECK(it != tensors_.end(), e->span,
                       "'" << v->name << "' is not a tensor parameter of kernel '" << fn_.name << "'",
                       "kernels load from and store to their tensor parameters");
      return it->second;
    }
    if (auto* call = e->as<Call>()) {
      if (call->is_op && e->type && e->type->is<TensorType>()) return TensorOp(*call);
    }
    throw UserError("expected a tensor parameter of the kernel", e->span, "");
  }

  // The operands of a tile op, as its handler evaluates them: tiles, tensors, scalars and
  // lists of scalars (offsets, shapes).
  void Operands(const Call& call) {
    for (auto& a : call.args) {
      if (auto* t = a->as<MakeTuple>()) {
        for (auto& el : t->elements) Scalar(el);
      } else if (a->type && a->type->is<TileType>()) {
        Tile(a);
      } else if (a->type && a->type->is<TensorType>()) {
        TensorIndex(a);
      } else {
        Scalar(a);
      }
    }
  }

  void TileOp(const Call& call) {
    ops::check_kernel_tile_op(call);
    Operands(call);
  }

  // A tensor-valued op (tile.store(tile, offsets, tensor), tile.mscatter(src, idx, tensor),
  // tensor.write(tensor, indices, v)): its value is the one tensor parameter it writes.
  int TensorOp(const Call& call) {
    ops::check_kernel_tensor_op(call);
    const Expr* written = nullptr;
    for (auto& a : call.args) {
      if (a->type && a->type->is<TensorType>()) written = a.get();
    }
    PYPTO_CHECK(written != nullptr, "tensor-valued kernel op '" << call.callee << "' has no tensor operand");
    CheckDtype(written->type->as<TensorType>()->dtype, call.span, "TASK_ID tensors are not supported");
    Operands(call);
    for (auto& a : call.args) {
      if (a.get() == written) return TensorIndex(a);
    }
    return -1;
  }

  // A scalar expression, walked as the kernel's scalar printer walks it.
  void Scalar(const ExprPtr& e) {
    if (const Var* v = as_var(e)) {
      if (scalars_.count(v)) return;
      if (tiles_.count(v) || tensors_.count(v)) {
        throw UserError("'" + v->name + "' is a " + (tiles_.count(v) ? "tile" : "tensor") + ", not a scalar", e->span,
                        "");
      }
      throw UserError("'" + v->name + "' has no value in kernel '" + fn_.name + "'", e->span,
                      "a dynamic dimension used in a kernel must appear in the shape of one of its tensor parameters");
    }
    if (e->is<ConstInt>() || e->is<ConstFloat>() || e->is<ConstBool>()) return;
    if (auto* c = e->as<Cast>()) {
      Scalar(c->value);
      if (auto* st = e->type ? e->type->as<ScalarType>() : nullptr) {
        CheckDtype(st->dtype, e->span, "TASK_ID values cannot be used inside a kernel");
      }
      return;
    }
    if (auto* u = e->as<UnaryExpr>()) return Scalar(u->a);
    if (auto* b = e->as<BinaryExpr>()) {
      Scalar(b->a);
      Scalar(b->b);
      return;
    }
    auto* call = e->as<Call>();
    if (!call) {
      throw UserError(std::string("unsupported scalar expression (") + to_string(e->kind) + ") in a kernel", e->span, "");
    }
    // A scalar-valued kernel op (tile.read, tensor.dim, block indices, barriers, pipe buffers):
    // its operands are tiles, tensor parameters and scalars, checked by their types.
    if (call->is_op && KernelOpKindOf(call->callee) == KernelOpKind::Scalar) {
      Operands(*call);
      return;
    }
    throw UserError("'" + call->callee + "' cannot be used as a scalar inside a kernel", e->span,
                    call->is_op ? "" : "calls to other functions are not supported inside a kernel");
  }

  // ---- statements ----
  void Stmt(const StmtPtr& s) {
    if (!s) return;
    switch (s->kind) {
      case NodeKind::SeqStmts:
        for (auto& c : s->as<SeqStmts>()->stmts) Stmt(c);
        return;
      case NodeKind::AssignStmt: {
        auto* a = s->as<AssignStmt>();
        Assign(a->var, a->value, a->span);
        return;
      }
      case NodeKind::EvalStmt: {
        auto* ev = s->as<EvalStmt>();
        auto* call = ev->expr->as<Call>();
        PYPTO_USER_CHECK(call && call->is_op, ev->span, "only tile ops can be evaluated as statements in a kernel", "");
        if (ev->expr->type->is<TensorType>()) {
          TensorOp(*call);
        } else if (auto* tt = ev->expr->type->as<TileType>()) {
          DeclareTile(*tt, ev->span);
          TileOp(*call);
        } else {
          Scalar(ev->expr);
        }
        return;
      }
      case NodeKind::ForStmt: For(*s->as<ForStmt>()); return;
      case NodeKind::IfStmt: If(*s->as<IfStmt>()); return;
      case NodeKind::YieldStmt: Yield(*s->as<YieldStmt>()); return;
      case NodeKind::ReturnStmt:
        for (auto& v : s->as<ReturnStmt>()->values) {
          PYPTO_USER_CHECK(v->type->is<TensorType>(), v->span, "a kernel can only return its tensor parameters",
                           "store tiles into an Out parameter and return it");
          TensorIndex(v);
        }
        return;
      case NodeKind::RuntimeScopeStmt: Stmt(s->as<RuntimeScopeStmt>()->body); return;
      case NodeKind::ScopeStmt:
        throw UserError("scopes (pl.at / pl.spmd / pl.cluster) cannot appear inside a kernel", s->span,
                        "use them in the orchestration function");
        // Expression kinds are not statements (no `default:`: -Wswitch flags a new statement kind).
#define PYPTO_EXPR_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
        break;
    }
    throw InternalError(std::string("VerifyKernelProgram: unexpected statement ") + to_string(s->kind));
  }

  void Assign(const VarPtr& var, const ExprPtr& value, const Span& span) {
    const TypePtr& t = var->type;
    if (auto* call = value->as<Call>(); call && !call->is_op) {
      // A pl.spmd / pl.at block with a kernel call and other statements is outlined into a kernel
      // of its own, which would call the first one (found by scripts/fuzz.py --family python_idioms:
      // an assert before the call said "expected a tensor parameter of the kernel").
      throw UserError("kernel '" + fn_.name + "' calls '" + call->callee + "': a kernel cannot call another kernel",
                      span,
                      "a pl.spmd / pl.at block that calls a kernel must hold only that call: move the other "
                      "statements before the block, or write the kernel's tile ops in the block");
    }
    if (auto* tt = t->as<TileType>()) {
      if (as_var(value)) {
        Tile(value);
      } else {
        auto* call = value->as<Call>();
        PYPTO_USER_CHECK(call && call->is_op, span, "a tile must be computed by a tile op",
                         "calls to other functions are not supported inside a kernel");
        if (IsPlainTileMove(*call)) {
          Tile(call->args[0]);
        } else {
          DeclareTile(*tt, span);
          TileOp(*call);
        }
      }
      tiles_[var.get()] = true;
      return;
    }
    if (t->is<TensorType>()) {
      tensors_[var.get()] = TensorIndex(value);
      return;
    }
    if (auto* st = t->as<ScalarType>()) {
      CheckDtype(st->dtype, span, "TASK_ID values cannot be used inside a kernel");
      Scalar(value);
      scalars_[var.get()] = true;
      return;
    }
    throw UserError("unsupported value of type " + std::string(t->is<TupleType>() ? "tuple" : "array") + " in a kernel",
                    span, "kernels compute tiles and scalars");
  }

  Slot DeclareSlot(const TypePtr& type, const Span& span) {
    if (auto* tt = type->as<TileType>()) {
      DeclareTile(*tt, span);
      return Slot{Slot::kTile};
    }
    if (auto* st = type->as<ScalarType>()) {
      CheckDtype(st->dtype, span, "TASK_ID values cannot be used inside a kernel");
      return Slot{Slot::kScalar};
    }
    if (type->is<TensorType>()) return Slot{Slot::kTensor};
    throw UserError("unsupported loop-carried / branch value in a kernel (only tiles, scalars and tensors)", span, "");
  }

  void Bind(const Var* v, const Slot& slot) {
    switch (slot.kind) {
      case Slot::kTile: tiles_[v] = true; return;
      case Slot::kScalar: scalars_[v] = true; return;
      case Slot::kTensor: tensors_[v] = slot.tensor; return;
    }
  }

  void For(const ForStmt& op) {
    std::vector<Slot> slots;
    for (auto& ia : op.iter_args) {
      Slot slot = DeclareSlot(ia->type, op.span);
      if (slot.kind == Slot::kTensor) slot.tensor = TensorIndex(ia->init);
      else if (slot.kind == Slot::kTile) Tile(ia->init);
      else Scalar(ia->init);
      Bind(ia.get(), slot);
      slots.push_back(slot);
    }
    scalars_[op.loop_var.get()] = true;
    Scalar(op.start);
    Scalar(op.stop);
    Scalar(op.step);
    const auto* cstep = op.step->as<ConstInt>();
    PYPTO_USER_CHECK(!cstep || cstep->value != 0, op.span, "pl.range step must not be 0", "");
    yield_targets_.push_back(slots);
    Stmt(op.body);
    yield_targets_.pop_back();
    for (size_t i = 0; i < op.return_vars.size() && i < slots.size(); ++i) Bind(op.return_vars[i].get(), slots[i]);
  }

  void If(const IfStmt& op) {
    std::vector<Slot> slots;
    for (auto& rv : op.return_vars) slots.push_back(DeclareSlot(rv->type, op.span));
    Scalar(op.cond);
    yield_targets_.push_back(slots);
    Stmt(op.then_body);
    std::vector<Slot> then_slots = yield_targets_.back();
    if (op.else_body) Stmt(op.else_body);
    std::vector<Slot> final_slots = yield_targets_.back();
    yield_targets_.pop_back();
    for (size_t i = 0; i < op.return_vars.size(); ++i) {
      if (final_slots[i].kind == Slot::kTensor) {
        PYPTO_USER_CHECK(then_slots[i].tensor == final_slots[i].tensor, op.span,
                         "both branches must yield the same tensor parameter in a kernel",
                         "yield one tensor parameter from both branches, or yield tiles (pl.load the tensors first)");
      }
      Bind(op.return_vars[i].get(), final_slots[i]);
    }
  }

  void Yield(const YieldStmt& op) {
    PYPTO_USER_CHECK(!yield_targets_.empty(), op.span, "pl.yield_ outside of a loop or branch", "");
    std::vector<Slot>& slots = yield_targets_.back();
    PYPTO_USER_CHECK(slots.size() == op.values.size(), op.span,
                     "pl.yield_ gives " << op.values.size() << " values for " << slots.size() << " targets", "");
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].kind == Slot::kScalar) Scalar(op.values[i]);
      else if (slots[i].kind == Slot::kTile) Tile(op.values[i]);
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].kind != Slot::kTensor) continue;
      const int idx = TensorIndex(op.values[i]);
      PYPTO_USER_CHECK(slots[i].tensor < 0 || slots[i].tensor == idx, op.span,
                       "a loop-carried / branch tensor must stay the same tensor parameter in a kernel",
                       "carry one tensor parameter, or carry a tile (pl.load the tensor first)");
      slots[i].tensor = idx;
    }
  }

  const Program& program_;
  const Function& fn_;
  std::map<const Var*, bool> scalars_, tiles_;
  std::map<const Var*, int> tensors_;   // tensor values -> the tensor param (slot) they are
  std::vector<std::vector<Slot>> yield_targets_;
};

}  // namespace

void VerifyKernelFunction(const ProgramPtr& program, const std::string& kernel_name) {
  PYPTO_CHECK(program != nullptr, "VerifyKernelFunction: null program");
  FunctionPtr fn = program->get(kernel_name);
  PYPTO_USER_CHECK(fn != nullptr, program->span, "no function '" << kernel_name << "' in program '" << program->name << "'",
                   "kernel names are the names of the program's InCore / AIC / AIV functions");
  PYPTO_USER_CHECK(fn->is_kernel(), fn->span,
                   "function '" << kernel_name << "' is " << to_string(fn->type) << ", not a kernel (InCore, AIC or AIV)",
                   fn->type == FunctionType::Group ? "a Group has no kernel of its own: its AIC and AIV callees are the kernels"
                                                   : "");
  KernelChecker(*program, *fn).Run();
  VerifyKernelOutParamsWritten(*program, *fn);
}

Pass VerifyKernelProgram() {
  return Pass{"VerifyKernelProgram", {}, {IRProperty::KernelProgramVerified}, [](const ProgramPtr& program) {
                for (const FunctionPtr& fn : program->functions) {
                  if (fn->is_kernel()) VerifyKernelFunction(program, fn->name);
                }
                return program;
              },
              /*invalidated=*/{}};
}

}  // namespace pypto::transforms
