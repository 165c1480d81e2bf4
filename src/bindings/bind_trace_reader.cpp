// pypto._core.trace_reader: libpto2's reader of its own traces (pto2_trace_summary.h), for
// pypto.trace_summary.summarize. The TaskSpan objects are made here, fields set in their
// declaration order as the dataclass's __init__ sets them: calling TaskSpan per task cost
// ~1.4 us, most of a 1,000,000-task summary.
//
//     from pypto._core import trace_reader
//     r, why = trace_reader.read("/.../libpto2.so", b"trace.json", TaskSpan)
//     # r: (span_us, edges, tasks, critical_path, [(kernel, tasks, total_us)],
//     #     [(tid, name or None, busy_us, blocks)], {phase: seconds of libpto2's read});
//     # None with why when libpto2 cannot read it
#include <dlfcn.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings.h"
#include "pto2_trace_summary.h"

namespace nb = nanobind;

namespace pypto::bindings {
namespace {

struct Reader {
  decltype(&pto2_trace_summary_read) read;
  decltype(&pto2_trace_summary_free) free;
};

// The two entry points of libpto2 at `path` (loaded as program_abi loads it: RTLD_GLOBAL, never closed).
const Reader& reader_of(const std::string& path) {
  static std::string loaded_path;
  static Reader loaded{nullptr, nullptr};
  if (loaded.read && loaded_path == path) return loaded;
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    const char* e = dlerror();
    throw std::runtime_error("cannot load " + path + ": " + (e ? e : "unknown error"));
  }
  auto read = reinterpret_cast<decltype(&pto2_trace_summary_read)>(dlsym(h, "pto2_trace_summary_read"));
  auto free = reinterpret_cast<decltype(&pto2_trace_summary_free)>(dlsym(h, "pto2_trace_summary_free"));
  if (!read || !free) throw std::runtime_error(path + " has no trace reader (an older libpto2? reinstall pypto)");
  loaded = Reader{read, free};
  loaded_path = path;
  return loaded;
}

nb::object steal(PyObject* o) {
  if (!o) throw nb::python_error();
  return nb::steal(o);
}

void set(const nb::object& obj, PyObject* name, const nb::object& value) {
  if (PyObject_SetAttr(obj.ptr(), name, value.ptr()) != 0) throw nb::python_error();
}

nb::tuple read(const std::string& library, nb::bytes path, nb::handle task_span) {
  const Reader& r = reader_of(library);
  if (!PyType_Check(task_span.ptr())) throw nb::type_error("task_span must be a class");
  char why[512] = "";
  const pto2_trace_summary* s;
  {
    nb::gil_scoped_release release;
    s = r.read(path.c_str(), why, sizeof why);
  }
  if (!s) return nb::make_tuple(nb::none(), std::string(why));
  std::unique_ptr<const pto2_trace_summary, decltype(r.free)> owner(s, r.free);
  std::vector<nb::object> strings;
  for (uint32_t i = 0; i < s->n_strings; ++i)
    strings.push_back(steal(PyUnicode_DecodeUTF8(s->string[i], s->string_len[i], "strict")));
  PyTypeObject* cls = reinterpret_cast<PyTypeObject*>(task_span.ptr());
  nb::object empty = steal(PyTuple_New(0));
  const char* const fields[] = {"task_id", "kernel", "start_us", "end_us", "blocks", "source"};  // TaskSpan's order
  nb::object keep_names[6];
  PyObject* names[6];
  for (int i = 0; i < 6; ++i) names[i] = (keep_names[i] = steal(PyUnicode_InternFromString(fields[i]))).ptr();
  nb::object tasks = steal(PyList_New(static_cast<Py_ssize_t>(s->n_tasks)));
  // No cyclic collection while the spans are made (they hold no cycle): it was 0.6 s of 1.0 s
  // for 1,000,000 of them, each collection walking the spans made so far.
  struct GcPause {
    int was_enabled = PyGC_Disable();
    ~GcPause() {
      if (was_enabled) PyGC_Enable();
    }
  } gc_pause;
  for (uint64_t t = 0; t < s->n_tasks; ++t) {
    nb::object span = steal(cls->tp_new(cls, empty.ptr(), nullptr));
    set(span, names[0], steal(PyLong_FromLongLong(s->task_id[t])));
    set(span, names[1], strings[s->task_kernel[t]]);
    set(span, names[2], steal(PyFloat_FromDouble(s->task_start_us[t])));
    set(span, names[3], steal(PyFloat_FromDouble(s->task_end_us[t])));
    set(span, names[4], steal(PyLong_FromUnsignedLongLong(s->task_blocks[t])));
    set(span, names[5], s->task_source[t] < 0 ? nb::none() : nb::object(strings[s->task_source[t]]));
    PyList_SET_ITEM(tasks.ptr(), static_cast<Py_ssize_t>(t), span.release().ptr());
  }
  nb::list critical;
  for (uint64_t i = 0; i < s->n_critical; ++i)
    critical.append(nb::handle(PyList_GET_ITEM(tasks.ptr(), static_cast<Py_ssize_t>(s->critical[i]))));
  nb::list kernels;
  for (uint32_t k = 0; k < s->n_kernels; ++k)
    kernels.append(nb::make_tuple(strings[s->kernel_name[k]], s->kernel_tasks[k], s->kernel_total_us[k]));
  nb::list workers;
  for (uint32_t w = 0; w < s->n_workers; ++w) {
    nb::object name = s->worker_name[w] < 0 ? nb::none() : strings[s->worker_name[w]];
    workers.append(nb::make_tuple(s->worker_tid[w], name, s->worker_busy_us[w], s->worker_blocks[w]));
  }
  nb::dict seconds;
  seconds["parse"] = s->parse_s;
  seconds["order"] = s->order_s;
  seconds["critical_path"] = s->critical_path_s;
  return nb::make_tuple(nb::make_tuple(s->span_us, s->edges, tasks, critical, kernels, workers, seconds), std::string());
}

}  // namespace

void bind_trace_reader(nb::module_& m) {
  nb::module_ tr = m.def_submodule("trace_reader", "libpto2's reader of its own traces (pto2_trace_summary.h)");
  tr.def("read", &read, nb::arg("library"), nb::arg("path"), nb::arg("task_span"),
         "read(library, path, TaskSpan) -> (summary, why): libpto2 (at `library`)'s summary of the trace\n"
         "at `path` (bytes), as (span_us, edges, tasks, critical_path, kernels, workers, seconds) with TaskSpan\n"
         "objects and libpto2's seconds per phase; (None, why) when the file is not in the layout libpto2 writes or cannot be read.\n\n"
         "    from pypto import runtime\n"
         "    summary, why = trace_reader.read(runtime.library_path(), b\"t.json\", TaskSpan)");
}

}  // namespace pypto::bindings
