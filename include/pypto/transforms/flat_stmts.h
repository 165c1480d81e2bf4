// FlatStmts: the statements of a body in order, as ir::flatten_stmts lists them, read in place
// when the body is already flat.
#pragma once
#include <algorithm>
#include <vector>

#include "pypto/ir/mutator.h"

namespace pypto::transforms {

// The statements of `body` in order (what ir::flatten_stmts returns). A SeqStmts without nested
// SeqStmts or null children (the usual function body) is read in place: walking a
// 40,000-statement body copies no shared_ptr (each copy writes the node's count, a cache miss)
// and allocates no vector. `body` must outlive the FlatStmts.
//   for (const StmtPtr& st : FlatStmts(fn.body)) visit(st);
class FlatStmts {
 public:
  explicit FlatStmts(const ir::StmtPtr& body) {
    auto* seq = body ? body->as<ir::SeqStmts>() : nullptr;
    bool flat = seq != nullptr;
    for (size_t i = 0; flat && i < seq->stmts.size(); ++i) {
      ir::prefetch_stmts_ahead(seq->stmts, i);   // this scan is the first touch of each node
      flat = seq->stmts[i] && !seq->stmts[i]->is<ir::SeqStmts>();
    }
    if (flat) {
      view_ = &seq->stmts;
    } else {
      own_ = ir::flatten_stmts(body);
    }
  }
  FlatStmts(const FlatStmts&) = delete;
  FlatStmts& operator=(const FlatStmts&) = delete;

  const std::vector<ir::StmtPtr>& stmts() const { return view_ ? *view_ : own_; }
  std::vector<ir::StmtPtr>::const_iterator begin() const { return stmts().begin(); }
  std::vector<ir::StmtPtr>::const_iterator end() const { return stmts().end(); }
  bool empty() const { return stmts().empty(); }
  const ir::StmtPtr& back() const { return stmts().back(); }

 private:
  const std::vector<ir::StmtPtr>* view_ = nullptr;
  std::vector<ir::StmtPtr> own_;
};

// True when `pred(prev, st)` holds for a statement `st` of `body` or of a block nested in it (a
// loop's body, a branch, a runtime scope's body), `prev` being the statement before `st` in its
// own block (null for a block's first). A statement scan, cheap next to a full walk: the
// expressions are not visited, so passes run it first to skip bodies with nothing to do.
//   bool any_call = AnyNestedStmt(fn.body, [](const ir::Stmt*, const ir::Stmt& st) { return st.is<ir::EvalStmt>(); });
template <typename Pred>
bool AnyNestedStmt(const ir::StmtPtr& body, const Pred& pred) {
  if (!body) return false;
  const ir::Stmt* prev = nullptr;
  for (const ir::StmtPtr& st : FlatStmts(body)) {
    if (pred(prev, *st)) return true;
    if (auto* f = st->as<ir::ForStmt>(); f && AnyNestedStmt(f->body, pred)) return true;
    if (auto* b = st->as<ir::IfStmt>(); b && (AnyNestedStmt(b->then_body, pred) || AnyNestedStmt(b->else_body, pred))) {
      return true;
    }
    if (auto* r = st->as<ir::RuntimeScopeStmt>(); r && AnyNestedStmt(r->body, pred)) return true;
    prev = st.get();
  }
  return false;
}

}  // namespace pypto::transforms
