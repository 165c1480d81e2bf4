// Iterative release of IR trees (expr.h, release_children): the destructor of a node with
// children defers them here instead of freeing them in place, so that dropping the last
// reference to a 200,000-level expression does not recurse 200,000 destructors deep.
#include <vector>

#include "pypto/ir/expr.h"

namespace pypto::ir::detail {

namespace {

// The nodes waiting to be released by the outermost DeferRelease running on this thread (null
// when none runs). A raw pointer to a local, so the thread-local needs no destructor.
thread_local std::vector<std::shared_ptr<const Node>>* t_pending = nullptr;

}  // namespace

void DeferRelease(std::shared_ptr<const Node> node) {
  if (!node) return;
  if (t_pending) {   // inside a release already: the loop below frees it
    t_pending->push_back(std::move(node));
    return;
  }
  std::vector<std::shared_ptr<const Node>> pending;
  t_pending = &pending;
  pending.push_back(std::move(node));
  while (!pending.empty()) {
    std::shared_ptr<const Node> next = std::move(pending.back());
    pending.pop_back();
    next.reset();   // if this was the last owner, its destructor defers its own children
  }
  t_pending = nullptr;
}

}  // namespace pypto::ir::detail
