// Buffer roots: which buffers a tensor value of a function may be (anchor §16).
//
//   def main(self, a, b: pl.InOut[...]):
//       t = pl.create_tensor([16, 16], dtype=pl.FP32)   # roots(t) == {t}
//       c = self.k(a, t)                                 # k returns its Out param: roots(c) == {t}
//       v = pl.slice(b, [8, 16], [0, 0])                 # roots(v) == {b} (views followed)
//                                                        #          == {v} (views are roots)
//
// Roots are function parameters, `tensor.create` results, results no argument backs (a
// runtime-allocated output) and, when `views_are_roots`, `tensor.slice` / `tensor.transpose` /
// `tensor.reshape` results. Plain assignments, loop carries, if-results, writes (`tile.store`,
// `tensor.assemble`, `tensor.write`, `tile.mscatter`) and a callee's Out/InOut results inherit
// the roots of the value they copy. A carry or if-result can have several roots.
#pragma once
#include <algorithm>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <vector>

#include "pypto/ir/function.h"

namespace pypto::transforms {

// A set of root Vars, iterated in pointer order (as std::set was). Almost every value has one
// root: that one is stored inline, so a function of 100,000 tensor Vars costs no allocation
// per Var (std::set allocated a tree node per root, a cache miss apiece on every lookup).
//   RootSet r{t};  r.insert(u);  r.count(t) == 1;  for (const Var* v : r) ...
class RootSet {
 public:
  using const_iterator = const ir::Var* const*;
  RootSet() = default;
  RootSet(std::initializer_list<const ir::Var*> vars) {
    for (const ir::Var* v : vars) insert(v);
  }
  const_iterator begin() const { return many_.empty() ? &one_ : many_.data(); }
  const_iterator end() const { return many_.empty() ? &one_ + (one_ ? 1 : 0) : many_.data() + many_.size(); }
  size_t size() const { return many_.empty() ? (one_ ? 1 : 0) : many_.size(); }
  bool empty() const { return size() == 0; }
  size_t count(const ir::Var* v) const { return std::binary_search(begin(), end(), v) ? 1 : 0; }
  // Adds `v` (never null); true when it was not there yet.
  bool insert(const ir::Var* v) {
    if (many_.empty()) {
      if (!one_ || one_ == v) {
        const bool added = !one_;
        one_ = v;
        return added;
      }
      many_ = {std::min(one_, v), std::max(one_, v)};
      one_ = nullptr;
      return true;
    }
    auto it = std::lower_bound(many_.begin(), many_.end(), v);
    if (it != many_.end() && *it == v) return false;
    many_.insert(it, v);
    return true;
  }
  // Adds every Var of [first, last) (a range of another set, or of this one: a no-op).
  template <class It>
  void insert(It first, It last) {
    if (first == begin()) return;   // the set itself
    for (; first != last; ++first) insert(*first);
  }

 private:
  const ir::Var* one_ = nullptr;       // the only element while many_ is empty (null: none)
  std::vector<const ir::Var*> many_;   // sorted, from two elements on
};

class BufferRoots {
 public:
  // Analyses every tensor Var defined in `fn` (callees are looked up in `program`).
  BufferRoots(const ir::Program& program, const ir::Function& fn, bool views_are_roots);
  // The roots of `e` (a Var or IterArg); empty for anything else.
  const RootSet& of(const ir::ExprPtr& e) const;
  const RootSet& of(const ir::Var* v) const;

 private:
  void walk(const ir::StmtPtr& s);
  void assign(const ir::Var* v, const ir::ExprPtr& value);
  std::vector<RootSet> value_roots(const ir::Var* self, const ir::ExprPtr& value);
  bool merge(const ir::Var* v, const RootSet& roots);
  const RootSet* single_value_roots(const ir::Var* self, const ir::ExprPtr& value);
  void merge_self(const ir::Var* v);
  const std::vector<int>& callee_lineage(const std::string& callee);

  const ir::Program& program_;
  bool views_are_roots_;
  bool changed_ = false;
  bool saw_loop_ = false;   // this round walked a ForStmt (its carries may need another round)
  std::unordered_map<const ir::Var*, RootSet> roots_;
  std::unordered_map<const ir::Var*, std::vector<RootSet>> tuple_roots_;   // tuple-typed Vars, per element
  std::unordered_map<std::string, std::vector<int>> lineage_;              // callee -> ReturnedParamIndices
};

// Index of the tensor argument an op writes in place (tile.store -> 2, tensor.assemble -> 0,
// tensor.write -> 0, tile.mscatter -> 2), or -1 for an op that writes no tensor argument.
int WrittenTensorArg(const std::string& op);

}  // namespace pypto::transforms
