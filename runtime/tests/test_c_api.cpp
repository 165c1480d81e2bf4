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

extern "C" void c_api_noop_entry(const ChipStorageTaskArgs&) {}

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

// A NULL array with a nonzero count, or a NULL shapes pointer with a nonzero rank, is an error in
// the buffer, not a read through NULL (each of these crashed with SIGSEGV).
TEST(CApi, NullArraysWithNonzeroCountsAreErrors) {
  Watchdog wd(30);
  char err[256];
  void* entry = reinterpret_cast<void*>(&c_api_entry);
  EXPECT_EQ(pto2_run(entry, nullptr, 1, nullptr, 0, nullptr, 0, nullptr, nullptr, err, sizeof err), 2);
  EXPECT_NE(std::string(err).find("kernels is NULL but n_kernels is nonzero"), std::string::npos) << err;
  EXPECT_EQ(pto2_run(entry, nullptr, 0, nullptr, 2, nullptr, 0, nullptr, nullptr, err, sizeof err), 2);
  EXPECT_NE(std::string(err).find("tensors is NULL"), std::string::npos) << err;

  pto2_runtime_config c = {1, 1, 0, 0, 0, 0};
  EXPECT_EQ(pto2_runtime_create(&c, nullptr, 1, err, sizeof err), nullptr);
  EXPECT_NE(std::string(err).find("pto2_runtime_create: kernels is NULL"), std::string::npos) << err;
  void* rt = pto2_runtime_create(&c, nullptr, 0, err, sizeof err);
  ASSERT_NE(rt, nullptr) << err;
  EXPECT_EQ(pto2_runtime_run(rt, entry, nullptr, 3, nullptr, 0, nullptr, err, sizeof err), 0);
  EXPECT_NE(std::string(err).find("tensors is NULL"), std::string::npos) << err;
  EXPECT_EQ(pto2_runtime_run(rt, entry, nullptr, 0, nullptr, 3, nullptr, err, sizeof err), 0);
  EXPECT_NE(std::string(err).find("scalars is NULL"), std::string::npos) << err;
  pto2_tensor_arg t = {nullptr, 0, 2, nullptr, nullptr};
  EXPECT_EQ(pto2_runtime_run(rt, entry, &t, 1, nullptr, 0, nullptr, err, sizeof err), 0);
  EXPECT_NE(std::string(err).find("tensor 0 has rank 2 but its shapes pointer is NULL"), std::string::npos) << err;
  pto2_runtime_destroy(rt);
}


// A NULL config, no workers, a core_type other than 0/1 or a kernel whose type has no workers is
// refused by pto2_runtime_create / pto2_run with a message; before, create accepted each (NULL =
// defaults, core_type 7 = AIV) and the first submission failed or ran on the wrong core type.
TEST(CApi, CreateRefusesBadConfigAndKernels) {
  Watchdog wd(30);
  char err[512];
  pto2_kernel_desc aiv[1] = {{1, "add", 1, reinterpret_cast<void*>(&k_add)}};
  auto refused = [&](const pto2_runtime_config* c, const pto2_kernel_desc* k, const char* what) {
    std::snprintf(err, sizeof err, "untouched");
    void* rt = pto2_runtime_create(c, k, 1, err, sizeof err);
    EXPECT_EQ(rt, nullptr) << what;
    pto2_runtime_destroy(rt);
    return std::string(err);
  };
  pto2_runtime_config none = {0, 0, 0, 0, 0, 0};
  pto2_runtime_config aic_only = {1, 0, 0, 0, 0, 0};
  pto2_runtime_config ok = {1, 1, 0, 0, 0, 0};
  EXPECT_NE(refused(nullptr, aiv, "NULL").find("pto2_runtime_create: config is NULL"), std::string::npos) << err;
  EXPECT_NE(refused(&none, aiv, "0 workers").find("0 AIC and 0 AIV workers"), std::string::npos) << err;
  EXPECT_NE(refused(&aic_only, aiv, "no AIV").find("kernel 0 ('add', id 1) is an AIV kernel but the runtime has no "
                                                   "AIV workers"), std::string::npos) << err;
  for (int32_t bad : {-1, 2, 7}) {
    pto2_kernel_desc k[1] = {{1, "add", bad, reinterpret_cast<void*>(&k_add)}};
    EXPECT_NE(refused(&ok, k, "core_type").find("has core_type " + std::to_string(bad) + "; it must be 0 (AIC) or 1 (AIV)"),
              std::string::npos) << err;
  }
  // The one-shot pto2_run refuses the same, before running the entry.
  pto2_kernel_desc k7[1] = {{1, "add", 7, reinterpret_cast<void*>(&k_add)}};
  pto2_run_options none_opts = {0, 0, 0, nullptr};
  void* entry = reinterpret_cast<void*>(&c_api_entry);
  EXPECT_EQ(pto2_run(entry, k7, 1, nullptr, 0, nullptr, 0, nullptr, nullptr, err, sizeof err), 2);
  EXPECT_NE(std::string(err).find("pto2_run: kernel 0 ('add', id 1) has core_type 7"), std::string::npos) << err;
  EXPECT_EQ(pto2_run(entry, aiv, 1, nullptr, 0, nullptr, 0, &none_opts, nullptr, err, sizeof err), 2);
  EXPECT_NE(std::string(err).find("pto2_run: 0 AIC and 0 AIV workers"), std::string::npos) << err;
  // More clusters than worker pairs (was capped silently), by both entry points.
  pto2_runtime_config too_many = {1, 2, 4, 0, 0, 0};
  // Prefixed like every other pto2_runtime_create error (it was the bare RuntimeOptions message).
  EXPECT_EQ(refused(&too_many, aiv, "clusters").rfind("pto2_runtime_create: RuntimeOptions: clusters 4 is more than "
                                                      "min(aic_workers 1, aiv_workers 2) = 1", 0), 0u) << err;
  pto2_runtime_config huge_ring = {1, 2, 0, 0, 1u << 25, 0};
  EXPECT_EQ(refused(&huge_ring, aiv, "ring").rfind("pto2_runtime_create: ", 0), 0u) << err;
  pto2_run_options clusters_opts = {1, 2, 4, nullptr};
  EXPECT_EQ(pto2_run(entry, aiv, 1, nullptr, 0, nullptr, 0, &clusters_opts, nullptr, err, sizeof err), 2);
  EXPECT_NE(std::string(err).find("pto2_run: RuntimeOptions: clusters 4 is more than"), std::string::npos) << err;
  // A good config still creates, and leaves an empty message.
  void* rt = pto2_runtime_create(&ok, aiv, 1, err, sizeof err);
  ASSERT_NE(rt, nullptr) << err;
  EXPECT_STREQ(err, "");
  pto2_runtime_destroy(rt);
}

// Two kernels with one id (the later silently replaced the earlier, so tasks ran the wrong
// kernel) and a tensor with elements but a NULL data pointer (kernels wrote through NULL:
// SIGSEGV) are refused with a message.
TEST(CApi, DuplicateKernelIdsAndNullTensorDataAreErrors) {
  Watchdog wd(30);
  char err[512];
  pto2_kernel_desc twice[2] = {{1, "add", 1, reinterpret_cast<void*>(&k_add)}, {1, "inc", 1, reinterpret_cast<void*>(&k_inc)}};
  pto2_runtime_config c = {1, 1, 0, 0, 0, 0};
  EXPECT_EQ(pto2_runtime_create(&c, twice, 2, err, sizeof err), nullptr);
  EXPECT_NE(std::string(err).find("kernel 1 ('inc', id 1) has the id of kernel 0; kernel ids must be distinct"),
            std::string::npos) << err;

  void* rt = pto2_runtime_create(&c, twice, 1, err, sizeof err);
  ASSERT_NE(rt, nullptr) << err;
  std::vector<float> b(16, 0.0f);
  uint32_t sh[1] = {16}, empty[1] = {0};
  uint64_t s[1] = {2};
  void* entry = reinterpret_cast<void*>(&c_api_entry);
  pto2_tensor_arg t[2] = {{nullptr, 0, 1, sh, nullptr}, {b.data(), 0, 1, sh, nullptr}};
  EXPECT_EQ(pto2_runtime_run(rt, entry, t, 2, s, 1, nullptr, err, sizeof err), 0);
  EXPECT_NE(std::string(err).find("pto2_runtime_run: tensor 0 has elements but a NULL data pointer"), std::string::npos)
      << err;
  pto2_tensor_arg none[1] = {{nullptr, 0, 1, empty, nullptr}};   // no elements: NULL is fine
  EXPECT_EQ(pto2_runtime_run(rt, reinterpret_cast<void*>(&c_api_noop_entry), none, 1, nullptr, 0, nullptr, err, sizeof err), 1)
      << err;
  pto2_runtime_destroy(rt);

  pto2_tensor_desc d[2] = {{b.data(), 1, {16}, 0}, {nullptr, 1, {16}, 0}};
  EXPECT_EQ(pto2_run(entry, twice, 1, d, 2, s, 1, nullptr, nullptr, err, sizeof err), 2);
  EXPECT_NE(std::string(err).find("pto2_run: tensor 1 has elements but a NULL data pointer"), std::string::npos) << err;
}

// Strides given through pto2_tensor_arg are the caller's to keep inside its memory, but a span
// past int64 bytes is refused before the run (found by ApiFuzz.CApiCallSequences: UBSan saw the
// dependency tracker's byte interval overflow).
TEST(CApi, StridesWhoseSpanPassesInt64AreRefused) {
  pto2_runtime_config c = {1, 1, 0, 0, 0, 0};
  char err[512];
  void* rt = pto2_runtime_create(&c, nullptr, 0, err, sizeof err);
  ASSERT_NE(rt, nullptr) << err;
  float data[16] = {};
  uint32_t shapes[2] = {4, 4};
  int64_t strides[2] = {INT64_MAX / 2, 1};
  pto2_tensor_arg t = {data, 0, 2, shapes, strides};
  EXPECT_EQ(pto2_runtime_run(rt, (void*)&c_api_noop_entry, &t, 1, nullptr, 0, nullptr, err, sizeof err), 0);
  EXPECT_NE(std::string(err).find("pto2_runtime_run: tensor 0"), std::string::npos) << err;
  EXPECT_NE(std::string(err).find("2^63 bytes"), std::string::npos) << err;
  strides[0] = -4;  // negative strides are fine (numpy views): the run works
  t.data = data + 12;
  EXPECT_EQ(pto2_runtime_run(rt, (void*)&c_api_noop_entry, &t, 1, nullptr, 0, nullptr, err, sizeof err), 1) << err;
  pto2_runtime_destroy(rt);
}
