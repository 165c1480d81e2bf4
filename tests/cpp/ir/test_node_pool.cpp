// The pool IR nodes come from (node_pool.h): nodes made in a row sit in a row, freed blocks are
// reused (also those freed by another thread, or left by a thread that ended), and scalar types
// are interned.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "ir_test_util.h"
#include "pypto/ir/node_pool.h"
#include "pypto/ir/stmt.h"

using namespace pypto::ir;
using namespace pypto::ir::test;

namespace {

std::vector<ExprPtr> make_vars(int n) {
  std::vector<ExprPtr> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(Var::make("v" + std::to_string(i), scalar(DataType::INDEX)));
  return out;
}

TEST(NodePool, ScalarTypesAreInterned) {
  EXPECT_EQ(ScalarType::make(DataType::FP32), ScalarType::make(DataType::FP32));
  EXPECT_NE(ScalarType::make(DataType::FP32), ScalarType::make(DataType::INT32));
  EXPECT_EQ(ScalarType::make(DataType::TASK_ID)->dtype, DataType::TASK_ID);
  EXPECT_EQ(ConstInt::make(1, DataType::INDEX)->type, ConstInt::make(2, DataType::INDEX)->type);
}

#if PYPTO_NODE_POOL
TEST(NodePool, NodesMadeInARowSitInARow) {
  // On a fresh thread (an empty pool), with other allocations in between (the strings and
  // vectors a parser makes): each Var follows the previous one at a fixed distance.
  std::vector<const char*> addr;
  std::thread([&] {
    std::vector<std::string> noise;
    std::vector<ExprPtr> keep;
    for (int i = 0; i < 200; ++i) {
      noise.emplace_back(100 + i % 7, 'x');   // heap strings of varying sizes
      keep.push_back(Var::make("a_long_enough_name_" + std::to_string(i), scalar(DataType::INDEX)));
      addr.push_back(reinterpret_cast<const char*>(keep.back().get()));
    }
  }).join();
  int in_a_row = 0;
  for (size_t i = 1; i < addr.size(); ++i) in_a_row += addr[i] - addr[i - 1] == addr[1] - addr[0];
  EXPECT_GT(addr[1], addr[0]);
  EXPECT_GE(in_a_row, 190);   // a new chunk now and then breaks the row
}

TEST(NodePool, FreedBlocksAreReused) {
  make_vars(50000);   // warm: the pool now holds blocks for 50,000 Vars
  const long long reserved = pool::reserved_bytes();
  for (int round = 0; round < 5; ++round) make_vars(50000);
  EXPECT_EQ(pool::reserved_bytes(), reserved);
}

TEST(NodePool, BlocksOfAThreadThatEndedAreReused) {
  // Nodes made on one thread, freed on another that then ends: the blocks go to the shared
  // lists, and a third thread builds as many nodes again without taking new memory.
  std::vector<ExprPtr> made;
  std::thread([&] { made = make_vars(20000); }).join();
  std::thread([&] { made.clear(); }).join();
  const long long reserved = pool::reserved_bytes();
  std::thread([] { make_vars(20000); }).join();
  EXPECT_EQ(pool::reserved_bytes(), reserved);
}
#endif

TEST(NodePool, NodesFreedAfterTheirThreadEndedAreFreedSafely) {
  // A node outliving the thread that made it, freed on a thread after that thread's own pool is
  // gone (its thread-locals destroyed): no crash, and the node's children are released too.
  auto child = Var::make("child", scalar(DataType::INDEX));
  ExprPtr parent;
  std::thread([&] { parent = BinaryExpr::make(BinaryOp::Add, child, I(1)); }).join();
  EXPECT_EQ(child.use_count(), 2);
  parent.reset();
  EXPECT_EQ(child.use_count(), 1);
}

}  // namespace
