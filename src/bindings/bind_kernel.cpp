// Python bindings of the CPU kernel backend: `pypto._core.kernel_cpu`.
//
//   from pypto._core import kernel_cpu
//   kernel_cpu.generate(program, "kernel_add")      # C++ source of the kernel
//   kernel_cpu.symbol("kernel_add")                 # "pypto_kernel_kernel_add"
//   kernel_cpu.core_type(prepared, "kernel_add")    # ir.CoreType.AIV (the stamped pass result)
//   kernel_cpu.signature(program, "main")           # [{"name": "a", "kind": "tensor", ...}, ...]
//   kernel_cpu.functions(program)                   # [("kernel_add", "InCore"), ("main", "Orchestration")]
//
// `signature` describes a function's parameters in plain Python values (what the user API
// needs to check and marshal call arguments): kind "tensor" or "scalar", dtype spelling
// ("FP32"), shape as a list of ints and dynamic-dim names, direction "In" / "Out" / "InOut".
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "pypto/codegen/kernel_cpu.h"
#include "bindings.h"
#include "pypto/ir/error.h"
#include "pypto/ir/function.h"
#include "pypto/transforms/passes.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace pypto::bindings {

namespace {

nb::list Signature(const ir::ProgramPtr& program, const std::string& name) {
  ir::FunctionPtr fn = program->get(name);
  if (!fn) throw ir::UserError("no function '" + name + "' in program '" + program->name + "'", program->span, "");
  nb::list out;
  for (size_t i = 0; i < fn->params.size(); ++i) {
    const ir::VarPtr& p = fn->params[i];
    nb::dict d;
    d["name"] = p->name;
    d["direction"] = std::string(ir::to_string(fn->param_directions.at(i)));
    if (auto* tt = p->type->as<ir::TensorType>()) {
      d["kind"] = "tensor";
      d["dtype"] = std::string(ir::to_string(tt->dtype));
      d["layout"] = std::string(ir::to_string(tt->layout));
      nb::list shape;
      for (auto& dim : tt->shape) {
        if (auto* c = dim->as<ir::ConstInt>()) shape.append(c->value);
        else if (const ir::Var* v = ir::as_var(dim)) shape.append(v->name);
        else throw ir::UserError("parameter '" + p->name + "' has a shape dimension that is neither a constant nor a "
                                 "pl.dynamic symbol", p->span, "");
      }
      d["shape"] = shape;
    } else if (auto* st = p->type->as<ir::ScalarType>()) {
      d["kind"] = "scalar";
      d["dtype"] = std::string(ir::to_string(st->dtype));
      d["shape"] = nb::list();
    } else {
      d["kind"] = "other";
      d["dtype"] = "";
      d["shape"] = nb::list();
    }
    out.append(d);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> Functions(const ir::ProgramPtr& program) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& f : program->functions) out.emplace_back(f->name, ir::to_string(f->type));
  return out;
}

}  // namespace

void bind_kernel(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("kernel_cpu", "CPU kernel backend (src/codegen/kernel_cpu).");
  m.def("generate", &codegen::GenerateKernelCpu, "program"_a, "kernel_name"_a,
        "C++ source of an InCore / AIC / AIV function for the CPU runtime.");
  m.def("symbol", &codegen::KernelCpuSymbol, "kernel_name"_a, "Exported symbol of a kernel: pypto_kernel_<name>.");
  m.def(
      "core_type",
      [](const ir::ProgramPtr& program, const std::string& name) {
        ir::FunctionPtr fn = program->get(name);
        if (!fn) throw ir::UserError("no function '" + name + "' in program '" + program->name + "'", program->span, "");
        return transforms::StampedCoreType(*fn);
      },
      "program"_a, "kernel_name"_a,
      "The ir.CoreType stamped on a kernel / Group by InferKernelCoreTypes (run the pipeline first).");
  m.def("signature", &Signature, "program"_a, "name"_a, "Parameters of a function as plain Python values.");
  m.def("functions", &Functions, "program"_a, "(name, function type) of each function, in definition order.");
  // The kernel op table and the backend's handler tables, as {op name: "Tile" / "Tensor" / "Scalar"}.
  auto kinds = [](const std::map<std::string, ir::KernelOpKind>& ops) {
    std::map<std::string, std::string> out;
    for (auto& kv : ops) out[kv.first] = ir::to_string(kv.second);
    return out;
  };
  m.def("accepted_ops", [kinds] { return kinds(ir::KernelOps()); },
        "The kernel op table VerifyKernelProgram accepts (pypto/ir/kernel_ops.h): {op: kind}.");
  m.def("printed_ops", [kinds] { return kinds(codegen::KernelCpuPrintedOps()); },
        "The ops the CPU kernel backend prints (its handler tables): {op: kind}.");
}

}  // namespace pypto::bindings
