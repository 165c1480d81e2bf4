/* pto2_trace_summary.h — the summary `pypto trace summary` prints (pypto.trace_summary), computed
 * by libpto2 from a trace in the exact layout it writes itself (runtime/src/trace.cpp): one
 * event per line, each in one of the forms trace.cpp prints. A 1,000,000-task trace (770 MB)
 * is read in ~1.5 s, where pypto's Python line reader took ~26 s (benchmarks/trace_summary_bench.py).
 *
 *   char why[256];
 *   const pto2_trace_summary* s = pto2_trace_summary_read("trace.json", why, sizeof why);
 *   if (!s) { ... read it another way: why = "line 12: not an event in a form libpto2 writes" }
 *   for (uint64_t i = 0; i < s->n_critical; ++i) printf("%lld\n", (long long)s->task_id[s->critical[i]]);
 *   pto2_trace_summary_free(s);
 *
 * NULL means "not this layout, or unreadable" and nothing more: the caller reads the file the
 * general way (pypto.trace_summary's JSON reader), which gives the same summary for any trace this
 * reader accepts and names what is wrong with any it refuses. So the reader refuses rather than
 * guesses: another spacing, CR LF, an escape trace.cpp does not write, a number with an
 * exponent or beyond 2^53, an integer beyond int64, invalid UTF-8, a HOST trace's events.
 *
 * Meanings are those of pypto.trace_summary.summarize (the reference): tasks are `task` spans
 * merged per task id (first block names the kernel and the source), kernel and worker times
 * sum block durations in file order, the critical path is the longest duration-weighted chain
 * of dependency edges visited in (end, task id) order. Strings are UTF-8, not NUL-terminated. */
#ifndef PTO2_TRACE_SUMMARY_H
#define PTO2_TRACE_SUMMARY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  double span_us;            /* first task start to last task end (0 without tasks) */
  uint64_t edges;            /* dependency flow events (`ph` "s"), tasks absent from the trace included */
  uint32_t n_strings;        /* kernel names, sources and worker names, each once */
  const char* const* string; /* string[i]: string_len[i] bytes of UTF-8 */
  const uint32_t* string_len;
  uint64_t n_tasks;          /* in (start, task id) order */
  const int64_t* task_id;
  const uint32_t* task_kernel;  /* string index */
  const int32_t* task_source;   /* string index, -1: none */
  const double* task_start_us;
  const double* task_end_us;
  const uint64_t* task_blocks;
  uint64_t n_critical;       /* the critical path, first task first: indices into the tasks */
  const uint64_t* critical;
  uint32_t n_kernels;        /* by total time, descending; ties in order of first appearance */
  const uint32_t* kernel_name;  /* string index */
  const uint64_t* kernel_tasks;
  const double* kernel_total_us;
  uint32_t n_workers;        /* worker threads that ran a block, by thread id */
  const int64_t* worker_tid;
  const int32_t* worker_name;   /* string index (its thread_name), -1: none */
  const uint64_t* worker_blocks;
  const double* worker_busy_us;
  double parse_s, order_s, critical_path_s;  /* where the read's time went (benchmarks/trace_summary_bench.py) */
} pto2_trace_summary;

/* The summary of the trace at `path`, or NULL with why in `why` (may be NULL; "line 7: ..."):
 * the file cannot be read or is not in libpto2's layout. Free it with pto2_trace_summary_free. */
const pto2_trace_summary* pto2_trace_summary_read(const char* path, char* why, uint32_t why_len);
void pto2_trace_summary_free(const pto2_trace_summary* summary);

#ifdef __cplusplus
}
#endif

#endif /* PTO2_TRACE_SUMMARY_H */
