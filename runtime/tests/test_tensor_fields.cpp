// Tensors whose public fields were written by hand (found by ApiFuzz.HandWrittenTensorFields):
// what the runtime can check is an error naming the call — a rank above PTO2_MAX_DIMS (the
// value functions read and transpose wrote past shapes[] / strides[]), a dtype that is no
// DataType, offsets that overflow int64, a runtime-allocated tensor's view or element outside
// its storage (get/set_tensor_data). A submission checks the rank and dtype only; spans are the
// caller's duty there (docs/runtime.md, "Tensors written by hand"), and a negative or zero stride
// over external memory is fine.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "test_util.h"

namespace {

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

Tensor ext2d(std::vector<int32_t>& v, uint32_t rows, uint32_t cols) {
  uint32_t sh[2] = {rows, cols};
  return make_tensor_external(v.data(), sh, 2, DataType::INT32);
}

void k_nop(PTO2KernelContext*) {}

}  // namespace

TEST(TensorFields, ValueFunctionsRefuseARankAboveMaxDims) {
  std::vector<int32_t> v(16);
  for (uint32_t rank : {9u, 100u, 0xffffffffu}) {
    Tensor t = ext2d(v, 4, 4);
    t.ndims = rank;
    uint32_t sh[PTO2_MAX_DIMS] = {1, 1}, off[PTO2_MAX_DIMS] = {};
    int64_t idx[PTO2_MAX_DIMS] = {};
    uint32_t r1[1] = {16};
    EXPECT_NE(error_of([&] { (void)t.view(sh, off); }).find("Tensor::view: the tensor's rank (ndims) is"), std::string::npos);
    EXPECT_NE(error_of([&] { (void)t.transpose(50, 60); }).find("Tensor::transpose: the tensor's rank"), std::string::npos);
    EXPECT_NE(error_of([&] { (void)t.reshape(r1, 1); }).find("Tensor::reshape: the tensor's rank"), std::string::npos);
    EXPECT_NE(error_of([&] { (void)t.numel(); }).find("Tensor::numel: the tensor's rank"), std::string::npos);
    EXPECT_NE(error_of([&] { (void)t.element_offset(idx); }).find("Tensor::element_offset: the tensor's rank"), std::string::npos);
    EXPECT_NE(error_of([&] { (void)t.is_contiguous(); }).find("Tensor::is_contiguous: the tensor's rank"), std::string::npos);
  }
}

// view() does not check its offset's sum against int64 (a check per axis cost AUTO nearest 4-5 %
// per task): strides written by hand that take it past int64 wrap, defined (unsigned), and the
// view is the caller's duty (docs/runtime.md). element_offset and numel, off the hot path, refuse.
TEST(TensorFields, ViewWrapsAndElementOffsetRefusesOffsetsPastInt64) {
  std::vector<int32_t> v(16);
  Tensor t = ext2d(v, 4, 4);
  t.strides[0] = INT64_MAX / 2;
  uint32_t sh[2] = {1, 1}, off[2] = {3, 0};
  EXPECT_EQ(t.view(sh, off).offset, static_cast<int64_t>(3 * static_cast<uint64_t>(INT64_MAX / 2)));
  const int64_t idx[2] = {3, 0};
  EXPECT_NE(error_of([&] { (void)t.element_offset(idx); }).find("Tensor::element_offset: index 3 on axis 0"), std::string::npos);
  t.strides[0] = 4;
  t.offset = INT64_MAX - 1;
  EXPECT_EQ(t.view(sh, off).offset, static_cast<int64_t>(static_cast<uint64_t>(INT64_MAX - 1) + 12));
  t.ndims = 8;
  for (uint32_t i = 0; i < 8; ++i) t.shapes[i] = 0xffffffffu;
  EXPECT_NE(error_of([&] { (void)t.numel(); }).find("Tensor::numel: the extents"), std::string::npos);
  EXPECT_FALSE(t.is_contiguous());  // extents past int64 multiply without overflow (unsigned)
}

// get/set_tensor_data check the element against what the runtime knows: in a run a runtime
// tensor's storage; always the rank, the dtype and the address arithmetic.
TEST(TensorFields, GetSetTensorDataRefuseHandWrittenFields) {
  Watchdog wd(60);
  pto2::Runtime rt(workers(1));
  struct Scribble {
    const char* what;
    void (*apply)(Tensor&);
    const char* expect;
  };
  const Scribble cases[] = {
      {"stride past the storage", [](Tensor& t) { t.strides[0] = 1000; }, "of a runtime-allocated tensor whose storage has 64 bytes"},
      {"offset before the storage", [](Tensor& t) { t.offset = -20; }, "of a runtime-allocated tensor whose storage has 64 bytes"},
      {"rank 9", [](Tensor& t) { t.ndims = 9; }, "the tensor's rank (ndims) is 9"},
      {"dtype 200", [](Tensor& t) { t.dtype = static_cast<DataType>(200); }, "dtype 200 is not a DataType"},
      {"offset overflow", [](Tensor& t) { t.offset = INT64_MAX; }, "the element's byte offset overflows int64"},
  };
  for (const Scribble& c : cases) {
    for (bool write : {false, true}) {
      pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
        uint32_t sh[2] = {4, 4};
        Tensor t = alloc_tensors(TensorCreateInfo(sh, 2, DataType::INT32)).get_ref(0);
        c.apply(t);
        int64_t idx[9] = {3, 0};
        if (write) set_tensor_data<int32_t>(t, t.ndims == 9 ? 9 : 2, idx, 1);
        else (void)get_tensor_data<int32_t>(t, t.ndims == 9 ? 9 : 2, idx);
      });
      EXPECT_NE(r.message.find(write ? "set_tensor_data: " : "get_tensor_data: "), std::string::npos) << c.what << ": " << r.message;
      EXPECT_NE(r.message.find(c.expect), std::string::npos) << c.what << ": " << r.message;
    }
  }
  // Outside a run (no storage to compare with): the address arithmetic is still checked.
  std::vector<int32_t> v(16);
  Tensor e = ext2d(v, 4, 4);
  e.offset = INT64_MAX;
  const int64_t idx[2] = {0, 0};
  EXPECT_NE(error_of([&] { (void)get_tensor_data<int32_t>(e, 2, idx); }).find("get_tensor_data: the element's byte offset overflows"),
            std::string::npos);
}

// A submission refuses a rank above PTO2_MAX_DIMS and a dtype that is no DataType — on the
// general path and on the short path (a measured tiny kernel with nothing to wait for runs
// undeferred). Spans are not checked there (the cost; docs/runtime.md): the caller's duty.
TEST(TensorFields, SubmissionRefusesHandWrittenFields) {
  Watchdog wd(60);
  pto2::Runtime rt(workers(1));
  rt.register_kernel(0, "nop", pto2::CoreType::AIV, &k_nop);
  std::vector<int32_t> v(16);
  struct Scribble {
    const char* what;
    bool runtime;
    void (*apply)(Tensor&);
    const char* expect;
  };
  const Scribble cases[] = {
      {"rank 9", false, [](Tensor& t) { t.ndims = 9; }, "rank (ndims) 9 is above PTO2_MAX_DIMS"},
      {"dtype 13 of a runtime tensor", true, [](Tensor& t) { t.dtype = static_cast<DataType>(13); }, "dtype 13 is not a DataType"},
      {"dtype 13", false, [](Tensor& t) { t.dtype = static_cast<DataType>(13); }, "dtype 13 is not a DataType"},
  };
  for (const Scribble& c : cases) {
    for (int warm = 0; warm < 2; ++warm) {  // warm: the kernel is measured tiny (short path)
      pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
        uint32_t sh[2] = {4, 4};
        Tensor t = c.runtime ? alloc_tensors(TensorCreateInfo(sh, 2, DataType::INT32)).get_ref(0) : ext2d(v, 4, 4);
        for (int i = 0; i < warm * 4; ++i) {
          Arg ok;
          ok.add_input(t);
          rt_submit_aiv_task(0, ok);
        }
        c.apply(t);
        Arg a;
        a.add_input(t);
        rt_submit_aiv_task(0, a);
      });
      EXPECT_NE(r.message.find("rt_submit_aiv_task (task #"), std::string::npos) << c.what << ": " << r.message;
      EXPECT_NE(r.message.find("tensor slot 0: "), std::string::npos) << c.what << ": " << r.message;
      EXPECT_NE(r.message.find(c.expect), std::string::npos) << c.what << ": " << r.message;
    }
  }
  // Not refused: negative and zero strides over external memory (numpy views; the caller's duty).
  pto2::RunResult ok = rt.run([&](const ChipStorageTaskArgs&) {
    Tensor t = ext2d(v, 4, 4);
    t.offset = 15;
    t.strides[0] = -4;
    t.strides[1] = -1;
    Tensor b = ext2d(v, 4, 4);
    b.strides[0] = 0;
    Arg a;
    a.add_input(t);
    a.add_input(b);
    rt_submit_aiv_task(0, a);
  });
  EXPECT_TRUE(ok.ok()) << ok.message;
}
