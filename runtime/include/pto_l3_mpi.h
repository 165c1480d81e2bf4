// pto_l3_mpi.h — the MPI transport of the L3 runtime (libpto2_mpi, an optional part of the
// build: present when CMake finds MPI). Rank 0 runs the HOST entry; every other rank is a
// chip that runs the next-level tasks it receives on its own libpto2 runtime.
//
//     int rank, size;
//     pto2::l3_mpi_init(&rank, &size);
//     pto2::L3Runtime l3(rank == 0 ? pto2::L3Options{}.transport(pto2::make_l3_mpi_transport({}))
//                                  : pto2::L3Options{});
//     register_everything(l3);                       // the same targets and kernels on every rank
//     if (rank == 0) { pto2::L3RunResult r = l3.run(&host_entry, args); ... }
//     else pto2::l3_mpi_serve(l3);                    // until rank 0 closes
//     pto2::l3_mpi_close(false);
//
// Data: tensors live where they were produced. Rank 0 holds the caller's arrays and sends a
// chip rank only the bytes its copy lacks (a copy still equal to the array from an earlier run
// is reused: nothing is resent for an unchanged array); a task's writes stay on its rank, which
// reports only which byte ranges changed; a task on another rank that needs them gets them
// point-to-point from the rank that holds them; when the run ends, the changed ranges of the
// caller's arrays come back into them (once, however many tasks wrote them). Memory that is
// not inside a run argument never comes back. Placement prefers an idle rank, then the rank
// holding most of a task's data; each rank queues up to PTO2_L3_MPI_DEPTH (default 16) tasks.
//
// Faults: a task with no completion within L3MpiOptions::task_timeout_s fails the run naming
// the task, target and rank (the rank is then treated as lost and l3_mpi_close aborts the job
// so nothing is left behind). Test hook: PTO2_L3_MPI_FAULT="die:<rank>:<task>" makes that rank
// kill itself on receiving that task; "drop:<rank>:<task>" makes it never answer it (rank
// "*": whichever rank receives it); "fail:<rank>:<task>" makes that task fail. Rank 0 reads PTO2_L3_MPI_TIMEOUT_S (seconds) if set.
//
// Knobs: PTO2_L3_MPI_DEPTH and PTO2_L3_MPI_BATCH (integers in 1..65536) and PTO2_L3_MPI_TIMEOUT_S
// (a positive number of seconds); a bad value is a std::invalid_argument naming the variable
// and the accepted range, from l3_mpi_init on every rank (before MPI starts).
#pragma once

#include <memory>
#include <string>

#include "pto_l3_api.h"

namespace pto2 {

struct L3MpiOptions {
  double task_timeout_s = 120.0;  ///< a next-level task not completed by then fails the run
  uint32_t program = 0;           ///< which program's targets the serving ranks run (l3_mpi_load)
};

/// Initialises MPI (once; thread level SERIALIZED) and reports this process's rank and the
/// world size. `int r, n; l3_mpi_init(&r, &n);` Throws std::invalid_argument, before MPI
/// starts, for a bad PTO2_L3_MPI_* value (see above).
void l3_mpi_init(int* rank, int* size);

/// The transport of rank 0: chip c is rank c + 1 (world size - 1 chips).
/// `L3Options{}.transport(make_l3_mpi_transport(L3MpiOptions{}))`. Throws std::invalid_argument
/// for a task_timeout_s that is not a positive finite number or a bad PTO2_L3_MPI_* value.
std::shared_ptr<L3Transport> make_l3_mpi_transport(const L3MpiOptions& options);

/// Ranks other than 0: receives next-level tasks and runs them with `l3`'s registered targets
/// (L3Runtime::run_target) until rank 0 calls l3_mpi_close. Returns "" or why it stopped; throws
/// std::invalid_argument for a bad PTO2_L3_MPI_BATCH.
std::string l3_mpi_serve(L3Runtime& l3);

/// Rank 0, outside a run: has every serving rank of a pto2_l3_mpi_serve loop load `library`
/// (a built HOST program exporting `pypto_host_register`) as program `program`. The path must
/// be readable on every rank's machine. `l3_mpi_load(1, "/cache/abc/libprogram.so");`
void l3_mpi_load(uint32_t program, const std::string& library);

/// Rank 0: the tensor bytes `transport` (from make_l3_mpi_transport) moved in its last run:
/// out[0] host -> chips, out[1] chips -> the caller's arrays, out[2] chip -> chip (also in
/// L3RunResult::bytes_*). False for another kind of transport.
bool l3_mpi_last_bytes(const std::shared_ptr<L3Transport>& transport, uint64_t out[3]);

/// Rank 0: stops the serving ranks (or aborts the whole job when `abort` is true or a rank was
/// lost), then finalises MPI. Other ranks: finalises MPI. `l3_mpi_close(false);`
void l3_mpi_close(bool abort);

}  // namespace pto2

extern "C" {
/// C entry points for Python (pypto._core.program_abi.MpiLibrary, typed by these declarations):
/// same meaning as the functions above. Return 1 on success, 0 with a message in `err` on failure.
int pto2_l3_mpi_init(int* rank, int* size, char* err, size_t errlen);
/// A new `std::shared_ptr<pto2::L3Transport>*` for program `program` (free with
/// pto2_l3_mpi_transport_free), or NULL when it cannot be made (a timeout that is not a positive
/// number, a bad PTO2_L3_MPI_* value): pto2_l3_mpi_transport_error() then says why.
///     void* t = pto2_l3_mpi_transport(120.0, 0);
///     if (t == NULL) fprintf(stderr, "%s\n", pto2_l3_mpi_transport_error());
void* pto2_l3_mpi_transport(double task_timeout_s, uint32_t program);
/// Why this thread's last pto2_l3_mpi_transport returned NULL ("" after a success); valid until
/// that thread's next call.
const char* pto2_l3_mpi_transport_error(void);
void pto2_l3_mpi_transport_free(void* transport);
/// The bytes the transport moved in its last run (see l3_mpi_last_bytes): 3 words into `out`.
int pto2_l3_mpi_last_bytes(void* transport, uint64_t* out);
/// Serving ranks: serves every program rank 0 loads (pto2_l3_mpi_load) until rank 0 closes.
int pto2_l3_mpi_serve(char* err, size_t errlen);
/// Rank 0: see l3_mpi_load.
int pto2_l3_mpi_load(uint32_t program, const char* library);
void pto2_l3_mpi_close(int abort);
/// Every rank waits here until all arrived (rank 0 builds a program before the others load it).
void pto2_l3_mpi_barrier();
}
