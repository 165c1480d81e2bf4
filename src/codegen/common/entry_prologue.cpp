// The entry prologue and frame shared by L2 and HOST orchestration code (see entry_prologue.h).
#include "entry_prologue.h"

#include <set>

#include "pypto/codegen/cpp_scalar_expr.h"
#include "pypto/ir/error.h"
#include "pypto/ir/type.h"

namespace pypto::codegen::common {

using namespace ir;

EntryPrologue BuildEntryPrologue(const Function& fn, EntryNaming& naming, const std::string& who) {
  EntryPrologue p;
  std::set<const Var*> seen_dims;
  for (auto& param : fn.params) {
    auto* tt = param->type->as<TensorType>();
    if (!tt) continue;
    const int slot = p.tensor_count++;
    std::string name = naming.tensor_param(param.get());
    p.tensor_lines.push_back("Tensor " + name + " = from_tensor_arg(orch_args.tensor(" + std::to_string(slot) + "));");
    for (size_t axis = 0; axis < tt->shape.size(); ++axis) {
      const Var* sym = as_var(tt->shape[axis]);
      if (!sym || !seen_dims.insert(sym).second) continue;
      std::string sname = naming.dim_symbol(sym, slot, static_cast<int>(axis));
      p.dims.push_back({sym, sname, slot, static_cast<int>(axis)});
    }
  }
  for (auto& param : fn.params) {
    auto* st = param->type->as<ScalarType>();
    if (!st) continue;
    PYPTO_CHECK(st->dtype != DataType::TASK_ID, who << " parameter '" << param->name << "' is a TaskId");
    std::string name = naming.scalar_param(param.get());
    std::string slot = "orch_args.scalar(" + std::to_string(p.scalar_count++) + ")";
    if (is_float(st->dtype)) {
      std::string conv = naming.temporary(name + "_conv");
      p.scalar_lines.push_back("union { uint64_t u64; float val; } " + conv + ";");
      p.scalar_lines.push_back(conv + ".u64 = " + slot + ";");
      p.scalar_lines.push_back("float " + name + " = " + RoundedToDtypeText(st->dtype, conv + ".val") + ";");
    } else {
      std::string ct = CppScalarType(st->dtype, "");
      p.scalar_lines.push_back(ct + " " + name + " = (" + ct + ")" + slot + ";");
    }
  }
  return p;
}

std::string DynamicDimLine(const DynamicDim& d) {
  return "int64_t " + d.name + " = (int64_t)orch_args.tensor(" + std::to_string(d.slot) + ").ref().shapes[" +
         std::to_string(d.axis) + "];";
}

void WriteOrchestrationEntry(std::ostream& os, const std::string& prefix, const Function& fn,
                             const EntryPrologue& prologue, const std::vector<std::string>& dim_lines,
                             const std::string& body, const std::vector<std::string>& trailing_voids) {
  auto block = [&](const char* comment, const std::vector<std::string>& lines) {
    if (lines.empty()) return;
    os << "    // " << comment << "\n";
    for (auto& l : lines) os << "    " << l << "\n";
  };
  // Exported with default visibility so a build with -fvisibility=hidden still finds them.
  os << "extern \"C\" {\n\n";
  os << "__attribute__((visibility(\"default\"))) PTO2OrchestrationConfig " << prefix << "_orchestration_config(const ChipStorageTaskArgs& orch_args) {\n";
  os << "    (void)orch_args;\n";
  os << "    return PTO2OrchestrationConfig{ .expected_arg_count = " << fn.params.size() << " };\n";
  os << "}\n\n";
  os << "__attribute__((visibility(\"default\"))) void " << prefix << "_orchestration_entry(const ChipStorageTaskArgs& orch_args) {\n";
  if (fn.params.empty()) os << "    (void)orch_args;\n";
  block("External tensors (from ChipStorageTaskArgs)", prologue.tensor_lines);
  block("Dynamic-dim symbols (extent of the declaring argument)", dim_lines);
  block("Scalar parameters (from ChipStorageTaskArgs scalar slots)", prologue.scalar_lines);
  os << "\n" << body;
  for (auto& name : trailing_voids) os << "    (void)" << name << ";\n";
  os << "}\n\n}  // extern \"C\"\n";
}

namespace {

const char* direction_name(ParamDirection d) {
  switch (d) {
    case ParamDirection::In: return "In";
    case ParamDirection::Out: return "Out";
    case ParamDirection::InOut: return "InOut";
  }
  return "In";
}

}  // namespace

std::vector<ParamSignature> EntrySignature(const Function& fn) {
  std::vector<ParamSignature> signature;
  int tslot = 0, sslot = 0;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const Var* p = fn.params[i].get();
    ParamSignature s;
    s.name = p->name;
    if (auto* tt = p->type->as<TensorType>()) {
      s.kind = "tensor";
      s.dtype = to_string(tt->dtype);
      for (auto& d : tt->shape) {
        if (auto* c = d->as<ConstInt>()) s.shape.push_back(std::to_string(c->value));
        else if (auto* v = as_var(d)) s.shape.push_back(v->name);
        else s.shape.push_back("?");
      }
      s.direction = direction_name(fn.param_directions[i]);
      s.slot = tslot++;
    } else {
      s.kind = "scalar";
      s.dtype = to_string(p->type->as<ScalarType>()->dtype);
      s.direction = "In";
      s.slot = sslot++;
    }
    signature.push_back(std::move(s));
  }
  return signature;
}

const char* const kUnoptimisedMacro =
    "#if defined(__clang__)\n#define PYPTO_UNOPTIMISED __attribute__((noinline, optnone))\n"
    "#elif defined(__GNUC__)\n#define PYPTO_UNOPTIMISED __attribute__((noinline, optimize(\"O0\")))\n"
    "#else\n#define PYPTO_UNOPTIMISED\n#endif\n";

}  // namespace pypto::codegen::common
