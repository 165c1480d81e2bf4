// l3_mpi_wire.h — what rank 0 and the serving ranks of the L3 MPI transport say to each other
// (l3_mpi.cpp: rank 0, l3_mpi_serve.cpp: the chip ranks). Internal to libpto2_mpi.
//
// Data model: a buffer (the `data` pointer of a tensor view on rank 0, "key") lives where it
// was last written. Rank 0 holds the caller's arrays (the "base"); a chip rank holds a cached
// copy per (program, key). A task that changed bytes of a buffer leaves them on its rank and
// reports only their byte ranges (a "piece"); another rank that needs them gets them straight
// from the owner (rank 0 sends the owner a forward order before the task), and at the end of
// the run rank 0 fetches the pieces of the caller's arrays. Messages, all MPI_BYTE:
//
//   rank 0 -> chip  kTagTask   program, ticket, index, target, scalars, tensors (key + view),
//                              per buffer: extent, the base bytes [from, extent) the rank lacks,
//                              and the pieces to apply in order (owner, ranges)
//   rank 0 -> owner kTagFwd    program, destination rank, ticket, per piece: key, ranges
//   owner -> chip   kTagData   ticket, then the bytes of those ranges, in order
//   chip -> rank 0  kTagDone   index, ok, error, counters, per buffer: key, changed ranges
//   rank 0 -> owner kTagFetch  program, per piece: key, ranges      (end of a run)
//   owner -> rank 0 kTagFetched the bytes of those ranges, in order
//   rank 0 -> chip  kTagDrop   program, keys the rank may forget     (end of a run)
//   rank 0 -> chip  kTagLoad / kTagStop   load a program library / stop serving
#pragma once

#include <mpi.h>
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "pto_l3_api.h"

namespace pto2 {
namespace l3mpi {

constexpr int kTagTask = 301;
constexpr int kTagDone = 302;
constexpr int kTagStop = 303;
constexpr int kTagLoad = 304;
constexpr int kTagFwd = 305;
constexpr int kTagData = 306;
constexpr int kTagFetch = 307;
constexpr int kTagFetched = 308;
constexpr int kTagDrop = 309;

/// A byte range of a buffer: (offset, length).
using Range = std::pair<uint64_t, uint64_t>;

/// Appends plain values and byte runs to a message. `Writer w; w.put<uint32_t>(7);`
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
  void ranges(const std::vector<Range>& rs) {
    put<uint32_t>(static_cast<uint32_t>(rs.size()));
    for (const Range& r : rs) {
      put<uint64_t>(r.first);
      put<uint64_t>(r.second);
    }
  }
};

/// Reads what a Writer wrote; throws on a truncated message. `Reader r{p, p + n};`
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
  std::vector<Range> ranges() {
    std::vector<Range> rs(get<uint32_t>());
    for (Range& r : rs) {
      r.first = get<uint64_t>();
      r.second = get<uint64_t>();
    }
    return rs;
  }
};

/// Bytes of the ranges. `range_bytes({{0, 8}, {16, 4}}) == 12`
inline uint64_t range_bytes(const std::vector<Range>& rs) {
  uint64_t n = 0;
  for (const Range& r : rs) n += r.second;
  return n;
}

/// Bytes from `t.data` that the view `t` can touch (non-negative strides only).
inline size_t view_extent_bytes(const Tensor& t) {
  int64_t last = t.offset;
  for (uint32_t i = 0; i < t.ndims; ++i) {
    if (t.shapes[i] == 0) return 0;
    if (t.strides[i] < 0) throw std::runtime_error("L3 MPI: a tensor view with a negative stride cannot be shipped");
    last += static_cast<int64_t>(t.shapes[i] - 1) * t.strides[i];
  }
  return static_cast<size_t>(last + 1) * dtype_size(t.dtype);
}

/// Receives one message of `tag` from `source` (probed first: any size).
inline std::vector<char> recv_bytes(int source, int tag, MPI_Status* st) {
  MPI_Status probe;
  MPI_Probe(source, tag, MPI_COMM_WORLD, &probe);
  int n = 0;
  MPI_Get_count(&probe, MPI_BYTE, &n);
  std::vector<char> buf(static_cast<size_t>(n));
  MPI_Recv(buf.data(), n, MPI_BYTE, probe.MPI_SOURCE, probe.MPI_TAG, MPI_COMM_WORLD, st);
  return buf;
}

inline void send_bytes(const std::vector<char>& buf, int dest, int tag) {
  if (buf.size() > static_cast<size_t>(INT32_MAX)) throw std::runtime_error("L3 MPI: message above 2 GiB");
  MPI_Send(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD);
}

/// Sleeps a little longer each idle round (oversubscribed ranks must not spin on the cores).
/// The cap bounds the latency it adds to a message.
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

}  // namespace l3mpi
}  // namespace pto2
