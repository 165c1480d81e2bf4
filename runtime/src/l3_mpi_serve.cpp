// l3_mpi_serve.cpp — the MPI transport of the L3 runtime, the chip ranks' side (rank 0's side
// is l3_mpi.cpp; the messages are in l3_mpi_wire.h).
//
// A chip rank handles rank 0's messages in order: a task (apply the base bytes it carries,
// receive the pieces forwarded by their owners, run it with L3Runtime::run_target, report the
// byte ranges it changed: the bytes stay here), a forward order (send ranges of a buffer held
// here straight to another chip rank, without blocking: the copy is staged), a fetch (send
// ranges back to rank 0 at the end of a run), a drop (forget buffers), load and stop.
#include <dlfcn.h>
#include <signal.h>

#include <cstdlib>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include "pto2/l3_mpi_env.h"
#include "l3_mpi_wire.h"
#include "pto_l3_mpi.h"

namespace pto2 {

namespace {

using namespace l3mpi;

// PTO2_L3_MPI_FAULT="die:<rank>:<task>" / "drop:<rank>:<task>" / "fail:<rank>:<task>" (test
// hook; rank * = any).
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

using RuntimeOf = std::function<L3Runtime*(uint32_t program)>;
using Loader = std::function<void(uint32_t program, const std::string& library)>;
using Cache = std::unordered_map<uint64_t, std::vector<char>>;  // key -> this rank's copy

// The byte ranges where `now` differs from `before`, in whole elements of `grain` bytes (the
// smallest element of the task's views of the buffer: a changed element travels whole, and
// no range reaches into an element another task may be writing).
std::vector<Range> diff_ranges(const std::vector<char>& before, const std::vector<char>& now, size_t grain) {
  std::vector<Range> ranges;
  const size_t n = std::min(before.size(), now.size());
  constexpr size_t kChunk = 256;
  for (size_t c = 0; c < n; c += kChunk) {
    const size_t len = std::min(kChunk, n - c);
    if (std::memcmp(before.data() + c, now.data() + c, len) == 0) continue;
    for (size_t i = c; i < c + len; i += grain) {
      const size_t g = std::min(grain, n - i);
      if (std::memcmp(before.data() + i, now.data() + i, g) == 0) continue;
      if (!ranges.empty() && ranges.back().first + ranges.back().second == i) ranges.back().second += g;
      else ranges.emplace_back(i, g);
    }
  }
  return ranges;
}

// Copies the ranges of `buf` into `out` (what a forward or a fetch sends).
void gather_ranges(const std::vector<char>& buf, const std::vector<Range>& ranges, Writer& out) {
  for (const Range& r : ranges) {
    if (r.first + r.second > buf.size()) throw std::runtime_error("L3 MPI: asked for bytes this rank does not hold");
    out.bytes(buf.data() + r.first, r.second);
  }
}

class Server {
 public:
  Server(RuntimeOf runtime_of, Loader load) : runtime_of_(std::move(runtime_of)), load_(std::move(load)) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  }

  std::string run() {
    Backoff backoff(200);
    for (;;) {
      progress_sends();
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
      // Completions travel in batches while tasks keep coming (one message per batch); a
      // batch goes out as soon as no task is waiting, or at max_batch_.
      if (done_count_ != 0 && (!flag || st.MPI_TAG != kTagTask || done_count_ >= max_batch_)) flush_done();
      if (!flag) {
        stash_data();
        backoff.pause();
        continue;
      }
      backoff.reset();
      if (st.MPI_TAG == kTagStop) {
        MPI_Recv(nullptr, 0, MPI_BYTE, 0, kTagStop, MPI_COMM_WORLD, &st);
        finish_sends();
        return "";
      }
      const int tag = st.MPI_TAG;
      std::vector<char> buf = recv_bytes(0, tag, &st);
      Reader r{buf.data(), buf.data() + buf.size()};
      if (tag == kTagLoad) {
        const uint32_t program = r.get<uint32_t>();
        const std::string path = r.str();
        if (!load_) return "rank 0 asked to load a program library, but this server has no loader";
        load_(program, path);
      } else if (tag == kTagTask) {
        serve_task(r);
      } else if (tag == kTagFwd) {
        forward(r);
      } else if (tag == kTagFetch) {
        fetch(r);
      } else if (tag == kTagDrop) {
        Cache& cache = caches_[r.get<uint32_t>()];
        for (uint32_t n = r.get<uint32_t>(); n > 0; --n) cache.erase(r.get<uint64_t>());
      }
    }
  }

 private:
  // Chip-to-chip data that arrived before the task that needs it.
  void stash_data() {
    for (;;) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, kTagData, MPI_COMM_WORLD, &flag, &st);
      if (!flag) return;
      std::vector<char> buf = recv_bytes(st.MPI_SOURCE, kTagData, &st);
      Reader r{buf.data(), buf.data() + buf.size()};
      const uint64_t ticket = r.get<uint64_t>();
      stash_[{ticket, st.MPI_SOURCE}] = std::vector<char>(r.p, r.end);
    }
  }

  // Waits for the data of `ticket` from `owner` (forwarded by it on rank 0's order).
  std::vector<char> data_from(uint64_t ticket, int owner) {
    Backoff backoff(50);
    for (;;) {
      auto it = stash_.find({ticket, owner});
      if (it != stash_.end()) {
        std::vector<char> out = std::move(it->second);
        stash_.erase(it);
        return out;
      }
      progress_sends();
      stash_data();
      if (stash_.count({ticket, owner}) == 0) backoff.pause();
    }
  }

  void serve_task(Reader& r) {
    const uint32_t program = r.get<uint32_t>();
    const uint64_t ticket = r.get<uint64_t>();
    const uint64_t run = r.get<uint64_t>();
    const uint64_t index = r.get<uint64_t>();
    const uint64_t after = r.get<uint64_t>();
    const int32_t target = r.get<int32_t>();
    if (program != failed_program_ || run != failed_run_) {
      failed_.clear();
      failed_program_ = program;
      failed_run_ = run;
    }
    const uint32_t nt = r.get<uint32_t>();
    const uint32_t ns = r.get<uint32_t>();
    ChipStorageTaskArgs args;
    for (uint32_t i = 0; i < ns; ++i) args.add_scalar(r.get<uint64_t>());
    std::vector<uint64_t> tensor_keys;
    for (uint32_t i = 0; i < nt; ++i) {
      tensor_keys.push_back(r.get<uint64_t>());
      Tensor t = TensorFactory::blank();
      std::memcpy(static_cast<void*>(&t), r.bytes(sizeof(Tensor)), sizeof(Tensor));
      args.add_tensor(t);
    }
    Cache& cache = caches_[program];
    std::string error;
    // Base bytes from rank 0, then the pieces from their owners in completion order.
    struct PieceIn {
      std::vector<char>* buf;
      int owner;
      std::vector<Range> ranges;
    };
    std::vector<PieceIn> pieces;
    std::vector<uint64_t> keys;
    try {
      for (uint32_t n = r.get<uint32_t>(); n > 0; --n) {
        const uint64_t key = r.get<uint64_t>();
        const uint64_t bytes = r.get<uint64_t>();
        const uint64_t from = r.get<uint64_t>();
        if (from > bytes) throw std::runtime_error("L3 MPI: malformed task message");
        std::vector<char>& local = cache[key];
        if (local.size() < bytes) local.resize(bytes);
        const char* src = r.bytes(bytes - from);
        std::memcpy(local.data() + from, src, bytes - from);
        keys.push_back(key);
        for (uint32_t k = r.get<uint32_t>(); k > 0; --k) {
          const int owner = r.get<int32_t>();
          pieces.push_back(PieceIn{&local, owner, r.ranges()});
        }
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::map<int, std::pair<std::vector<char>, size_t>> incoming;  // owner -> (bytes, cursor)
    for (const PieceIn& p : pieces)
      if (!incoming.count(p.owner)) {
        flush_done();
        incoming[p.owner] = {data_from(ticket, p.owner), 0};
      }
    for (const PieceIn& p : pieces) {
      auto& in = incoming[p.owner];
      for (const Range& rg : p.ranges) {
        if (rg.first + rg.second > p.buf->size() || in.second + rg.second > in.first.size()) {
          error = "L3 MPI: forwarded bytes do not fit the buffer";
          break;
        }
        std::memcpy(p.buf->data() + rg.first, in.first.data() + in.second, rg.second);
        in.second += rg.second;
      }
    }
    for (uint32_t i = 0; i < nt; ++i) {
      args.tensors[i].tensor.data = cache[tensor_keys[i]].data();
      args.tensors[i].tensor.storage = nullptr;
    }
    if ((fault_.rank == rank_ || fault_.rank == -2) && fault_.task == index) {
      if (fault_.kind == "die") raise(SIGKILL);
      if (fault_.kind == "drop") return;
      if (fault_.kind == "fail") error = "injected failure (PTO2_L3_MPI_FAULT)";
    }
    if (error.empty() && after != 0 && failed_.count(after) != 0)
      error = "not run: next-level task " + std::to_string(after) + ", queued before it on this rank, failed";
    std::vector<std::vector<char>> before;
    std::vector<size_t> grains;
    uint64_t executed = 0;
    double wall = 0;
    if (error.empty()) {
      for (uint64_t k : keys) before.push_back(cache[k]);
      for (uint64_t k : keys) {
        size_t g = 0;
        for (uint32_t i = 0; i < nt; ++i)
          if (tensor_keys[i] == k) {
            const size_t e = dtype_size(args.tensors[i].tensor.dtype);
            g = g == 0 ? e : std::min(g, e);
          }
        grains.push_back(g == 0 ? 1 : g);
      }
      try {
        L3Runtime* l3 = runtime_of_(program);
        if (l3 == nullptr) throw std::runtime_error("program " + std::to_string(program) + " is not loaded here");
        RunResult rr = l3->run_target(0, target, args);
        executed = rr.tasks_executed;
        wall = rr.wall_seconds;
        if (!rr.ok()) error = rr.message;
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    if (!error.empty()) {
      failed_.insert(index);
      error += " [on MPI rank " + std::to_string(rank_) + "]";
    }
    Writer& w = done_;
    ++done_count_;
    w.put<uint64_t>(index);
    w.put<uint8_t>(error.empty() ? 1 : 0);
    w.str(error);
    w.put<uint64_t>(executed);
    w.put<double>(wall);
    w.put<uint32_t>(static_cast<uint32_t>(before.size()));
    for (size_t i = 0; i < before.size(); ++i) {
      std::vector<char>& now = cache[keys[i]];
      w.put<uint64_t>(keys[i]);
      if (error.empty()) {
        w.ranges(diff_ranges(before[i], now, grains[i]));
      } else {
        now = std::move(before[i]);  // a failed task's writes are dropped
        w.ranges({});
      }
    }
  }

  void flush_done() {
    if (done_count_ == 0) return;
    Writer w;
    w.put<uint32_t>(done_count_);
    w.bytes(done_.buf.data(), done_.buf.size());
    send_bytes(w.buf, 0, kTagDone);
    done_.buf.clear();
    done_count_ = 0;
  }


  void forward(Reader& r) {
    const uint32_t program = r.get<uint32_t>();
    const int dest = r.get<int32_t>();
    const uint64_t ticket = r.get<uint64_t>();
    Cache& cache = caches_[program];
    auto out = std::make_unique<Writer>();
    out->put<uint64_t>(ticket);
    for (uint32_t n = r.get<uint32_t>(); n > 0; --n) {
      const uint64_t key = r.get<uint64_t>();
      gather_ranges(cache[key], r.ranges(), *out);
    }
    if (out->buf.size() > static_cast<size_t>(INT32_MAX)) throw std::runtime_error("L3 MPI: message above 2 GiB");
    sends_.emplace_back();
    sends_.back().second = std::move(out);
    MPI_Isend(sends_.back().second->buf.data(), static_cast<int>(sends_.back().second->buf.size()), MPI_BYTE, dest,
              kTagData, MPI_COMM_WORLD, &sends_.back().first);
  }

  void fetch(Reader& r) {
    Cache& cache = caches_[r.get<uint32_t>()];
    Writer out;
    for (uint32_t n = r.get<uint32_t>(); n > 0; --n) {
      const uint64_t key = r.get<uint64_t>();
      gather_ranges(cache[key], r.ranges(), out);
    }
    send_bytes(out.buf, 0, kTagFetched);
  }

  void progress_sends() {
    for (auto it = sends_.begin(); it != sends_.end();) {
      int done = 0;
      MPI_Test(&it->first, &done, MPI_STATUS_IGNORE);
      it = done ? sends_.erase(it) : std::next(it);
    }
  }

  void finish_sends() {
    for (auto& s : sends_) MPI_Wait(&s.first, MPI_STATUS_IGNORE);
    sends_.clear();
  }

  RuntimeOf runtime_of_;
  Loader load_;
  int rank_ = 0;
  Fault fault_ = parse_fault();
  Writer done_;              // completions not sent yet
  uint32_t done_count_ = 0;
  // Completions per batch at most (PTO2_L3_MPI_BATCH, default 8: half of rank 0's default
  // queue depth, so rank 0 refills a rank's queue before it runs dry).
  uint32_t max_batch_ = static_cast<uint32_t>(mpi_batch());
  std::map<uint32_t, Cache> caches_;                             // per program
  std::set<uint64_t> failed_;  // tasks of run (failed_program_, failed_run_) that failed here
  uint32_t failed_program_ = 0;
  uint64_t failed_run_ = 0;
  std::map<std::pair<uint64_t, int>, std::vector<char>> stash_;  // (ticket, owner) -> bytes
  std::list<std::pair<MPI_Request, std::unique_ptr<Writer>>> sends_;  // forwards in flight
};

}  // namespace

std::string l3_mpi_serve(L3Runtime& l3) {
  return Server([&l3](uint32_t program) { return program == 0 ? &l3 : nullptr; }, nullptr).run();
}

}  // namespace pto2

extern "C" int pto2_l3_mpi_serve(char* err, size_t errlen) {
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
    std::string why = pto2::Server(runtime_of, load).run();
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
