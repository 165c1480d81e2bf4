// The extension module `pypto._core`: the C++ compiler seen from Python.
#include "bindings.h"

NB_MODULE(_core, m) {
  m.doc() = "pypto C++ core: IR, passes and code generators";
  pypto::bindings::bind_ir(m);
  pypto::bindings::bind_kernel(m);
  pypto::bindings::bind_codegen(m);
  pypto::bindings::bind_host(m);
  pypto::bindings::bind_program_abi(m);
  pypto::bindings::bind_passes(m);
  pypto::bindings::bind_trace_reader(m);
  // pypto.runtime.loader turns nanobind's leak report off at interpreter exit while a run is
  // still in progress on a daemon thread: that run holds its objects, the report is noise then.
  m.def("_set_leak_warnings", [](bool on) { nanobind::set_leak_warnings(on); },
        "Whether nanobind reports instances alive at interpreter exit (on by default).");
}
