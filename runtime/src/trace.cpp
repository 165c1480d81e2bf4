// trace.cpp — Chrome/Perfetto trace JSON of the last run: a track per worker, a complete
// event per task block (named after its kernel, args.task_id), flow arrows for dependency
// edges (the start event's args name both tasks: {"from": producer, "to": consumer}), and one span per timing slot on its own track.
#include <cstdio>
#include <fstream>
#include <unordered_map>

#include "engine.h"

namespace pto2::detail {

namespace {
std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += c;
    }
  }
  return o;
}
}  // namespace

bool Engine::write_trace(const std::string& path) const {
  std::ofstream f(path);
  if (!f) return false;
  char buf[512];
  auto us = [this](int64_t ns) { return static_cast<double>(ns - run_start_ns_) * 1e-3; };
  f << "{\"traceEvents\": [\n";
  f << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"pto2\"}}";
  uint32_t aic = 0, aiv = 0;
  for (uint32_t w = 0; w < n_workers_; ++w) {
    const bool is_aic = worker_type_[w] == 0;
    std::snprintf(buf, sizeof buf, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%u,\"args\":{\"name\":\"%s%u\"}}", w,
                  is_aic ? "AIC" : "AIV", is_aic ? aic++ : aiv++);
    f << buf;
  }
  std::snprintf(buf, sizeof buf, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%u,\"args\":{\"name\":\"orchestrator\"}}", n_workers_);
  f << buf;
  std::snprintf(buf, sizeof buf, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%u,\"args\":{\"name\":\"timing_slots\"}}", n_workers_ + 1);
  f << buf;
  // first block (start, tid) and last end per task for flow arrows
  struct Span { int64_t start = INT64_MAX, end = 0; uint32_t start_tid = 0, end_tid = 0; };
  std::unordered_map<uint64_t, Span> spans;
  for (uint32_t w = 0; w <= n_workers_; ++w) {  // the last track: tasks the orchestrator ran
    for (const TraceEvent& e : trace_[w]) {
      std::string name = (e.kernel >= 0 && static_cast<size_t>(e.kernel) < kernels_.size()) ? kernels_[static_cast<size_t>(e.kernel)].name : "task";
      std::snprintf(buf, sizeof buf,
                    ",\n{\"name\":\"%s\",\"cat\":\"task\",\"ph\":\"X\",\"pid\":0,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                    "\"args\":{\"task_id\":%llu,\"kernel_id\":%d,\"block_idx\":%u}}",
                    json_escape(name).c_str(), w, us(e.start_ns), static_cast<double>(e.end_ns - e.start_ns) * 1e-3,
                    static_cast<unsigned long long>(e.raw), e.kernel, e.block);
      f << buf;
      Span& sp = spans[e.raw];
      if (e.start_ns < sp.start) { sp.start = e.start_ns; sp.start_tid = w; }
      if (e.end_ns > sp.end) { sp.end = e.end_ns; sp.end_tid = w; }
    }
  }
  uint64_t flow = 0;
  for (const auto& edge : counters_.trace_edges) {
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
    if (timing_[k].tasks.load() == 0) continue;
    const int64_t s = timing_[k].start.load(), e = timing_[k].end.load();
    std::snprintf(buf, sizeof buf,
                  ",\n{\"name\":\"timing_slot_%u\",\"cat\":\"timing_slot\",\"ph\":\"X\",\"pid\":0,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                  "\"args\":{\"slot\":%u,\"tasks\":%llu}}",
                  k, n_workers_ + 1, us(s), static_cast<double>(e - s) * 1e-3, k,
                  static_cast<unsigned long long>(timing_[k].tasks.load()));
    f << buf;
  }
  f << "\n]}\n";
  return static_cast<bool>(f);
}

}  // namespace pto2::detail
