// CPU kernel code generation: the function frame (parameter binding, dynamic-dim symbols) and
// the statements (assign, for with loop-carried values, if with results, yield, return).
// Scalar expressions are in kernel_scalar_exprs.cpp, tile ops in kernel_tile_ops.cpp.
//
// Input: a kernel function (InCore / AIC / AIV) of a Program, in SSA form, after the kernel
// pipeline (its parameter slots, Group flags, in-place loop carries, buffer-sharing moves, loads read in
// place, lent loop inits and pipe-buffer bases are stamped pass results, read here; no other function of the program is looked at) and VerifyKernelProgram (which refuses every program this file cannot print: what is
// left here are InternalErrors for broken preconditions). Output: C++ text
// against pypto_kernel_prelude.h. Every IR value maps to one C++ entity (see kernel_emitter.h);
// loop-carried and branch-result values get a mutable slot (CarrySlot) declared before the loop /
// if, that each YieldStmt assigns (the hooks of common::ControlFlowPrinter).
#include "pypto/codegen/kernel_cpu.h"

#include <algorithm>
#include <cctype>

#include "kernel_emitter.h"
#include "pypto/codegen/orchestration.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/verify_program.h"

namespace pypto::codegen {

using namespace ir;
using kernel_cpu::KernelEmitter;

std::string KernelCpuSymbol(const std::string& kernel_name) { return "pypto_kernel_" + kernel_name; }

std::string GenerateKernelCpu(const ProgramPtr& program, const std::string& kernel_name) {
  transforms::VerifyKernelFunction(program, kernel_name);   // every user error, before printing
  FunctionPtr fn = program->get(kernel_name);
  // Each parameter reads the task slot KernelParamSlots stamped (the Group's, when a Group calls it).
  PYPTO_CHECK(fn->param_slots.size() == fn->params.size(),
              "kernel '" << kernel_name << "' has no param_slots: run the kernel pipeline (KernelParamSlots) first");
  return KernelEmitter(*fn).Generate();
}

std::map<std::string, KernelOpKind> KernelCpuPrintedOps() {
  std::map<std::string, KernelOpKind> out;
  for (auto& kv : kernel_cpu::TileOps()) out[kv.first] = KernelOpKind::Tile;
  for (auto& kv : kernel_cpu::TensorOps()) out[kv.first] = KernelOpKind::Tensor;
  for (auto& kv : kernel_cpu::ScalarOps()) out[kv.first] = KernelOpKind::Scalar;
  return out;
}

namespace kernel_cpu {

namespace {

// Names only the kernel file reserves; the C++ words and library names are cpp_names.cpp's
// one table (IsReservedCppName).
bool IsKernelOnlyName(const std::string& name) { return name == "ctx" || name == "pypto_kernel"; }

std::string Sanitize(const std::string& hint) {
  std::string s;
  for (char c : hint) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v_" + s;
  return UnreservedCppBase(s);
}

}  // namespace

KernelEmitter::KernelEmitter(const Function& fn) : fn_(fn) {}

std::string KernelEmitter::fresh(const std::string& hint) {
  std::string base = Sanitize(hint);
  if (IsKernelOnlyName(base) || IsReservedCppName(base)) base = "v_" + base;   // (`int_1` would read as a suffix)
  std::string name = base;
  for (int i = 1; used_names_.count(name); ++i) name = base + "_" + std::to_string(i);
  used_names_.insert(name);
  return name;
}

std::string KernelEmitter::ident(const Var* v) { return fresh(v->name); }

TileRef KernelEmitter::declare_tile(const std::string& hint, const TileType& tt, const Span& span) {
  TileRef ref;
  ref.dtype = tt.dtype;
  bool all_const = true;
  int64_t n = 1;
  for (auto& d : tt.shape) {
    if (auto* c = d->as<ConstInt>()) {
      PYPTO_CHECK(c->value > 0, "tile dimension " << c->value << " (VerifyKernelProgram refuses it)");
      ref.dims.push_back(std::to_string(c->value));
      n *= c->value;
    } else {
      all_const = false;
      ref.dims.push_back("static_cast<int64_t>(" + scalar(d) + ")");
    }
  }
  PYPTO_CHECK(!tt.shape.empty(), "a rank-0 tile (VerifyKernelProgram refuses it)");
  (void)span;
  const std::string name = fresh(hint);
  const std::string ct = CType(tt.dtype);
  // Small constant-shape tiles are stack arrays; big or dynamic ones live on the heap.
  if (all_const && n * 8 <= 64 * 1024) {
    // A tile with a valid shape may be written only in part; zeroed, what lies outside its valid
    // box reads as 0 (never an indeterminate value), as the heap tiles' below.
    line("alignas(64) " + ct + " " + name + "[" + std::to_string(n) + "]" + (tt.has_valid_shape() ? " = {}" : "") + ";");
    ref.buf = name;
  } else {
    std::string count = std::to_string(n);
    if (!all_const) {   // a run-time shape: checked (no negative extent, no wrapped count) before the allocation;
      // its bytes are counted in the dtype, as VerifyKernelProgram counts a constant shape's
      const std::string shape = fresh(name + "_shape");
      std::string s = "const int64_t " + shape + "[" + std::to_string(ref.dims.size()) + "] = {";
      for (size_t i = 0; i < ref.dims.size(); ++i) s += (i ? ", " : "") + ref.dims[i];
      line(s + "};");
      count = fresh(name + "_count");
      line("const int64_t " + count + " = pypto_kernel::tile_elements(ctx, " + shape + ", " +
           std::to_string(ref.dims.size()) + ", " + std::to_string(byte_width(tt.dtype)) + ", \"" +
           Sanitize(hint) + "\");");
      line("if (" + count + " < 0) return;");
    }
    // A zeroed array, not a std::vector: std::vector<bool> (a BOOL tile) has no data().
    line("const std::unique_ptr<" + ct + "[]> " + name + "_storage(new " + ct + "[static_cast<size_t>(" + count +
         ")]());");
    line(ct + "* " + name + " = " + name + "_storage.get();");
    ref.buf = name;
  }
  if (tt.has_valid_shape()) {   // the valid extents, checked against the tile's dims (§10)
    PYPTO_CHECK(tt.valid_shape.size() == tt.shape.size(), "valid shape rank (type inference checks it)");
    std::vector<std::string> v;
    for (auto& d : tt.valid_shape) v.push_back("static_cast<int64_t>(" + scalar(d) + ")");
    ref.valid_arr = fresh(name + "_valid");
    std::string s = "const int64_t " + ref.valid_arr + "[" + std::to_string(v.size()) + "] = {";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    line(s + "};");
    const std::string dims_arr = fresh(name + "_dims");
    s = "const int64_t " + dims_arr + "[" + std::to_string(v.size()) + "] = {";
    for (size_t i = 0; i < ref.dims.size(); ++i) s += (i ? ", " : "") + ref.dims[i];
    line(s + "};");
    line("if (!pypto_kernel::check_valid(ctx, " + ref.valid_arr + ", " + std::to_string(v.size()) + ", " + dims_arr +
         ", \"" + Sanitize(hint) + "\")) return;");
    for (size_t i = 0; i < v.size(); ++i) ref.valid.push_back(ref.valid_arr + "[" + std::to_string(i) + "]");
  }
  return ref;
}

// A kernel runs with the tensors / scalars of its task: param i reads the slot KernelParamSlots
// stamped (for a kernel a Group calls, the *Group's* slot of its argument).
void KernelEmitter::bind_params() {
  for (size_t i = 0; i < fn_.params.size(); ++i) {
    const VarPtr& p = fn_.params[i];
    const int slot_index = static_cast<int>(fn_.param_slots.at(i));
    if (p->type->is<TensorType>()) {
      tensors_[p.get()] = slot_index;
      tensor_param_names_[slot_index] = p->name;
    } else if (auto* st = p->type->as<ScalarType>()) {
      const std::string name = ident(p.get());
      const std::string slot = "ctx->scalars[" + std::to_string(slot_index) + "]";
      std::string value;
      if (is_float(st->dtype)) {
        // A float slot holds an FP32; an FP16 / BF16 parameter is that value rounded to its dtype
        // (70000.0 is inf in FP16), as every value of those dtypes is.
        value = "pypto_kernel::scalar_f32(" + slot + ")";
        if (st->dtype != DataType::FP32) value = "pypto_kernel::scalar_as<" + StorageKind(st->dtype) + ">(" + value + ")";
      } else if (st->dtype == DataType::BOOL) {
        value = "(" + slot + " != 0)";
      } else {
        value = "static_cast<" + CType(st->dtype) + ">(" + slot + ")";
      }
      line("[[maybe_unused]] const " + CType(st->dtype) + " " + name + " = " + value + ";");
      names_[p.get()] = name;
    } else {
      throw InternalError("kernel parameter '" + p->name + "' is neither a tensor nor a scalar (VerifyKernelProgram refuses it)");
    }
  }
  // Dynamic-dim symbols: the runtime extent of the first tensor param that declares each.
  for (size_t i = 0; i < fn_.params.size(); ++i) {
    auto* tt = fn_.params[i]->type->as<TensorType>();
    if (!tt) continue;
    for (size_t axis = 0; axis < tt->shape.size(); ++axis) {
      const Var* sym = as_var(tt->shape[axis]);
      if (!sym || names_.count(sym)) continue;
      const std::string name = ident(sym);
      line("[[maybe_unused]] const int64_t " + name + " = static_cast<int64_t>(ctx->tensors[" +
           std::to_string(tensors_[fn_.params[i].get()]) + "].shapes[" + std::to_string(axis) + "]);");
      names_[sym] = name;
    }
  }
}

std::string KernelEmitter::Generate() {
  std::ostringstream out;
  write_to(&out, 0, /*indent_width=*/2);
  line("// Kernel " + fn_.name + " (" + to_string(fn_.type) + ") — generated by pypto for the CPU runtime.");
  line("#include \"pypto_kernel_prelude.h\"");
  line("#include <vector>");
  blank();
  open_block("extern \"C\" void " + KernelCpuSymbol(fn_.name) + "(PTO2KernelContext* ctx)");
  line("(void)ctx;");
  bind_params();
  // Called from a Group: wait for / signal the group flags of its intra-group data flow
  // (no-ops when the kernel runs as a plain task). Stamped by KernelGroupSync.
  for (int64_t f : fn_.group_sync.waits) line("if (!pto2_group_wait(ctx, " + std::to_string(f) + ")) return;  // Group data flow");
  emit_stmt(fn_.body);
  for (int64_t f : fn_.group_sync.signals) line("pto2_group_signal(ctx, " + std::to_string(f) + ");  // Group data flow");
  close_block();
  return out.str();
}

// ---------------------------------------------------------------------------------------------
// Values.

TileRef KernelEmitter::tile(const ExprPtr& e) {
  if (const Var* v = as_var(e)) {
    auto it = tiles_.find(v);
    PYPTO_CHECK(it != tiles_.end(), "'" << v->name << "' is not a tile value (VerifyKernelProgram refuses it)");
    write_pending_zeros(it->second);
    return it->second;
  }
  auto* call = e->as<Call>();
  auto* tt = e->type ? e->type->as<TileType>() : nullptr;
  PYPTO_CHECK(call && tt, "a non-tile value where a tile is expected (VerifyKernelProgram refuses it)");
  if (call->shares_source_tile) return tile(call->args[0]);   // stamped by KernelShareTileMoves
  TileRef dst = declare_tile("tmp", *tt, e->span);
  if (call->reads_in_place) {   // KernelInPlaceMatmulLoads: the matmul reads the box where it lies (load_view)
    dst.ptr = fresh(dst.buf + "_p");
    dst.ld = fresh(dst.buf + "_ld");
  }
  emit_tile_op(call, dst);
  return dst;
}

int KernelEmitter::tensor_index(const ExprPtr& e) {
  if (const Var* v = as_var(e)) {
    auto it = tensors_.find(v);
    PYPTO_CHECK(it != tensors_.end(), "'" << v->name << "' is not a tensor parameter of kernel '" << fn_.name
                                          << "' (VerifyKernelProgram refuses it)");
    return it->second;
  }
  if (auto* call = e->as<Call>()) {
    if (call->is_op && e->type && e->type->is<TensorType>()) return emit_tensor_op(call);
  }
  throw InternalError("a non-tensor value where a tensor parameter is expected (VerifyKernelProgram refuses it)");
}

std::string KernelEmitter::tensor(const ExprPtr& e) { return "ctx->tensors[" + std::to_string(tensor_index(e)) + "]"; }

std::string KernelEmitter::tensor_name(const ExprPtr& e) { return tensor_param_names_.at(tensor_index(e)); }

// ---------------------------------------------------------------------------------------------
// Statements.

void KernelEmitter::emit_stmt(const StmtPtr& s) {
  if (!s) return;
  switch (s->kind) {
    case NodeKind::SeqStmts:
      for (auto& c : s->as<SeqStmts>()->stmts) emit_stmt(c);
      return;
    case NodeKind::AssignStmt: {
      auto* a = s->as<AssignStmt>();
      emit_assign(a->var, a->value, a->span);
      return;
    }
    case NodeKind::EvalStmt: {
      auto* ev = s->as<EvalStmt>();
      auto* call = ev->expr->as<Call>();
      PYPTO_CHECK(call && call->is_op, "a non-op expression statement in a kernel (VerifyKernelProgram refuses it)");
      if (ev->expr->type->is<TensorType>()) {
        emit_tensor_op(call);
      } else if (auto* tt = ev->expr->type->as<TileType>()) {
        emit_tile_op(call, declare_tile("unused", *tt, ev->span));
      } else {
        line("(void)(" + scalar(ev->expr) + ");");
      }
      return;
    }
    case NodeKind::ForStmt: print_for(*s->as<ForStmt>()); return;
    case NodeKind::IfStmt: print_if(*s->as<IfStmt>()); return;
    case NodeKind::YieldStmt: print_yield(*s->as<YieldStmt>()); return;
    case NodeKind::ReturnStmt: {
      // Returned tensors are the Out / InOut params the stores already wrote.
      for (auto& v : s->as<ReturnStmt>()->values) {
        PYPTO_CHECK(v->type->is<TensorType>(), "a kernel returning a non-tensor (VerifyKernelProgram refuses it)");
        tensor_index(v);
      }
      return;
    }
    case NodeKind::RuntimeScopeStmt: emit_stmt(s->as<RuntimeScopeStmt>()->body); return;
    case NodeKind::ScopeStmt:
      throw InternalError("a scope inside a kernel (VerifyKernelProgram refuses it)");
    // Expression kinds are not statements (no `default:`: -Wswitch flags a new statement kind).
#define PYPTO_EXPR_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
      break;
  }
  throw InternalError(std::string("kernel codegen: unexpected statement ") + to_string(s->kind));
}

void KernelEmitter::emit_assign(const VarPtr& var, const ExprPtr& value, const Span& span) {
  const TypePtr& t = var->type;
  if (auto* tt = t->as<TileType>()) {
    if (const Var* src = as_var(value)) {  // plain rebinding: share the buffer (values are immutable)
      tiles_[var.get()] = tile(value);
      (void)src;
      return;
    }
    auto* call = value->as<Call>();
    PYPTO_CHECK(call && call->is_op, "a tile not computed by a tile op (VerifyKernelProgram refuses it)");
    if (call->shares_source_tile) {  // KernelShareTileMoves: memory spaces do not exist on the CPU, share the buffer
      tiles_[var.get()] = tile(call->args[0]);
      return;
    }
    if (auto it = inplace_.find(var.get()); it != inplace_.end()) {  // straight into its carry slot
      emit_tile_op(call, it->second);
      tiles_[var.get()] = it->second;
      return;
    }
    TileRef dst = declare_tile(var->name, *tt, span);
    if (call->reads_in_place) {   // KernelInPlaceMatmulLoads: the matmul reads the box where it lies (load_view)
      dst.ptr = fresh(dst.buf + "_p");
      dst.ld = fresh(dst.buf + "_ld");
    }
    if (!defer_zero_fill(*call, dst)) emit_tile_op(call, dst);
    tiles_[var.get()] = dst;
    return;
  }
  if (t->is<TensorType>()) {
    tensors_[var.get()] = tensor_index(value);
    return;
  }
  if (auto* st = t->as<ScalarType>()) {
    const std::string name = ident(var.get());
    line("[[maybe_unused]] const " + CType(st->dtype) + " " + name + " = " + scalar(value) + ";");
    names_[var.get()] = name;
    return;
  }
  throw InternalError("a tuple / array value in a kernel (VerifyKernelProgram refuses it)");
}

CarrySlot KernelEmitter::declare_slot(const std::string& hint, const TypePtr& type, const Span& span) {
  CarrySlot slot{};
  if (auto* tt = type->as<TileType>()) {
    slot.kind = CarrySlot::kTile;
    slot.tile = declare_tile(hint, *tt, span);
  } else if (auto* st = type->as<ScalarType>()) {
    slot.kind = CarrySlot::kScalar;
    slot.ctype = CType(st->dtype);
    slot.scalar = fresh(hint);
    line("[[maybe_unused]] " + slot.ctype + " " + slot.scalar + "{};");   // an if-result or carry nothing reads
  } else if (type->is<TensorType>()) {
    slot.kind = CarrySlot::kTensor;
  } else {
    throw InternalError("a tuple / array carry in a kernel (VerifyKernelProgram refuses it)");
  }
  return slot;
}

// A loop carry's initial value (a tensor carry names its parameter: nothing to copy).
void KernelEmitter::assign_to_slot(const CarrySlot& slot, const ExprPtr& value) {
  switch (slot.kind) {
    case CarrySlot::kTile: {
      TileRef src = tile(value);
      if (src.buf != slot.tile.buf) {
        line("pypto_kernel::copy(" + slot.tile.buf + ", " + src.buf + ", " + slot.tile.numel() + ");");
      }
      return;
    }
    case CarrySlot::kScalar: line(slot.scalar + " = static_cast<" + slot.ctype + ">(" + scalar(value) + ");"); return;
    case CarrySlot::kTensor: return;
  }
}

void KernelEmitter::bind_to_slot(const Var* v, const CarrySlot& slot) {
  switch (slot.kind) {
    case CarrySlot::kTile: tiles_[v] = slot.tile; return;
    case CarrySlot::kScalar: names_[v] = slot.scalar; return;
    case CarrySlot::kTensor: tensors_[v] = slot.tensor; return;
  }
}

// An init written in the loop header (`init_values=(pl.tile.full(..),)`): the op computes
// straight into the fresh slot (a zero fill stays pending) instead of a temp copied into it.
// Same dtype and constant shape, no valid shape; not a load (its copy may be elided for a
// matmul operand, a different buffer).
bool KernelEmitter::init_into_slot(const IterArg& ia, const CarrySlot& slot) {
  auto* call = ia.init->as<Call>();
  auto* a = ia.type->as<TileType>();
  auto* b = ia.init->type ? ia.init->type->as<TileType>() : nullptr;
  if (slot.kind != CarrySlot::kTile || !call || !call->is_op || call->shares_source_tile || call->callee == "tile.load" ||
      !a || !b || a->has_valid_shape() || b->has_valid_shape() || a->dtype != b->dtype ||
      a->shape.size() != b->shape.size() || slot.tile.has_valid())
    return false;
  for (size_t d = 0; d < a->shape.size(); ++d) {
    auto* x = a->shape[d]->as<ConstInt>();
    auto* y = b->shape[d]->as<ConstInt>();
    if (!x || !y || x->value != y->value) return false;
  }
  if (!defer_zero_fill(*call, slot.tile)) emit_tile_op(call, slot.tile);
  return true;
}

CarrySlot KernelEmitter::loop_carry(const ForStmt& f, size_t i) {
  const IterArgPtr& ia = f.iter_args[i];
  // KernelLendLoopInits: the init tile is read nowhere else, so the carry takes its buffer (the
  // tiled GEMM's `acc = pl.tile.full(..)` then `for k: acc = pl.matmul_acc(acc, ..)`: a 32 KB
  // copy per task saved).
  if (std::count(f.lent_inits.begin(), f.lent_inits.end(), static_cast<int64_t>(i))) {
    auto it = tiles_.find(as_var(ia->init));
    PYPTO_CHECK(it != tiles_.end() && it->second.ptr.empty(), "lent_inits names iter_arg " << i << ", whose init is no tile var (run KernelLendLoopInits)");
    CarrySlot slot{};
    slot.kind = CarrySlot::kTile;
    slot.tile = it->second;
    bind_to_slot(ia.get(), slot);
    return slot;
  }
  CarrySlot slot = declare_slot(ia->name, ia->type, f.span);
  if (slot.kind == CarrySlot::kTensor) slot.tensor = tensor_index(ia->init);
  else if (!init_into_slot(*ia, slot)) assign_to_slot(slot, ia->init);
  bind_to_slot(ia.get(), slot);
  return slot;
}

void KernelEmitter::open_loop(const ForStmt& f, const std::vector<CarrySlot>& slots) {
  const ForStmt* op = &f;
  // Tiles the body computes straight into their carry's slot (stamped by KernelInPlaceCarries).
  if (!op->inplace_carries.empty()) {
    auto* yield = flatten_stmts(op->body).back()->as<YieldStmt>();
    PYPTO_CHECK(yield != nullptr, "inplace_carries on a loop whose body does not end in a yield");
    for (int64_t i : op->inplace_carries) inplace_[as_var(yield->values.at(i))] = slots.at(i).tile;
  }
  const std::string lv = ident(op->loop_var.get());
  names_[op->loop_var.get()] = lv;
  const std::string start = scalar(op->start), stop = scalar(op->stop), step = scalar(op->step);
  const auto* cstep = op->step->as<ConstInt>();
  PYPTO_CHECK(!cstep || cstep->value != 0, "a loop step of 0 (VerifyKernelProgram refuses it)");
  if (cstep && !op->counted) {   // StampCountedLoops: `i += step` cannot pass INT64_MAX
    open_block(common::ForHeader(lv, start, "static_cast<int64_t>(" + stop + ")", step, cstep->value < 0));
    return;
  }
  // A step known only at run time, or one whose last `i += step` could pass INT64_MAX
  // (ForStmt::counted; the loop wrapped around and never ended): Python's range, counted
  // (pypto_kernel::range_count), the loop variable computed from the iteration number. A zero
  // step fails the run naming the DSL line instead of looping forever.
  const std::string base = op->loop_var->name;
  const std::string vstart = fresh(base + "_start"), vs = fresh(base + "_step");
  const std::string where = common::CppStringBody(source_file_name(op->span.file) + ":" + std::to_string(op->span.line));
  line("const int64_t " + vstart + " = static_cast<int64_t>(" + start + ");");
  const int64_t chunk = op->chunk_stride;   // SplitChunkedLoops: the step is `s * chunk`
  auto* m = op->step->as<BinaryExpr>();
  if (chunk && m && m->op == BinaryOp::Mul && m->b->is<ConstInt>()) {
    // An auto_chunk loop's stride `s * C` (SplitChunkedLoops): an int64 overflow fails the run.
    line("int64_t " + vs + " = 0;");
    line("if (__builtin_mul_overflow(static_cast<int64_t>(" + scalar(m->a) + "), INT64_C(" + std::to_string(chunk) +
         "), &" + vs + ")) { ctx->fail(\"" + where + ": pl.auto_chunk: step * chunk (chunk=" + std::to_string(chunk) +
         ") overflows int64 at run time: use a smaller step or chunk\"); return; }");
  } else {
    line("const int64_t " + vs + " = static_cast<int64_t>(" + step + ");");
  }
  if (!cstep)
    line("if (" + vs + " == 0) { ctx->fail(\"" + where +
         ": pl.range() step is 0 at run time: a loop needs a non-zero step\"); return; }");
  const std::string vcount = fresh(base + "_count");
  line("const uint64_t " + vcount + " = pypto_kernel::range_count(" + vstart + ", static_cast<int64_t>(" + stop +
       "), " + vs + ");");
  const std::string vk = fresh(base + "_k");
  open_block("for (uint64_t " + vk + " = 0; " + vk + " < " + vcount + "; ++" + vk + ")");
  line("[[maybe_unused]] const int64_t " + lv + " = static_cast<int64_t>(static_cast<uint64_t>(" + vstart + ") + " + vk +
       " * static_cast<uint64_t>(" + vs + "));");
}

void KernelEmitter::bind_loop_results(const ForStmt& f, const std::vector<CarrySlot>& slots) {
  for (size_t i = 0; i < f.return_vars.size() && i < slots.size(); ++i) bind_to_slot(f.return_vars[i].get(), slots[i]);
}

CarrySlot KernelEmitter::branch_result(const IfStmt& s, size_t k) {
  return declare_slot(s.return_vars[k]->name, s.return_vars[k]->type, s.span);
}

// (Both branches yield the same tensor parameter: yield_value checks each against the first.)
void KernelEmitter::bind_branch_results(const IfStmt& s, const std::vector<CarrySlot>& slots) {
  for (size_t i = 0; i < s.return_vars.size(); ++i) bind_to_slot(s.return_vars[i].get(), slots[i]);
}

// A scalar goes through a `const T yield_tmp` first and a tile that is another slot of this
// yield (e.g. swapped carries) is snapshotted, so that assigning one slot cannot clobber a
// value another assignment still reads; a tensor carry only names its parameter.
std::optional<common::CarryMove> KernelEmitter::yield_value(Frame& frame, size_t i, const ExprPtr& value) {
  CarrySlot& s = frame.targets[i];
  switch (s.kind) {
    case CarrySlot::kScalar: {
      common::CarryMove m;
      m.target = s.scalar;
      m.value = "static_cast<" + s.ctype + ">(" + scalar(value) + ")";
      m.temp_type = "const " + s.ctype;
      m.temp_base = "yield_tmp";
      m.always_temp = true;
      return m;
    }
    case CarrySlot::kTile: {
      if (const Var* v = as_var(value)) {   // already in the slot (its zeros pending or not): nothing to write
        auto it = tiles_.find(v);
        if (it != tiles_.end() && it->second.buf == s.tile.buf) return std::nullopt;
      }
      write_pending_zeros(s.tile);   // the copy below overwrites the slot: owed zeros first (harmless, in any order)
      TileRef src = tile(value);
      for (size_t j = 0; j < frame.targets.size(); ++j) {
        const CarrySlot& other = frame.targets[j];
        if (j != i && other.kind == CarrySlot::kTile && other.tile.buf == src.buf) {
          TileRef snap = declare_tile("yield_tmp", *value->type->as<TileType>(), value->span);
          line("pypto_kernel::copy(" + snap.buf + ", " + src.buf + ", " + src.numel() + ");");
          src = snap;
          break;
        }
      }
      if (src.buf == s.tile.buf) return std::nullopt;
      common::CarryMove m;
      m.target = s.tile.buf;
      m.value = src.buf;
      m.print = [this, copy = "pypto_kernel::copy(" + s.tile.buf + ", " + src.buf + ", " + s.tile.numel() + ");"] { line(copy); };
      return m;
    }
    case CarrySlot::kTensor: {
      int idx = tensor_index(value);
      PYPTO_CHECK(s.tensor < 0 || s.tensor == idx, "a carried tensor changes parameter (VerifyKernelProgram refuses it)");
      s.tensor = idx;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace kernel_cpu
}  // namespace pypto::codegen
