// Edge values at the public API found by the API fuzzer (test_api_fuzz.cpp): each is refused
// with a message naming the call, instead of undefined behaviour or an access outside a tensor.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "test_util.h"

// Row-major strides of [2^32-1] x 8 overflowed int64 (undefined behaviour, UBSan's report), and
// views of such a tensor computed offsets that wrapped.
TEST(ApiEdges, MakeTensorExternalRefusesShapesPast2To63Bytes) {
  static float cell[1];
  const uint32_t huge[8] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 1, 1, 1, 1};
  try {
    make_tensor_external(cell, huge, 8, DataType::FLOAT32);
    ADD_FAILURE() << "make_tensor_external accepted a tensor of 2^128 elements";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "make_tensor_external: a tensor [4294967295, 4294967295, 4294967295, 4294967295, 1, 1, 1, 1] float32 "
                 "spans more than 2^63 bytes (its extents multiplied, an empty axis counted as 1; no memory holds it: "
                 "check the shape)");
  }
  const uint32_t edge[2] = {0x80000000u, 0x80000000u};  // 2^62 elements: 2^64 bytes of float32
  EXPECT_THROW(make_tensor_external(cell, edge, 2, DataType::FLOAT32), std::invalid_argument);
  const Tensor ok = make_tensor_external(cell, edge, 2, DataType::INT8);  // 2^62 bytes: representable
  EXPECT_EQ(ok.strides[0], int64_t{1} << 31);
}

// The new shape's element count overflowed int64 while being compared with the source's.
TEST(ApiEdges, ReshapeToAShapePast2To63ElementsIsRefused) {
  std::vector<float> x(4, 0);
  const Tensor t = ext1d(x);
  const uint32_t huge[4] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 4};
  try {
    t.reshape(huge, 4);
    ADD_FAILURE() << "reshape accepted a shape of 2^98 elements";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("Tensor::reshape: cannot reshape a tensor of 4 elements into a shape "
                                         "[4294967295, 4294967295, 4294967295, 4] of more than 2^63 elements"),
              std::string::npos)
        << e.what();
  }
}

// An empty tensor holds no byte, but [0, 2^32-1, 2^32-1] FP32 has row-major strides, view
// offsets and tracker intervals past int64 (UBSan: region.h, Region::of, when a task used it).
TEST(ApiEdges, EmptyTensorsWhoseOtherExtentsSpanPast2To63BytesAreRefused) {
  static float cell[1];
  const uint32_t sh[3] = {0, 0xffffffffu, 0xffffffffu};
  try {
    make_tensor_external(cell, sh, 3, DataType::FLOAT32);
    ADD_FAILURE() << "make_tensor_external accepted an empty tensor spanning 2^66 bytes";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("[0, 4294967295, 4294967295] float32 spans more than 2^63 bytes"),
              std::string::npos) << e.what();
  }
  const uint32_t fine[3] = {0, 0xffffffffu, 4};  // spans 2^36 bytes: an empty tensor like any other
  EXPECT_EQ(make_tensor_external(cell, fine, 3, DataType::FLOAT32).numel(), 0);

  for (int via_arg = 0; via_arg < 2; ++via_arg) {
    pto2::Runtime rt(workers(1));
    register_std(rt);
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      TensorCreateInfo ci(sh, 3, DataType::FLOAT32);
      if (via_arg) {
        Arg a;
        a.add_output(ci);
        rt_submit_aiv_task(3, a);
      } else {
        Arg a;
        a.add_inout(alloc_tensors(ci).get_ref(0));
        rt_submit_aiv_task(3, a);
      }
    });
    EXPECT_NE(r.message.find("allocation of a tensor [0, 4294967295, 4294967295] float32 (empty) spans more than "
                             "2^63 bytes"),
              std::string::npos)
        << r.message;
  }
}

// A dtype that is no DataType (an int cast to it) was accepted: dtype_size called it 1 byte,
// set_tensor_data wrote nothing and an initial value filled the tensor with uninitialized bytes.
TEST(ApiEdges, DtypesThatAreNoDataTypeAreRefusedNamingTheCall) {
  static float cell[4];
  const uint32_t sh[1] = {4};
  const DataType bad = static_cast<DataType>(200);
  try {
    make_tensor_external(cell, sh, 1, bad);
    ADD_FAILURE() << "make_tensor_external accepted dtype 200";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "make_tensor_external: dtype 200 is not a DataType (0..11, FLOAT32..BOOL)");
  }
  try {
    TensorCreateInfo ci(sh, 1, static_cast<DataType>(12));
    ADD_FAILURE() << "TensorCreateInfo accepted dtype 12";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "TensorCreateInfo: dtype 12 is not a DataType (0..11, FLOAT32..BOOL)");
  }
  // Its public fields changed after construction: the allocation refuses it.
  pto2::Runtime rt(workers(1));
  register_std(rt);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    TensorCreateInfo ci(sh, 1, DataType::FLOAT32);
    ci.dtype = bad;
    ci.set_initial_value(1.0);
    alloc_tensors(ci);
  });
  EXPECT_NE(r.message.find("allocation of a tensor [4]: dtype 200 is not a DataType"), std::string::npos) << r.message;
  EXPECT_EQ(make_tensor_external(cell, sh, 1, DataType::BOOL).dtype, DataType::BOOL);
}

// [2^31, 2^32-1] INT8 spans 2^63 - 2^31 bytes, but its empty view one past the end of both axes
// (offsets == extents, allowed) starts at element 2^63 + 2^31 - 1: Tensor::view overflowed int64
// (UBSan, types.h). Tensors whose one-past-the-end offsets do not fit are refused.
TEST(ApiEdges, TensorsWhoseViewsCouldStartPast2To63AreRefused) {
  static int8_t cell[1];
  const uint32_t sh[2] = {0x80000000u, 0xffffffffu};
  try {
    make_tensor_external(cell, sh, 2, DataType::INT8);
    ADD_FAILURE() << "make_tensor_external accepted [2^31, 2^32-1] int8";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("make_tensor_external: a tensor [2147483648, 4294967295] int8 spans more"),
              std::string::npos) << e.what();
  }
  // Reshaping a tensor into a shape whose views reach further is refused the same way.
  const uint32_t flat[1] = {0x80000000u};
  const Tensor t = make_tensor_external(cell, flat, 1, DataType::INT64);  // 2^34 bytes
  const uint32_t ones[8] = {1, 1, 1, 1, 1, 1, 1, 0x80000000u};
  EXPECT_EQ(t.reshape(ones, 8).numel(), int64_t{1} << 31);  // 8 x 2^34 bytes: fine
  const uint32_t sh61[2] = {1u << 30, 1u << 31};  // 2^61 int8: its views end below 2^62
  const Tensor s61 = make_tensor_external(cell, sh61, 2, DataType::INT8);
  const uint32_t far[8] = {1, 1, 1, 1, 1, 1, 1u << 30, 1u << 31};  // one past the end of 6 axes: 6 x 2^61 more
  try {
    s61.reshape(far, 8);
    ADD_FAILURE() << "reshape made a tensor whose views start past 2^63";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("Tensor::reshape: the shape [1, 1, 1, 1, 1, 1, 1073741824, 2147483648] at "
                                         "offset 0 lets views reach past 2^63 bytes"),
              std::string::npos) << e.what();
  }
  const uint32_t big[1] = {0xffffffffu};
  const Tensor b = make_tensor_external(cell, big, 1, DataType::INT8);
  const uint32_t b2[2] = {1, 0xffffffffu};
  EXPECT_EQ(b.reshape(b2, 2).numel(), int64_t{0xffffffff});
}

// make_tensor_external(nullptr, ...) of a tensor with elements was accepted and its tasks ran the
// kernel on NULL (SIGSEGV); the C API already refused it. An empty tensor may still be NULL.
TEST(ApiEdges, ATensorWithElementsButNullDataIsRefused) {
  uint32_t sh[2] = {16, 16};
  EXPECT_NE(message_of([&] { make_tensor_external(nullptr, sh, 2, DataType::FLOAT32); })
                .find("make_tensor_external: a tensor [16, 16] float32 has elements but a NULL data pointer"),
            std::string::npos);
  uint32_t empty[2] = {0, 16};
  EXPECT_EQ(make_tensor_external(nullptr, empty, 2, DataType::FLOAT32).data, nullptr);
  // Built by hand, past make_tensor_external: the run refuses it before its entry runs.
  std::vector<float> b(256, 0.f);
  Tensor t = make_tensor_external(b.data(), sh, 2, DataType::FLOAT32);
  t.data = nullptr;
  ChipStorageTaskArgs args;
  args.add_tensor(t);
  pto2::Runtime rt(workers(1));
  bool entered = false;
  const pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) { entered = true; }, args);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(entered);
  EXPECT_NE(r.message.find("tensor argument 0 has elements but a NULL data pointer"), std::string::npos) << r.message;
}

// A PTO2ScopeGuard that outlived its run (made with new) was accepted silently, and deleting it in
// a later run popped that run's outermost scope: Runtime::run crashed. Guards destroyed out of
// order closed the wrong scope silently.
TEST(ApiEdges, ScopeGuardsThatOutliveTheirRunOrCloseOutOfOrderFailTheRunAndCloseNothingElse) {
  std::vector<float> a(16, 1.f), b(16, 0.f);
  ChipStorageTaskArgs args;
  args.add_tensor(ext1d(a));
  args.add_tensor(ext1d(b));
  pto2::Runtime rt(workers(1));
  rt.register_kernel(0, "add", pto2::CoreType::AIV, &k_add);
  auto add_one = [](const ChipStorageTaskArgs& oa) {
    Arg p;
    p.add_input(oa.tensor(0).ref());
    p.add_output(oa.tensor(1).ref());
    p.add_scalar(uint64_t{1});
    rt_submit_aiv_task(0, p);
  };
  PTO2ScopeGuard* leaked = nullptr;
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) { leaked = new PTO2ScopeGuard(PTO2ScopeMode::MANUAL); }, args);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("1 PTO2_SCOPE(s) still open when the orchestration entry returned"), std::string::npos)
      << r.message;
  r = rt.run([&](const ChipStorageTaskArgs& oa) {
    delete leaked;   // its run closed it: nothing to close here
    add_one(oa);
  }, args);
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(b[3], 2.f);
  r = rt.run([&](const ChipStorageTaskArgs& oa) {
    auto* outer = new PTO2ScopeGuard();
    auto* inner = new PTO2ScopeGuard(PTO2ScopeMode::MANUAL);
    delete outer;
    add_one(oa);
    delete inner;
  }, args);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("a PTO2_SCOPE closed while a scope opened inside it was still open"), std::string::npos)
      << r.message;
  EXPECT_TRUE(rt.run([&](const ChipStorageTaskArgs& oa) { add_one(oa); }, args).ok());
}
