// Python bindings of the pass pipeline and the orchestration code generator
// (`pypto._core.codegen`). The user-facing wrappers are python/pypto/codegen.py.
//
//   from pypto._core import codegen as _cg
//   prepared = _cg.run_pipeline(program)                  # PYPTO_DUMP_IR=<dir> dumps each pass
//   r = _cg.generate_orchestration(prepared, "orch_basic")
//   r.code, r.files, r.kernel_ids, r.core_types, r.signature
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <tuple>

#include "bindings.h"
#include "pypto/codegen/orchestration.h"
#include "pypto/codegen/program_table.h"
#include "pypto/ir/function.h"
#include "pypto/transforms/pass.h"
#include "pypto/transforms/verifier.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace pypto::bindings {

namespace {

template <class Map>
nb::dict to_dict(const Map& m) {
  nb::dict d;
  for (auto& [k, v] : m) d[nb::cast(k)] = nb::cast(v);
  return d;
}

// The Python result's core types, as the spec spells them (anchor_features §15: "AIC" / "AIV";
// "MIXED" for a Group): the one place they become text for Python.
nb::dict core_type_dict(const std::map<std::string, ir::CoreType>& m) {
  nb::dict d;
  for (auto& [k, v] : m) d[nb::cast(k)] = nb::cast(std::string(ir::to_string(v)));
  return d;
}

}  // namespace

void bind_codegen(nb::module_& parent) {
  using namespace pypto::codegen;
  nb::module_ m = parent.def_submodule("codegen", "Pass pipeline and orchestration code generation (C++).");

  nb::class_<ParamSignature>(m, "ParamSignature")
      .def_ro("name", &ParamSignature::name)
      .def_ro("kind", &ParamSignature::kind)
      .def_ro("dtype", &ParamSignature::dtype)
      .def_ro("shape", &ParamSignature::shape)
      .def_ro("direction", &ParamSignature::direction)
      .def_ro("slot", &ParamSignature::slot)
      .def("__repr__", [](const ParamSignature& s) {
        std::string shape;
        for (size_t i = 0; i < s.shape.size(); ++i) shape += (i ? ", " : "") + s.shape[i];
        return "ParamSignature(" + s.name + ": " + s.kind + " " + s.dtype + (s.kind == "tensor" ? " [" + shape + "] " : " ") +
               s.direction + ", slot " + std::to_string(s.slot) + ")";
      });

  nb::class_<OrchestrationResult>(m, "OrchestrationResult")
      .def_ro("func_name", &OrchestrationResult::func_name)
      .def_ro("code", &OrchestrationResult::code)
      .def_prop_ro("files", [](const OrchestrationResult& r) { return to_dict(r.files); })
      .def_prop_ro("kernel_ids", [](const OrchestrationResult& r) { return to_dict(r.kernel_ids); })
      .def_prop_ro("core_types", [](const OrchestrationResult& r) { return core_type_dict(r.core_types); })
      .def_ro("signature", &OrchestrationResult::signature)
      .def_prop_ro("func_name_to_id", [](const OrchestrationResult& r) { return to_dict(r.func_name_to_id); })
      .def_prop_ro("func_name_to_core_type",
                   [](const OrchestrationResult& r) { return core_type_dict(r.func_name_to_core_type); })
      .def_prop_ro("func_name_to_signature", [](const OrchestrationResult& r) {
        nb::dict d;
        for (const auto& [k, v] : r.func_name_to_signature) {
          nb::list l;
          for (const auto& s : v) l.append(s);
          d[k.c_str()] = l;
        }
        return d;
      });

  m.def(
      "run_pipeline",
      [](const ir::ProgramPtr& program, std::optional<std::string> dump_dir, bool verify, bool analyze) {
        transforms::PassOptions o = transforms::PassOptions::FromEnv();
        if (dump_dir) o.dump_dir = *dump_dir;
        o.verify = verify;
        o.analyze_auto_scopes_for_deps = analyze;
        return transforms::RunDefaultPipeline(program, o);
      },
      "program"_a, "dump_dir"_a = nb::none(), "verify"_a = true, "analyze_auto_scopes_for_deps"_a = false,
      "Run the default pass pipeline; dump_dir (or $PYPTO_DUMP_IR) receives <NN>_<Pass>.py after each pass.");
  m.def("pass_names", [](bool analyze) {
    std::vector<std::string> names;
    for (auto& p : transforms::DefaultPipeline(analyze)) names.push_back(p.name);
    return names;
  }, "analyze_auto_scopes_for_deps"_a = false, "Names of the default pipeline's passes, in order.");
  m.def("verify_codegen_preconditions", &transforms::VerifyCodegenPreconditions, "program"_a, "func_name"_a,
        "Violations of the orchestration codegen preconditions (empty list = OK).");
  m.def("generate_orchestration", &GenerateOrchestration, "program"_a, "func_name"_a,
        "Generate orchestration C++ for a prepared program (run_pipeline first).");
  m.def("get_ssa_base_name", &GetSSABaseName, "name"_a);
  m.def("source_stem", &SourceStem, "name"_a,
        "The file name (without .cpp) of a function's generated source: the name, or a prefix and a hash.");
  m.def(
      "generate_program_table",
      [](const std::string& entry, const std::vector<std::tuple<std::string, int, ir::CoreType>>& kernels) {
        std::vector<ProgramTableKernel> ks;
        for (const auto& [name, id, core] : kernels) ks.push_back(ProgramTableKernel{name, id, core});
        return GenerateProgramTable(entry, ks);
      },
      "entry"_a, "kernels"_a,
      "C++ of a program library's program_table.cpp from its entry and [(kernel, id, ir.CoreType), ...] (ValueError "
      "for a core type other than AIC / AIV):  _cg.generate_program_table('main', [('kernel_add', 0, ir.CoreType.AIV)])");
}

}  // namespace pypto::bindings
