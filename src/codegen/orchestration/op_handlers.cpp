// Handlers of the tensor ops an Orchestration body may use (spec "Operation Mappings", with
// spec README decision 5 for tensor.read / tensor.slice):
//
//   tensor.create     batched alloc_tensors at block entry (emit_buffers.cpp); in place when
//                     its shape depends on a value computed in the same block
//   tensor.read       int64_t v_idx[2] = {i, 0};  PTO2_ELEMENT_SITE("prog.py", 9);
//                     float v = get_tensor_data<float>(t, 2, v_idx);
//                     (waits for the element's producers)
//   tensor.slice      uint32_t v_offsets[2] = {8, 0};
//                     uint32_t v_shapes[2] = {(v_offsets[0] >= t.shapes[0] ? 0u : std::min<uint32_t>(8,
//                                              t.shapes[0] - v_offsets[0])), ...};   (clamped, §18;
//                     a long function: {pto2_slice_extent(8, t.shapes[0], v_offsets[0]), ...})
//                     Tensor v = t.view(v_shapes, v_offsets);   (overlaps its source for tracking)
//                     a non-literal entry: pto2_slice_u32(i * 8, "offset", t, 0, "v", "prog.py", 12)
//   tensor.transpose  Tensor xt = ext_x.transpose(0, 1);
//   tensor.dim        int64_t d = (int64_t)t.shapes[axis];   (only an extent FoldTensorDims leaves:
//                     a literal or a parameter's dim symbol is folded before codegen)
//   tensor.assemble   the result is bound to the target (emit-name remap). The PTO2 runtime has no
//                     copy task, so the data must already be in place: the source must be a view
//                     made by tensor.slice of the same target at the same offsets (then the kernels
//                     that wrote the source wrote the target, tracked through the overlapping
//                     view) — VerifyOrchestrationProgram refuses anything else.
#include "emitter.h"
#include "op_registry.h"
#include "pypto/ir/const_integer.h"
#include "pypto/ir/error.h"

namespace pypto::codegen::orchestration {

using namespace ir;

void LinkReferenceOrchestrationOps();   // op_reshape.cpp (anchor_features ops)
void LinkBuiltinOrchestrationOps() { LinkReferenceOrchestrationOps(); }

namespace {

std::vector<ExprPtr> list_arg(const Call& c, size_t i) {
  PYPTO_CHECK(i < c.args.size(), c.callee << ": missing argument " << i);
  auto* t = c.args[i]->as<MakeTuple>();
  PYPTO_CHECK(t, c.callee << ": argument " << i << " is not a list");
  return t->elements;
}

const Var* tensor_arg(const Call& c, size_t i) {
  const Var* v = i < c.args.size() ? as_var(c.args[i]) : nullptr;
  PYPTO_CHECK(v, c.callee << ": argument " << i << " is not a tensor variable");
  return v;
}

int64_t const_arg(const Call& c, size_t i) {
  auto k = i < c.args.size() ? ConstIntegerValue(c.args[i]) : std::nullopt;   // a literal, or `5 - 4`
  PYPTO_CHECK(k, c.callee << ": argument " << i << " must be an integer constant");
  return *k;
}

void TensorCreateHandler(Emitter& e, const Var* result, const Call& call) {
  // Only reached for a create that could not join its block's batch.
  PYPTO_CHECK(result, "tensor.create without a result");
  e.emit_alloc_batch({Emitter::CreateSite{result, &call}});
}

void TensorReadHandler(Emitter& e, const Var* result, const Call& call) {
  const Var* t = tensor_arg(call, 0);
  auto idx = list_arg(call, 1);
  auto* st = result->type->as<ScalarType>();
  PYPTO_CHECK(st, "tensor.read result is not a scalar");
  std::string src = e.ref(t);
  std::string name = e.declare(result);
  std::string r = std::to_string(idx.size());
  std::string arr = "nullptr";   // rank 0 (anchor_features §11): no index array (a zero-size one is not ISO C++)
  if (!idx.empty()) {
    arr = e.scopes().declare(name + "_idx", false);
    std::string vals;
    for (size_t i = 0; i < idx.size(); ++i) vals += (i ? ", " : "") + e.i64(idx[i]);
    e.line("int64_t " + arr + "[" + r + "] = {" + vals + "};");
  }
  std::string ct = Emitter::ctype(st->dtype);
  // No source site argument: the call must compile against the real runtime header too. The
  // line goes before it (a no-op where the runtime does not define the macro).
  e.line("PTO2_ELEMENT_SITE(" + Emitter::source_site_args(call.span) + ");");
  e.line(ct + " " + name + " = get_tensor_data<" + ct + ">(" + src + ", " + r + ", " + arr + ");");
}

// tensor.write: `{ int64_t t_widx[2] = {i, 0}; PTO2_ELEMENT_SITE("prog.py", 9); set_tensor_data<float>(t, 2,
// t_widx, v); }`; the
// result is the tensor itself.
void TensorWriteHandler(Emitter& e, const Var* result, const Call& call) {
  const Var* t = tensor_arg(call, 0);
  auto idx = list_arg(call, 1);
  auto* tt = t->type->as<TensorType>();
  std::string src = e.ref(t);
  std::string r = std::to_string(idx.size()), ct = Emitter::ctype(tt->dtype);
  std::string arr = "nullptr", decl;   // rank 0: `0, nullptr` (anchor_features §11)
  if (!idx.empty()) {
    arr = e.scopes().declare(GetSSABaseName(t->name) + "_widx", false);
    std::string vals;
    for (size_t i = 0; i < idx.size(); ++i) vals += (i ? ", " : "") + e.i64(idx[i]);
    decl = "int64_t " + arr + "[" + r + "] = {" + vals + "}; ";
  }
  e.line("{ " + decl + "PTO2_ELEMENT_SITE(" + Emitter::source_site_args(call.span) + "); set_tensor_data<" + ct + ">(" +
         src + ", " + r + ", " + arr + ", static_cast<" + ct + ">(" + e.expr(call.args[2]) + ")); }");
  if (result) e.bind(result, e.binding_of(t));
}

// The reference form (spec anchor_features §18): offsets, then shapes clamped to the source's
// run-time extent (an overhang is trimmed, an offset at or past the end gives an empty view),
// then the view. Non-literal entries are checked at full width before they narrow to 32 bits.
void TensorSliceHandler(Emitter& e, const Var* result, const Call& call) {
  const Var* t = tensor_arg(call, 0);
  auto shapes = list_arg(call, 1);
  auto offsets = list_arg(call, 2);
  std::string src = e.ref(t);
  std::string name = e.declare(result);
  std::string off = e.scopes().declare(name + "_offsets", false);
  std::string sh = e.scopes().declare(name + "_shapes", false);
  std::string r = std::to_string(shapes.size());
  auto u32 = [&](const ExprPtr& x, const char* kind, size_t axis) -> std::string {
    if (auto* c = x->as<ConstInt>()) return std::to_string(c->value);   // the frontend checked 0..2^32-1
    return "pto2_slice_u32(" + Emitter::strip_parens(e.i64(x)) + ", \"" + kind + "\", " + src + ", " +
           std::to_string(axis) + ", \"" + result->name + "\", " + Emitter::source_site_args(call.span) + ")";
  };
  std::string sv, ov;
  for (size_t i = 0; i < offsets.size(); ++i) ov += (i ? ", " : "") + u32(offsets[i], "offset", i);
  // A long function (compiled unoptimised) clamps with one call per axis: R's expression, a
  // compare, a branch and a std::min of temporaries at -O0, was a third of the build of 3,000
  // sliced calls (5.0 s and 240 MB, 3.5 s and 195 MB so).
  const bool one_call = e.calls_in_own_blocks();
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::string ext = src + ".shapes[" + std::to_string(i) + "]", o = off + "[" + std::to_string(i) + "]";
    const std::string want = u32(shapes[i], "shape", i);
    // A checked (non-literal) shape is evaluated whatever the offset: in R's form it sat in the
    // arm an offset past the end skips, so a negative shape gave an empty view without an error.
    const bool checked = !shapes[i]->is<ConstInt>();
    sv += (i ? ", " : "") +
          (one_call ? "pto2_slice_extent(" + want + ", " + ext + ", " + o + ")"
           : checked ? "std::min<uint32_t>(" + want + ", " + o + " >= " + ext + " ? 0u : " + ext + " - " + o + ")"
                     : "(" + o + " >= " + ext + " ? 0u : std::min<uint32_t>(" + want + ", " + ext + " - " + o + "))");
  }
  e.line("uint32_t " + off + "[" + r + "] = {" + ov + "};");
  e.line("uint32_t " + sh + "[" + r + "] = {" + sv + "};");
  e.line("Tensor " + name + " = " + src + ".view(" + sh + ", " + off + ");");
}

void TensorTransposeHandler(Emitter& e, const Var* result, const Call& call) {
  const Var* t = tensor_arg(call, 0);
  int64_t a = const_arg(call, 1), b = const_arg(call, 2);
  int64_t rank = static_cast<int64_t>(t->type->as<TensorType>()->shape.size());
  if (a < 0) a += rank;
  if (b < 0) b += rank;
  std::string src = e.ref(t);
  std::string name = e.declare(result);
  e.line("Tensor " + name + " = " + src + ".transpose(" + std::to_string(a) + ", " + std::to_string(b) + ");");
}

// FoldTensorDims replaced every tensor.dim of a literal extent or of a dim symbol a tensor
// parameter declares; what is left (an extent that is an expression, or a symbol no parameter
// declares) is the run-time Tensor's own extent.
void TensorDimHandler(Emitter& e, const Var* result, const Call& call) {
  const Var* t = tensor_arg(call, 0);
  int64_t axis = const_arg(call, 1);
  if (axis < 0) axis += static_cast<int64_t>(t->type->as<TensorType>()->shape.size());
  std::string value = "(int64_t)" + e.ref(t) + ".shapes[" + std::to_string(axis) + "]";
  std::string name = e.declare(result);
  e.line("int64_t " + name + " = " + value + ";");
}

// In place by VerifyOrchestrationProgram (the source is the target's tensor.slice view at these
// offsets): nothing to copy, the result names the target.
void TensorAssembleHandler(Emitter& e, const Var* result, const Call& call) {
  const Binding& tb = e.binding_of(tensor_arg(call, 0));
  const Binding& sb = e.binding_of(tensor_arg(call, 1));
  e.mark_used(tb);
  e.line("// tensor.assemble: " + sb.text + " is the view of " + tb.text + " at these offsets (in place)");
  e.bind(result, tb);
}

}  // namespace

REGISTER_ORCHESTRATION_OP("tensor.create", TensorCreateHandler);
REGISTER_ORCHESTRATION_OP("tensor.read", TensorReadHandler);
REGISTER_ORCHESTRATION_OP("tensor.write", TensorWriteHandler);
REGISTER_ORCHESTRATION_OP("tensor.slice", TensorSliceHandler);
REGISTER_ORCHESTRATION_OP("tensor.transpose", TensorTransposeHandler);
REGISTER_ORCHESTRATION_OP("tensor.dim", TensorDimHandler);
REGISTER_ORCHESTRATION_OP("tensor.assemble", TensorAssembleHandler);

}  // namespace pypto::codegen::orchestration
