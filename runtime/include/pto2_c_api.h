/* pto2_c_api.h — a plain C API of libpto2 for FFIs and C programs (pypto's Python layer calls
 * a program library's own entry points instead, which create a pto2::Runtime per program).
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
  int32_t aic_workers, aiv_workers, clusters; /* clusters 0 = min(aic, aiv) */
  const char* trace_path;                      /* NULL = no trace */
} pto2_run_options;

typedef struct {
  uint64_t tasks_submitted, tasks_executed, tasks_skipped, auto_edges, explicit_edges;
  double wall_seconds;
} pto2_run_stats;

/* Returns 0 on success; nonzero on error with a NUL-terminated message in err_buf. opts,
 * stats_out and err_buf may be NULL. */
int pto2_run(void* entry_fn, const pto2_kernel_desc* kernels, uint32_t n_kernels, const pto2_tensor_desc* tensors,
             uint32_t n_tensors, const uint64_t* scalars, uint32_t n_scalars, const pto2_run_options* opts,
             pto2_run_stats* stats_out, char* err_buf, uint32_t err_len);

/* Size in bytes of one element of DataType `dtype` (0 if unknown). */
uint32_t pto2_dtype_size(int32_t dtype);

/* ABI version of this header (bumped on incompatible changes). */
int32_t pto2_abi_version(void);

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
