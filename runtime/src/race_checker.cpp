// race_checker.cpp — see race_checker.h.
#include "race_checker.h"

#include <algorithm>
#include <map>
#include <queue>
#include <sstream>
#include <unordered_set>

#include "engine.h"

namespace pto2 {
std::atomic<int> race_checking_runs{0};
}

namespace pto2::detail {

namespace {

constexpr uint32_t kNoNode = UINT32_MAX;
constexpr uint32_t kPredicateArg = UINT32_MAX;
constexpr uint32_t kMaxDetailed = 20;  // reports printed in full; the rest are counted

const void* shadow_key(uint32_t storage) { return reinterpret_cast<const void*>(uintptr_t{storage} + 1); }
bool always_live(uint64_t) { return true; }

const char* dtype_label(DataType d) {
  switch (d) {
    case DataType::FLOAT32: return "float32";
    case DataType::FLOAT16: return "float16";
    case DataType::BFLOAT16: return "bfloat16";
    case DataType::INT8: return "int8";
    case DataType::INT16: return "int16";
    case DataType::INT32: return "int32";
    case DataType::INT64: return "int64";
    case DataType::UINT8: return "uint8";
    case DataType::UINT16: return "uint16";
    case DataType::UINT32: return "uint32";
    case DataType::UINT64: return "uint64";
    case DataType::BOOL: return "bool";
  }
  return "?";
}

// "[0:16, 32:64]" for a box, "elements [a, b)" otherwise.
std::string region_text(const Region& r) {
  std::ostringstream os;
  if (r.box && !r.dense) {
    os << "[";
    for (uint32_t d = 0; d < r.ndims; ++d)
      os << (d ? ", " : "") << r.start[d] << ":" << r.start[d] + static_cast<int64_t>(r.shapes[d]);
    os << "]";
  } else {
    const int64_t e = r.elem ? r.elem : 1;
    os << "elements [" << r.lo / e << ", " << r.hi / e << ")";
  }
  return os.str();
}

// The bytes two overlapping regions share, as text: per axis for boxes of one layout.
std::string overlap_text(const Region& a, const Region& b) {
  std::ostringstream os;
  if (a.box && b.box && !a.dense && !b.dense && a.same_layout(b)) {
    os << "[";
    for (uint32_t d = 0; d < a.ndims; ++d) {
      const int64_t lo = std::max(a.start[d], b.start[d]);
      const int64_t hi = std::min(a.start[d] + static_cast<int64_t>(a.shapes[d]), b.start[d] + static_cast<int64_t>(b.shapes[d]));
      os << (d ? ", " : "") << lo << ":" << hi;
    }
    os << "]";
    return os.str();
  }
  const int64_t e = a.elem ? a.elem : 1;
  os << "elements [" << std::max(a.lo, b.lo) / e << ", " << std::min(a.hi, b.hi) / e << ")";
  return os.str();
}

}  // namespace

// ---------------------------------------------------------------- recording (orchestrator)

void RaceChecker::begin_run(uint64_t first_raw, const ChipStorageTaskArgs& args) {
  first_raw_ = first_raw;
  nodes_.clear();
  preds_.clear();
  pred_kind_.clear();
  node_by_raw_.clear();
  accesses_.clear();
  storages_.clear();
  storage_by_data_.clear();
  ext_data_.clear();
  for (uint32_t i = 0; i < args.tensor_count(); ++i) ext_data_.push_back(args.tensor(i).tensor.data);
  shadow_.clear();
  untracked_writers_.clear();
  missed_.clear();
  last_sync_ = kNoNode;
  std::lock_guard<std::mutex> lk(skipped_mu_);
  skipped_.clear();
  notes_.clear();
  if (!counted_) race_checking_runs.fetch_add(1, std::memory_order_relaxed);
  counted_ = true;
}

uint32_t RaceChecker::node_of_raw(uint64_t raw) const {
  if (raw < first_raw_ || raw - first_raw_ >= node_by_raw_.size()) return kNoNode;  // another run's task
  return node_by_raw_[raw - first_raw_];
}

uint32_t RaceChecker::add_node(uint64_t raw) {
  const uint32_t n = static_cast<uint32_t>(nodes_.size());
  nodes_.emplace_back();
  nodes_.back().raw = raw;
  nodes_.back().pred_begin = static_cast<uint32_t>(preds_.size());
  if (raw) {
    const uint64_t i = raw - first_raw_;
    if (node_by_raw_.size() <= i) node_by_raw_.resize(i + 1, kNoNode);
    node_by_raw_[i] = n;
  }
  if (last_sync_ != kNoNode) add_pred(last_sync_, kSyncEdge);
  return n;
}

uint32_t RaceChecker::storage_of(const Tensor& t) {
  auto it = storage_by_data_.find(t.data);
  if (it != storage_by_data_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(storages_.size());
  StorageInfo si;
  si.data = t.data;
  si.dtype = t.dtype;
  for (size_t i = 0; i < ext_data_.size(); ++i)
    if (ext_data_[i] == t.data) {
      si.ext_arg = static_cast<int32_t>(i);
      break;
    }
  storages_.push_back(si);
  storage_by_data_.emplace(t.data, id);
  return id;
}

void RaceChecker::on_alloc(const void* data) { storage_by_data_.erase(data); }

void RaceChecker::on_alloc_tensors(const TaskOutputTensors& out) {
  for (const Tensor& t : out.tensors_)
    if (t.data) storages_[storage_of(t)].from_alloc_tensors = true;
}

void RaceChecker::on_tensor_names(const TaskOutputTensors& out, std::initializer_list<const char*> names) {
  size_t i = 0;
  for (const char* name : names) {
    if (i >= out.tensors_.size()) break;
    const Tensor& t = out.tensors_[i++];
    if (t.data && name) storages_[storage_of(t)].name = name;
  }
}

void RaceChecker::on_submit(uint64_t raw, int kind, const int32_t* kernels, const Arg& params,
                            const TaskOutputTensors& out, bool manual_scope) {
  const uint32_t n = add_node(raw);
  Node& node = nodes_[n];
  node.kind = kind;
  node.kernel[0] = kernels[0];
  node.kernel[1] = kernels[1];
  node.file = params.source_file();
  node.line = params.source_line();
  for (const PTO2TaskId& d : params.dependencies()) {
    const uint32_t p = node_of_raw(d.raw);
    if (p != kNoNode) add_pred(p, kExplicitEdge);
  }
  scratch_.clear();
  bool untracked_write = false;
  auto record = [&](const Tensor& t, uint32_t arg, bool read, bool write, bool tracked, bool no_dep) {
    const Region r = with_axes_by_stride(Region::of(t));   // a transpose: its source's layout
    if (r.empty) return;
    const uint32_t st = storage_of(t);
    accesses_.push_back(Access{n, st, arg, write, tracked, no_dep, false, r});
    if (tracked) shadow_.access(shadow_key(st), r, read, write, n + 1, scratch_, always_live);
    else untracked_write |= write;
  };
  if (kind != static_cast<int>(TaskKind::DUMMY)) {
    uint32_t new_out = 0;
    for (uint32_t i = 0; i < params.tensor_count(); ++i) {
      const PTO2ArgDir d = params.dirs()[i];
      const Tensor* t = &params.tensors()[i];
      if (d == PTO2ArgDir::OUTPUT_NEW) {
        if (new_out >= out.tensors_.size()) continue;
        t = &out.tensors_[new_out++];
        if (t->data) storages_[storage_of(*t)].created_by = raw;
      }
      const bool write = d != PTO2ArgDir::INPUT;
      if (!t->data) {
        untracked_write |= write;
        continue;
      }
      const bool read = d == PTO2ArgDir::INPUT || d == PTO2ArgDir::INOUT || d == PTO2ArgDir::NO_DEP;
      const bool tracked = !manual_scope && d != PTO2ArgDir::NO_DEP && !t->manual_dep;
      record(*t, i, read, write, tracked, d == PTO2ArgDir::NO_DEP);
    }
  }
  if (params.has_predicate() && params.predicate().operand.data) {
    Tensor e = params.predicate().operand;
    e.offset = params.predicate().element;
    for (uint32_t d = 0; d < e.ndims; ++d) e.shapes[d] = 1;
    record(e, kPredicateArg, true, false, !manual_scope && !e.manual_dep, false);
  }
  std::sort(scratch_.begin(), scratch_.end());
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  for (uint64_t p : scratch_)
    if (p - 1 != n) add_pred(static_cast<uint32_t>(p - 1));
  nodes_[n].pred_end = static_cast<uint32_t>(preds_.size());
  if (untracked_write) untracked_writers_.push_back(n);
}

void RaceChecker::on_sync(const Tensor& t, const int64_t* idx) {
  if (!t.data) return;
  const uint32_t n = add_node(0);
  auto it = storage_by_data_.find(t.data);
  if (it != storage_by_data_.end()) {
    scratch_.clear();
    shadow_.writers_of(shadow_key(it->second), Region::element(t, idx), scratch_, always_live);
    for (uint64_t w : scratch_) add_pred(static_cast<uint32_t>(w - 1), kSyncEdge);
  }
  for (uint32_t w : untracked_writers_) add_pred(w, kSyncEdge);
  untracked_writers_.clear();
  nodes_[n].pred_end = static_cast<uint32_t>(preds_.size());
  last_sync_ = n;
}

void RaceChecker::on_skipped(uint64_t raw) {
  std::lock_guard<std::mutex> lk(skipped_mu_);
  skipped_.push_back(raw);
}

void RaceChecker::on_kernel_access(uint64_t raw, uint32_t arg, const Region& r, bool write, bool atomic) {
  if (r.empty) return;
  std::lock_guard<std::mutex> lk(skipped_mu_);
  notes_.push_back(KernelNote{raw, arg, write, with_axes_by_stride(r), atomic});
}

// The accesses to check, in task order: an argument whose kernel reported what it touched
// contributes those boxes (deduplicated), any other argument its whole view.
std::vector<RaceChecker::Access> RaceChecker::effective_accesses() {
  std::sort(notes_.begin(), notes_.end(), [](const KernelNote& a, const KernelNote& b) {
    if (a.raw != b.raw) return a.raw < b.raw;
    if (a.arg != b.arg) return a.arg < b.arg;
    if (a.write != b.write) return a.write < b.write;
    return a.region.lo < b.region.lo;
  });
  std::vector<Access> out;
  out.reserve(accesses_.size());
  size_t k = 0;
  for (const Access& a : accesses_) {
    const uint64_t raw = nodes_[a.node].raw;
    while (k < notes_.size() && (notes_[k].raw < raw || (notes_[k].raw == raw && notes_[k].arg < a.arg))) ++k;
    if (a.arg == UINT32_MAX || k == notes_.size() || notes_[k].raw != raw || notes_[k].arg != a.arg) {
      out.push_back(a);
      continue;
    }
    const size_t first = out.size();
    for (size_t j = k; j < notes_.size() && notes_[j].raw == raw && notes_[j].arg == a.arg; ++j) {
      bool dup = false;
      for (size_t q = first; q < out.size() && !dup; ++q)
        dup = out[q].write == notes_[j].write && out[q].atomic == notes_[j].atomic &&
              out[q].region.same_as(notes_[j].region);
      if (!dup)
        out.push_back(Access{a.node, a.storage, a.arg, notes_[j].write, a.tracked, a.no_dep, true, notes_[j].region,
                             notes_[j].atomic});
    }
  }
  return out;
}

// ---------------------------------------------------------------- the check (after the run)

namespace {

// "Is a an ancestor of b?" for one b and decreasing a: a backward search over predecessors in
// decreasing node order, resumed where the previous query stopped. Every ancestor x >= a is
// reached through nodes > x, so once the queue holds only nodes < a, all ancestors >= a are
// marked.
class Reach {
 public:
  Reach(size_t n, const std::vector<uint32_t>& begin, const std::vector<uint32_t>& end, const std::vector<uint32_t>& preds)
      : mark_(n, 0), begin_(begin), end_(end), preds_(preds) {}

  void start(uint32_t b) {
    ++stamp_;
    queue_ = {};
    b_ = b;
    expand(b);
  }
  uint32_t target() const { return b_; }
  bool reaches(uint32_t a) {
    while (mark_[a] != stamp_ && !queue_.empty() && queue_.top() > a) {
      const uint32_t x = queue_.top();
      queue_.pop();
      expand(x);
    }
    return mark_[a] == stamp_;
  }

 private:
  void expand(uint32_t x) {
    for (uint32_t i = begin_[x]; i < end_[x]; ++i) {
      const uint32_t p = preds_[i];
      if (mark_[p] == stamp_) continue;
      mark_[p] = stamp_;
      queue_.push(p);
    }
  }
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
  uint32_t b_ = kNoNode;
  std::priority_queue<uint32_t> queue_;
  const std::vector<uint32_t>& begin_;
  const std::vector<uint32_t>& end_;
  const std::vector<uint32_t>& preds_;
};

struct Seen {
  uint32_t node;
  uint32_t access;
  bool tracked;
  bool no_dep;  // a whole pl.no_dep argument (the kernel reported nothing finer)
  bool atomic;  // an atomic add: no conflict with another one
};
// The accesses of one exact region of a storage not yet retired by a later covering write.
struct HistoryEntry {
  Region region;
  std::vector<Seen> writes, reads;
};
struct History {
  std::multimap<int64_t, HistoryEntry> by_lo;
  int64_t max_len = 0;
};

}  // namespace

std::string RaceChecker::site(uint32_t n) const {
  const Node& d = nodes_[n];
  if (!d.file || d.line <= 0) return "";
  return std::string(d.file) + ":" + std::to_string(d.line);
}

std::string RaceChecker::describe_node(uint32_t n, const std::vector<KernelInfo>& kernels) const {
  const Node& d = nodes_[n];
  std::ostringstream os;
  os << "task #" << number(d.raw);
  auto name = [&](int32_t k) -> std::string {
    if (k >= 0 && static_cast<size_t>(k) < kernels.size() && !kernels[static_cast<size_t>(k)].name.empty())
      return "'" + kernels[static_cast<size_t>(k)].name + "'";
    return "kernel id " + std::to_string(k);
  };
  if (d.kernel[0] >= 0 && d.kernel[1] >= 0) os << " (" << name(d.kernel[0]) << " + " << name(d.kernel[1]) << ")";
  else if (d.kernel[0] >= 0) os << " (" << name(d.kernel[0]) << ", AIC)";
  else if (d.kernel[1] >= 0) os << " (" << name(d.kernel[1]) << ", AIV)";
  return os.str();
}

std::string RaceChecker::describe_access(const Access& a) const {
  const StorageInfo& s = storages_[a.storage];
  std::ostringstream os;
  if (s.ext_arg >= 0) os << "external tensor " << s.ext_arg << " (orch_args.tensor(" << s.ext_arg << "))";
  else if (s.created_by) os << "the runtime-allocated output of task #" << number(s.created_by);
  else if (s.from_alloc_tensors && s.name) os << "tensor '" << s.name << "' (pl.create_tensor)";
  else if (s.from_alloc_tensors) os << "a tensor from alloc_tensors (pl.create_tensor)";
  else os << "the tensor at " << s.data;
  os << ", " << dtype_label(s.dtype);
  return os.str();
}

uint64_t RaceChecker::finish(const std::vector<KernelInfo>& kernels, std::string& report,
                             std::vector<std::pair<uint64_t, uint64_t>>* pairs_out) {
  report.clear();
  if (pairs_out) pairs_out->clear();
  if (counted_) race_checking_runs.fetch_sub(1, std::memory_order_relaxed);
  counted_ = false;
  {
    std::lock_guard<std::mutex> lk(skipped_mu_);  // (the workers are idle: the run is over)
    for (uint64_t raw : skipped_) {
      const uint32_t n = node_of_raw(raw);
      if (n != kNoNode) nodes_[n].skipped = true;
    }
    accesses_ = effective_accesses();
  }
  std::vector<uint32_t> begin(nodes_.size()), end(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    begin[i] = nodes_[i].pred_begin;
    end[i] = nodes_[i].pred_end;
  }
  Reach reach(nodes_.size(), begin, end, preds_);
  std::vector<History> hist(storages_.size());
  std::unordered_set<uint64_t> pairs;
  std::vector<std::pair<uint32_t, uint32_t>> found;  // (earlier access, later access), one per task pair

  for (uint32_t xi = 0; xi < accesses_.size(); ++xi) {
    const Access& x = accesses_[xi];
    if (nodes_[x.node].skipped) continue;  // its kernel never ran
    if (reach.target() != x.node) reach.start(x.node);
    History& h = hist[x.storage];
    // Ordered before x: the same task, both tracked (the tracker orders every such pair), or
    // reachable in the graph.
    auto ordered = [&](const Seen& s) { return s.node == x.node || (s.tracked && x.tracked) || reach.reaches(s.node); };
    auto check = [&](const std::vector<Seen>& v) {
      for (const Seen& s : v) {
        // Two pl.no_dep arguments of one tensor are taken at their word: the kernels touch
        // disjoint parts (the runtime sees only the whole argument, not the kernel's accesses).
        if ((s.no_dep && x.no_dep && !x.from_kernel) || (s.atomic && x.atomic) || ordered(s)) continue;
        const uint64_t key = (uint64_t{s.node} << 32) | x.node;
        if (pairs.insert(key).second) found.emplace_back(s.access, xi);
      }
    };
    HistoryEntry* same = nullptr;
    auto it = h.by_lo.lower_bound(x.region.lo - h.max_len);
    while (it != h.by_lo.end() && it->first < x.region.hi) {
      HistoryEntry& e = it->second;
      if (e.region.hi <= x.region.lo || !regions_share_an_element(e.region, x.region)) {
        ++it;
        continue;
      }
      check(e.writes);
      if (x.write) check(e.reads);
      const bool is_same = e.region.same_as(x.region);
      // (An atomic add retires nothing: a later atomic add does not conflict with it, but does
      // with the plain accesses before it.)
      if (x.write && !x.atomic && (is_same || region_contains(x.region, e.region))) {
        // Accesses ordered before a covering write are retired: anything later that conflicts
        // with them conflicts with the write too.
        auto retire = [&](std::vector<Seen>& v) { v.erase(std::remove_if(v.begin(), v.end(), ordered), v.end()); };
        retire(e.writes);
        retire(e.reads);
        if (!is_same && e.writes.empty() && e.reads.empty()) {
          it = h.by_lo.erase(it);
          continue;
        }
      }
      if (is_same && !same) same = &e;
      ++it;
    }
    if (!same) {
      auto ins = h.by_lo.emplace(x.region.lo, HistoryEntry{});
      same = &ins->second;
      same->region = x.region;
      h.max_len = std::max(h.max_len, x.region.hi - x.region.lo);
    }
    (x.write ? same->writes : same->reads).push_back(Seen{x.node, xi, x.tracked, x.no_dep && !x.from_kernel, x.atomic});
  }

  if (pairs_out) {
    for (const auto& f : found) pairs_out->emplace_back(nodes_[accesses_[f.first].node].raw, nodes_[accesses_[f.second].node].raw);
    for (const auto& m : missed_) pairs_out->emplace_back(nodes_[m.first].raw, nodes_[m.second].raw);
  }
  if (found.empty() && missed_.empty()) return 0;
  std::ostringstream os;
  if (!missed_.empty()) {
    // Both tasks were automatically tracked, so the pair check above took their order for
    // granted: the run did not have it.
    os << "race check: the runtime's automatic dependency tracking lost " << missed_.size()
       << " edge(s) to a still-running producer (an internal runtime error; results of this run cannot be trusted)";
    for (size_t i = 0; i < missed_.size() && i < kMaxDetailed; ++i) {
      const std::string sa = site(missed_[i].first), sb = site(missed_[i].second);
      os << "\n  " << describe_node(missed_[i].second, kernels) << (sb.empty() ? "" : " (submitted at " + sb + ")")
         << " was not ordered after " << describe_node(missed_[i].first, kernels)
         << (sa.empty() ? "" : " (submitted at " + sa + ")") << ", which accesses an overlapping region";
    }
    if (missed_.size() > kMaxDetailed) os << "\n  ... and " << missed_.size() - kMaxDetailed << " more";
    os << "\n  help: report this bug; meanwhile compile with analyze_auto_scopes_for_deps=True or pass deps=[...]";
    if (found.empty()) {
      report = os.str();
      return missed_.size();
    }
    os << "\n\n";
  }
  os << "race check: " << found.size() << " pair(s) of tasks access overlapping tensor regions (at least one writes) "
     << "and no dependency orders them; results of this run cannot be trusted";
  uint32_t shown = 0;
  for (const auto& f : found) {
    if (shown == kMaxDetailed) break;
    ++shown;
    const Access& a = accesses_[f.first];
    const Access& b = accesses_[f.second];
    const char* kind = a.write && b.write ? "write/write" : a.write ? "read after write" : "write after read";
    auto role = [&](const Access& acc) {
      std::ostringstream r;
      r << (acc.write ? "writes " : "reads ") << region_text(acc.region);
      if (acc.arg == kPredicateArg) r << " (its predicate)";
      else r << " (argument " << acc.arg << (acc.tracked ? "" : ", not tracked") << ")";
      const std::string s = site(acc.node);
      r << ", submitted at " << (s.empty() ? std::string("an unknown line") : s);
      return r.str();
    };
    os << "\n\nrace " << shown << " (" << kind << ") on " << describe_access(a) << ", overlap "
       << overlap_text(a.region, b.region) << ":\n"
       << "  " << describe_node(a.node, kernels) << " " << role(a) << "\n"
       << "  " << describe_node(b.node, kernels) << " " << role(b) << "\n";
    const std::string sa = site(a.node), sb = site(b.node);
    // (The runtime cannot tell a pl.submit from a plain call, which gives no TaskId and takes no
    // deps=: the help names both steps.)
    os << "  help: order them: pass the TaskId of task #" << number(nodes_[a.node].raw)
       << (sa.empty() ? std::string("") : " (submitted at " + sa + ")") << " in deps=[...] of task #"
       << number(nodes_[b.node].raw) << (sb.empty() ? std::string("") : " (submitted at " + sb + ")")
       << " — a plain kernel call gives no TaskId and takes no deps=: write it as `out, tid = pl.submit(self.k, "
          "...)`, and a TaskId that must outlive its scope goes into a pl.array.create(1, pl.TASK_ID) made before "
          "the scope — or leave the tensor to automatic tracking (no pl.manual_scope / pl.no_dep / manual_dep=True "
          "on it)";
  }
  if (found.size() > shown) os << "\n\n... and " << found.size() - shown << " more pair(s)";
  report = os.str();
  return found.size() + missed_.size();
}

}  // namespace pto2::detail
