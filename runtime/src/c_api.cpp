// c_api.cpp — pto2_run and friends (see include/pto2_c_api.h).
#include "pto2_c_api.h"

#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>

#include "interrupt.h"
#include "tensor_bytes.h"
#include "pto_orchestration_api.h"

namespace {
void put_error(char* buf, uint32_t len, const std::string& msg) {
  if (!buf || len == 0) return;
  const size_t n = std::min<size_t>(msg.size(), len - 1);
  std::memcpy(buf, msg.data(), n);
  buf[n] = '\0';
}
}  // namespace

extern "C" uint32_t pto2_dtype_size(int32_t dtype) {
  if (dtype < 0 || dtype > static_cast<int32_t>(DataType::BOOL)) return 0;
  return static_cast<uint32_t>(dtype_size(static_cast<DataType>(dtype)));
}

extern "C" int32_t pto2_abi_version(void) { return PTO2_ABI_VERSION; }

extern "C" void pto2_runtime_cancel(void* runtime) {
  if (runtime) static_cast<pto2::Runtime*>(runtime)->cancel();
}

extern "C" void pto2_cancel_all_runs(void) { pto2::detail::cancel_all_runs(); }

extern "C" int pto2_cancel_runs_on_sigint(int enable) {
  return pto2::detail::cancel_runs_on_sigint(enable != 0) ? 0 : 1;
}

namespace {
// A NULL array with a nonzero count is a caller error to report, not an address to read.
const char* null_array(const void* kernels, uint32_t n_kernels, const void* tensors, uint32_t n_tensors,
                       const void* scalars, uint32_t n_scalars) {
  if (n_kernels && !kernels) return "kernels is NULL but n_kernels is nonzero";
  if (n_tensors && !tensors) return "tensors is NULL but n_tensors is nonzero";
  if (n_scalars && !scalars) return "scalars is NULL but n_scalars is nonzero";
  return nullptr;
}

// Checked before the runtime exists: no worker at all, a core_type that is neither AIC (0) nor
// AIV (1), or a kernel of a type without workers were accepted and failed (or ran the kernel as
// AIV) only when the entry submitted a task.
std::string bad_workers_or_kernels(uint32_t aic_workers, uint32_t aiv_workers, const pto2_kernel_desc* kernels,
                                   uint32_t n_kernels) {
  if (aic_workers == 0 && aiv_workers == 0)
    return "0 AIC and 0 AIV workers: nothing could run a task; give at least one worker (e.g. 1 AIC + 2 AIV)";
  std::unordered_map<int32_t, uint32_t> first_with_id;  // a repeated id silently replaced the earlier kernel
  for (uint32_t i = 0; i < n_kernels; ++i) {
    const pto2_kernel_desc& k = kernels[i];
    const std::string name = "kernel " + std::to_string(i) + " ('" + (k.name ? k.name : "?") + "', id " +
                             std::to_string(k.id) + ")";
    const auto seen = first_with_id.emplace(k.id, i);
    if (!seen.second)
      return name + " has the id of kernel " + std::to_string(seen.first->second) + "; kernel ids must be distinct";
    if (k.core_type != 0 && k.core_type != 1)
      return name + " has core_type " + std::to_string(k.core_type) + "; it must be 0 (AIC) or 1 (AIV)";
    if ((k.core_type == 0 ? aic_workers : aiv_workers) == 0)
      return name + " is an " + (k.core_type == 0 ? "AIC" : "AIV") + " kernel but the runtime has no " +
             (k.core_type == 0 ? "AIC" : "AIV") + " workers; give it at least one";
  }
  return "";
}

// The bytes a tensor given with the caller's strides spans fit int64 (exact, 128-bit): whether
// they stay inside the caller's memory is the caller's duty, but the runtime's own arithmetic
// on them (views, the dependency tracker's byte intervals) is int64.
bool span_fits_int64(const Tensor& t) {
  __int128 lo = t.offset, hi = t.offset;
  for (uint32_t d = 0; d < t.ndims; ++d) {
    if (t.shapes[d] == 0) return true;  // empty: touches nothing
    const __int128 ext = static_cast<__int128>(t.shapes[d] - 1) * t.strides[d];
    (ext < 0 ? lo : hi) += ext;
  }
  const __int128 es = static_cast<__int128>(dtype_size(t.dtype));
  return lo * es >= INT64_MIN && (hi + 1) * es <= INT64_MAX;
}

}  // namespace

extern "C" int pto2_run(void* entry_fn, const pto2_kernel_desc* kernels, uint32_t n_kernels, const pto2_tensor_desc* tensors,
                        uint32_t n_tensors, const uint64_t* scalars, uint32_t n_scalars, const pto2_run_options* opts,
                        pto2_run_stats* stats_out, char* err_buf, uint32_t err_len) {
  try {
    if (!entry_fn) {
      put_error(err_buf, err_len, "pto2_run: entry_fn is NULL");
      return 2;
    }
    if (const char* what = null_array(kernels, n_kernels, tensors, n_tensors, scalars, n_scalars)) {
      put_error(err_buf, err_len, std::string("pto2_run: ") + what);
      return 2;
    }
    pto2::RuntimeOptions o;
    if (opts) {
      if (opts->aic_workers >= 0) o.aic_workers(static_cast<uint32_t>(opts->aic_workers));
      if (opts->aiv_workers >= 0) o.aiv_workers(static_cast<uint32_t>(opts->aiv_workers));
      if (opts->clusters >= 0) o.clusters(static_cast<uint32_t>(opts->clusters));
      o.trace(opts->trace_path != nullptr);
    }
    const std::string bad = bad_workers_or_kernels(o.aic_workers_, o.aiv_workers_, kernels, n_kernels);
    if (!bad.empty()) {
      put_error(err_buf, err_len, "pto2_run: " + bad);
      return 2;
    }
    pto2::Runtime rt(o);
    for (uint32_t i = 0; i < n_kernels; ++i) {
      const pto2_kernel_desc& k = kernels[i];
      rt.register_kernel(k.id, k.name ? k.name : ("kernel_" + std::to_string(k.id)),
                         k.core_type == 0 ? pto2::CoreType::AIC : pto2::CoreType::AIV,
                         reinterpret_cast<PTO2KernelFn>(k.fn));
    }
    ChipStorageTaskArgs args;
    for (uint32_t i = 0; i < n_tensors; ++i) {
      const pto2_tensor_desc& d = tensors[i];
      if (d.ndims > PTO2_MAX_DIMS || d.dtype < 0 || d.dtype > static_cast<int32_t>(DataType::BOOL)) {
        put_error(err_buf, err_len, "pto2_run: tensor " + std::to_string(i) + " has an invalid rank or dtype");
        return 2;
      }
      uint32_t shapes[PTO2_MAX_DIMS];
      for (uint32_t k = 0; k < d.ndims; ++k) {
        if (d.shapes[k] > UINT32_MAX) {
          put_error(err_buf, err_len, "pto2_run: tensor " + std::to_string(i) + " dimension " + std::to_string(k) +
                                          " is " + std::to_string(d.shapes[k]) + ", above the limit 4294967295");
          return 2;
        }
        shapes[k] = static_cast<uint32_t>(d.shapes[k]);
      }
      if (pto2::detail::null_data_with_elements(d.data, shapes, d.ndims)) {
        put_error(err_buf, err_len, "pto2_run: tensor " + std::to_string(i) + " has elements but a NULL data pointer");
        return 2;
      }
      args.add_tensor(make_tensor_external(d.data, shapes, d.ndims, static_cast<DataType>(d.dtype)));
    }
    for (uint32_t i = 0; i < n_scalars; ++i) args.add_scalar(scalars[i]);
    using Entry = void (*)(const ChipStorageTaskArgs&);
    Entry entry = reinterpret_cast<Entry>(entry_fn);
    pto2::RunResult r = rt.run([entry](const ChipStorageTaskArgs& a) { entry(a); }, args);
    if (stats_out) {
      stats_out->tasks_submitted = r.tasks_submitted;
      stats_out->tasks_executed = r.tasks_executed;
      stats_out->tasks_skipped = r.tasks_skipped;
      stats_out->auto_edges = r.auto_edges;
      stats_out->explicit_edges = r.explicit_edges;
      stats_out->wall_seconds = r.wall_seconds;
    }
    std::string trace_error;
    if (opts && opts->trace_path && !rt.write_trace(opts->trace_path, &trace_error)) {
      if (r.ok()) {
        put_error(err_buf, err_len, "pto2_run: " + trace_error);
        return 3;
      }
    }
    if (!r.ok()) {
      put_error(err_buf, err_len, r.message);
      return 1;
    }
    put_error(err_buf, err_len, "");
    return 0;
  } catch (std::exception& e) {
    put_error(err_buf, err_len, std::string("pto2_run: ") + e.what());
    return 2;
  } catch (...) {
    put_error(err_buf, err_len, "pto2_run: unknown exception");
    return 2;
  }
}

// ---------------------------------------------------------------------------------------------
// A runtime kept across runs (pto2_runtime_*; see include/pto2_c_api.h).

extern "C" void* pto2_runtime_create(const pto2_runtime_config* config, const pto2_kernel_desc* kernels,
                                     uint32_t n_kernels, char* err_buf, uint32_t err_len) {
  try {
    if (!config) {   // its workers have no default to fall back on
      put_error(err_buf, err_len, "pto2_runtime_create: config is NULL; pass a pto2_runtime_config "
                                  "(e.g. {1, 2, 0, 0, 0, 0}: 1 AIC + 2 AIV workers, defaults otherwise)");
      return nullptr;
    }
    pto2::RuntimeOptions o;
    o.aic_workers(config->aic_workers).aiv_workers(config->aiv_workers).clusters(config->clusters);
    o.trace(config->trace != 0);
    if (config->task_ring_size != 0) o.task_ring_size(config->task_ring_size);
    if (config->memory_limit != 0) o.memory_limit(static_cast<size_t>(config->memory_limit));
    if (const char* what = null_array(kernels, n_kernels, nullptr, 0, nullptr, 0)) {
      put_error(err_buf, err_len, std::string("pto2_runtime_create: ") + what);
      return nullptr;
    }
    const std::string bad = bad_workers_or_kernels(config->aic_workers, config->aiv_workers, kernels, n_kernels);
    if (!bad.empty()) {
      put_error(err_buf, err_len, "pto2_runtime_create: " + bad);
      return nullptr;
    }
    auto rt = std::make_unique<pto2::Runtime>(o);
    for (uint32_t i = 0; i < n_kernels; ++i) {
      const pto2_kernel_desc& k = kernels[i];
      rt->register_kernel(k.id, k.name ? k.name : ("kernel_" + std::to_string(k.id)),
                          k.core_type == 0 ? pto2::CoreType::AIC : pto2::CoreType::AIV,
                          reinterpret_cast<PTO2KernelFn>(k.fn));
    }
    put_error(err_buf, err_len, "");
    return rt.release();
  } catch (const std::exception& e) {  // RuntimeOptions' checks, allocation: named like the rest
    put_error(err_buf, err_len, std::string("pto2_runtime_create: ") + e.what());
  } catch (...) {
    put_error(err_buf, err_len, "pto2_runtime_create: unknown error while creating the runtime");
  }
  return nullptr;
}

extern "C" void pto2_runtime_destroy(void* runtime) { delete static_cast<pto2::Runtime*>(runtime); }

extern "C" int pto2_runtime_run(void* runtime, void* entry_fn, const pto2_tensor_arg* tensors, uint32_t n_tensors,
                                const uint64_t* scalars, uint32_t n_scalars, pto2_stats* stats_out, char* err_buf,
                                uint32_t err_len) {
  try {
    if (!runtime || !entry_fn) {
      put_error(err_buf, err_len, "pto2_runtime_run: runtime or entry_fn is NULL");
      return 0;
    }
    if (const char* what = null_array(nullptr, 0, tensors, n_tensors, scalars, n_scalars)) {
      put_error(err_buf, err_len, std::string("pto2_runtime_run: ") + what);
      return 0;
    }
    ChipStorageTaskArgs args;
    for (uint32_t i = 0; i < n_tensors; ++i) {
      const pto2_tensor_arg& a = tensors[i];
      if (a.ndims > PTO2_MAX_DIMS || a.dtype < 0 || a.dtype > static_cast<int32_t>(DataType::BOOL)) {
        put_error(err_buf, err_len, "pto2_runtime_run: tensor " + std::to_string(i) + " has an invalid rank or dtype");
        return 0;
      }
      if (a.ndims > 0 && a.shapes == nullptr) {
        put_error(err_buf, err_len, "pto2_runtime_run: tensor " + std::to_string(i) + " has rank " +
                                        std::to_string(a.ndims) + " but its shapes pointer is NULL");
        return 0;
      }
      if (pto2::detail::null_data_with_elements(a.data, a.shapes, a.ndims)) {
        put_error(err_buf, err_len, "pto2_runtime_run: tensor " + std::to_string(i) + " has elements but a NULL data pointer");
        return 0;
      }
      Tensor t = make_tensor_external(a.data, a.shapes, a.ndims, static_cast<DataType>(a.dtype));
      if (a.strides != nullptr) {
        for (uint32_t d = 0; d < a.ndims; ++d) t.strides[d] = a.strides[d];
        if (!span_fits_int64(t)) {
          put_error(err_buf, err_len, "pto2_runtime_run: tensor " + std::to_string(i) +
                                          ": its strides span more than 2^63 bytes (check the strides, in elements)");
          return 0;
        }
      }
      args.add_tensor(t);
    }
    for (uint32_t i = 0; i < n_scalars; ++i) args.add_scalar(scalars[i]);
    using Entry = void (*)(const ChipStorageTaskArgs&);
    Entry entry = reinterpret_cast<Entry>(entry_fn);
    pto2::RunResult r = static_cast<pto2::Runtime*>(runtime)->run(entry, args);
    if (stats_out) {
      stats_out->tasks_submitted = r.tasks_submitted;
      stats_out->tasks_executed = r.tasks_executed;
      stats_out->tasks_skipped = r.tasks_skipped;
      stats_out->tasks_dummy = r.tasks_dummy;
      stats_out->auto_edges = r.auto_edges;
      stats_out->explicit_edges = r.explicit_edges;
      stats_out->wall_seconds = r.wall_seconds;
      stats_out->peak_bytes = r.peak_bytes;
      stats_out->pool_bytes = r.pool_bytes;
      stats_out->tasks_undeferred = r.tasks_undeferred;
      stats_out->races = r.races;
    }
    if (!r.ok()) {
      put_error(err_buf, err_len, r.message);
      return 0;
    }
    put_error(err_buf, err_len, r.race_report);  // race_check warn: the report of a completed run
    return 1;
  } catch (const std::exception& e) {
    put_error(err_buf, err_len, e.what());
  } catch (...) {
    put_error(err_buf, err_len, "unknown error during the run");
  }
  return 0;
}

extern "C" void pto2_runtime_set_race_check(void* runtime, int32_t mode) {
  if (runtime && mode >= 0 && mode <= 2)
    static_cast<pto2::Runtime*>(runtime)->set_race_check(static_cast<pto2::RaceCheck>(mode));
}

extern "C" int pto2_runtime_write_graph_err(void* runtime, const char* path, char* err_buf, uint32_t err_len) {
  std::string error = "pto2_runtime_write_graph: a NULL runtime or path";
  try {
    if (runtime && path && static_cast<pto2::Runtime*>(runtime)->write_graph(path, &error)) error.clear();
  } catch (std::exception& e) {
    error = std::string("could not write the task graph to ") + path + ": " + e.what();
  }
  put_error(err_buf, err_len, error);
  return error.empty() ? 1 : 0;
}

extern "C" int pto2_runtime_write_graph(void* runtime, const char* path) {
  return pto2_runtime_write_graph_err(runtime, path, nullptr, 0);
}

extern "C" void pto2_runtime_progress(void* runtime, uint64_t* submitted, uint64_t* completed) {
  if (submitted) *submitted = 0;
  if (completed) *completed = 0;
  if (runtime) static_cast<pto2::Runtime*>(runtime)->progress(submitted, completed);
}

extern "C" int pto2_runtime_write_trace_err(void* runtime, const char* path, char* err_buf, uint32_t err_len) {
  std::string error = "pto2_runtime_write_trace: a NULL runtime or path";
  try {
    if (runtime && path && static_cast<pto2::Runtime*>(runtime)->write_trace(path, &error)) error.clear();
  } catch (std::exception& e) {
    error = std::string("could not write the trace to ") + path + ": " + e.what();
  }
  put_error(err_buf, err_len, error);
  return error.empty() ? 1 : 0;
}

extern "C" int pto2_runtime_write_trace(void* runtime, const char* path) {
  return pto2_runtime_write_trace_err(runtime, path, nullptr, 0);
}
