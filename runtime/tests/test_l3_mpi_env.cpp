// The MPI transport's environment knobs (runtime/include/pto2/l3_mpi_env.h): bad values are refused with
// a message naming the variable and the accepted range (they were read with atoi / atof).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "pto2/l3_mpi_env.h"

namespace {

struct Env {
  Env(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~Env() { unsetenv(name_); }
  const char* name_;
};

std::string refusal(int (*read)()) {
  try {
    read();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(L3MpiEnv, CountsAreCheckedIntegersInRange) {
  unsetenv("PTO2_L3_MPI_DEPTH");
  EXPECT_EQ(pto2::l3mpi::mpi_depth(), 16);
  {
    Env e("PTO2_L3_MPI_DEPTH", " ");
    EXPECT_EQ(pto2::l3mpi::mpi_depth(), 16);  // blank: the default, as PYPTO_L3_TASK_TIMEOUT_S
  }
  for (const char* ok : {"1", "64", "65536", " 7 "}) {
    Env e("PTO2_L3_MPI_DEPTH", ok);
    EXPECT_EQ(pto2::l3mpi::mpi_depth(), std::atoi(ok)) << ok;
  }
  for (const char* bad : {"abc", "0", "-3", "65537", "99999999999999999999", "4x", "1.5", "nan"}) {
    Env e("PTO2_L3_MPI_BATCH", bad);
    EXPECT_EQ(refusal(pto2::l3mpi::mpi_batch),
              std::string("PTO2_L3_MPI_BATCH='") + bad +
                  "' is not a count: it must be an integer in 1..65536 (unset it for the default, 8)");
  }
}

TEST(L3MpiEnv, TimeoutIsAPositiveFiniteNumber) {
  unsetenv("PTO2_L3_MPI_TIMEOUT_S");
  EXPECT_EQ(pto2::l3mpi::mpi_timeout_s(120.0), 120.0);
  {
    Env e("PTO2_L3_MPI_TIMEOUT_S", "0.5");
    EXPECT_EQ(pto2::l3mpi::mpi_timeout_s(120.0), 0.5);
  }
  for (const char* bad : {"abc", "0", "-1", "nan", "inf", "1e999", "5s"}) {
    Env e("PTO2_L3_MPI_TIMEOUT_S", bad);
    EXPECT_THROW(
        {
          try {
            pto2::l3mpi::check_mpi_env();
          } catch (const std::invalid_argument& ex) {
            EXPECT_EQ(std::string(ex.what()).rfind(std::string("PTO2_L3_MPI_TIMEOUT_S='") + bad +
                                                       "' is not a timeout: it must be a positive number of seconds",
                                                   0),
                      0u)
                << ex.what();
            throw;
          }
        },
        std::invalid_argument)
        << bad;
  }
}

}  // namespace
