// l3_mpi.cpp — the MPI transport of the L3 runtime, rank 0's side. See
// runtime/include/pto_l3_mpi.h and l3_mpi_wire.h (the messages and the data model);
// l3_mpi_serve.cpp is the chip ranks' side.
//
// A progress thread per run hands ready tasks to ranks (up to `depth` queued per rank: a rank
// runs its tasks in arrival order, so the next one is already there when one finishes), polls
// for completions and watches each rank's oldest task's time. Placement: an idle rank first,
// and among those the one that already holds most of the task's data (so a chain of tasks
// stays where its tensors are). At the end of the run (end()) the pieces of the caller's
// arrays are fetched from the ranks that hold them.
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <list>
#include <map>
#include <sstream>
#include <unordered_map>

#include "pto2/l3_mpi_env.h"
#include "l3_mpi_wire.h"
#include "pto_l3_mpi.h"

namespace pto2 {

namespace {

using namespace l3mpi;

std::atomic<bool> g_rank_lost{false};
std::atomic<uint64_t> g_ticket{1};  // identifies one dispatch across runs and programs

// What rank 0 prints if mpirun terminates it (another rank died): the tasks in flight.
char g_inflight_msg[2][2048];
std::atomic<int> g_inflight_cur{0};
void on_sigterm(int) {
  const char* m = g_inflight_msg[g_inflight_cur.load()];
  ssize_t rc = write(2, m, std::strlen(m));
  (void)rc;
  _exit(143);
}

/// Rank 0's view of one buffer (keyed by its data pointer).
struct BufState {
  size_t bytes = 0;                 // extent: the largest view of it seen
  bool used = false;                // used by a task of the current run
  std::vector<char> shadow;         // the content the ranks' base copies equal (across runs)
  std::vector<size_t> base;         // per rank: bytes [0, base) of the base it holds
  std::vector<size_t> synced;       // per rank: pieces [0, synced) it has applied
  struct Piece {
    int owner;
    std::vector<Range> ranges;
  };
  std::vector<Piece> pieces;        // changes not yet at rank 0, in completion order
};

// For pieces [from, n): the part of each that no later piece overwrote (what must still
// travel from its owner: every byte comes once, from the rank that wrote it last).
std::vector<std::vector<Range>> still_current(const std::vector<BufState::Piece>& pieces, size_t from) {
  std::vector<std::vector<Range>> out(pieces.size());
  std::map<uint64_t, uint64_t> covered;  // start -> end, disjoint, by later pieces
  for (size_t i = pieces.size(); i-- > from;) {
    for (const Range& r : pieces[i].ranges) {
      uint64_t at = r.first;
      const uint64_t end = r.first + r.second;
      auto it = covered.upper_bound(at);
      if (it != covered.begin() && std::prev(it)->second > at) --it;
      for (; at < end; ++it) {
        if (it == covered.end() || it->first >= end) {
          out[i].emplace_back(at, end - at);
          break;
        }
        if (it->first > at) out[i].emplace_back(at, it->first - at);
        at = std::max(at, it->second);
      }
    }
    for (const Range& r : pieces[i].ranges) {  // merge into the covered set
      uint64_t lo = r.first, hi = r.first + r.second;
      auto it = covered.upper_bound(lo);
      if (it != covered.begin() && std::prev(it)->second >= lo) --it;
      while (it != covered.end() && it->first <= hi) {
        lo = std::min(lo, it->first);
        hi = std::max(hi, it->second);
        it = covered.erase(it);
      }
      covered[lo] = hi;
    }
  }
  return out;
}

class MpiTransport : public L3Transport {
 public:
  explicit MpiTransport(const L3MpiOptions& o) : options_(o), program_(o.program) {
    // 0 or a negative timeout failed every task on a healthy rank; nan never timed out.
    if (!std::isfinite(o.task_timeout_s) || !(o.task_timeout_s > 0))
      throw std::invalid_argument("L3MpiOptions: task_timeout_s " + std::to_string(o.task_timeout_s) +
                                  " is not a timeout: it must be a positive number of seconds (default 120)");
    options_.task_timeout_s = mpi_timeout_s(o.task_timeout_s);
    depth_ = mpi_depth();
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ranks_ = size;
    rank_.assign(static_cast<size_t>(size), RankState{});
    std::snprintf(g_inflight_msg[0], sizeof g_inflight_msg[0], "pto2 L3 (MPI rank 0): terminated, no next-level task in flight\n");
    signal(SIGTERM, on_sigterm);
  }
  ~MpiTransport() override {
    if (thread_.joinable()) thread_.join();
  }

  uint32_t chips() const override { return ranks_ > 1 ? static_cast<uint32_t>(ranks_ - 1) : 0; }
  std::string where(uint32_t chip) const override { return "rank " + std::to_string(chip + 1); }

  void begin(L3Executor& ex) override {
    ex_ = &ex;
    if (ranks_ < 2) {
      ex.fail("L3 MPI transport: the world has 1 rank, so there is no chip rank to run next-level tasks "
              "(launch with mpirun -np <chips + 1>)");
      return;
    }
    for (RankState& r : rank_) r.queue.clear();
    ++run_;
    thread_ = std::thread([this, &ex] { progress(ex); });
  }

  void end() override {
    if (thread_.joinable()) thread_.join();
    if (ex_ != nullptr && ranks_ >= 2) {
      // Messages to ranks still healthy arrive (they handle rank 0's messages in order);
      // a lost rank's may never be received: give up on them at the deadline.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.task_timeout_s);
      Backoff backoff(50);
      while (!progress_sends() && std::chrono::steady_clock::now() < deadline) backoff.pause();
      finish_run(*ex_);
    }
    ex_ = nullptr;
  }

  uint64_t last_bytes[3] = {0, 0, 0};  // to chips, from chips, between chips (the last run)

 private:
  struct InFlight {
    uint64_t index = 0;
    int32_t target = -1;
  };
  struct RankState {
    bool lost = false;
    std::deque<InFlight> queue;                       // dispatched, not completed, in order
    std::chrono::steady_clock::time_point head_since;  // when the oldest one could start
    double head_start_us = 0;
  };

  BufState& state(uint64_t key) {
    BufState& b = buffers_[key];
    if (b.base.empty()) {
      b.base.assign(static_cast<size_t>(ranks_), 0);
      b.synced.assign(static_cast<size_t>(ranks_), 0);
    }
    return b;
  }

  // First use in a run: the ranks' base copies stay valid only if the caller's array still
  // holds what they hold (the caller may have changed it, or the address is a new array).
  void verify(BufState& b, const char* mem, size_t extent) {
    const size_t n = std::min(b.shadow.size(), extent);
    if (n != 0 && std::memcmp(mem, b.shadow.data(), n) != 0) {
      b.shadow.clear();
      b.bytes = 0;
      std::fill(b.base.begin(), b.base.end(), 0);
      return;
    }
    if (b.shadow.size() > extent) b.shadow.resize(extent);
    b.bytes = b.shadow.size();
    for (size_t& held : b.base) held = std::min(held, b.bytes);
  }

  // The distinct buffers of a task with their extents, in first-use order.
  static std::vector<std::pair<uint64_t, size_t>> buffers_of(const ChipStorageTaskArgs& a) {
    std::vector<std::pair<uint64_t, size_t>> out;
    for (const ChipTensorArg& t : a.tensors) {
      const uint64_t key = reinterpret_cast<uintptr_t>(t.tensor.data);
      const size_t ext = view_extent_bytes(t.tensor);
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& kv) { return kv.first == key; });
      if (it == out.end()) out.emplace_back(key, ext);
      else it->second = std::max(it->second, ext);
    }
    return out;
  }

  // Bytes rank `r` would have to receive to run a task on these buffers.
  uint64_t missing_bytes(int r, const std::vector<std::pair<uint64_t, size_t>>& bufs) {
    uint64_t n = 0;
    for (const auto& kv : bufs) {
      auto it = buffers_.find(kv.first);
      if (it == buffers_.end() || !it->second.used) {
        n += kv.second;  // not verified this run: assume everything moves
        continue;
      }
      const BufState& b = it->second;
      n += std::max(kv.second, b.bytes) - std::min(b.base[r], std::max(kv.second, b.bytes));
      for (size_t i = b.synced[r]; i < b.pieces.size(); ++i)
        if (b.pieces[i].owner != r) n += range_bytes(b.pieces[i].ranges);
    }
    return n;
  }

  // An idle rank first (parallelism), then a rank with room in its queue; among equals the
  // one holding most of the data. -1 when every rank is full or lost.
  int pick_rank(const ChipStorageTaskArgs& a) {
    const auto bufs = buffers_of(a);
    int best = -1;
    std::pair<size_t, uint64_t> best_cost{0, 0};
    for (int r = 1; r < ranks_; ++r) {
      const RankState& rs = rank_[r];
      if (rs.lost || rs.queue.size() >= static_cast<size_t>(depth_)) continue;
      std::pair<size_t, uint64_t> cost{rs.queue.size(), bufs.empty() ? 0 : missing_bytes(r, bufs)};
      if (best < 0 || cost < best_cost) {
        best = r;
        best_cost = cost;
      }
    }
    return best;
  }

  bool has_room() const {
    for (int r = 1; r < ranks_; ++r)
      if (!rank_[r].lost && rank_[r].queue.size() < static_cast<size_t>(depth_)) return true;
    return false;
  }

  // The message rank 0 prints if mpirun kills it: every task dispatched and not reported
  // complete (a rank reports completions in batches, so some may have run already). Rebuilt
  // once per progress round that changed something (update_inflight marks it).
  void update_inflight(L3Executor&) { inflight_dirty_ = true; }

  void publish_inflight(L3Executor& ex) {
    if (!inflight_dirty_) return;
    inflight_dirty_ = false;
    const int next = 1 - g_inflight_cur.load();
    char* out = g_inflight_msg[next];
    const size_t cap = sizeof g_inflight_msg[next] - 80;  // room for the tail
    size_t n = static_cast<size_t>(std::snprintf(out, cap, "pto2 L3 (MPI rank 0): terminated by mpirun (a rank exited "
                                                           "or was killed); in flight:"));
    bool any = false;
    for (int r = 1; r < ranks_; ++r)
      for (const InFlight& f : rank_[r].queue) {
        if (n >= cap) break;
        any = true;
        n += static_cast<size_t>(std::snprintf(out + n, cap - n, " next-level task %llu (target %d %s) on rank %d;",
                                               static_cast<unsigned long long>(f.index), f.target,
                                               name_of(ex, f.target), r));
      }
    n = std::min(n, cap);
    std::snprintf(out + n, sizeof g_inflight_msg[next] - n, "%s output arrays hold the writes of the tasks completed "
                  "before\n", any ? "" : " none;");
    g_inflight_cur.store(next);
  }

  const char* name_of(L3Executor& ex, int32_t target) {
    auto it = names_.find(target);
    if (it == names_.end()) it = names_.emplace(target, ex.target_name(target)).first;
    return it->second.c_str();
  }

  void dispatch(L3Executor& ex, const L3Dispatch& d, int rank) {
    ex.placed(d.index, static_cast<uint32_t>(rank - 1));
    send_task(ex, d, rank);
  }

  void send_task(L3Executor& ex, const L3Dispatch& d, int rank) {
    const uint64_t ticket = g_ticket.fetch_add(1);
    const ChipStorageTaskArgs& a = *d.args;
    Writer w;
    w.put<uint32_t>(program_);
    w.put<uint64_t>(ticket);
    w.put<uint64_t>(run_);
    w.put<uint64_t>(d.index);
    w.put<uint64_t>(d.after);
    w.put<int32_t>(d.target_id);
    w.put<uint32_t>(a.tensor_count());
    w.put<uint32_t>(a.scalar_count());
    for (uint64_t s : a.scalars) w.put<uint64_t>(s);
    for (const ChipTensorArg& t : a.tensors) {
      w.put<uint64_t>(reinterpret_cast<uintptr_t>(t.tensor.data));
      w.bytes(&t.tensor, sizeof(Tensor));
    }
    const auto bufs = buffers_of(a);
    w.put<uint32_t>(static_cast<uint32_t>(bufs.size()));
    std::map<int, Writer> fwd;          // owner -> forward order
    std::map<int, uint32_t> fwd_count;  // owner -> pieces in it
    uint64_t to = 0, between = 0;
    int lost_owner = -1;
    for (const auto& kv : bufs) {
      const uint64_t key = kv.first;
      const char* mem = reinterpret_cast<const char*>(static_cast<uintptr_t>(key));
      BufState& b = state(key);
      if (!b.used) {
        verify(b, mem, kv.second);
        b.used = true;
      }
      if (kv.second > b.bytes) {  // a larger view: the tail was never written by a task
        b.shadow.insert(b.shadow.end(), mem + b.bytes, mem + kv.second);
        b.bytes = kv.second;
      }
      const size_t from = std::min(b.base[rank], b.bytes);
      w.put<uint64_t>(key);
      w.put<uint64_t>(b.bytes);
      w.put<uint64_t>(from);
      w.bytes(mem + from, b.bytes - from);
      to += b.bytes - from;
      b.base[rank] = b.bytes;
      const auto fresh = still_current(b.pieces, b.synced[rank]);
      std::vector<size_t> need;
      for (size_t i = b.synced[rank]; i < b.pieces.size(); ++i)
        if (b.pieces[i].owner != rank && !fresh[i].empty()) need.push_back(i);
      w.put<uint32_t>(static_cast<uint32_t>(need.size()));
      for (size_t i : need) {
        const int owner = b.pieces[i].owner;
        if (rank_[owner].lost) lost_owner = owner;
        w.put<int32_t>(owner);
        w.ranges(fresh[i]);
        Writer& f = fwd[owner];
        f.put<uint64_t>(key);
        f.ranges(fresh[i]);
        ++fwd_count[owner];
        between += range_bytes(fresh[i]);
      }
      b.synced[rank] = b.pieces.size();
    }
    if (lost_owner >= 0) {  // its input is gone with that rank: fail it without sending
      L3Completion done;
      done.index = d.index;
      done.chip = static_cast<uint32_t>(rank - 1);
      done.error = "it needs bytes last written on rank " + std::to_string(lost_owner) + ", which was lost";
      ex.complete(std::move(done));
      return;
    }
    // The forward orders go out before the task: each rank handles rank 0's messages in
    // order, so no rank waits on an order queued behind the task that waits for it.
    for (auto& kv : fwd) {
      Writer head;
      head.put<uint32_t>(program_);
      head.put<int32_t>(rank);
      head.put<uint64_t>(ticket);
      head.put<uint32_t>(fwd_count[kv.first]);
      head.bytes(kv.second.buf.data(), kv.second.buf.size());
      post(std::move(head.buf), kv.first, kTagFwd);
    }
    RankState& rs = rank_[rank];
    if (rs.queue.empty()) {
      rs.head_since = std::chrono::steady_clock::now();
      rs.head_start_us = ex.now_us();
    }
    rs.queue.push_back(InFlight{d.index, d.target_id});
    // The message mpirun's SIGTERM prints names this task before the rank can receive it:
    // a rank that dies on it gets the job terminated at once.
    update_inflight(ex);
    publish_inflight(ex);
    post(std::move(w.buf), rank, kTagTask);
    ex.count_bytes(to, 0, between);
    bytes_[0] += to;
    bytes_[2] += between;
  }

  void receive_done(L3Executor& ex, int rank) {
    MPI_Status st;
    std::vector<char> buf = recv_bytes(rank, kTagDone, &st);
    Reader r{buf.data(), buf.data() + buf.size()};
    for (uint32_t n = r.get<uint32_t>(); n > 0; --n) receive_one(ex, rank, r);
    update_inflight(ex);
  }

  // One completion of a batch.
  void receive_one(L3Executor& ex, int rank, Reader& r) {
    RankState& rs = rank_[rank];
    L3Completion done;
    done.index = r.get<uint64_t>();
    done.chip = static_cast<uint32_t>(rank - 1);
    const bool ok = r.get<uint8_t>() != 0;
    done.error = r.str();
    done.result.tasks_executed = r.get<uint64_t>();
    done.result.wall_seconds = r.get<double>();
    const uint32_t nbuf = r.get<uint32_t>();
    std::vector<std::pair<uint64_t, std::vector<Range>>> changed;
    for (uint32_t i = 0; i < nbuf; ++i) {
      const uint64_t key = r.get<uint64_t>();
      std::vector<Range> ranges = r.ranges();
      if (ok && !ranges.empty()) changed.emplace_back(key, std::move(ranges));
    }
    if (rs.lost) return;  // a late answer of a task already failed
    auto it = std::find_if(rs.queue.begin(), rs.queue.end(), [&](const InFlight& f) { return f.index == done.index; });
    if (it == rs.queue.end()) return;  // not in flight (any more)
    for (auto& kv : changed) state(kv.first).pieces.push_back(BufState::Piece{rank, std::move(kv.second)});
    if (ok && !done.error.empty()) done.error.clear();
    if (!ok && done.error.empty()) done.error = "failed (no message)";
    done.end_us = ex.now_us();
    done.start_us = rs.head_start_us;
    if (it == rs.queue.begin()) {
      rs.queue.pop_front();
      rs.head_since = std::chrono::steady_clock::now();  // the next one starts now
      rs.head_start_us = done.end_us;
    } else {
      rs.queue.erase(it);  // the head never answered: its timer keeps running
    }
    ex.complete(std::move(done));
  }

  // Sends without blocking (a chip rank may be sending to rank 0 at the same time); the
  // buffer lives until the send completed.
  void post(std::vector<char>&& buf, int dest, int tag) {
    if (buf.size() > static_cast<size_t>(INT32_MAX)) throw std::runtime_error("L3 MPI: message above 2 GiB");
    sends_.emplace_back();
    Pending& p = sends_.back();
    p.dest = dest;
    p.buf = std::move(buf);
    MPI_Isend(p.buf.data(), static_cast<int>(p.buf.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD, &p.request);
  }

  // Completes what it can; true when nothing is pending but sends to lost ranks.
  bool progress_sends() {
    bool settled = true;
    for (auto it = sends_.begin(); it != sends_.end();) {
      int done = 0;
      MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
      if (done) {
        it = sends_.erase(it);
        continue;
      }
      settled = settled && rank_[it->dest].lost;
      ++it;
    }
    return settled;
  }

  void progress(L3Executor& ex) {
    Backoff backoff(50);
    const auto timeout = std::chrono::duration<double>(options_.task_timeout_s);
    while (!ex.run_over()) {
      bool worked = false;
      progress_sends();
      publish_inflight(ex);
      // Tasks queued behind one on a rank follow it there (a chain needs no round trip per
      // task); then ready tasks go to ranks with room.
      for (int r = 1; r < ranks_; ++r) {
        L3Dispatch d;
        while (!rank_[r].lost && rank_[r].queue.size() < static_cast<size_t>(depth_) &&
               ex.next_early(static_cast<uint32_t>(r - 1), d)) {
          dispatch(ex, d, r);
          worked = true;
        }
      }
      while (has_room()) {
        L3Dispatch d;
        if (!ex.next(d, 0)) break;
        dispatch(ex, d, pick_rank(*d.args));
        worked = true;
      }
      // Completions.
      for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, kTagDone, MPI_COMM_WORLD, &flag, &st);
        if (!flag) break;
        receive_done(ex, st.MPI_SOURCE);
        worked = true;
      }
      // Tasks that never answer: the oldest of each rank, timed from when it could start.
      const auto now = std::chrono::steady_clock::now();
      bool any_busy = false, any_healthy = false;
      for (int r = 1; r < ranks_; ++r) {
        RankState& rs = rank_[r];
        if (!rs.queue.empty() && now - rs.head_since >= timeout) {
          std::ostringstream os;
          os << "no completion message within " << options_.task_timeout_s
             << " s (the rank died, hangs, or the message was lost); this task's writes are not in the output arrays";
          rs.lost = true;
          g_rank_lost.store(true);
          while (!rs.queue.empty()) {  // the rank is gone: its queued tasks fail with it
            L3Completion done;
            done.index = rs.queue.front().index;
            done.chip = static_cast<uint32_t>(r - 1);
            done.error = os.str();
            rs.queue.pop_front();
            ex.complete(std::move(done));
          }
          update_inflight(ex);
          worked = true;
        }
        any_busy = any_busy || !rs.queue.empty();
        any_healthy = any_healthy || !rs.lost;
      }
      if (!any_healthy && !any_busy) {
        ex.fail("L3 MPI transport: every chip rank was lost");
        break;
      }
      if (worked) {
        backoff.reset();
      } else if (!any_busy) {
        L3Dispatch d;  // nothing in flight: wait on the ready queue (briefly: run_over is polled)
        if (has_room() && ex.next(d, 100)) dispatch(ex, d, pick_rank(*d.args));
      } else {
        backoff.pause();
      }
    }
  }

  // Whether buffer `key` lies in one of the caller's arrays (the run's tensor arguments).
  static bool in_run_args(const L3Executor& ex, uint64_t key) {
    for (const ChipTensorArg& t : ex.run_args().tensors) {
      const uint64_t lo = reinterpret_cast<uintptr_t>(t.tensor.data);
      if (key >= lo && key < lo + view_extent_bytes(t.tensor)) return true;
    }
    return false;
  }

  // End of a run: the pieces of the caller's arrays come back from the ranks that hold them;
  // buffers the run did not use, or that are not the caller's, are forgotten everywhere.
  void finish_run(L3Executor& ex) {
    struct Want {
      char* base;
      int owner;
      std::vector<Range> ranges;
    };
    std::vector<Want> wants;
    std::map<int, Writer> fetch;
    std::map<int, uint32_t> fetch_count;
    std::vector<uint64_t> forget;
    std::string lost_note;
    for (auto& kv : buffers_) {
      BufState& b = kv.second;
      if (!b.used || !in_run_args(ex, kv.first)) {
        forget.push_back(kv.first);
        continue;
      }
      const auto fresh = still_current(b.pieces, 0);
      for (size_t i = 0; i < b.pieces.size(); ++i) {
        const int owner = b.pieces[i].owner;
        if (fresh[i].empty()) continue;
        if (rank_[owner].lost) {
          lost_note = "; writes held on a lost rank are not in the output arrays";
          continue;
        }
        Writer& f = fetch[owner];
        f.put<uint64_t>(kv.first);
        f.ranges(fresh[i]);
        ++fetch_count[owner];
        wants.push_back(Want{reinterpret_cast<char*>(static_cast<uintptr_t>(kv.first)), owner, fresh[i]});
      }
    }
    for (auto& kv : fetch) {
      Writer head;
      head.put<uint32_t>(program_);
      head.put<uint32_t>(fetch_count[kv.first]);
      head.bytes(kv.second.buf.data(), kv.second.buf.size());
      send_bytes(head.buf, kv.first, kTagFetch);
    }
    std::map<int, std::vector<char>> got;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.task_timeout_s);
    Backoff backoff(50);
    while (got.size() < fetch.size()) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, kTagFetched, MPI_COMM_WORLD, &flag, &st);
      if (flag) {
        got[st.MPI_SOURCE] = recv_bytes(st.MPI_SOURCE, kTagFetched, &st);
        backoff.reset();
        continue;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        for (auto& kv : fetch)
          if (!got.count(kv.first)) {
            rank_[kv.first].lost = true;
            g_rank_lost.store(true);
          }
        ex.fail("L3 MPI transport: the output bytes held on a rank never came back within " +
                std::to_string(options_.task_timeout_s) + " s");
        lost_note = "; writes held on a lost rank are not in the output arrays";
        break;
      }
      backoff.pause();
    }
    // Apply in completion order (a later piece may overwrite an earlier one).
    std::map<int, size_t> cursor;
    uint64_t from = 0;
    for (const Want& want : wants) {
      auto it = got.find(want.owner);
      if (it == got.end()) continue;
      size_t& at = cursor[want.owner];
      for (const Range& r : want.ranges) {
        if (at + r.second > it->second.size()) break;
        std::memcpy(want.base + r.first, it->second.data() + at, r.second);
        at += r.second;
        from += r.second;
      }
    }
    ex.count_bytes(0, from, 0);
    bytes_[1] += from;
    if (!lost_note.empty()) ex.note(lost_note);
    // Which ranks still hold exactly what the caller's arrays now hold.
    for (auto& kv : buffers_) {
      BufState& b = kv.second;
      if (!b.used) continue;
      for (int r = 1; r < ranks_; ++r) {
        bool current = !rank_[r].lost && b.base[r] == b.bytes;
        for (size_t i = b.synced[r]; i < b.pieces.size() && current; ++i) current = b.pieces[i].owner == r;
        if (!current) b.base[r] = 0;
        b.synced[r] = 0;
      }
      const char* mem = reinterpret_cast<const char*>(static_cast<uintptr_t>(kv.first));
      b.shadow.assign(mem, mem + b.bytes);
      b.pieces.clear();
      b.used = false;
    }
    if (!forget.empty()) {
      Writer w;
      w.put<uint32_t>(program_);
      w.put<uint32_t>(static_cast<uint32_t>(forget.size()));
      for (uint64_t key : forget) {
        w.put<uint64_t>(key);
        buffers_.erase(key);
      }
      for (int r = 1; r < ranks_; ++r)
        if (!rank_[r].lost) send_bytes(w.buf, r, kTagDrop);
    }
    for (int k = 0; k < 3; ++k) last_bytes[k] = bytes_[k];
    bytes_[0] = bytes_[1] = bytes_[2] = 0;
  }

  L3MpiOptions options_;
  uint32_t program_ = 0;
  int ranks_ = 1;
  int depth_ = 16;
  bool inflight_dirty_ = false;
  std::map<int32_t, std::string> names_;  // target id -> "'name'" (for the in-flight message)
  uint64_t run_ = 0;  // runs begun (chip ranks skip a task queued behind a failed one of the same run)
  std::vector<RankState> rank_;
  std::unordered_map<uint64_t, BufState> buffers_;
  uint64_t bytes_[3] = {0, 0, 0};
  L3Executor* ex_ = nullptr;
  struct Pending {
    MPI_Request request;
    int dest = 0;
    std::vector<char> buf;
  };
  std::list<Pending> sends_;  // posted, not yet complete
  std::thread thread_;
};

}  // namespace

void l3_mpi_init(int* rank, int* size) {
  check_mpi_env();  // before MPI starts: a bad knob fails every rank alike, before any work
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

bool l3_mpi_last_bytes(const std::shared_ptr<L3Transport>& transport, uint64_t out[3]) {
  auto* t = dynamic_cast<MpiTransport*>(transport.get());
  if (t == nullptr) return false;
  for (int k = 0; k < 3; ++k) out[k] = t->last_bytes[k];
  return true;
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

namespace {
// Why the calling thread's last pto2_l3_mpi_transport returned NULL. Before, a failure (a bad
// PTO2_L3_MPI_* value, a bad timeout) threw through the C ABI: std::terminate.
thread_local std::string g_transport_error;
}  // namespace

void* pto2_l3_mpi_transport(double task_timeout_s, uint32_t program) {
  try {
    pto2::L3MpiOptions o;
    o.task_timeout_s = task_timeout_s;
    o.program = program;
    g_transport_error.clear();
    return new std::shared_ptr<pto2::L3Transport>(pto2::make_l3_mpi_transport(o));
  } catch (const std::exception& e) {
    g_transport_error = e.what();
    return nullptr;
  }
}

const char* pto2_l3_mpi_transport_error(void) { return g_transport_error.c_str(); }

void pto2_l3_mpi_transport_free(void* transport) {
  delete static_cast<std::shared_ptr<pto2::L3Transport>*>(transport);
}

int pto2_l3_mpi_last_bytes(void* transport, uint64_t* out) {
  return pto2::l3_mpi_last_bytes(*static_cast<std::shared_ptr<pto2::L3Transport>*>(transport), out) ? 1 : 0;
}

int pto2_l3_mpi_load(uint32_t program, const char* library) {
  pto2::l3_mpi_load(program, library);
  return 1;
}

void pto2_l3_mpi_close(int abort) { pto2::l3_mpi_close(abort != 0); }

void pto2_l3_mpi_barrier() { MPI_Barrier(MPI_COMM_WORLD); }

}  // extern "C"
