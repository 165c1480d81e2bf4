// scope_stack.h — the scopes of a run and the memory of runtime-allocated tensors: the
// PTO2_SCOPE nesting (AUTO or MANUAL), the storages each scope owns, and the memory pool they
// come from.
//
//     scopes.open_run();                       // the run's outermost scope (AUTO, not a PTO2_SCOPE)
//     scopes.begin(PTO2ScopeMode::MANUAL, 0);  // PTO2_SCOPE(MANUAL)
//     scopes.adopt(storage);                   // the innermost scope releases it at its end
//     scopes.end();
//     scopes.close_run();                      // the outermost scope's storages wait for the tail
//     scopes.release_run_allocs();             // ... and are released once it retired
//
// Orchestrator thread, except the pool's release path (MemoryPool::task_release, any thread).
// The pool waiting for memory, the tracker forgetting freed storage and the trace of scopes
// are the Engine's (scopes.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "memory_pool.h"
#include "pto_orchestration_api.h"

namespace pto2::detail {

struct Scope {
  PTO2ScopeMode mode;
  std::vector<PTO2Storage*> allocs;
  int64_t start_ns = 0;  // trace only
};

class ScopeStack {
 public:
  MemoryPool& pool() { return pool_; }
  const MemoryPool& pool() const { return pool_; }

  /// A run starts: its outermost scope (AUTO).
  void open_run() { scopes_.push_back(Scope{PTO2ScopeMode::AUTO, {}}); }
  /// The run's entry returned: the outermost scope's storages are kept (run_allocs) until
  /// the run's tasks have all finished; no scope is open afterwards.
  void close_run() {
    run_allocs_ = std::move(scopes_.back().allocs);
    scopes_.clear();
  }
  /// Releases the run's outermost storages (every task of the run retired).
  void release_run_allocs() {
    for (PTO2Storage* st : run_allocs_) pool_.scope_release(st);
    run_allocs_.clear();
  }

  /// Opens a nested scope (`start_ns`: for its trace span).
  void begin(PTO2ScopeMode mode, int64_t start_ns) { scopes_.push_back(Scope{mode, {}, start_ns}); }
  /// Closes the innermost scope, releasing its storages.
  void end() {
    for (PTO2Storage* s : scopes_.back().allocs) {
      s->scope_closed = true;   // before the release: the record may be reused right after it
      pool_.scope_release(s);
    }
    scopes_.pop_back();
  }
  /// Open scopes, the run's outermost included.
  size_t depth() const { return scopes_.size(); }
  const Scope& innermost() const { return scopes_.back(); }
  bool in_manual() const { return scopes_.back().mode == PTO2ScopeMode::MANUAL; }
  /// Only the run's outermost scope is open: storage allocated now lives until the tail.
  bool at_run_level() const { return scopes_.size() == 1; }
  /// The innermost scope owns `s` (releases it at its end).
  void adopt(PTO2Storage* s) { scopes_.back().allocs.push_back(s); }

 private:
  MemoryPool pool_;
  std::vector<Scope> scopes_;
  std::vector<PTO2Storage*> run_allocs_;  // the outermost scope's, released after the tail
};

}  // namespace pto2::detail
