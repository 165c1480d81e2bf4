// PtrMap: the open-addressing map of node pointers the per-node tables of long bodies use
// (VarDefs, StampCallOperands' last uses).
#include <gtest/gtest.h>

#include <unordered_map>
#include <vector>

#include "pypto/transforms/ptr_map.h"

namespace pypto::transforms {
namespace {

struct Node {
  int id;
};

TEST(PtrMap, InsertsFindsAndKeepsEntriesAcrossRegrowth) {
  std::vector<Node> nodes(5000);
  PtrMap<Node, int64_t> m;
  EXPECT_EQ(m.find(&nodes[0]), nullptr);   // empty: no slot array yet
  std::unordered_map<const Node*, int64_t> want;
  for (size_t i = 0; i < nodes.size(); i += 2) {   // every other node, regrowing many times
    m[&nodes[i]] = static_cast<int64_t>(i) * 3;
    want[&nodes[i]] = static_cast<int64_t>(i) * 3;
  }
  m[&nodes[10]] += 1;   // an existing entry: updated in place, not inserted again
  ++want[&nodes[10]];
  EXPECT_EQ(m.size(), want.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int64_t* v = m.find(&nodes[i]);
    if (i % 2) {
      EXPECT_EQ(v, nullptr) << i;
    } else {
      ASSERT_NE(v, nullptr) << i;
      EXPECT_EQ(*v, want[&nodes[i]]) << i;
    }
  }
}

TEST(PtrMap, OperatorBracketStartsFromAValueInitialisedEntry) {
  Node a{1}, b{2};
  PtrMap<Node, int64_t> m;
  m.reserve(100);
  EXPECT_EQ(m[&a], 0);
  m[&b] = -7;
  m.reserve(3);   // smaller than it holds: nothing moves
  EXPECT_EQ(*m.find(&b), -7);
  EXPECT_EQ(*m.find(&a), 0);
  EXPECT_EQ(m.size(), 2u);
}

}  // namespace
}  // namespace pypto::transforms
