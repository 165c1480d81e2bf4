// l3_mpi_check.cpp — the L3 MPI transport end to end (run under mpiexec, see CMakeLists.txt):
// rank 0 runs a HOST entry whose next-level tasks fill disjoint blocks of one output buffer on
// different ranks, then sum them on one rank; every other rank serves. Exit code 0 = correct.
// With argv[1] == "fail" a task fails and rank 0 checks the error names task, target and rank;
// with "drop" (and PTO2_L3_MPI_FAULT=drop:*:2, a short PTO2_L3_MPI_TIMEOUT_S) a completion
// never arrives and rank 0 checks the timeout error.
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "pto_l3_mpi.h"

namespace {

constexpr uint32_t kBlocks = 6, kBlock = 1000;

// z[k*B : (k+1)*B] = k + 1   (scalar 0 = k); a scalar 1 of 99 fails.
void l2_fill(const ChipStorageTaskArgs& a) {
  if (a.scalar_count() > 1 && a.scalar(1) == 99) throw std::runtime_error("block exploded");
  Tensor z = from_tensor_arg(a.tensor(0));
  const uint64_t k = a.scalar(0);
  float* p = z.ptr<float>();
  for (uint32_t i = 0; i < kBlock; ++i) p[k * kBlock + i] = static_cast<float>(k + 1);
}

// y[i] = sum_k z[k*B + i]
void l2_sum(const ChipStorageTaskArgs& a) {
  const float* z = from_tensor_arg(a.tensor(0)).ptr<float>();
  float* y = from_tensor_arg(a.tensor(1)).ptr<float>();
  for (uint32_t i = 0; i < kBlock; ++i) {
    float s = 0;
    for (uint32_t k = 0; k < kBlocks; ++k) s += z[k * kBlock + i];
    y[i] = s;
  }
}

bool g_fail = false;
bool g_drop = false;

void host(const ChipStorageTaskArgs& a) {
  TaskArgs b;
  for (uint32_t k = 0; k < kBlocks; ++k) {
    TaskArgs f;
    f.add_tensor(from_tensor_arg(a.tensor(0)));
    f.add_scalar(k);
    if (g_fail && k == 3) f.add_scalar(99);
    b.add_dep_wait(submit_next_level(static_cast<int32_t>(k % 3), f));  // three targets: no chain
  }
  TaskHandle all = submit_barrier(b);
  TaskArgs s;
  s.add_tensor(from_tensor_arg(a.tensor(0)));
  s.add_tensor(from_tensor_arg(a.tensor(1)));
  s.add_dep_wait(all);
  submit_next_level(3, s);
}

void register_all(pto2::L3Runtime& l3) {
  l3.register_target(0, "fill_a", &l2_fill).register_target(1, "fill_b", &l2_fill);
  l3.register_target(2, "fill_c", &l2_fill).register_target(3, "sum", &l2_sum);
}

}  // namespace

int main(int argc, char** argv) {
  g_fail = argc > 1 && std::string(argv[1]) == "fail";
  g_drop = argc > 1 && std::string(argv[1]) == "drop";
  int rank = 0, size = 0;
  pto2::l3_mpi_init(&rank, &size);
  int rc = 0;
  if (rank == 0) {
    pto2::L3Runtime l3(pto2::L3Options{}.transport(pto2::make_l3_mpi_transport(pto2::L3MpiOptions{})));
    register_all(l3);
    for (int run = 0; run < 2 && rc == 0; ++run) {  // twice: buffer caches must not leak between runs
      std::vector<float> z(kBlocks * kBlock, -1.0f), y(kBlock, 0.0f);
      uint32_t zs[1] = {kBlocks * kBlock}, ys[1] = {kBlock};
      ChipStorageTaskArgs args;
      args.add_tensor(make_tensor_external(z.data(), zs, 1, DataType::FLOAT32));
      args.add_tensor(make_tensor_external(y.data(), ys, 1, DataType::FLOAT32));
      pto2::L3RunResult r = l3.run(&host, args);
      if (g_fail) {
        const bool named = r.message.find("next-level task 4 (target 0 'fill_a') failed on rank") != std::string::npos &&
                           r.message.find("block exploded") != std::string::npos;
        std::printf("fail run: %s\n", r.message.c_str());
        rc = named ? 0 : 1;
        break;
      }
      if (g_drop) {
        const bool named = r.message.find("next-level task 2 (target 1 'fill_b') failed on rank") != std::string::npos &&
                           r.message.find("no completion message within") != std::string::npos;
        std::printf("drop run: %s\n", r.message.c_str());
        rc = named ? 0 : 1;
        break;
      }
      if (!r.ok()) {
        std::printf("run failed: %s\n", r.message.c_str());
        rc = 1;
        break;
      }
      for (uint32_t i = 0; i < kBlock && rc == 0; ++i)
        if (y[i] != 21.0f || z[5 * kBlock + i] != 6.0f) rc = 1;
      std::printf("run %d on %d ranks: %s, %llu tasks\n", run, size, rc == 0 ? "OK" : "WRONG",
                  static_cast<unsigned long long>(r.tasks_executed));
    }
  } else {
    pto2::L3Runtime l3;
    register_all(l3);
    std::string why = pto2::l3_mpi_serve(l3);
    if (!why.empty()) std::printf("rank %d: %s\n", rank, why.c_str());
  }
  pto2::l3_mpi_close(false);
  return rc;
}
