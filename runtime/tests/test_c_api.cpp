// The C API (pto2_c_api.h; Python reaches it through the nanobind binding program_abi) runs an
// entry with kernels and tensor/scalar descriptors.
#include <gtest/gtest.h>

#include "pto2_c_api.h"
#include "test_util.h"

extern "C" void c_api_entry(const ChipStorageTaskArgs& orch_args) {
  Tensor a = from_tensor_arg(orch_args.tensor(0));
  Tensor b = from_tensor_arg(orch_args.tensor(1));
  Arg p;
  p.add_input(a);
  p.add_output(b);
  p.add_scalar(orch_args.scalar(0));
  p.add_scalar(0);
  rt_submit_aiv_task(1, p);
}

TEST(CApi, RunsAndReportsStats) {
  Watchdog wd(30);
  std::vector<float> a(16, 1.0f), b(16, 0.0f);
  pto2_kernel_desc k[1] = {{1, "add", 1, reinterpret_cast<void*>(&k_add)}};
  pto2_tensor_desc t[2] = {{a.data(), 1, {16}, 0}, {b.data(), 1, {16}, 0}};
  uint64_t scalars[1] = {2};
  pto2_run_options o = {1, 2, 0, nullptr};
  pto2_run_stats st;
  char err[256];
  int rc = pto2_run(reinterpret_cast<void*>(&c_api_entry), k, 1, t, 2, scalars, 1, &o, &st, err, sizeof err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(b[15], 3.0f);
  EXPECT_EQ(st.tasks_submitted, 1u);
  EXPECT_EQ(st.tasks_executed, 1u);
  EXPECT_EQ(pto2_dtype_size(0), 4u);
}

TEST(CApi, ErrorsComeBackInTheBuffer) {
  Watchdog wd(30);
  std::vector<float> a(16, 1.0f), b(16, 0.0f);
  pto2_tensor_desc t[2] = {{a.data(), 1, {16}, 0}, {b.data(), 1, {16}, 0}};
  uint64_t scalars[1] = {2};
  char err[256];
  int rc = pto2_run(reinterpret_cast<void*>(&c_api_entry), nullptr, 0, t, 2, scalars, 1, nullptr, nullptr, err, sizeof err);
  EXPECT_NE(rc, 0);
  EXPECT_NE(std::string(err).find("unknown kernel id 1"), std::string::npos) << err;
}
