// trace.cpp — Chrome/Perfetto trace JSON of the last run: a track per worker, a complete
// event per task block (named after its kernel, args.task_id), flow arrows for dependency
// edges (the start event's args name both tasks: {"from": producer, "to": consumer}), and one span per timing slot on its own track.
// Task and submission events name their DSL line in args.source ("prog.py:42") when known.
// The orchestrator's track also carries a span per submission (cat "submit", args.task_id) and per
// PTO2_SCOPE (cat "scope", args.mode); a task whose predicate was false is an instant event
// (ph "i", cat "skip") on the track of the thread that retired it, args naming the predicate.
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <unordered_map>

#include "engine.h"
#include "output_file.h"
#include "text_escape.h"

namespace pto2::detail {

namespace {
const char* predicate_op(PredicateOp op) {
  switch (op) {
    case PredicateOp::EQ: return "==";
    case PredicateOp::NE: return "!=";
    case PredicateOp::GT: return ">";
    case PredicateOp::LT: return "<";
    case PredicateOp::GE: return ">=";
    case PredicateOp::LE: return "<=";
  }
  return "?";
}
}  // namespace

bool Engine::write_trace(const std::string& path, std::string* error) const {
  std::unique_lock<std::mutex> lk;
  try {
    lk = between_runs("write_trace");  // the run in progress writes what it would read
  } catch (const std::logic_error& e) {
    if (error) *error = e.what();
    return false;
  }
  errno = 0;
  std::ofstream f(path);
  if (!f) return output_failed(error, "the trace", path, errno);
  char buf[1024];  // an event; a source name is a file name, not a path
  const int64_t start_ns = record_.start_ns();
  auto us = [start_ns](int64_t ns) { return static_cast<double>(ns - start_ns) * 1e-3; };
  f << "{\"traceEvents\": [\n";
  f << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"pto2\"}}";
  uint32_t aic = 0, aiv = 0;
  const uint32_t n_workers = workers_.workers();
  for (uint32_t w = 0; w < n_workers; ++w) {
    const bool is_aic = workers_.type_of(w) == 0;
    std::snprintf(buf, sizeof buf, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%u,\"args\":{\"name\":\"%s%u\"}}", w,
                  is_aic ? "AIC" : "AIV", is_aic ? aic++ : aiv++);
    f << buf;
  }
  std::snprintf(buf, sizeof buf, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%u,\"args\":{\"name\":\"orchestrator\"}}", n_workers);
  f << buf;
  std::snprintf(buf, sizeof buf, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%u,\"args\":{\"name\":\"timing_slots\"}}", n_workers + 1);
  f << buf;
  // Gang helper threads (started on demand for sync_start / mixed tasks) get tracks after the
  // timing slots' when they ran or retired anything.
  auto tid_of = [n_workers](uint32_t w) { return w <= n_workers ? w : w + 1; };
  for (uint32_t w = n_workers + 1; w < record_.blocks().size(); ++w) {
    if (record_.blocks()[w].empty() && record_.skips()[w].empty()) continue;
    const bool is_aic = workers_.type_of(w) == 0;
    std::snprintf(buf, sizeof buf, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%u,\"args\":{\"name\":\"%s helper%u\"}}",
                  tid_of(w), is_aic ? "AIC" : "AIV", w - n_workers - 1);
    f << buf;
  }
  auto kernel_name = [this](int32_t k) -> std::string {
    return k >= 0 && static_cast<size_t>(k) < kernels_.infos().size() ? kernels_.infos()[static_cast<size_t>(k)].name : "task";
  };
  // `,"source":"prog.py:42"` for a task whose submission named its DSL line (pypto trace summary).
  std::unordered_map<uint64_t, std::string> sources;
  for (const auto& [raw, site] : record_.sites())
    sources[raw] = ",\"source\":\"" + json_escape(std::string(site.first) + ":" + std::to_string(site.second)) + "\"";
  auto source_of = [&sources](uint64_t raw) -> const char* {
    auto it = sources.find(raw);
    return it == sources.end() ? "" : it->second.c_str();
  };
  // first block (start, tid) and last end per task for flow arrows
  struct Span { int64_t start = INT64_MAX, end = 0; uint32_t start_tid = 0, end_tid = 0; };
  std::unordered_map<uint64_t, Span> spans;
  for (uint32_t w = 0; w < record_.blocks().size(); ++w) {  // n_workers: tasks the orchestrator ran; then helpers
    for (const TraceEvent& e : record_.blocks()[w]) {
      const std::string name = kernel_name(e.kernel);
      std::snprintf(buf, sizeof buf,
                    ",\n{\"name\":\"%s\",\"cat\":\"task\",\"ph\":\"X\",\"pid\":0,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                    "\"args\":{\"task_id\":%llu,\"kernel_id\":%d,\"block_idx\":%u%s}}",
                    json_escape(name).c_str(), tid_of(w), us(e.start_ns), static_cast<double>(e.end_ns - e.start_ns) * 1e-3,
                    static_cast<unsigned long long>(sub_.number(e.raw)), e.kernel, e.block, source_of(e.raw));
      f << buf;
      Span& sp = spans[e.raw];
      if (e.start_ns < sp.start) { sp.start = e.start_ns; sp.start_tid = tid_of(w); }
      if (e.end_ns > sp.end) { sp.end = e.end_ns; sp.end_tid = tid_of(w); }
    }
    for (const SkipEvent& e : record_.skips()[w]) {
      const char* op = predicate_op(e.op);
      f << ",\n{\"name\":\"" << json_escape(kernel_name(e.kernel)) << "\",\"cat\":\"skip\",\"ph\":\"i\",\"s\":\"t\",\"pid\":0";
      std::snprintf(buf, sizeof buf,
                    ",\"tid\":%u,\"ts\":%.3f,\"args\":{\"task_id\":%llu,\"kernel_id\":%d,\"element\":%lld,\"op\":\"%s\","
                    "\"target\":%lld,\"predicate\":\"element %lld %s %lld is false\"}}",
                    tid_of(w), us(e.ns), static_cast<unsigned long long>(sub_.number(e.raw)), e.kernel,
                    static_cast<long long>(e.element), op, static_cast<long long>(e.target),
                    static_cast<long long>(e.element), op, static_cast<long long>(e.target));
      f << buf;
    }
  }
  // The orchestrator's submissions and scopes (names of submitted tasks from trace_tasks).
  std::unordered_map<uint64_t, int32_t> task_kernel(record_.tasks().begin(), record_.tasks().end());
  for (const OrchSpan& o : record_.orchestrator()) {
    if (o.kind == OrchSpan::kSubmit) {
      auto k = task_kernel.find(o.raw);
      const int32_t kernel = k == task_kernel.end() ? -1 : k->second;
      f << ",\n{\"name\":\"submit " << json_escape(kernel >= 0 ? kernel_name(kernel) : "dummy") << "\",\"cat\":\"submit\"";
      std::snprintf(buf, sizeof buf, ",\"ph\":\"X\",\"pid\":0,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"task_id\":%llu%s}}",
                    n_workers, us(o.start_ns), static_cast<double>(o.end_ns - o.start_ns) * 1e-3,
                    static_cast<unsigned long long>(sub_.number(o.raw)), source_of(o.raw));
    } else {
      const bool manual = o.mode == static_cast<uint8_t>(PTO2ScopeMode::MANUAL);
      std::snprintf(buf, sizeof buf,
                    ",\n{\"name\":\"PTO2_SCOPE %s\",\"cat\":\"scope\",\"ph\":\"X\",\"pid\":0,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                    "\"args\":{\"mode\":\"%s\"}}",
                    manual ? "MANUAL" : "AUTO", n_workers, us(o.start_ns), static_cast<double>(o.end_ns - o.start_ns) * 1e-3,
                    manual ? "MANUAL" : "AUTO");
    }
    f << buf;
  }
  uint64_t flow = 0;
  for (const auto& edge : linker_.trace_edges()) {
    auto p = spans.find(edge.first);
    auto c = spans.find(edge.second);
    if (p == spans.end() || c == spans.end()) continue;
    ++flow;
    std::snprintf(buf, sizeof buf,
                  ",\n{\"name\":\"dep\",\"cat\":\"dep\",\"ph\":\"s\",\"id\":%llu,\"pid\":0,\"tid\":%u,\"ts\":%.3f,"
                  "\"args\":{\"from\":%llu,\"to\":%llu}}"
                  ",\n{\"name\":\"dep\",\"cat\":\"dep\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%llu,\"pid\":0,\"tid\":%u,\"ts\":%.3f}",
                  static_cast<unsigned long long>(flow), p->second.end_tid, us(p->second.end) - 0.001,
                  static_cast<unsigned long long>(edge.first), static_cast<unsigned long long>(edge.second),
                  static_cast<unsigned long long>(flow), c->second.start_tid, us(c->second.start));
    f << buf;
  }
  for (uint32_t k = 0; k < 16; ++k) {
    if (record_.slot(k).tasks.load() == 0) continue;
    const int64_t s = record_.slot(k).start.load(), e = record_.slot(k).end.load();
    std::snprintf(buf, sizeof buf,
                  ",\n{\"name\":\"timing_slot_%u\",\"cat\":\"timing_slot\",\"ph\":\"X\",\"pid\":0,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                  "\"args\":{\"slot\":%u,\"tasks\":%llu}}",
                  k, n_workers + 1, us(s), static_cast<double>(e - s) * 1e-3, k,
                  static_cast<unsigned long long>(record_.slot(k).tasks.load()));
    f << buf;
  }
  f << "\n]}\n";
  f.close();   // a failed final flush (a full disk, a file that takes no writes) is a failure too
  // errno is the failed write's (ENOSPC): once the stream failed, it makes no more calls.
  return f.fail() ? output_failed(error, "the trace", path, errno) : true;
}

}  // namespace pto2::detail
