// Orchestration codegen of tensor.reshape (spec anchor_features §3): a zero-copy view of the
// same storage under a new row-major shape, checked by the runtime (contiguous source, equal
// element counts):
//
//   uint32_t r_shapes[2] = {1, 256};
//   Tensor r = ext_x.reshape(r_shapes, 2);
#include "emitter.h"
#include "op_registry.h"
#include "pypto/codegen/control_flow_printer.h"
#include "pypto/ir/error.h"

namespace pypto::codegen::orchestration {

using namespace ir;

namespace {

bool AllConstant(const std::vector<ExprPtr>& dims) {
  for (const ExprPtr& d : dims)
    if (!d->as<ConstInt>()) return false;
  return true;
}

// A parameter of static shape reshaped to a static shape: the element counts were checked when
// the op was built, and a parameter is a whole, contiguous tensor.
bool StaticallyReshapeable(const Function& fn, const Var& source, const MakeTuple& shape) {
  auto* tt = source.type->as<TensorType>();
  bool param = false;
  for (const VarPtr& p : fn.params) param = param || p.get() == &source;
  return tt && param && AllConstant(tt->shape) && AllConstant(shape.elements);
}

void TensorReshapeHandler(Emitter& e, const Var* result, const Call& call) {
  const Var* t = call.args.empty() ? nullptr : as_var(call.args[0]);
  PYPTO_CHECK(t, "tensor.reshape: argument 0 is not a tensor variable");
  auto* shape = call.args.size() > 1 ? call.args[1]->as<MakeTuple>() : nullptr;
  PYPTO_CHECK(shape, "tensor.reshape: argument 1 is not a shape list");
  std::string src = e.ref(t);
  std::string name = e.declare(result);
  std::string sh = e.scopes().declare(name + "_shapes", false);
  std::string r = std::to_string(shape->elements.size());
  std::string dims;
  for (size_t i = 0; i < shape->elements.size(); ++i) dims += (i ? ", " : "") + e.u32(shape->elements[i]);
  e.line("uint32_t " + sh + "[" + r + "] = {" + dims + "};");
  // The parser checked a reshape of static shapes; a parameter's shape is checked by the call. A
  // view (a clamped or dynamic slice) is checked at run time, naming the DSL line: the spec's
  // `.reshape` line alone failed the run with no location.
  if (!StaticallyReshapeable(e.function(), *t, *shape)) {
    e.line("pto2_reshape_check(" + src + ", " + sh + ", " + r + ", \"" + common::CppStringBody(result->name) + "\", " +
           common::CppSourceSiteArgs(call.span) + ");");
  }
  e.line("Tensor " + name + " = " + src + ".reshape(" + sh + ", " + r + ");");
}

}  // namespace

REGISTER_ORCHESTRATION_OP("tensor.reshape", TensorReshapeHandler);

// Referenced from op_handlers.cpp so the static library keeps this file's registration.
void LinkReferenceOrchestrationOps() {}

}  // namespace pypto::codegen::orchestration
