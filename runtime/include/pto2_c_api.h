/* pto2_c_api.h — the one C ABI between libpto2 and its callers (pypto's Python binding
 * `pypto._core.program_abi`, the libraries pypto.compile builds, other FFIs).
 *
 * Every struct and entry point crossing the boundary is declared here and nowhere else: the
 * program libraries include this header (so a definition that disagrees with a declaration
 * fails to compile), and the Python side calls through a nanobind binding that includes it too
 * (no hand-written mirror of a struct anywhere). Changes are additive: new entry points and
 * new trailing fields behind a new PTO2_ABI_VERSION; existing layouts do not change.
 *
 * One-shot run (creates the workers, runs, tears down):
 *
 *   pto2_kernel_desc k[1] = {{0, "kernel_add", 1, (void*)&kernel_add}};
 *   pto2_tensor_desc t[2] = {{a, 2, {16, 16}, 0}, {b, 2, {16, 16}, 0}};   // dtype 0 = FLOAT32
 *   pto2_run_options o = {1, 2, 1, "trace.json"};
 *   pto2_run_stats st; char err[512];
 *   int rc = pto2_run((void*)&aicpu_orchestration_entry, k, 1, t, 2, NULL, 0, &o, &st, err, sizeof err);
 *
 * entry_fn is the generated `void aicpu_orchestration_entry(const ChipStorageTaskArgs&)`
 * (extern "C"); tensors become contiguous row-major ChipStorageTaskArgs tensors in order,
 * scalars the scalar slots. Each call creates the worker threads, runs, and tears down.
 * Thread-safe (independent calls are independent runtimes).
 */
#ifndef PTO2_C_API_H
#define PTO2_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*pto2_entry_fn)(const void* chip_storage_task_args);

typedef struct {
  int32_t id;
  const char* name;
  int32_t core_type; /* 0 = AIC, 1 = AIV */
  void* fn;          /* PTO2KernelFn: void(PTO2KernelContext*) */
} pto2_kernel_desc;

typedef struct {
  void* data;
  uint32_t ndims;
  uint64_t shapes[8];
  int32_t dtype; /* DataType value: 0 FLOAT32, 1 FLOAT16, 2 BFLOAT16, 3 INT8, 4 INT16, 5 INT32,
                    6 INT64, 7 UINT8, 8 UINT16, 9 UINT32, 10 UINT64, 11 BOOL */
} pto2_tensor_desc;

typedef struct {
  int32_t aic_workers, aiv_workers, clusters; /* clusters 0 = min(aic, aiv); more is an error (2) */
  const char* trace_path;                      /* NULL = no trace */
} pto2_run_options;

typedef struct {
  uint64_t tasks_submitted, tasks_executed, tasks_skipped, auto_edges, explicit_edges;
  double wall_seconds;
} pto2_run_stats;

/* Returns 0 on success; nonzero on error with a NUL-terminated message in err_buf. opts,
 * stats_out and err_buf may be NULL. Refused before anything runs (2): no worker at all, a
 * core_type other than 0/1, a kernel of a type with 0 workers, two kernels with one id, a
 * tensor with elements but NULL data. */
int pto2_run(void* entry_fn, const pto2_kernel_desc* kernels, uint32_t n_kernels, const pto2_tensor_desc* tensors,
             uint32_t n_tensors, const uint64_t* scalars, uint32_t n_scalars, const pto2_run_options* opts,
             pto2_run_stats* stats_out, char* err_buf, uint32_t err_len);

/* Size in bytes of one element of DataType `dtype` (0 if unknown). */
uint32_t pto2_dtype_size(int32_t dtype);

/* ABI version of this header (bumped when entry points or trailing fields are added). */
int32_t pto2_abi_version(void);

#define PTO2_ABI_VERSION 4

/* ---------------------------------------------------------------------------------------------
 * A runtime kept across runs (what pypto's CompiledProgram uses):
 *
 *   pto2_runtime_config c = {1, 2, 0, 0, 0, 0};         // workers; no trace; defaults
 *   void* rt = pto2_runtime_create(&c, kernels, n_kernels, err, sizeof err);
 *   pto2_tensor_arg t[1] = {{data, 2, 2, shapes, NULL}}; // dtype 2 = BFLOAT16, row-major
 *   pto2_stats st; int ok = pto2_runtime_run(rt, entry_fn, t, 1, NULL, 0, &st, err, sizeof err);
 *   pto2_runtime_write_trace(rt, "trace.json"); pto2_runtime_destroy(rt);
 *
 * A runtime handle is used by one thread at a time (runs serialise anyway). */

typedef struct {
  uint32_t aic_workers, aiv_workers, clusters; /* clusters 0 = min(aic, aiv); more is an error */
  int32_t trace;                               /* nonzero: record a trace of each run */
  uint32_t task_ring_size;                     /* 0 = runtime default */
  uint64_t memory_limit;                       /* bytes of live intermediates; 0 = default */
} pto2_runtime_config;

typedef struct {
  void* data;
  int32_t dtype;           /* DataType value (see pto2_tensor_desc) */
  uint32_t ndims;
  const uint32_t* shapes;
  const int64_t* strides;  /* in elements; NULL = row-major contiguous. Kept inside `data`'s memory
                              by the caller; a span past 2^63 bytes is refused */
} pto2_tensor_arg;

typedef struct {
  uint64_t tasks_submitted, tasks_executed, tasks_skipped, tasks_dummy, auto_edges, explicit_edges;
  double wall_seconds;
  uint64_t peak_bytes, pool_bytes, tasks_undeferred;
  uint64_t races;   /* race checker (ABI 3): unordered conflicting task pairs; their report is in err_buf */
} pto2_stats;

/* NULL (message in err_buf) on failure. Registers `kernels` (fn: PTO2KernelFn). Refused: a
 * NULL config, 0 AIC and 0 AIV workers, a core_type other than 0/1, a kernel of a type with 0
 * workers, two kernels with one id. pto2_runtime_run refuses a tensor with elements but NULL data. */
void* pto2_runtime_create(const pto2_runtime_config* config, const pto2_kernel_desc* kernels, uint32_t n_kernels,
                          char* err_buf, uint32_t err_len);
void pto2_runtime_destroy(void* runtime);
/* Runs entry_fn (see pto2_run) once. 1 on success; 0 with the message in err_buf on failure.
 * stats_out (may be NULL) is filled in both cases. Releases nothing: the runtime stays usable. */
int pto2_runtime_run(void* runtime, void* entry_fn, const pto2_tensor_arg* tensors, uint32_t n_tensors,
                     const uint64_t* scalars, uint32_t n_scalars, pto2_stats* stats_out, char* err_buf,
                     uint32_t err_len);
/* Writes the trace of the last run (needs config.trace). 1 on success. */
int pto2_runtime_write_trace(void* runtime, const char* path);
/* Race checker mode for the following runs: 0 off, 1 warn, 2 error (pto2::RaceCheck). */
void pto2_runtime_set_race_check(void* runtime, int32_t mode);
/* Writes the last run's task graph as Graphviz DOT (needs a race checker mode != 0 during
 * that run; see Runtime::write_graph). 1 on success. */
int pto2_runtime_write_graph(void* runtime, const char* path);
/* As pto2_runtime_write_trace / _write_graph (ABI 4), with why it failed in err_buf (may be
 * NULL): the path and the OS's reason ("could not write the trace to /tmp/x/t.json: No such file
 * or directory"), or that the last run recorded no graph. */
int pto2_runtime_write_trace_err(void* runtime, const char* path, char* err_buf, uint32_t err_len);
int pto2_runtime_write_graph_err(void* runtime, const char* path, char* err_buf, uint32_t err_len);
/* Tasks submitted and completed so far in the run in progress on `runtime` (or its last run),
 * for a progress indicator; callable from any thread during pto2_runtime_run (see
 * Runtime::progress).   uint64_t sub, done; pto2_runtime_progress(rt, &sub, &done); */
void pto2_runtime_progress(void* runtime, uint64_t* submitted, uint64_t* completed);

/* ---------------------------------------------------------------------------------------------
 * What a program library built by pypto.compile exports (defined in its program_table.cpp):
 * the kernel table, the orchestration entry and the entry's name. */
extern const pto2_kernel_desc pypto_program_kernel_table[];
extern const uint32_t pypto_program_kernel_count;
extern const pto2_entry_fn pypto_orchestration_entry;
extern const char pypto_entry_name[];

/* What a HOST program library (pypto.host) exports, defined in its host_runner.cpp (generated by
 * codegen::GenerateHostEntryGlue, which includes this header, so the two cannot drift).
 * pypto_host_run: one run of the HOST entry on the L3 runtime; transport NULL = in-process with
 * `chips` chips, each a libpto2 Runtime with `aic_workers` AIC and `aiv_workers` AIV workers,
 * else a std::shared_ptr<pto2::L3Transport>* (MPI; the chip ranks' runtimes keep their defaults
 * and the two counts are ignored). stats_out[9]: submitted,
 * executed, wait edges, chain edges, barriers, task records, peak live tasks, record deps,
 * barrier words. 1 on success; 0 with the message in err_buf. */
typedef struct {
  void* data;
  int32_t dtype;          /* DataType value */
  uint32_t ndims;
  const uint32_t* shapes; /* row-major contiguous */
} pypto_host_tensor;
int pypto_host_run(const pypto_host_tensor* tensors, uint32_t n_tensors, const uint64_t* scalars, uint32_t n_scalars,
                   uint32_t chips, uint32_t aic_workers, uint32_t aiv_workers, void* transport, uint64_t* stats_out,
                   double* wall_seconds, char* err_buf, size_t err_len);
/* Copies up to `cap` records of the last run as (index, target_id, chip, start_us, end_us, dep
 * count) and their deps, in order, into `deps` (up to `dcap`). Returns the records copied. */
uint32_t pypto_host_last_tasks(double* out, uint32_t cap, uint64_t* deps, uint64_t dcap);
/* Copies up to `cap` words of the last run's barriers: [index, n, dep x n] per barrier. */
uint64_t pypto_host_last_barriers(uint64_t* out, uint64_t cap);
/* Frees the cached L3 runtime (before MPI shuts down). */
void pypto_host_release(void);

/* Cancels the run in progress on `runtime` (a pto2::Runtime*), if any; see Runtime::cancel.
 * Thread-safe and async-signal-safe.   pto2_runtime_cancel(rt); */
void pto2_runtime_cancel(void* runtime);

/* Cancels every run in progress in the process (pto2_run's included). Async-signal-safe. */
void pto2_cancel_all_runs(void);

/* enable != 0: installs a SIGINT handler that cancels every run in progress, then calls the
 * handler it replaced (Python's raises KeyboardInterrupt when the run returns); 0 restores
 * that handler. Returns 0 on success.   pto2_cancel_runs_on_sigint(1); */
int pto2_cancel_runs_on_sigint(int enable);

#ifdef __cplusplus
}
#endif

#endif /* PTO2_C_API_H */
