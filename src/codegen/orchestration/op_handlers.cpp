// Handlers of the tensor ops an Orchestration body may use (spec "Operation Mappings", with
// spec README decision 5 for tensor.read / tensor.slice):
//
//   tensor.create     batched alloc_tensors at block entry (emit_buffers.cpp); in place when
//                     its shape depends on a value computed in the same block
//   tensor.read       int64_t v_idx[2] = {i, 0};  float v = get_tensor_data<float>(t, 2, v_idx);
//                     (waits for the element's producers)
//   tensor.slice      uint32_t v_shapes[2] = {8, 16};  uint32_t v_offsets[2] = {8, 0};
//                     Tensor v = t.view(v_shapes, v_offsets);   (overlaps its source for tracking)
//                     non-literal or dynamic: int64_t arrays, checked at full width at run time:
//                     Tensor v = pto2_view_at(t, 2, v_shapes, v_offsets, "v", "prog.py", 12);
//   tensor.transpose  Tensor xt = ext_x.transpose(0, 1);
//   tensor.dim        static: int64_t d = 16;  dynamic: int64_t d = (int64_t)orch_args.tensor(N).ref().shapes[axis];
//                     (a non-parameter tensor: (int64_t)t.shapes[axis])
//   tensor.assemble   the result is bound to the target (emit-name remap). The PTO2 runtime has no
//                     copy task, so the data must already be in place: the source must be a view
//                     made by tensor.slice of the same target at the same offsets (then the kernels
//                     that wrote the source wrote the target, tracked through the overlapping
//                     view) — VerifyOrchestrationProgram refuses anything else.
#include "emitter.h"
#include "op_registry.h"
#include "pypto/ir/error.h"
#include "pypto/ir/structural_equal.h"

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
  auto* k = i < c.args.size() ? c.args[i]->as<ConstInt>() : nullptr;
  PYPTO_CHECK(k, c.callee << ": argument " << i << " must be an integer literal");
  return k->value;
}

// Literal offsets and shapes into a source of constant extents: the frontend and
// VerifyOrchestrationProgram decided the view is in range. Anything else is checked at run time.
bool static_slice(const Var& src, const std::vector<ExprPtr>& shapes, const std::vector<ExprPtr>& offsets) {
  auto* tt = src.type->as<TensorType>();
  if (!tt || tt->shape.size() != shapes.size() || offsets.size() != shapes.size()) return false;
  for (size_t i = 0; i < shapes.size(); ++i) {
    auto* ext = tt->shape[i]->as<ConstInt>();
    auto* sh = shapes[i]->as<ConstInt>();
    auto* off = offsets[i]->as<ConstInt>();
    if (!ext || !sh || !off || sh->value < 0 || off->value < 0 || sh->value > ext->value ||
        off->value > ext->value - sh->value)
      return false;
  }
  return true;
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
  std::string arr = e.scopes().declare(name + "_idx", false);
  std::string vals;
  for (size_t i = 0; i < idx.size(); ++i) vals += (i ? ", " : "") + e.i64(idx[i]);
  std::string r = std::to_string(idx.size());
  e.line("int64_t " + arr + "[" + r + "] = {" + vals + "};");
  std::string ct = Emitter::ctype(st->dtype);
  e.line(ct + " " + name + " = get_tensor_data<" + ct + ">(" + src + ", " + r + ", " + arr + ");");
}

// tensor.write: `{ int64_t t_widx[2] = {i, 0}; set_tensor_data<float>(t, 2, t_widx, v); }`; the
// result is the tensor itself.
void TensorWriteHandler(Emitter& e, const Var* result, const Call& call) {
  const Var* t = tensor_arg(call, 0);
  auto idx = list_arg(call, 1);
  auto* tt = t->type->as<TensorType>();
  std::string src = e.ref(t);
  std::string arr = e.scopes().declare(GetSSABaseName(t->name) + "_widx", false);
  std::string vals;
  for (size_t i = 0; i < idx.size(); ++i) vals += (i ? ", " : "") + e.i64(idx[i]);
  std::string r = std::to_string(idx.size()), ct = Emitter::ctype(tt->dtype);
  e.line("{ int64_t " + arr + "[" + r + "] = {" + vals + "}; set_tensor_data<" + ct + ">(" + src + ", " + r + ", " + arr +
         ", static_cast<" + ct + ">(" + e.expr(call.args[2]) + ")); }");
  if (result) e.bind(result, e.binding_of(t));
}

void TensorSliceHandler(Emitter& e, const Var* result, const Call& call) {
  const Var* t = tensor_arg(call, 0);
  auto shapes = list_arg(call, 1);
  auto offsets = list_arg(call, 2);
  std::string src = e.ref(t);
  std::string name = e.declare(result);
  std::string sh = e.scopes().declare(name + "_shapes", false);
  std::string off = e.scopes().declare(name + "_offsets", false);
  std::string r = std::to_string(shapes.size());
  std::string sv, ov;
  if (static_slice(*t, shapes, offsets)) {   // checked at compile time: the plain view
    for (size_t i = 0; i < shapes.size(); ++i) sv += (i ? ", " : "") + e.u32(shapes[i]);
    for (size_t i = 0; i < offsets.size(); ++i) ov += (i ? ", " : "") + e.u32(offsets[i]);
    e.line("uint32_t " + sh + "[" + r + "] = {" + sv + "};");
    e.line("uint32_t " + off + "[" + r + "] = {" + ov + "};");
    e.line("Tensor " + name + " = " + src + ".view(" + sh + ", " + off + ");");
  } else {   // checked at run time at full width, naming the DSL line
    for (size_t i = 0; i < shapes.size(); ++i) sv += (i ? ", " : "") + Emitter::strip_parens(e.i64(shapes[i]));
    for (size_t i = 0; i < offsets.size(); ++i) ov += (i ? ", " : "") + Emitter::strip_parens(e.i64(offsets[i]));
    e.line("int64_t " + sh + "[" + r + "] = {" + sv + "};");
    e.line("int64_t " + off + "[" + r + "] = {" + ov + "};");
    e.line("Tensor " + name + " = pto2_view_at(" + src + ", " + r + ", " + sh + ", " + off + ", \"" + result->name +
           "\", " + Emitter::source_site_args(call.span) + ");");
  }
  e.record_view(name, Emitter::ViewRecord{src, offsets});
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

void TensorDimHandler(Emitter& e, const Var* result, const Call& call) {
  const Var* t = tensor_arg(call, 0);
  auto* tt = t->type->as<TensorType>();
  int64_t axis = const_arg(call, 1);
  if (axis < 0) axis += static_cast<int64_t>(tt->shape.size());
  const ExprPtr& extent = tt->shape[static_cast<size_t>(axis)];
  std::string value;
  if (auto* c = extent->as<ConstInt>()) {
    value = std::to_string(c->value);
  } else if (const int slot = e.tensor_param_slot(t); slot >= 0) {
    value = "(int64_t)orch_args.tensor(" + std::to_string(slot) + ").ref().shapes[" + std::to_string(axis) + "]";
  } else {
    value = "(int64_t)" + e.ref(t) + ".shapes[" + std::to_string(axis) + "]";
  }
  std::string name = e.declare(result);
  e.line("int64_t " + name + " = " + value + ";");
}

void TensorAssembleHandler(Emitter& e, const Var* result, const Call& call) {
  const Var* target = tensor_arg(call, 0);
  const Var* source = tensor_arg(call, 1);
  auto offsets = list_arg(call, 2);
  const Binding& tb = e.binding_of(target);
  const Binding& sb = e.binding_of(source);
  const Emitter::ViewRecord* view = e.view_of(sb.text);
  bool in_place = view && view->base == tb.text && view->offsets.size() == offsets.size();
  for (size_t i = 0; in_place && i < offsets.size(); ++i) {
    in_place = structural_equal(view->offsets[i], offsets[i]);
  }
  PYPTO_CHECK(in_place, "tensor.assemble: '" << source->name << "' is not a view of '" << target->name
                                                << "' (VerifyOrchestrationProgram refuses it)");
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
