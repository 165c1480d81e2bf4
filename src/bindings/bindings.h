// Each area of the compiler binds its own Python surface in its own file; module.cpp calls
// them in order. Add a bind_* function here and a call in module.cpp for a new area.
#pragma once
#include <nanobind/nanobind.h>

namespace pypto::bindings {
void bind_ir(nanobind::module_& m);          // bind_ir.cpp: IR nodes, types, printer, equality, errors
void bind_ast_spans(nanobind::module_& ir);  // bind_ast_spans.cpp: ir.AstSpans, the DSL parser's span fast path
void bind_call_runs(nanobind::module_& ir);  // bind_call_runs.cpp: ir.scan_call_runs / ir.CallRun, runs of kernel calls
void bind_kernel(nanobind::module_& m);      // bind_kernel.cpp: CPU kernel backend (pypto._core.kernel_cpu)
void bind_codegen(nanobind::module_& m);     // bind_codegen.cpp: pass pipeline, orchestration codegen (pypto._core.codegen)
void bind_host(nanobind::module_& m);         // bind_host.cpp: distributed HOST orchestration codegen (pypto._core.host)
void bind_program_abi(nanobind::module_& m);  // bind_program_abi.cpp: libpto2's C ABI (pypto._core.program_abi)
void bind_passes(nanobind::module_& m);       // bind_passes.cpp: one callable per pass (pypto._core.passes)
void bind_trace_reader(nanobind::module_& m);  // bind_trace_reader.cpp: libpto2's trace reader (pypto._core.trace_reader)
}  // namespace pypto::bindings
