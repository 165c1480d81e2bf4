// pypto._core.program_abi: Python's one door to libpto2 and to the libraries pypto.compile
// builds. Every struct and function crossing that boundary comes from runtime/include/
// pto2_c_api.h, and the function pointers found with dlsym are typed by the header's own
// declarations (decltype), so the Python side cannot drift from the C side: a change to the
// header changes this file's compile, not a hand-kept ctypes mirror.
//
//     abi = pypto._core.program_abi
//     lib = abi.ProgramLibrary("/.../libpto2.so", "/.../libprogram.so")
//     rt = lib.create_runtime(1, 2, 0, False, 0, 0)
//     ok, message, stats = rt.run([(array, 0, [16, 16], None)], [])   # stats: tuple (RUN_STATS_FIELDS)
//     rt.write_trace("trace.json"); rt.close()
//     mpi = abi.MpiLibrary("/.../libpto2_mpi.so")                   # pto_l3_mpi.h
//     ok, rank, size, message = mpi.init()
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "call_plan.h"
#include "pto2_c_api.h"
#include "pto_l3_mpi.h"
#include "pto2/l3_mpi_env.h"   // the MPI knobs' rules (header-only: no MPI needed)

namespace nb = nanobind;

namespace pypto::bindings {
namespace {

// (data pointer, pto2 dtype code, shape, element strides or None): one pto2_tensor_arg.
using TensorTuple = std::tuple<uintptr_t, int32_t, std::vector<uint32_t>, std::optional<std::vector<int64_t>>>;
// The same, the data given as an int address or as an object with the buffer protocol (a NumPy
// array): its address is read here, which costs a tenth of NumPy's `.ctypes.data` per call.
using RunTensorTuple = std::tuple<nb::object, int32_t, std::vector<uint32_t>, std::optional<std::vector<int64_t>>>;

void* open_library(const std::string& path, int mode) {
  void* h = dlopen(path.c_str(), RTLD_NOW | mode);
  if (h == nullptr) {
    const char* e = dlerror();
    throw std::runtime_error("cannot load " + path + ": " + (e ? e : "unknown error"));
  }
  return h;
}

// The address of `name` in library `h`, as the type the header declares for it.
template <typename T>
T symbol(void* h, const char* name, const std::string& path) {
  dlerror();
  void* p = dlsym(h, name);
  if (p == nullptr) {
    throw std::runtime_error(path + " does not export " + name +
                             " (built by another pypto version? delete the build cache and recompile)");
  }
  return reinterpret_cast<T>(p);
}

// libpto2's entry points. Loaded RTLD_GLOBAL so program libraries bind to this one copy.
struct Pto2 {
  decltype(&pto2_abi_version) abi_version;
  decltype(&pto2_runtime_create) create;
  decltype(&pto2_runtime_destroy) destroy;
  decltype(&pto2_runtime_run) run;
  decltype(&pto2_runtime_write_trace_err) write_trace;
  decltype(&pto2_runtime_set_race_check) set_race_check;
  decltype(&pto2_runtime_write_graph_err) write_graph;
  decltype(&pto2_runtime_progress) progress;
  decltype(&pto2_cancel_runs_on_sigint) cancel_runs_on_sigint;

  explicit Pto2(const std::string& path) {
    void* h = open_library(path, RTLD_GLOBAL);  // never closed: kernels may still refer to it
    abi_version = symbol<decltype(abi_version)>(h, "pto2_abi_version", path);
    if (abi_version() < PTO2_ABI_VERSION) {
      throw std::runtime_error(path + " has C ABI version " + std::to_string(abi_version()) + ", pypto needs " +
                               std::to_string(PTO2_ABI_VERSION) + " (reinstall pypto)");
    }
    create = symbol<decltype(create)>(h, "pto2_runtime_create", path);
    destroy = symbol<decltype(destroy)>(h, "pto2_runtime_destroy", path);
    run = symbol<decltype(run)>(h, "pto2_runtime_run", path);
    write_trace = symbol<decltype(write_trace)>(h, "pto2_runtime_write_trace_err", path);
    set_race_check = symbol<decltype(set_race_check)>(h, "pto2_runtime_set_race_check", path);
    write_graph = symbol<decltype(write_graph)>(h, "pto2_runtime_write_graph_err", path);
    progress = symbol<decltype(progress)>(h, "pto2_runtime_progress", path);
    cancel_runs_on_sigint = symbol<decltype(cancel_runs_on_sigint)>(h, "pto2_cancel_runs_on_sigint", path);
  }
};

std::shared_ptr<Pto2> libpto2(const std::string& path) {
  static std::shared_ptr<Pto2> loaded;
  static std::string loaded_path;
  if (!loaded || loaded_path != path) {
    loaded = std::make_shared<Pto2>(path);
    loaded_path = path;
  }
  return loaded;
}

// The address of a tensor's data: an int, or the start of an object's buffer. The buffer is
// released at once: the caller keeps the object alive (and so its memory) for the run.
void* data_address(const nb::object& data) {
  if (PyLong_Check(data.ptr())) {  // negative or above 2^64-1: Python's OverflowError
    const unsigned long long a = PyLong_AsUnsignedLongLong(data.ptr());
    if (a == static_cast<unsigned long long>(-1) && PyErr_Occurred()) throw nb::python_error();
    return reinterpret_cast<void*>(static_cast<uintptr_t>(a));
  }
  Py_buffer view;
  if (PyObject_GetBuffer(data.ptr(), &view, PyBUF_STRIDES) != 0) throw nb::python_error();
  void* a = view.buf;
  PyBuffer_Release(&view);
  return a;
}

// Views of the tuples as pto2_tensor_arg (the vectors stay owned by `tensors`).
std::vector<pto2_tensor_arg> tensor_args(const std::vector<RunTensorTuple>& tensors) {
  std::vector<pto2_tensor_arg> out;
  out.reserve(tensors.size());
  for (const auto& [data, dtype, shape, strides] : tensors) {
    out.push_back(pto2_tensor_arg{data_address(data), dtype, static_cast<uint32_t>(shape.size()), shape.data(),
                                  strides ? strides->data() : nullptr});
  }
  return out;
}

// pto2_stats as a tuple in this order (cheaper per run than a dict of 11 keys).
constexpr const char* kRunStatsFields[] = {"tasks_submitted", "tasks_executed", "tasks_skipped", "tasks_dummy",
                                           "auto_edges",      "explicit_edges", "wall_seconds",  "peak_bytes",
                                           "pool_bytes",      "tasks_undeferred", "races"};
nb::tuple stats_tuple(const pto2_stats& s) {
  return nb::make_tuple(s.tasks_submitted, s.tasks_executed, s.tasks_skipped, s.tasks_dummy, s.auto_edges,
                        s.explicit_edges, s.wall_seconds, s.peak_bytes, s.pool_bytes, s.tasks_undeferred, s.races);
}

// A loaded program library: its kernel table and orchestration entry (program_table.cpp).
class ProgramLibrary {
 public:
  ProgramLibrary(const std::string& libpto2_path, const std::string& path)
      : pto2_(libpto2(libpto2_path)), path_(path), handle_(open_library(path, RTLD_LOCAL)) {
    table_ = symbol<const pto2_kernel_desc*>(handle_, "pypto_program_kernel_table", path);
    count_ = *symbol<const uint32_t*>(handle_, "pypto_program_kernel_count", path);
    entry_ = *symbol<const pto2_entry_fn*>(handle_, "pypto_orchestration_entry", path);
    entry_name_ = symbol<const char*>(handle_, "pypto_entry_name", path);
  }
  // Not dlclose'd: a runtime's worker threads may still be parked in its code at exit.

  uint32_t kernel_count() const { return count_; }
  std::string entry_name() const { return entry_name_; }
  const Pto2& pto2() const { return *pto2_; }
  const pto2_kernel_desc* table() const { return table_; }
  void* entry() const { return reinterpret_cast<void*>(entry_); }

 private:
  std::shared_ptr<Pto2> pto2_;
  std::string path_;
  void* handle_;
  const pto2_kernel_desc* table_ = nullptr;
  uint32_t count_ = 0;
  pto2_entry_fn entry_ = nullptr;
  std::string entry_name_;
};

// A pto2 runtime with the program's kernels registered (worker threads parked while idle).
class Runtime {
 public:
  static constexpr uint32_t kErrCapacity = 65536;  // a race report can be long

  Runtime(std::shared_ptr<ProgramLibrary> lib, const pto2_runtime_config& config) : lib_(std::move(lib)) {
    char err[4096] = {0};
    handle_ = lib_->pto2().create(&config, lib_->table(), lib_->kernel_count(), err, sizeof err);
    if (handle_ == nullptr) throw std::runtime_error(std::string("cannot create the runtime: ") + err);
  }
  ~Runtime() { close(); }

  // (ok, message, stats) of one run; the GIL is released while it runs.
  std::tuple<bool, std::string, nb::tuple> run(const std::vector<RunTensorTuple>& tensors,
                                               const std::vector<uint64_t>& scalars) {
    if (handle_ == nullptr) throw std::runtime_error("the runtime is closed");
    return run_args(tensor_args(tensors), scalars);
  }

  // run() of a call CallPlan.marshal checked and marshalled (the common call's fast path).
  std::tuple<bool, std::string, nb::tuple> run_call(const MarshalledCall& call) {
    if (handle_ == nullptr) throw std::runtime_error("the runtime is closed");
    return run_args(call.tensors, call.scalars);
  }

  // "" when written, else why not: the path and the OS's reason (pto2_runtime_write_trace_err).
  std::string write_trace(const std::string& path) { return write_file(lib_->pto2().write_trace, path); }

  void set_race_check(int32_t mode) {
    if (handle_ != nullptr) lib_->pto2().set_race_check(handle_, mode);
  }

  // As write_trace, for the task graph; also says when the last run recorded none.
  std::string write_graph(const std::string& path) { return write_file(lib_->pto2().write_graph, path); }

  // (submitted, completed) tasks of the run in progress; called by the progress ticker's
  // thread while run() has the GIL released.
  std::tuple<uint64_t, uint64_t> progress() {
    uint64_t submitted = 0, completed = 0;
    if (handle_ != nullptr) lib_->pto2().progress(handle_, &submitted, &completed);
    return {submitted, completed};
  }

  void close() {
    if (handle_ != nullptr) {
      lib_->pto2().destroy(handle_);
      handle_ = nullptr;
    }
  }

 private:
  std::tuple<bool, std::string, nb::tuple> run_args(const std::vector<pto2_tensor_arg>& args,
                                                    const std::vector<uint64_t>& scalars) {
    pto2_stats stats{};
    // Not zeroed (64 KiB per call would be most of an empty run's cost): pto2_runtime_run
    // always writes a NUL-terminated message, empty when there is nothing to say.
    std::unique_ptr<char[]> err(new char[kErrCapacity]);
    err[0] = '\0';
    int ok;
    {
      nb::gil_scoped_release release;
      ok = lib_->pto2().run(handle_, lib_->entry(), args.data(), static_cast<uint32_t>(args.size()), scalars.data(),
                            static_cast<uint32_t>(scalars.size()), &stats, err.get(), kErrCapacity);
    }
    err[kErrCapacity - 1] = '\0';
    return {ok != 0, std::string(err.get()), stats_tuple(stats)};
  }

  std::string write_file(decltype(&pto2_runtime_write_trace_err) write, const std::string& path) {
    if (handle_ == nullptr) return "the runtime is closed";
    char err[8192] = "";   // a path of PATH_MAX and the reason
    return write(handle_, path.c_str(), err, sizeof err) != 0 ? std::string() : std::string(err);
  }

  std::shared_ptr<ProgramLibrary> lib_;
  void* handle_ = nullptr;
};

// A HOST program library (pypto.host): the glue's pypto_host_* entry points.
class HostLibrary {
 public:
  HostLibrary(const std::string& libpto2_path, const std::string& path)
      : pto2_(libpto2(libpto2_path)), handle_(open_library(path, RTLD_LOCAL)) {
    run_ = symbol<decltype(&pypto_host_run)>(handle_, "pypto_host_run", path);
    last_tasks_ = symbol<decltype(&pypto_host_last_tasks)>(handle_, "pypto_host_last_tasks", path);
    last_barriers_ = symbol<decltype(&pypto_host_last_barriers)>(handle_, "pypto_host_last_barriers", path);
    release_ = symbol<decltype(&pypto_host_release)>(handle_, "pypto_host_release", path);
  }

  using Record = std::tuple<int64_t, int32_t, int32_t, double, double, std::vector<uint64_t>>;
  // (ok, message, stats[9], wall seconds, records, barrier words); see pto2_c_api.h.
  std::tuple<bool, std::string, std::vector<uint64_t>, double, std::vector<Record>, std::vector<uint64_t>>
  run(const std::vector<TensorTuple>& tensors, const std::vector<uint64_t>& scalars, uint32_t chips,
      uint32_t aic_workers, uint32_t aiv_workers, uintptr_t transport) {
    std::vector<pypto_host_tensor> args;
    args.reserve(tensors.size());
    for (const auto& [data, dtype, shape, strides] : tensors) {
      (void)strides;  // row-major: checked by the caller
      args.push_back(pypto_host_tensor{reinterpret_cast<void*>(data), dtype, static_cast<uint32_t>(shape.size()),
                                       shape.data()});
    }
    std::vector<uint64_t> stats(9, 0), barrier_words;
    double wall = 0;
    std::string err(8192, '\0');
    std::vector<Record> records;
    int ok;
    {
      nb::gil_scoped_release release;
      ok = run_(args.data(), static_cast<uint32_t>(args.size()), scalars.data(), static_cast<uint32_t>(scalars.size()),
                chips, aic_workers, aiv_workers, reinterpret_cast<void*>(transport), stats.data(), &wall, err.data(), err.size());
      if (ok) {
        std::vector<double> raw(6 * std::max<uint64_t>(1, stats[5]));
        std::vector<uint64_t> deps(std::max<uint64_t>(1, stats[7]));
        const uint32_t n = last_tasks_(raw.data(), static_cast<uint32_t>(stats[5]), deps.data(), stats[7]);
        uint64_t d = 0;
        for (uint32_t i = 0; i < n; ++i) {
          const double* r = raw.data() + 6 * i;
          const uint64_t nd = static_cast<uint64_t>(r[5]);
          std::vector<uint64_t> mine(deps.begin() + static_cast<std::ptrdiff_t>(std::min(d, stats[7])),
                                     deps.begin() + static_cast<std::ptrdiff_t>(std::min(d + nd, stats[7])));
          d += nd;
          records.emplace_back(static_cast<int64_t>(r[0]), static_cast<int32_t>(r[1]), static_cast<int32_t>(r[2]),
                               r[3], r[4], std::move(mine));
        }
        barrier_words.resize(stats[8]);
        if (stats[8]) last_barriers_(barrier_words.data(), stats[8]);
      }
    }
    err.resize(std::char_traits<char>::length(err.c_str()));
    return {ok != 0, err, stats, wall, records, barrier_words};
  }

  void release() { release_(); }

 private:
  std::shared_ptr<Pto2> pto2_;
  void* handle_;
  decltype(&pypto_host_run) run_ = nullptr;
  decltype(&pypto_host_last_tasks) last_tasks_ = nullptr;
  decltype(&pypto_host_last_barriers) last_barriers_ = nullptr;
  decltype(&pypto_host_release) release_ = nullptr;
};

// libpto2_mpi (pto_l3_mpi.h), the optional MPI transport of HOST programs (pypto.host): its C
// entry points typed by the header's declarations, like libpto2's. Loaded RTLD_GLOBAL (libmpi's
// plugins need its symbols global) and never closed.
class MpiLibrary {
 public:
  explicit MpiLibrary(const std::string& path) : handle_(open_library(path, RTLD_GLOBAL)) {
    init_ = symbol<decltype(init_)>(handle_, "pto2_l3_mpi_init", path);
    transport_ = symbol<decltype(transport_)>(handle_, "pto2_l3_mpi_transport", path);
    transport_error_ = symbol<decltype(transport_error_)>(handle_, "pto2_l3_mpi_transport_error", path);
    transport_free_ = symbol<decltype(transport_free_)>(handle_, "pto2_l3_mpi_transport_free", path);
    last_bytes_ = symbol<decltype(last_bytes_)>(handle_, "pto2_l3_mpi_last_bytes", path);
    serve_ = symbol<decltype(serve_)>(handle_, "pto2_l3_mpi_serve", path);
    load_ = symbol<decltype(load_)>(handle_, "pto2_l3_mpi_load", path);
    close_ = symbol<decltype(close_)>(handle_, "pto2_l3_mpi_close", path);
  }

  // (ok, rank, world size, message when not ok)
  std::tuple<bool, int, int, std::string> init() {
    int rank = 0, size = 0;
    std::string err(1024, '\0');
    int ok;
    {
      nb::gil_scoped_release release;
      ok = init_(&rank, &size, err.data(), err.size());
    }
    err.resize(std::char_traits<char>::length(err.c_str()));
    return {ok != 0, rank, size, err};
  }
  // A transport handle for HostLibrary::run (a std::shared_ptr<pto2::L3Transport>*), or 0 with
  // the reason in transport_error().
  uintptr_t transport(double task_timeout_s, uint32_t program) {
    return reinterpret_cast<uintptr_t>(transport_(task_timeout_s, program));
  }
  std::string transport_error() { return transport_error_(); }
  void transport_free(uintptr_t t) { transport_free_(reinterpret_cast<void*>(t)); }
  // Tensor bytes the transport moved in its last run: (to chips, from chips, between chips).
  std::tuple<uint64_t, uint64_t, uint64_t> last_bytes(uintptr_t t) {
    uint64_t out[3] = {0, 0, 0};
    last_bytes_(reinterpret_cast<void*>(t), out);
    return {out[0], out[1], out[2]};
  }
  // Serving ranks: (ok, why it stopped) once rank 0 closes.
  std::tuple<bool, std::string> serve() {
    std::string err(4096, '\0');
    int ok;
    {
      nb::gil_scoped_release release;
      ok = serve_(err.data(), err.size());
    }
    err.resize(std::char_traits<char>::length(err.c_str()));
    return {ok != 0, err};
  }
  int load(uint32_t program, const std::string& library) {
    nb::gil_scoped_release release;
    return load_(program, library.c_str());
  }
  void close(bool abort) {
    nb::gil_scoped_release release;
    close_(abort ? 1 : 0);
  }

 private:
  void* handle_;
  decltype(&pto2_l3_mpi_init) init_ = nullptr;
  decltype(&pto2_l3_mpi_transport) transport_ = nullptr;
  decltype(&pto2_l3_mpi_transport_error) transport_error_ = nullptr;
  decltype(&pto2_l3_mpi_transport_free) transport_free_ = nullptr;
  decltype(&pto2_l3_mpi_last_bytes) last_bytes_ = nullptr;
  decltype(&pto2_l3_mpi_serve) serve_ = nullptr;
  decltype(&pto2_l3_mpi_load) load_ = nullptr;
  decltype(&pto2_l3_mpi_close) close_ = nullptr;
};

}  // namespace

void bind_program_abi(nb::module_& m) {
  nb::module_ abi = m.def_submodule("program_abi", "libpto2's C ABI (pto2_c_api.h) seen from Python");
  bind_call_plan(abi);
  abi.attr("ABI_VERSION") = PTO2_ABI_VERSION;
  nb::list fields;
  for (const char* f : kRunStatsFields) fields.append(f);
  abi.attr("RUN_STATS_FIELDS") = nb::tuple(fields);
  abi.def(
      "getenv",
      [](const char* name) -> nb::object {
        const char* v = std::getenv(name);
        if (v == nullptr) return nb::none();
        return nb::bytes(v);
      },
      nb::arg("name"),
      "getenv(3), as bytes or None: os.environ's writes reach it (putenv), and an unset name costs\n"
      "no KeyError as os.environ.get does (the per-call environment reads of CompiledProgram.__call__).\n\n"
      "    program_abi.getenv(\"PYPTO_TRACE\")  # -> None when unset, else b\"...\" (os.fsdecode it)");
  abi.def(
      "check_mpi_env", [] { pto2::l3mpi::check_mpi_env(); },
      "Checks the MPI transport's knobs PTO2_L3_MPI_DEPTH / _BATCH (integers 1..65536) and\n"
      "PTO2_L3_MPI_TIMEOUT_S (positive finite seconds) by the rules every rank applies\n"
      "(runtime/include/pto2/l3_mpi_env.h); a bad one raises ValueError naming it. `pypto run --mpi` calls\n"
      "it before launching mpirun.\n\n"
      "    program_abi.check_mpi_env()  # ValueError: PTO2_L3_MPI_DEPTH='0' is not a count: ...");
  nb::class_<ProgramLibrary>(abi, "ProgramLibrary")
      .def(nb::new_([](const std::string& libpto2_path, const std::string& path) {
             return std::make_shared<ProgramLibrary>(libpto2_path, path);
           }),
           nb::arg("libpto2_path"), nb::arg("path"))
      .def("kernel_count", &ProgramLibrary::kernel_count)
      .def("entry_name", &ProgramLibrary::entry_name)
      .def(
          "create_runtime",
          [](std::shared_ptr<ProgramLibrary> self, uint32_t aic, uint32_t aiv, uint32_t clusters, bool trace,
             uint32_t ring, uint64_t memory) {
            pto2_runtime_config c{aic, aiv, clusters, trace ? 1 : 0, ring, memory};
            return std::make_shared<Runtime>(std::move(self), c);
          },
          nb::arg("aic_workers"), nb::arg("aiv_workers"), nb::arg("clusters"), nb::arg("trace"),
          nb::arg("task_ring_size"), nb::arg("memory_limit"));
  nb::class_<Runtime>(abi, "Runtime")
      .def("run", &Runtime::run, nb::arg("tensors"), nb::arg("scalars"))
      .def("run_call", &Runtime::run_call, nb::arg("call"))
      .def("write_trace", &Runtime::write_trace, nb::arg("path"))
      .def("set_race_check", &Runtime::set_race_check, nb::arg("mode"))
      .def("write_graph", &Runtime::write_graph, nb::arg("path"))
      .def("progress", &Runtime::progress)
      .def("close", &Runtime::close);
  nb::class_<HostLibrary>(abi, "HostLibrary")
      .def(nb::init<const std::string&, const std::string&>(), nb::arg("libpto2_path"), nb::arg("path"))
      .def("run", &HostLibrary::run, nb::arg("tensors"), nb::arg("scalars"), nb::arg("chips"), nb::arg("aic_workers"),
           nb::arg("aiv_workers"), nb::arg("transport"))
      .def("release", &HostLibrary::release);
  abi.def(
      "cancel_runs_on_sigint",
      [](const std::string& libpto2_path, bool enable) { return libpto2(libpto2_path)->cancel_runs_on_sigint(enable ? 1 : 0); },
      nb::arg("libpto2_path"), nb::arg("enable"),
      "libpto2's SIGINT hook (pto2_cancel_runs_on_sigint): Ctrl-C cancels the runs in progress; 0 on success.");
  nb::class_<MpiLibrary>(abi, "MpiLibrary")
      .def(nb::init<const std::string&>(), nb::arg("path"))
      .def("init", &MpiLibrary::init)
      .def("transport", &MpiLibrary::transport, nb::arg("task_timeout_s"), nb::arg("program"))
      .def("transport_error", &MpiLibrary::transport_error)
      .def("transport_free", &MpiLibrary::transport_free, nb::arg("transport"))
      .def("last_bytes", &MpiLibrary::last_bytes, nb::arg("transport"))
      .def("serve", &MpiLibrary::serve)
      .def("load", &MpiLibrary::load, nb::arg("program"), nb::arg("library"))
      .def("close", &MpiLibrary::close, nb::arg("abort"));
}

}  // namespace pypto::bindings
