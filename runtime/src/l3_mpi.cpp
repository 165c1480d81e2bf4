// l3_mpi.cpp — the MPI transport of the L3 runtime. See runtime/include/pto_l3_mpi.h.
//
// Rank 0: a progress thread per run hands ready tasks to idle ranks (one task per rank at a
// time), polls for completions (applying the byte ranges each task changed to the caller's
// arrays) and watches each task's time. Serving ranks: a loop that receives a task, rebuilds
// its tensors over cached copies of the buffers, runs it with L3Runtime::run_target, diffs
// the buffers against their state before the run and sends the changes back.
#include <dlfcn.h>
#include <mpi.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pto_l3_mpi.h"

namespace pto2 {

namespace {

constexpr int kTagTask = 301;
constexpr int kTagDone = 302;
constexpr int kTagStop = 303;
constexpr int kTagLoad = 304;

// ---- byte packing ----
struct Writer {
  std::vector<char> buf;
  template <class T>
  void put(const T& v) {
    const char* p = reinterpret_cast<const char*>(&v);
    buf.insert(buf.end(), p, p + sizeof(T));
  }
  void bytes(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    buf.insert(buf.end(), c, c + n);
  }
  void str(const std::string& s) {
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
};

struct Reader {
  const char* p;
  const char* end;
  template <class T>
  T get() {
    if (static_cast<size_t>(end - p) < sizeof(T)) throw std::runtime_error("L3 MPI: truncated message");
    T v;
    std::memcpy(&v, p, sizeof(T));
    p += sizeof(T);
    return v;
  }
  const char* bytes(size_t n) {
    if (static_cast<size_t>(end - p) < n) throw std::runtime_error("L3 MPI: truncated message");
    const char* q = p;
    p += n;
    return q;
  }
  std::string str() {
    uint32_t n = get<uint32_t>();
    return std::string(bytes(n), n);
  }
};

// Bytes from `t.data` that the view `t` can touch (non-negative strides).
size_t view_extent_bytes(const Tensor& t) {
  int64_t last = t.offset;
  for (uint32_t i = 0; i < t.ndims; ++i) {
    if (t.shapes[i] == 0) return 0;
    if (t.strides[i] < 0) throw std::runtime_error("L3 MPI: a tensor view with a negative stride cannot be shipped");
    last += static_cast<int64_t>(t.shapes[i] - 1) * t.strides[i];
  }
  return static_cast<size_t>(last + 1) * dtype_size(t.dtype);
}

// Receives one message of `tag` from `source` (probed first) into a byte vector.
std::vector<char> recv_bytes(int source, int tag, MPI_Status* st) {
  MPI_Status probe;
  MPI_Probe(source, tag, MPI_COMM_WORLD, &probe);
  int n = 0;
  MPI_Get_count(&probe, MPI_BYTE, &n);
  std::vector<char> buf(static_cast<size_t>(n));
  MPI_Recv(buf.data(), n, MPI_BYTE, probe.MPI_SOURCE, probe.MPI_TAG, MPI_COMM_WORLD, st);
  return buf;
}

void send_bytes(const std::vector<char>& buf, int dest, int tag) {
  if (buf.size() > static_cast<size_t>(INT32_MAX)) throw std::runtime_error("L3 MPI: message above 2 GiB");
  MPI_Send(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD);
}

// Sleeps a little longer each idle round (oversubscribed ranks must not spin on the cores).
// The cap bounds the latency it adds to a message (rank 0: 50 us, serving ranks: 200 us).
struct Backoff {
  // Short sleeps must be short: the default timer slack (50 us) would stretch each one.
  explicit Backoff(int cap) : cap_us(cap) { prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); }
  int idle = 0;
  int cap_us;
  void reset() { idle = 0; }
  void pause() {
    if (++idle < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(std::min(cap_us, 5 * (idle - 63))));
    }
  }
};

// PTO2_L3_MPI_FAULT="die:<rank>:<task>" / "drop:<rank>:<task>" (test hook; rank * = any); "fail:..." makes the task fail.
struct Fault {
  std::string kind;
  int rank = -1;
  uint64_t task = 0;
};
Fault parse_fault() {
  Fault f;
  const char* env = std::getenv("PTO2_L3_MPI_FAULT");
  if (!env) return f;
  std::string s(env);
  size_t a = s.find(':'), b = a == std::string::npos ? a : s.find(':', a + 1);
  if (b == std::string::npos) return f;
  f.kind = s.substr(0, a);
  const std::string who = s.substr(a + 1, b - a - 1);
  f.rank = who == "*" ? -2 : std::atoi(who.c_str());
  f.task = std::strtoull(s.substr(b + 1).c_str(), nullptr, 10);
  return f;
}

std::atomic<bool> g_rank_lost{false};

// What rank 0 prints if mpirun terminates it (another rank died): the tasks in flight.
char g_inflight_msg[2][2048];
std::atomic<int> g_inflight_cur{0};
void on_sigterm(int) {
  const char* m = g_inflight_msg[g_inflight_cur.load()];
  ssize_t rc = write(2, m, std::strlen(m));
  (void)rc;
  _exit(143);
}

// ---- rank 0 ----
class MpiTransport : public L3Transport {
 public:
  explicit MpiTransport(const L3MpiOptions& o) : options_(o), program_(o.program) {
    if (const char* t = std::getenv("PTO2_L3_MPI_TIMEOUT_S")) options_.task_timeout_s = std::atof(t);
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ranks_ = size;
    lost_.assign(static_cast<size_t>(size), false);
    std::snprintf(g_inflight_msg[0], sizeof g_inflight_msg[0], "pto2 L3 (MPI rank 0): terminated, no next-level task in flight\n");
    signal(SIGTERM, on_sigterm);
  }
  ~MpiTransport() override { end(); }

  uint32_t chips() const override { return ranks_ > 1 ? static_cast<uint32_t>(ranks_ - 1) : 0; }
  std::string where(uint32_t chip) const override { return "rank " + std::to_string(chip + 1); }

  void begin(L3Executor& ex) override {
    if (ranks_ < 2) {
      ex.fail("L3 MPI transport: the world has 1 rank, so there is no chip rank to run next-level tasks "
              "(launch with mpirun -np <chips + 1>)");
      return;
    }
    buffers_.clear();
    busy_.assign(static_cast<size_t>(ranks_), Busy{});
    thread_ = std::thread([this, &ex] { progress(ex); });
  }

  void end() override {
    if (thread_.joinable()) thread_.join();
  }

 private:
  struct BufState {
    uint64_t version = 1;
    size_t bytes = 0;
    std::vector<uint64_t> rank_version;  // 0 = the rank's copy is unknown / stale
  };
  struct Busy {
    bool on = false;
    uint64_t index = 0;
    int32_t target = -1;
    std::chrono::steady_clock::time_point since;
    double start_us = 0;
    std::vector<std::pair<uint64_t, uint64_t>> base;  // key -> version the task started from
  };

  void update_inflight(L3Executor& ex) {
    int next = 1 - g_inflight_cur.load();
    std::ostringstream os;
    os << "pto2 L3 (MPI rank 0): terminated by mpirun (a rank exited or was killed); in flight:";
    bool any = false;
    for (int r = 1; r < ranks_; ++r)
      if (busy_[r].on) {
        os << " next-level task " << busy_[r].index << " (target " << busy_[r].target << " "
           << ex.target_name(busy_[r].target) << ") on rank " << r << ";";
        any = true;
      }
    if (!any) os << " none;";
    os << " output arrays hold the writes of the tasks completed before\n";
    std::string s = os.str();
    std::snprintf(g_inflight_msg[next], sizeof g_inflight_msg[next], "%s", s.c_str());
    g_inflight_cur.store(next);
  }

  void send_task(L3Executor& ex, const L3Dispatch& d, int rank) {
    Writer w;
    w.put<uint32_t>(program_);
    w.put<uint64_t>(d.index);
    w.put<int32_t>(d.target_id);
    const ChipStorageTaskArgs& a = *d.args;
    w.put<uint32_t>(a.tensor_count());
    w.put<uint32_t>(a.scalar_count());
    for (uint64_t s : a.scalars) w.put<uint64_t>(s);
    Busy& b = busy_[rank];
    b = Busy{};
    // The extent of each buffer: the largest view of it in this task.
    std::unordered_map<uint64_t, size_t> extent;
    for (const ChipTensorArg& t : a.tensors) {
      uint64_t key = reinterpret_cast<uintptr_t>(t.tensor.data);
      extent[key] = std::max(extent[key], view_extent_bytes(t.tensor));
    }
    std::vector<uint64_t> sent;
    for (const ChipTensorArg& t : a.tensors) {
      const uint64_t key = reinterpret_cast<uintptr_t>(t.tensor.data);
      BufState& st = buffers_[key];
      if (st.rank_version.empty()) st.rank_version.assign(static_cast<size_t>(ranks_), 0);
      if (extent[key] > st.bytes) {  // a larger view: every copy elsewhere is too short
        st.bytes = extent[key];
        std::fill(st.rank_version.begin(), st.rank_version.end(), 0);
      }
      const bool first = std::find(sent.begin(), sent.end(), key) == sent.end();
      const bool ship = first && st.rank_version[rank] != st.version;
      w.put<uint64_t>(key);
      w.put<uint64_t>(st.bytes);
      w.put<uint8_t>(ship ? 1 : 0);
      w.bytes(&t.tensor, sizeof(Tensor));
      if (ship) {
        w.bytes(t.tensor.data, st.bytes);
        st.rank_version[rank] = st.version;
      }
      if (first) {
        sent.push_back(key);
        b.base.emplace_back(key, st.version);
      }
    }
    send_bytes(w.buf, rank, kTagTask);
    b.on = true;
    b.index = d.index;
    b.target = d.target_id;
    b.since = std::chrono::steady_clock::now();
    b.start_us = ex.now_us();
    update_inflight(ex);
  }

  void receive_done(L3Executor& ex, int rank) {
    MPI_Status st;
    std::vector<char> buf = recv_bytes(rank, kTagDone, &st);
    Busy& b = busy_[rank];
    if (lost_[rank] || !b.on) return;  // a late answer of a task already failed
    Reader r{buf.data(), buf.data() + buf.size()};
    L3Completion done;
    done.index = r.get<uint64_t>();
    done.chip = static_cast<uint32_t>(rank - 1);
    const bool ok = r.get<uint8_t>() != 0;
    done.error = r.str();
    done.result.tasks_executed = r.get<uint64_t>();
    done.result.wall_seconds = r.get<double>();
    const uint32_t nbuf = r.get<uint32_t>();
    for (uint32_t i = 0; i < nbuf; ++i) {
      const uint64_t key = r.get<uint64_t>();
      const uint32_t nranges = r.get<uint32_t>();
      char* base = reinterpret_cast<char*>(static_cast<uintptr_t>(key));
      BufState& bs = buffers_[key];
      for (uint32_t k = 0; k < nranges; ++k) {
        const uint64_t off = r.get<uint64_t>();
        const uint64_t len = r.get<uint64_t>();
        const char* src = r.bytes(len);
        if (ok && off + len <= bs.bytes) std::memcpy(base + off, src, len);
      }
      if (!ok || nranges == 0) continue;
      uint64_t started = 0;
      for (auto& kv : b.base)
        if (kv.first == key) started = kv.second;
      const bool rank_is_current = started == bs.version;  // nobody else changed it meanwhile
      ++bs.version;
      bs.rank_version[rank] = rank_is_current ? bs.version : 0;
    }
    if (ok && !done.error.empty()) done.error.clear();
    if (!ok && done.error.empty()) done.error = "failed (no message)";
    done.start_us = b.start_us;
    done.end_us = ex.now_us();
    b.on = false;
    update_inflight(ex);
    ex.complete(std::move(done));
  }

  void progress(L3Executor& ex) {
    Backoff backoff(50);
    const auto timeout = std::chrono::duration<double>(options_.task_timeout_s);
    while (!ex.run_over()) {
      bool worked = false;
      // Hand ready tasks to idle, healthy ranks.
      for (int r = 1; r < ranks_; ++r) {
        if (busy_[r].on || lost_[r]) continue;
        L3Dispatch d;
        if (!ex.next(d, 0)) break;
        send_task(ex, d, r);
        worked = true;
      }
      // Completions.
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, kTagDone, MPI_COMM_WORLD, &flag, &st);
      if (flag) {
        receive_done(ex, st.MPI_SOURCE);
        worked = true;
      }
      // Tasks that never answer.
      const auto now = std::chrono::steady_clock::now();
      for (int r = 1; r < ranks_; ++r) {
        Busy& b = busy_[r];
        if (!b.on || now - b.since < timeout) continue;
        std::ostringstream os;
        os << "no completion message within " << options_.task_timeout_s
           << " s (the rank died, hangs, or the message was lost); this task's writes are not in the output arrays";
        L3Completion done;
        done.index = b.index;
        done.chip = static_cast<uint32_t>(r - 1);
        done.error = os.str();
        b.on = false;
        lost_[r] = true;
        g_rank_lost.store(true);
        update_inflight(ex);
        ex.complete(std::move(done));
        worked = true;
      }
      bool any_busy = false;
      for (int r = 1; r < ranks_; ++r) any_busy = any_busy || busy_[r].on;
      bool any_healthy = false;
      for (int r = 1; r < ranks_; ++r) any_healthy = any_healthy || !lost_[r];
      if (!any_healthy && !any_busy) {
        ex.fail("L3 MPI transport: every chip rank was lost");
        break;
      }
      if (worked) {
        backoff.reset();
      } else if (!any_busy) {
        L3Dispatch d;  // nothing in flight: wait on the ready queue (briefly: run_over is polled)
        int idle = 1;
        while (idle < ranks_ && (busy_[idle].on || lost_[idle])) ++idle;
        if (idle < ranks_ && ex.next(d, 100)) send_task(ex, d, idle);
      } else {
        backoff.pause();
      }
    }
  }

  L3MpiOptions options_;
  uint32_t program_ = 0;
  int ranks_ = 1;
  std::vector<bool> lost_;
  std::vector<Busy> busy_;
  std::unordered_map<uint64_t, BufState> buffers_;
  std::thread thread_;
};

// ---- serving ranks ----
struct Served {
  uint32_t program = 0;
  uint64_t index = 0;
  int32_t target = -1;
  ChipStorageTaskArgs args;
  std::vector<uint64_t> keys;  // distinct buffers of the task
};

Served unpack_task(const std::vector<char>& buf, std::unordered_map<uint64_t, std::vector<char>>& cache) {
  Reader r{buf.data(), buf.data() + buf.size()};
  Served s;
  s.program = r.get<uint32_t>();
  s.index = r.get<uint64_t>();
  s.target = r.get<int32_t>();
  const uint32_t nt = r.get<uint32_t>();
  const uint32_t ns = r.get<uint32_t>();
  for (uint32_t i = 0; i < ns; ++i) s.args.add_scalar(r.get<uint64_t>());
  for (uint32_t i = 0; i < nt; ++i) {
    const uint64_t key = r.get<uint64_t>();
    const uint64_t bytes = r.get<uint64_t>();
    const bool has_data = r.get<uint8_t>() != 0;
    Tensor t = pto2::TensorFactory::blank();
    std::memcpy(static_cast<void*>(&t), r.bytes(sizeof(Tensor)), sizeof(Tensor));
    std::vector<char>& local = cache[key];
    if (has_data) {
      const char* src = r.bytes(bytes);
      local.assign(src, src + bytes);
    } else if (local.size() < bytes) {
      throw std::runtime_error("L3 MPI: a buffer this rank should hold was never sent");
    }
    t.data = local.data();
    t.storage = nullptr;
    s.args.add_tensor(t);
    if (std::find(s.keys.begin(), s.keys.end(), key) == s.keys.end()) s.keys.push_back(key);
  }
  return s;
}

// Appends the byte ranges where `now` differs from `before`.
void diff_ranges(Writer& w, uint64_t key, const std::vector<char>& before, const std::vector<char>& now) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  const size_t n = std::min(before.size(), now.size());
  constexpr size_t kChunk = 256;
  for (size_t c = 0; c < n; c += kChunk) {
    const size_t len = std::min(kChunk, n - c);
    if (std::memcmp(before.data() + c, now.data() + c, len) == 0) continue;
    for (size_t i = c; i < c + len; ++i) {
      if (before[i] == now[i]) continue;
      if (!ranges.empty() && ranges.back().first + ranges.back().second == i) ++ranges.back().second;
      else ranges.emplace_back(i, 1);
    }
  }
  w.put<uint64_t>(key);
  w.put<uint32_t>(static_cast<uint32_t>(ranges.size()));
  for (auto& rg : ranges) {
    w.put<uint64_t>(rg.first);
    w.put<uint64_t>(rg.second);
    w.bytes(now.data() + rg.first, rg.second);
  }
}

}  // namespace

void l3_mpi_init(int* rank, int* size) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

std::shared_ptr<L3Transport> make_l3_mpi_transport(const L3MpiOptions& options) {
  return std::make_shared<MpiTransport>(options);
}

namespace {
using RuntimeOf = std::function<L3Runtime*(uint32_t program)>;
using Loader = std::function<void(uint32_t program, const std::string& library)>;
std::string serve(const RuntimeOf& runtime_of, const Loader& load);
}  // namespace

std::string l3_mpi_serve(L3Runtime& l3) {
  return serve([&l3](uint32_t program) { return program == 0 ? &l3 : nullptr; }, nullptr);
}

namespace {
std::string serve(const RuntimeOf& runtime_of, const Loader& load) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const Fault fault = parse_fault();
  std::unordered_map<uint64_t, std::vector<char>> cache;
  Backoff backoff(200);
  for (;;) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (!flag) {
      backoff.pause();
      continue;
    }
    backoff.reset();
    if (st.MPI_TAG == kTagStop) {
      MPI_Recv(nullptr, 0, MPI_BYTE, 0, kTagStop, MPI_COMM_WORLD, &st);
      return "";
    }
    std::vector<char> buf = recv_bytes(0, st.MPI_TAG, &st);
    if (st.MPI_TAG == kTagLoad) {
      Reader r{buf.data(), buf.data() + buf.size()};
      const uint32_t program = r.get<uint32_t>();
      const std::string path = r.str();
      if (!load) return "rank 0 asked to load a program library, but this server has no loader";
      load(program, path);
      continue;
    }
    if (st.MPI_TAG != kTagTask) continue;
    Writer w;
    std::string error;
    uint64_t index = 0;
    double wall = 0;
    uint64_t executed = 0;
    std::vector<std::pair<uint64_t, std::vector<char>>> before;
    Served task;
    try {
      task = unpack_task(buf, cache);
      index = task.index;
      if ((fault.rank == rank || fault.rank == -2) && fault.task == index) {
        if (fault.kind == "die") raise(SIGKILL);
        if (fault.kind == "drop") continue;
        if (fault.kind == "fail") throw std::runtime_error("injected failure (PTO2_L3_MPI_FAULT)");
      }
      for (uint64_t k : task.keys) before.emplace_back(k, cache[k]);
      L3Runtime* l3 = runtime_of(task.program);
      if (l3 == nullptr) throw std::runtime_error("program " + std::to_string(task.program) + " is not loaded here");
      RunResult rr = l3->run_target(0, task.target, task.args);
      executed = rr.tasks_executed;
      wall = rr.wall_seconds;
      if (!rr.ok()) error = rr.message;
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (!error.empty()) error += " [on MPI rank " + std::to_string(rank) + "]";
    w.put<uint64_t>(index);
    w.put<uint8_t>(error.empty() ? 1 : 0);
    w.str(error);
    w.put<uint64_t>(executed);
    w.put<double>(wall);
    w.put<uint32_t>(static_cast<uint32_t>(before.size()));
    for (auto& kv : before) diff_ranges(w, kv.first, kv.second, cache[kv.first]);
    send_bytes(w.buf, 0, kTagDone);
  }
}
}  // namespace

void l3_mpi_load(uint32_t program, const std::string& library) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Writer w;
  w.put<uint32_t>(program);
  w.str(library);
  for (int r = 1; r < size; ++r) send_bytes(w.buf, r, kTagLoad);
}

void l3_mpi_close(bool abort) {
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (!inited || finalized) return;
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (abort || g_rank_lost.load()) MPI_Abort(MPI_COMM_WORLD, 1);
  if (rank == 0)
    for (int r = 1; r < size; ++r) MPI_Send(nullptr, 0, MPI_BYTE, r, kTagStop, MPI_COMM_WORLD);
  MPI_Finalize();
}

}  // namespace pto2

extern "C" {

int pto2_l3_mpi_init(int* rank, int* size, char* err, size_t errlen) {
  try {
    pto2::l3_mpi_init(rank, size);
    return 1;
  } catch (const std::exception& e) {
    std::snprintf(err, errlen, "%s", e.what());
    return 0;
  }
}

void* pto2_l3_mpi_transport(double task_timeout_s, uint32_t program) {
  pto2::L3MpiOptions o;
  o.task_timeout_s = task_timeout_s;
  o.program = program;
  return new std::shared_ptr<pto2::L3Transport>(pto2::make_l3_mpi_transport(o));
}

void pto2_l3_mpi_transport_free(void* transport) {
  delete static_cast<std::shared_ptr<pto2::L3Transport>*>(transport);
}

int pto2_l3_mpi_serve(char* err, size_t errlen) {
  try {
    std::map<uint32_t, std::unique_ptr<pto2::L3Runtime>> programs;
    auto runtime_of = [&programs](uint32_t program) -> pto2::L3Runtime* {
      auto it = programs.find(program);
      return it == programs.end() ? nullptr : it->second.get();
    };
    auto load = [&programs](uint32_t program, const std::string& path) {
      void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // kept loaded: the runtime calls into it
      if (lib == nullptr) throw std::runtime_error("cannot load " + path + ": " + dlerror());
      using RegisterFn = void (*)(pto2::L3Runtime*);
      auto reg = reinterpret_cast<RegisterFn>(dlsym(lib, "pypto_host_register"));
      if (reg == nullptr) throw std::runtime_error(path + " has no pypto_host_register");
      auto l3 = std::make_unique<pto2::L3Runtime>(pto2::L3Options{}.chips(1));
      reg(l3.get());
      programs[program] = std::move(l3);
    };
    std::string why = pto2::serve(runtime_of, load);
    if (!why.empty()) {
      std::snprintf(err, errlen, "%s", why.c_str());
      return 0;
    }
    return 1;
  } catch (const std::exception& e) {
    std::snprintf(err, errlen, "%s", e.what());
    return 0;
  }
}

int pto2_l3_mpi_load(uint32_t program, const char* library) {
  pto2::l3_mpi_load(program, library);
  return 1;
}

void pto2_l3_mpi_close(int abort) { pto2::l3_mpi_close(abort != 0); }

void pto2_l3_mpi_barrier() { MPI_Barrier(MPI_COMM_WORLD); }

}  // extern "C"
