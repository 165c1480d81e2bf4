// Python bindings of the distributed HOST orchestration code generator
// (`pypto._core.host`).
//
//   from pypto._core import codegen as _cg, host as _host
//   prepared = _cg.run_pipeline(program)
//   r = _host.generate_host_orchestration(prepared, "host_main")
//   r.code, r.files, r.target_ids, r.signature
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "pypto/codegen/host.h"
#include "pypto/codegen/program_table.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace pypto::bindings {

void bind_host(nb::module_& parent) {
  using namespace pypto::codegen;
  nb::module_ m = parent.def_submodule("host", "Distributed HOST orchestration code generation (L3 runtime).");
  nb::class_<HostResult>(m, "HostResult")
      .def_ro("func_name", &HostResult::func_name)
      .def_ro("code", &HostResult::code)
      .def_prop_ro("files", [](const HostResult& r) {
        nb::dict d;
        for (auto& [k, v] : r.files) d[nb::cast(k)] = nb::cast(v);
        return d;
      })
      .def_prop_ro("target_ids", [](const HostResult& r) {
        nb::dict d;
        for (auto& [k, v] : r.target_ids) d[nb::cast(k)] = nb::cast(v);
        return d;
      })
      .def_ro("signature", &HostResult::signature);
  m.def("generate_host_orchestration", &GenerateHostOrchestration, "program"_a, "func_name"_a,
        "C++ of a HOST-level Orchestration function of a prepared program, against pto_l3_api.h.");
  m.def("target_ids", [](const ir::ProgramPtr& p) {
    nb::dict d;
    for (auto& [k, v] : HostTargetIds(*p)) d[nb::cast(k)] = nb::cast(v);
    return d;
  }, "program"_a, "Next-level target ids: the program's chip-level Orchestration functions, in order.");
  using KernelTuple = std::tuple<std::string, int, ir::CoreType>;
  using TargetTuple = std::tuple<std::string, int, std::vector<KernelTuple>>;
  m.def("generate_host_entry_glue", [](const std::vector<TargetTuple>& targets) {
    std::vector<HostGlueTarget> ts;
    for (const auto& [name, id, kernels] : targets) {
      HostGlueTarget t{name, id, {}};
      for (const auto& [kname, kid, core] : kernels) t.kernels.push_back(HostGlueKernel{kname, kid, core});
      ts.push_back(std::move(t));
    }
    return GenerateHostEntryGlue(ts);
  }, "targets"_a,
        "C++ of a HOST program's glue file (host_runner.cpp) from [(target, id, [(kernel, id, core), ...]), ...]:\n"
        "    _host.generate_host_entry_glue([('chip_add', 0, [('kernel_add', 0, ir.CoreType.AIV)])])");
}

}  // namespace pypto::bindings
