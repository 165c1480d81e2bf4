// SmallVec (pto2/task.h), the container of an Arg's tensors, scalars and dependencies: assign
// copies small elements one by one up to the inline count (set_dependencies of a few ids) and
// larger ones or longer runs with memcpy; every count, before and after the heap buffer, must
// give exactly the source's elements.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "pto_orchestration_api.h"

namespace {

struct Pair16 {
  uint64_t a, b;
};

template <class T, uint32_t N, class Make>
void check_every_count(Make&& make) {
  pto2::SmallVec<T, N> v;
  // Counts up to past the inline capacity, then back down: the heap buffer (cap_ > N) is
  // reused for the small counts, which then take the element-by-element path.
  std::vector<uint32_t> counts;
  for (uint32_t n = 0; n <= N + 3; ++n) counts.push_back(n);
  for (uint32_t n = N + 3; n-- > 0;) counts.push_back(n);
  uint64_t stamp = 1;
  for (uint32_t n : counts) {
    std::vector<T> src;
    for (uint32_t i = 0; i < n; ++i) src.push_back(make(stamp++));
    v.assign(src.data(), src.data() + n);
    ASSERT_EQ(v.size(), n);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(std::memcmp(&v[i], &src[i], sizeof(T)), 0) << "count " << n << " element " << i;
  }
}

TEST(SmallVec, AssignCopiesExactlyTheSourceAtEveryCount) {
  check_every_count<uint64_t, 8>([](uint64_t s) { return s * 0x9E3779B97F4A7C15ull; });
  check_every_count<uint32_t, 8>([](uint64_t s) { return static_cast<uint32_t>(s * 2654435761u); });
  check_every_count<PTO2TaskId, 8>([](uint64_t s) {
    PTO2TaskId id;
    id.raw = s << 3;
    return id;
  });
  check_every_count<Pair16, 6>([](uint64_t s) { return Pair16{s, ~s}; });
  static float buf[1];
  check_every_count<Tensor, 4>([](uint64_t s) {
    const uint32_t shape[1] = {static_cast<uint32_t>(s)};
    Tensor t = make_tensor_external(buf, shape, 1, DataType::FLOAT32);
    t.offset = static_cast<int64_t>(s);
    return t;
  });
}

TEST(SmallVec, SetDependenciesKeepsEveryIdInOrder) {
  PTO2TaskId ids[11];
  for (uint32_t i = 0; i < 11; ++i) ids[i].raw = 100 + i;
  for (uint32_t n = 0; n <= 11; ++n) {
    Arg a;
    a.add_dependency(ids[10]);  // replaced, not kept
    a.set_dependencies(ids, n);
    ASSERT_EQ(a.dependencies().size(), n);
    for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(a.dependencies()[i].raw, 100 + i);
  }
}

}  // namespace
