// host_shim.cpp — the C entry points pypto's Python loader calls (via ctypes) on a compiled
// program. Linked into every program library together with the generated program_table.cpp
// (which defines the entry function and the kernel table) and libpto2.
//
//     void* rt = pypto_rt_create(1, 2, 0, 0, 0, 0, err, sizeof err);  // workers, no trace, defaults
//     pypto_tensor_arg t[3] = {...}; uint64_t s[1] = {to_u64(0.5f)};
//     pypto_run_stats st; int ok = pypto_rt_run(rt, t, 3, s, 1, &st, err, sizeof err);
//     pypto_rt_write_trace(rt, "trace.json"); pypto_rt_destroy(rt);
//
// A runtime handle is used by one thread at a time (pto2::Runtime::run serializes anyway).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "pto_orchestration_api.h"

struct pypto_kernel_desc {
  int32_t id;
  const char* name;
  int32_t core_type;  // 0 = AIC, 1 = AIV (pto2::CoreType)
  PTO2KernelFn fn;
};

extern "C" {
extern const pypto_kernel_desc pypto_kernel_table[];
extern const uint32_t pypto_kernel_count;
extern void (*const pypto_orchestration_entry)(const ChipStorageTaskArgs&);

struct pypto_tensor_arg {
  void* data;
  int32_t dtype;  // DataType value
  uint32_t ndims;
  const uint32_t* shapes;
  const int64_t* strides;  // in elements; null = row-major contiguous
};

struct pypto_run_stats {
  uint64_t tasks_submitted;
  uint64_t tasks_executed;
  uint64_t tasks_skipped;
  uint64_t tasks_dummy;
  uint64_t auto_edges;
  uint64_t explicit_edges;
  double wall_seconds;
  uint64_t peak_bytes;
  uint64_t pool_bytes;
  uint64_t tasks_undeferred;
  uint64_t races;  // race checker: unordered conflicting task pairs
};
}

namespace {

void set_error(char* err, size_t errlen, const std::string& msg) {
  if (err == nullptr || errlen == 0) return;
  std::snprintf(err, errlen, "%s", msg.c_str());
}

}  // namespace

extern "C" {

// Creates a runtime with the given worker counts and registers the program's kernels.
// Returns null (with a message in `err`) on failure.
// `task_ring_size` / `memory_limit` of 0 keep the runtime defaults.
void* pypto_rt_create(uint32_t aic_workers, uint32_t aiv_workers, uint32_t clusters, int trace,
                      uint32_t task_ring_size, uint64_t memory_limit, char* err, size_t errlen) {
  try {
    pto2::RuntimeOptions opts;
    opts.aic_workers(aic_workers).aiv_workers(aiv_workers).clusters(clusters).trace(trace != 0);
    if (task_ring_size != 0) opts.task_ring_size(task_ring_size);
    if (memory_limit != 0) opts.memory_limit(static_cast<size_t>(memory_limit));
    auto rt = std::make_unique<pto2::Runtime>(opts);
    for (uint32_t i = 0; i < pypto_kernel_count; ++i) {
      const pypto_kernel_desc& k = pypto_kernel_table[i];
      rt->register_kernel(k.id, k.name, static_cast<pto2::CoreType>(k.core_type), k.fn);
    }
    return rt.release();
  } catch (const std::exception& e) {
    set_error(err, errlen, e.what());
  } catch (...) {
    set_error(err, errlen, "unknown error while creating the runtime");
  }
  return nullptr;
}

void pypto_rt_destroy(void* rt) { delete static_cast<pto2::Runtime*>(rt); }

// Runs the program's orchestration entry on `tensors` / `scalars`. Returns 1 on success; 0 with
// the runtime's message in `err` on failure. `stats` is filled in both cases.
int pypto_rt_run(void* handle, const pypto_tensor_arg* tensors, uint32_t n_tensors, const uint64_t* scalars,
                 uint32_t n_scalars, pypto_run_stats* stats, char* err, size_t errlen) {
  try {
    auto* rt = static_cast<pto2::Runtime*>(handle);
    ChipStorageTaskArgs args;
    for (uint32_t i = 0; i < n_tensors; ++i) {
      const pypto_tensor_arg& a = tensors[i];
      Tensor t = make_tensor_external(a.data, a.shapes, a.ndims, static_cast<DataType>(a.dtype));
      if (a.strides != nullptr) {
        for (uint32_t d = 0; d < a.ndims; ++d) t.strides[d] = a.strides[d];
      }
      args.add_tensor(t);
    }
    for (uint32_t i = 0; i < n_scalars; ++i) args.add_scalar(scalars[i]);
    pto2::RunResult r = rt->run(pypto_orchestration_entry, args);
    if (stats != nullptr) {
      stats->tasks_submitted = r.tasks_submitted;
      stats->tasks_executed = r.tasks_executed;
      stats->tasks_skipped = r.tasks_skipped;
      stats->tasks_dummy = r.tasks_dummy;
      stats->auto_edges = r.auto_edges;
      stats->explicit_edges = r.explicit_edges;
      stats->wall_seconds = r.wall_seconds;
      stats->peak_bytes = r.peak_bytes;
      stats->pool_bytes = r.pool_bytes;
      stats->tasks_undeferred = r.tasks_undeferred;
      stats->races = r.races;
    }
    if (!r.ok()) {
      set_error(err, errlen, r.message);
      return 0;
    }
    set_error(err, errlen, r.race_report);  // race_check "warn": the report of a successful run
    return 1;
  } catch (const std::exception& e) {
    set_error(err, errlen, e.what());
  } catch (...) {
    set_error(err, errlen, "unknown error during the run");
  }
  return 0;
}

// Race checker mode of the following runs: 0 off, 1 warn, 2 error (pto2::RaceCheck).
void pypto_rt_set_race_check(void* handle, int mode) {
  static_cast<pto2::Runtime*>(handle)->set_race_check(static_cast<pto2::RaceCheck>(mode < 0 || mode > 2 ? 0 : mode));
}

// Writes the trace of the last run (the runtime must have been created with trace != 0).
int pypto_rt_write_trace(void* handle, const char* path) {
  try {
    return static_cast<pto2::Runtime*>(handle)->write_trace(path) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

}  // extern "C"
