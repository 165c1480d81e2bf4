// l3_mpi_env.h — the MPI transport's environment knobs (docs/distributed.md), read and checked
// in one place. They were read with atoi / atof: `abc`, `0`, a negative or huge value or `nan`
// silently became 0, 1 or garbage (a timeout of 0 failed every task on a healthy rank; nan
// never timed out). Now a bad value is refused with a message naming the variable and the
// accepted range. l3_mpi_init checks all three on every rank before MPI starts, so a bad value
// fails every rank alike instead of one side waiting for the other. Public (header-only, no MPI
// needed) so that `pypto run --mpi` applies the same rule before mpirun starts (program_abi.check_mpi_env).
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace pto2::l3mpi {

// Queue depth per chip rank and completions per message: any count from 1 up to this. Higher
// values only hold more tasks (and their staged bytes) in flight on rank 0 without making a
// rank busier: a rank runs one task at a time.
constexpr long kMaxMpiCount = 65536;

// The value of `name`, or nullptr when it is unset, empty or blank (as PYPTO_L3_TASK_TIMEOUT_S).
inline const char* env_text(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return nullptr;
  for (const char* c = text; *c != '\0'; ++c)
    if (*c != ' ' && *c != '\t') return text;
  return nullptr;
}

// `name`'s value as a count in 1..kMaxMpiCount, or `fallback` when it is unset or blank.
inline int env_count(const char* name, int fallback) {
  const char* text = env_text(name);
  if (text == nullptr) return fallback;
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  while (end != nullptr && (*end == ' ' || *end == '\t')) ++end;
  if (end == text || *end != '\0' || errno == ERANGE || v < 1 || v > kMaxMpiCount)
    throw std::invalid_argument(std::string(name) + "='" + text + "' is not a count: it must be an integer in 1.." +
                                std::to_string(kMaxMpiCount) + " (unset it for the default, " +
                                std::to_string(fallback) + ")");
  return static_cast<int>(v);
}

// `name`'s value as a positive finite number of seconds, or `fallback` when unset or blank.
inline double env_seconds(const char* name, double fallback) {
  const char* text = env_text(name);
  if (text == nullptr) return fallback;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  while (end != nullptr && (*end == ' ' || *end == '\t')) ++end;
  if (end == text || *end != '\0' || !std::isfinite(v) || !(v > 0))
    throw std::invalid_argument(std::string(name) + "='" + text +
                                "' is not a timeout: it must be a positive number of seconds (e.g. " + name +
                                "=300, or unset it for the default)");
  return v;
}

// The knobs with their defaults (each rank reads the ones it uses; l3_mpi_init reads all).
inline int mpi_depth() { return env_count("PTO2_L3_MPI_DEPTH", 16); }
inline int mpi_batch() { return env_count("PTO2_L3_MPI_BATCH", 8); }
inline double mpi_timeout_s(double fallback) { return env_seconds("PTO2_L3_MPI_TIMEOUT_S", fallback); }

// Throws std::invalid_argument naming the first bad knob.
inline void check_mpi_env() {
  (void)mpi_depth();
  (void)mpi_batch();
  (void)mpi_timeout_s(120.0);
}

}  // namespace pto2::l3mpi
