// trace_reader.cpp — pto2_trace_summary_read (pto2_trace_summary.h): `pypto trace summary` of a
// trace in the layout trace.cpp writes, in one pass over the mapped file and one topological
// pass for the critical path. pypto's Python line reader spent ~2.5 s on a 100,000-task trace,
// mostly in regular expressions, per-task dict updates and the critical path; this is ~0.14 s.
//
// Every line must be one of the event forms below, byte for byte as trace.cpp prints them
// (numbers and string bodies aside); anything else makes the read return NULL and the caller
// fall back to the general JSON reader. Accepting only what Python would read the same way is
// what keeps the two readers' results identical: numbers are `%.3f`-like decimals converted
// exactly (M / 10^k, both exact doubles: the correctly rounded value, as Python's float()),
// string escapes only the ones json_escape writes (so a raw body names one decoded string).
#include "pto2_trace_summary.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "text_escape.h"

namespace {

using pto2::detail::utf8_length;

// The owner of everything the pto2_trace_summary it extends points to.
struct Summary : pto2_trace_summary {
  std::vector<std::string> strings;
  std::vector<const char*> string_ptr;
  std::vector<uint32_t> string_len;
  std::vector<int64_t> task_id;
  std::vector<uint32_t> task_kernel;
  std::vector<int32_t> task_source;
  std::vector<double> task_start, task_end;
  std::vector<uint64_t> task_blocks, critical;
  std::vector<uint32_t> kernel_name;
  std::vector<uint64_t> kernel_tasks;
  std::vector<double> kernel_total;
  std::vector<int64_t> worker_tid;
  std::vector<int32_t> worker_name;
  std::vector<uint64_t> worker_blocks;
  std::vector<double> worker_busy;
};

// ---- the lexical pieces of a line (each advances `p` past what it matched, or returns false)

struct Line {
  const char* p;
  const char* end;
};

bool literal(Line& l, std::string_view s) {
  if (static_cast<size_t>(l.end - l.p) < s.size()) return false;
  for (size_t i = 0; i < s.size(); ++i)  // short: a loop beats a call to memcmp
    if (l.p[i] != s[i]) return false;
  l.p += s.size();
  return true;
}


// A JSON string's body up to its closing quote (left for the pattern to match). Escapes: only \" \\ and
// \u00XX (lowercase, a control character): what json_escape writes, one raw form per string.
bool string_body(Line& l, std::string_view* body) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(l.p);
  const unsigned char* end = reinterpret_cast<const unsigned char*>(l.end);
  const unsigned char* start = p;
  while (p < end) {
    const unsigned c = *p;
    if (c == '"') {
      *body = std::string_view(reinterpret_cast<const char*>(start), static_cast<size_t>(p - start));
      l.p = reinterpret_cast<const char*>(p);
      return true;
    }
    if (c < 0x20) return false;
    if (c == '\\') {
      if (end - p < 2) return false;
      if (p[1] == '"' || p[1] == '\\') {
        p += 2;
        continue;
      }
      auto hex = [](unsigned h) { return (h >= '0' && h <= '9') || (h >= 'a' && h <= 'f'); };
      if (end - p < 6 || p[1] != 'u' || p[2] != '0' || p[3] != '0' || (p[4] != '0' && p[4] != '1') || !hex(p[5]))
        return false;
      p += 6;
    } else if (c < 0x80) {
      ++p;
    } else {
      const int n = utf8_length(p, end);
      if (n == 0) return false;
      p += n;
    }
  }
  return false;
}

std::string unescape(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\') {
      out += body[i];
    } else if (body[i + 1] == 'u') {  // \u00XX, checked by string_body
      out += static_cast<char>(std::stoi(std::string(body.substr(i + 2, 4)), nullptr, 16));
      i += 5;
    } else {
      out += body[++i];
    }
  }
  return out;
}

bool digits(Line& l, uint64_t* value, int* count, bool* overflow) {
  const char* start = l.p;
  while (l.p < l.end && *l.p >= '0' && *l.p <= '9') {
    const unsigned d = static_cast<unsigned>(*l.p - '0');
    if (*value > (UINT64_MAX - d) / 10) *overflow = true;
    *value = *value * 10 + d;
    ++l.p;
  }
  *count = static_cast<int>(l.p - start);
  return *count > 0;
}

// JSON's -?(0|[1-9][0-9]*), within int64.
bool integer(Line& l, int64_t* out) {
  const bool neg = l.p < l.end && *l.p == '-';
  if (neg) ++l.p;
  const bool leading_zero = l.p < l.end && *l.p == '0';
  uint64_t v = 0;
  int n = 0;
  bool overflow = false;
  if (!digits(l, &v, &n, &overflow) || (leading_zero && n > 1) || overflow) return false;
  if (v > (neg ? uint64_t{1} << 63 : uint64_t{INT64_MAX})) return false;
  *out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

// JSON's -?(0|[1-9][0-9]*)(\.[0-9]+)? without an exponent, whose digits make an integer of at
// most 2^53 and at most 22 decimals: M / 10^k of two exact doubles is the correctly rounded value.
bool number(Line& l, double* out) {
  static const double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const bool neg = l.p < l.end && *l.p == '-';
  if (neg) ++l.p;
  const bool leading_zero = l.p < l.end && *l.p == '0';
  uint64_t m = 0;
  int n = 0, k = 0;
  bool overflow = false, fraction = false;
  if (!digits(l, &m, &n, &overflow) || (leading_zero && n > 1)) return false;
  if (l.p < l.end && *l.p == '.') {
    ++l.p;
    fraction = true;
    if (!digits(l, &m, &k, &overflow)) return false;
  }
  if (l.p < l.end && (*l.p == 'e' || *l.p == 'E')) return false;
  if (overflow || m > (uint64_t{1} << 53) || k > 22) return false;
  const double v = static_cast<double>(m) / kPow10[k];
  // `-0` is JSON's integer 0 (Python reads +0.0 from it); `-0.0` is a float, -0.0.
  *out = neg && (fraction || m != 0) ? -v : v;
  return true;
}

// ---- the forms of the lines. In a pattern, `$s` is a string body (the quotes are the
// pattern's), `$i` an integer, `$n` a number; everything else is literal.

struct Values {
  std::string_view s[4];
  int64_t i[8];
  double n[4];
};

// A pattern split once into its literal pieces, each followed by a value ('s', 'i', 'n') or none.
class Form {
 public:
  explicit Form(const char* pattern) {
    for (const char* q = pattern;;) {
      const char* next = std::strchr(q, '$');
      if (!next) {
        pieces_.push_back({std::string_view(q), 0});
        return;
      }
      pieces_.push_back({std::string_view(q, static_cast<size_t>(next - q)), next[1]});
      q = next + 2;
    }
  }
  // Matches the start of `l`; `rest` is what follows.
  bool match(Line l, Values* v, Line* rest) const {
    int ns = 0, ni = 0, nn = 0;
    for (const Piece& piece : pieces_) {
      if (!literal(l, piece.text)) return false;
      const bool ok = piece.value == 0     ? true
                      : piece.value == 's' ? string_body(l, &v->s[ns++])
                      : piece.value == 'i' ? integer(l, &v->i[ni++])
                                           : number(l, &v->n[nn++]);
      if (!ok) return false;
    }
    *rest = l;
    return true;
  }
  // Matches all of `l`.
  bool whole(Line l, Values* v) const {
    Line rest;
    return match(l, v, &rest) && rest.p == rest.end;
  }

 private:
  struct Piece {
    std::string_view text;
    char value;
  };
  std::vector<Piece> pieces_;
};

// The whole rest of the line is `tail`.
bool ends_with_exactly(Line l, std::string_view tail) { return literal(l, tail) && l.p == l.end; }

// A task's args end `}}` or name its source: `,"source":"prog.py:42"}}`.
bool optional_source(Line l, std::string_view* source) {
  if (ends_with_exactly(l, "}}")) {
    *source = std::string_view();
    return true;
  }
  return literal(l, ",\"source\":\"") && string_body(l, source) && ends_with_exactly(l, "\"}}") && source->data();
}

const Form kTask(
    "{\"name\":\"$s\",\"cat\":\"task\",\"ph\":\"X\",\"pid\":$i,\"tid\":$i,\"ts\":$n,\"dur\":$n,"
    "\"args\":{\"task_id\":$i,\"kernel_id\":$i,\"block_idx\":$i");
const Form kDepStart(
    "{\"name\":\"dep\",\"cat\":\"dep\",\"ph\":\"s\",\"id\":$i,\"pid\":$i,\"tid\":$i,\"ts\":$n,"
    "\"args\":{\"from\":$i,\"to\":$i}}");
const Form kSubmit(
    "{\"name\":\"$s\",\"cat\":\"submit\",\"ph\":\"X\",\"pid\":$i,\"tid\":$i,\"ts\":$n,\"dur\":$n,"
    "\"args\":{\"task_id\":$i");
const Form kThreadName("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":$i,\"tid\":$i,\"args\":{\"name\":\"$s\"}}");
// Events the summary does not read (Python's reader ignores them too).
const Form kIgnored[] = {
    Form("{\"name\":\"dep\",\"cat\":\"dep\",\"ph\":\"f\",\"bp\":\"e\",\"id\":$i,\"pid\":$i,\"tid\":$i,\"ts\":$n}"),
    Form("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":$i,\"tid\":$i,\"args\":{\"name\":\"$s\"}}"),
    Form("{\"name\":\"$s\",\"cat\":\"scope\",\"ph\":\"X\",\"pid\":$i,\"tid\":$i,\"ts\":$n,\"dur\":$n,"
         "\"args\":{\"mode\":\"$s\"}}"),
    Form("{\"name\":\"$s\",\"cat\":\"skip\",\"ph\":\"i\",\"s\":\"t\",\"pid\":$i,\"tid\":$i,\"ts\":$n,"
         "\"args\":{\"task_id\":$i,\"kernel_id\":$i,\"element\":$i,\"op\":\"$s\",\"target\":$i,\"predicate\":\"$s\"}}"),
    Form("{\"name\":\"$s\",\"cat\":\"timing_slot\",\"ph\":\"X\",\"pid\":$i,\"tid\":$i,\"ts\":$n,\"dur\":$n,"
         "\"args\":{\"slot\":$i,\"tasks\":$i}}"),
};

// ---- what the summary keeps of the events, in file order (pypto.trace_summary._Accumulator)

struct Task {
  int64_t id;
  uint32_t kernel;
  int32_t source;
  double start, end;
  uint64_t blocks;
};

struct Worker {
  double busy = 0.0;
  uint64_t blocks = 0;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class Reader {
 public:
  bool line(Line l, std::string* why);
  double parse_s = 0.0;
  std::unique_ptr<Summary> summary();

 private:
  uint32_t intern(std::string_view raw);
  uint32_t task_index(int64_t id, bool* found);
  void grow_dense(size_t size);
  const uint32_t* find_task(int64_t id) const;
  void block(std::string_view name, int64_t tid, double ts, double dur, int64_t id, std::string_view source);
  std::vector<uint64_t> critical_path() const;
  std::vector<uint32_t> sorted_by(double Task::*time) const;

  std::unordered_map<std::string_view, uint32_t> string_ids_;
  std::vector<std::string_view> raw_strings_;
  std::vector<Task> tasks_;               // first-seen order
  std::vector<uint32_t> dense_;           // task id -> index + 1 for small ids (0: none)
  std::unordered_map<int64_t, uint32_t> sparse_;  // the other ids
  std::unordered_map<int64_t, Worker> workers_;
  std::unordered_map<int64_t, uint32_t> thread_names_;
  std::vector<uint32_t> kernel_order_;    // string ids, first-seen order
  std::vector<double> kernel_total_;      // by string id
  std::vector<uint64_t> kernel_tasks_;    // by string id
  std::vector<bool> is_kernel_;           // by string id
  std::unordered_set<uint64_t> other_kernel_blocks_;  // (task, kernel) of a block naming another kernel than the task's first
  std::vector<std::pair<int64_t, int64_t>> edges_;
};

uint32_t Reader::intern(std::string_view raw) {
  auto [it, added] = string_ids_.emplace(raw, static_cast<uint32_t>(raw_strings_.size()));
  if (added) raw_strings_.push_back(raw);
  return it->second;
}

// Task ids below this bound (and below 8 per task seen plus 64k when first seen) index a vector;
// the others a hash map. libpto2 numbers tasks 0, 1, 2, ...
constexpr int64_t kDenseIds = int64_t{1} << 28;

const uint32_t* Reader::find_task(int64_t id) const {
  if (id >= 0 && static_cast<uint64_t>(id) < dense_.size()) return dense_[id] ? &dense_[id] : nullptr;
  auto it = sparse_.find(id);
  return it == sparse_.end() ? nullptr : &it->second;
}

uint32_t Reader::task_index(int64_t id, bool* found) {
  const uint32_t next = static_cast<uint32_t>(tasks_.size());
  if (id >= 0 && static_cast<uint64_t>(id) >= dense_.size() && id < kDenseIds &&
      id < static_cast<int64_t>(8 * tasks_.size() + 65536))
    grow_dense(std::max<size_t>(static_cast<size_t>(id) + 1, 2 * dense_.size()));
  if (id >= 0 && static_cast<uint64_t>(id) < dense_.size()) {
    *found = dense_[id] != 0;
    if (!*found) dense_[id] = next + 1;
    return dense_[id] - 1;
  }
  auto [it, added] = sparse_.emplace(id, next + 1);
  *found = !added;
  return it->second - 1;
}

// Ids below `size` move to the vector (an id is in one of the two, never both).
void Reader::grow_dense(size_t size) {
  size = std::min<size_t>(size, kDenseIds);
  dense_.resize(size, 0);
  for (auto it = sparse_.begin(); it != sparse_.end();) {
    if (it->first >= 0 && static_cast<uint64_t>(it->first) < size) {
      dense_[it->first] = it->second;
      it = sparse_.erase(it);
    } else {
      ++it;
    }
  }
}

void Reader::block(std::string_view name, int64_t tid, double ts, double dur, int64_t id, std::string_view source) {
  const double end = ts + dur;
  const uint32_t kernel = intern(name);
  if (kernel >= is_kernel_.size()) {
    is_kernel_.resize(kernel + 1, false);
    kernel_total_.resize(kernel + 1, 0.0);
    kernel_tasks_.resize(kernel + 1, 0);
  }
  if (!is_kernel_[kernel]) {
    is_kernel_[kernel] = true;
    kernel_order_.push_back(kernel);
  }
  bool found;
  const uint32_t t = task_index(id, &found);
  if (!found) {
    tasks_.push_back(Task{id, kernel, source.data() ? static_cast<int32_t>(intern(source)) : -1, ts, end, 0});
    ++kernel_tasks_[kernel];
  } else {
    Task& task = tasks_[t];
    if (ts < task.start) task.start = ts;
    if (end > task.end) task.end = end;
    if (kernel != task.kernel && other_kernel_blocks_.insert(uint64_t{t} << 32 | kernel).second) ++kernel_tasks_[kernel];
  }
  ++tasks_[t].blocks;
  Worker& w = workers_[tid];
  w.busy += dur;
  ++w.blocks;
  kernel_total_[kernel] += dur;
}

bool Reader::line(Line l, std::string* why) {
  Values v;
  Line rest;
  if (kTask.match(l, &v, &rest)) {
    std::string_view source;
    if (!optional_source(rest, &source)) {
      *why = "a task event whose args are not in the form libpto2 writes";
      return false;
    }
    block(v.s[0], v.i[1], v.n[0], v.n[1], v.i[2], source);
    return true;
  }
  if (kDepStart.whole(l, &v)) {
    edges_.emplace_back(v.i[3], v.i[4]);
    return true;
  }
  if (kIgnored[0].whole(l, &v)) return true;  // the other half of a dependency arrow
  std::string_view source;
  if (kSubmit.match(l, &v, &rest) && optional_source(rest, &source)) return true;
  if (kThreadName.whole(l, &v)) {
    thread_names_[v.i[1]] = intern(v.s[0]);
    return true;
  }
  for (const Form& f : kIgnored)
    if (f.whole(l, &v)) return true;
  *why = "not an event in a form libpto2 writes";
  return false;
}

// The tasks' indices in (time, task id) order (keys copied out: sorting through the index
// missed the cache on every comparison).
std::vector<uint32_t> Reader::sorted_by(double Task::*time) const {
  struct Key {
    double time;
    int64_t id;
    uint32_t index;
  };
  std::vector<Key> keys(tasks_.size());
  for (uint32_t i = 0; i < tasks_.size(); ++i) keys[i] = Key{tasks_[i].*time, tasks_[i].id, i};
  std::sort(keys.begin(), keys.end(),
            [](const Key& a, const Key& b) { return a.time != b.time ? a.time < b.time : a.id < b.id; });
  std::vector<uint32_t> order(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) order[k] = keys[k].index;
  return order;
}

// The longest duration-weighted chain (pypto.trace_summary._critical_path): tasks in (end, id)
// order; each takes the first producer with the largest chain so far, if above 0.
std::vector<uint64_t> Reader::critical_path() const {
  const size_t n = tasks_.size();
  std::vector<uint64_t> first(n + 1, 0);  // producers of task t: preds[first[t] .. first[t + 1])
  std::vector<std::pair<uint32_t, uint32_t>> kept;
  kept.reserve(edges_.size());
  for (const auto& [a, b] : edges_) {
    const uint32_t* pa = find_task(a);
    const uint32_t* pb = find_task(b);
    if (pa && pb && a != b) {
      kept.emplace_back(*pa - 1, *pb - 1);
      ++first[*pb];
    }
  }
  for (size_t t = 0; t < n; ++t) first[t + 1] += first[t];
  std::vector<uint32_t> preds(kept.size());
  std::vector<uint64_t> fill(first.begin(), first.end() - 1);
  for (const auto& [a, b] : kept) preds[fill[b]++] = a;  // in file order
  const std::vector<uint32_t> order = sorted_by(&Task::end);
  std::vector<double> best(n, 0.0);
  std::vector<bool> done(n, false);
  std::vector<int64_t> via(n, -1);
  for (uint32_t t : order) {
    int64_t choice = -1;
    double value = 0.0;
    for (uint64_t e = first[t]; e < first[t + 1]; ++e) {
      const uint32_t p = preds[e];
      if (done[p] && best[p] > value) {
        choice = p;
        value = best[p];
      }
    }
    best[t] = value + (tasks_[t].end - tasks_[t].start);
    via[t] = choice;
    done[t] = true;
  }
  std::vector<uint64_t> path;
  if (n == 0) return path;
  uint32_t top = 0;
  for (uint32_t t = 1; t < n; ++t)
    if (best[t] > best[top] || (best[t] == best[top] && tasks_[t].id < tasks_[top].id)) top = t;
  for (int64_t cur = top; cur >= 0; cur = via[cur]) path.push_back(static_cast<uint64_t>(cur));
  std::reverse(path.begin(), path.end());
  return path;
}

std::unique_ptr<Summary> Reader::summary() {
  auto t0 = std::chrono::steady_clock::now();
  auto s = std::make_unique<Summary>();
  for (std::string_view raw : raw_strings_) s->strings.push_back(unescape(raw));
  for (const std::string& str : s->strings) {
    s->string_ptr.push_back(str.data());
    s->string_len.push_back(static_cast<uint32_t>(str.size()));
  }
  const size_t n = tasks_.size();
  const std::vector<uint32_t> order = sorted_by(&Task::start);
  std::vector<uint64_t> position(n);
  double first = 0.0, last = 0.0;
  for (uint64_t k = 0; k < n; ++k) {
    const Task& t = tasks_[order[k]];
    position[order[k]] = k;
    s->task_id.push_back(t.id);
    s->task_kernel.push_back(t.kernel);
    s->task_source.push_back(t.source);
    s->task_start.push_back(t.start);
    s->task_end.push_back(t.end);
    s->task_blocks.push_back(t.blocks);
    if (k == 0 || t.start < first) first = t.start;
    if (k == 0 || t.end > last) last = t.end;
  }
  s->order_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  for (uint64_t t : critical_path()) s->critical.push_back(position[t]);
  s->critical_path_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  std::stable_sort(kernel_order_.begin(), kernel_order_.end(),
                   [this](uint32_t a, uint32_t b) { return kernel_total_[a] > kernel_total_[b]; });
  for (uint32_t k : kernel_order_) {
    s->kernel_name.push_back(k);
    s->kernel_tasks.push_back(kernel_tasks_[k]);
    s->kernel_total.push_back(kernel_total_[k]);
  }
  std::vector<int64_t> tids;
  for (const auto& w : workers_) tids.push_back(w.first);
  std::sort(tids.begin(), tids.end());
  for (int64_t tid : tids) {
    auto name = thread_names_.find(tid);
    s->worker_tid.push_back(tid);
    s->worker_name.push_back(name == thread_names_.end() ? -1 : static_cast<int32_t>(name->second));
    s->worker_blocks.push_back(workers_[tid].blocks);
    s->worker_busy.push_back(workers_[tid].busy);
  }
  s->order_s += seconds_since(t0);
  s->parse_s = parse_s;
  pto2_trace_summary& v = *s;
  v.span_us = n ? last - first : 0.0;
  v.edges = edges_.size();
  v.n_strings = static_cast<uint32_t>(s->strings.size());
  v.string = s->string_ptr.data();
  v.string_len = s->string_len.data();
  v.n_tasks = n;
  v.task_id = s->task_id.data();
  v.task_kernel = s->task_kernel.data();
  v.task_source = s->task_source.data();
  v.task_start_us = s->task_start.data();
  v.task_end_us = s->task_end.data();
  v.task_blocks = s->task_blocks.data();
  v.n_critical = s->critical.size();
  v.critical = s->critical.data();
  v.n_kernels = static_cast<uint32_t>(s->kernel_name.size());
  v.kernel_name = s->kernel_name.data();
  v.kernel_tasks = s->kernel_tasks.data();
  v.kernel_total_us = s->kernel_total.data();
  v.n_workers = static_cast<uint32_t>(s->worker_tid.size());
  v.worker_tid = s->worker_tid.data();
  v.worker_name = s->worker_name.data();
  v.worker_blocks = s->worker_blocks.data();
  v.worker_busy_us = s->worker_busy.data();
  return s;
}

// The file, mapped read-only for the read.
class Mapping {
 public:
  bool open(const char* path, std::string* why) {
    struct stat st;
    // Not even opened unless a regular file: a pipe (`<(zcat t.json.gz)`) is the caller's to read.
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
      *why = std::string("cannot map ") + path + ": not a regular file";
      return false;
    }
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      *why = std::string("cannot read ") + path + ": " + (fd < 0 ? std::strerror(errno) : "not a regular file");
      if (fd >= 0) ::close(fd);
      return false;
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      void* m = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (m != MAP_FAILED) {
        data_ = released_ = static_cast<const char*>(m);
        madvise(m, size_, MADV_SEQUENTIAL);
      }
    }
    ::close(fd);
    if (size_ > 0 && !data_) *why = std::string("cannot map ") + path + ": " + std::strerror(errno);
    return size_ == 0 || data_;
  }
  ~Mapping() {
    if (data_) munmap(const_cast<char*>(data_), size_);
  }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  // The pages before `p` are read: out of the process's resident set (a 1,000,000-task trace
  // is ~770 MB; its pages stay in the page cache, and a string still pointing there reads its page
  // again if need be).
  void done_before(const char* p) {
    constexpr size_t kStep = size_t{64} << 20;
    if (static_cast<size_t>(p - released_) < kStep + page_) return;
    const size_t len = (static_cast<size_t>(p - released_) / page_ - 1) * page_;
    madvise(const_cast<char*>(released_), len, MADV_DONTNEED);
    released_ += len;
  }

 private:
  const char* data_ = nullptr;
  const char* released_ = nullptr;
  size_t size_ = 0;
  const size_t page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
};

// `{"traceEvents": [`, events one per line (a comma after each but the last), `]}` and only
// JSON whitespace after it.
std::unique_ptr<Summary> read(const char* path, std::string* why) {
  const auto t0 = std::chrono::steady_clock::now();
  Mapping file;
  if (!file.open(path, why)) return nullptr;
  const char* p = file.data();
  const char* end = p + file.size();
  Line head{p, end};
  if (!literal(head, "{\"traceEvents\": [\n")) {
    *why = "line 1: not the head libpto2 writes";
    return nullptr;
  }
  p = head.p;
  Reader reader;
  uint64_t line_no = 1;
  for (bool last = false; !last;) {
    ++line_no;
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    if (!nl) {
      *why = "line " + std::to_string(line_no) + ": no end of line (truncated?)";
      return nullptr;
    }
    const char* stop = nl;
    if (stop > p && stop[-1] == ',') {
      --stop;
    } else {
      last = true;
    }
    if (!reader.line(Line{p, stop}, why)) {
      *why = "line " + std::to_string(line_no) + ": " + *why;
      return nullptr;
    }
    p = nl + 1;
    file.done_before(p);
  }
  Line tail{p, end};
  if (!literal(tail, "]}")) {
    *why = "line " + std::to_string(line_no + 1) + ": not the end of the event list";
    return nullptr;
  }
  for (; tail.p < end; ++tail.p) {
    if (*tail.p != ' ' && *tail.p != '\n' && *tail.p != '\t' && *tail.p != '\r') {
      *why = "text after the event list";
      return nullptr;
    }
  }
  reader.parse_s = seconds_since(t0);
  return reader.summary();
}

}  // namespace

extern "C" const pto2_trace_summary* pto2_trace_summary_read(const char* path, char* why, uint32_t why_len) {
  std::string reason;
  std::unique_ptr<Summary> s;
  try {
    s = path ? read(path, &reason) : nullptr;
    if (!path) reason = "path is NULL";
  } catch (const std::exception& e) {  // std::bad_alloc of a huge trace: the caller reads it another way
    reason = e.what();
  }
  if (!s && why && why_len) std::snprintf(why, why_len, "%s", reason.c_str());
  return s.release();
}

extern "C" void pto2_trace_summary_free(const pto2_trace_summary* summary) {
  delete static_cast<const Summary*>(summary);
}
