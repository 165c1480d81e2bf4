// api_fuzz_driver.h — what the parts of the runtime API fuzzer share (test_api_fuzz*.cpp): their
// environment knobs and the loop over one seed's cases, each under a watchdog that names the
// case if it hangs (docs/running.md, "Fuzzing").
//
//     TEST(ApiFuzz, Mine) {
//       api_fuzz::run_cases(api_fuzz::env_u64("PTO2_API_FUZZ_CASES", 150),
//                           [](uint64_t seed, uint64_t i) { MyCase(seed, i).run(); });
//     }
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "test_util.h"

namespace api_fuzz {

/// The unsigned value of environment variable `name`, or `dflt` when unset or empty.
inline uint64_t env_u64(const char* name, uint64_t dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : dflt;
}

/// Runs cases [0, cases) of seed PTO2_API_FUZZ_SEED (1), or only case PTO2_API_FUZZ_CASE, as
/// run_case(seed, i); stops after the first failing case (unless one case was asked for). A
/// case running longer than PTO2_API_FUZZ_TIMEOUT_S (60) seconds is a hang: the watchdog names
/// it, with every thread's stack when PTO2_API_FUZZ_GDB is set. PTO2_API_FUZZ_VERBOSE prints
/// each case as it starts.
template <class RunCase>
void run_cases(uint64_t cases, RunCase run_case) {
  const uint64_t seed = env_u64("PTO2_API_FUZZ_SEED", 1);
  const char* only = std::getenv("PTO2_API_FUZZ_CASE");
  const uint64_t first = only && *only ? std::strtoull(only, nullptr, 10) : 0;
  const uint64_t last = only && *only ? first + 1 : cases;
  for (uint64_t i = first; i < last; ++i) {
    Watchdog wd(static_cast<int>(env_u64("PTO2_API_FUZZ_TIMEOUT_S", 60)), [seed, i] {
      std::fprintf(stderr, "WATCHDOG: the hung case is PTO2_API_FUZZ_SEED=%" PRIu64 " PTO2_API_FUZZ_CASE=%" PRIu64 "\n",
                   seed, i);
      if (std::getenv("PTO2_API_FUZZ_GDB")) {
        const std::string cmd = "gdb -p " + std::to_string(getpid()) + " -batch -ex 'thread apply all bt' 1>&2";
        if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "(gdb failed)\n");
      }
    });
    if (std::getenv("PTO2_API_FUZZ_VERBOSE")) std::fprintf(stderr, "case %" PRIu64 "\n", i);
    run_case(seed, i);
    if (::testing::Test::HasFailure() && !only) break;  // the first failing case is enough
  }
}

/// Case `index` of `seed` failed: `what`, with the environment that reproduces it.
inline void fail_case(uint64_t seed, uint64_t index, const std::string& what) {
  ADD_FAILURE() << "seed " << seed << " case " << index << " (PTO2_API_FUZZ_SEED=" << seed
                << " PTO2_API_FUZZ_CASE=" << index << "): " << what;
}

/// The fuzzer's oracle for an error: message `m` (from `call`) is not empty and names one of the
/// API calls in `names` (the part's list); otherwise case `index` of `seed` fails.
template <size_t N>
void expect_message(uint64_t seed, uint64_t index, const std::string& m, const std::string& call,
                    const char* const (&names)[N]) {
  bool named = false;
  for (const char* n : names) named |= m.find(n) != std::string::npos;
  if (m.empty()) fail_case(seed, index, call + ": an empty error message");
  else if (!named) fail_case(seed, index, call + ": the message names no API call: " + m);
}

}  // namespace api_fuzz
