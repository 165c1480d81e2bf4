// The pool IR nodes come from (node_pool.h): nodes made in a row sit in a row, freed blocks are
// reused (also those freed by another thread, or left by a thread that ended; memory stays
// bounded when one thread makes and another frees), and scalar types are interned.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
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
// 448 bytes with its reference counts: a block size no IR node has (the largest, Call and
// ForStmt, are 360-368), so blocks other tests freed into the shared lists are not among them.
struct Probe {
  char bytes[432];
};

TEST(NodePool, NodesMadeInARowSitInARow) {
  // On a fresh thread, with other allocations in between (the strings and vectors a parser
  // makes): each node follows the previous one at a fixed distance.
  std::vector<const char*> addr;
  std::thread([&] {
    std::vector<std::string> noise;
    std::vector<std::shared_ptr<Probe>> keep;
    for (int i = 0; i < 200; ++i) {
      noise.emplace_back(100 + i % 7, 'x');   // heap strings of varying sizes
      keep.push_back(make_node<Probe>());
      addr.push_back(keep.back()->bytes);
    }
  }).join();
  // Adjacent blocks: carved in order from a fresh chunk, or (when this test ran before in this
  // process and its thread handed its blocks on) reused in the reverse order they were freed.
  const std::ptrdiff_t step = addr[1] - addr[0];
  EXPECT_TRUE(step == 448 || step == -448) << step;
  int in_a_row = 0;
  for (size_t i = 1; i < addr.size(); ++i) in_a_row += addr[i] - addr[i - 1] == step;
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

TEST(NodePool, OneThreadMakingAndAnotherFreeingTakesBoundedMemory) {
  // Thread A makes the nodes, a long-lived thread B frees them, round after round (a compile
  // in a worker thread whose program the main thread drops): B's freed blocks must come back to
  // A, not pile up in B's list while A takes new memory for every round.
  std::mutex mu;
  std::condition_variable cv;
  std::vector<ExprPtr> handed;
  bool has_work = false, stop = false;
  std::thread freer([&] {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return has_work || stop; });
      if (has_work) {
        handed.clear();   // frees them, on this thread
        has_work = false;
        cv.notify_all();
      } else {
        return;
      }
    }
  });
  long long after_warm_up = 0;
  for (int round = 0; round < 12; ++round) {
    std::vector<ExprPtr> made = make_vars(20000);
    std::unique_lock<std::mutex> lock(mu);
    handed = std::move(made);
    has_work = true;
    cv.notify_all();
    cv.wait(lock, [&] { return !has_work; });
    if (round == 3) after_warm_up = pool::reserved_bytes();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
  }
  cv.notify_all();
  freer.join();
  // The freer keeps up to 256 KB of blocks of a size before it hands them on, so the maker may
  // still take a few chunks after the warm-up, never a round's worth (20,000 nodes, ~2.5 MB:
  // without the hand-on every round took that much new memory).
  EXPECT_LE(pool::reserved_bytes() - after_warm_up, 512 * 1024);
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
