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
                 "spans more than 2^63 bytes (no memory holds it; check the shape)");
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
