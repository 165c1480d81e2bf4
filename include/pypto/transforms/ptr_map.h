// PtrMap: a map keyed by node pointer (a Var, a Stmt), for the per-node tables of long bodies.
//
// Open addressing (linear probing, at most half full) in one array: a node-based
// std::unordered_map allocates a node per entry and rehashes by relinking them, and on a
// 100,000-statement body those allocations and the scattered nodes were most of a pass's time.
//
//   PtrMap<ir::Var, int64_t> last;  last.reserve(CountVarDefs(body));
//   last[v] = std::max(last[v], n);                    // inserts 0 first
//   if (const int64_t* l = last.find(v)) use(*l);
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace pypto::transforms {

template <class Key, class Value>
class PtrMap {
 public:
  // The value of `k`, or null when absent.
  const Value* find(const Key* k) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = slot_of(k);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].first == k) return &slots_[i].second;
      if (!slots_[i].first) return nullptr;
    }
  }
  // The value of `k`, inserted as Value{} when absent (`k` must not be null).
  Value& operator[](const Key* k) {
    if (2 * (size_ + 1) > slots_.size()) reserve(size_ + 1);
    for (size_t i = slot_of(k);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].first == k) return slots_[i].second;
      if (!slots_[i].first) {
        slots_[i].first = k;
        ++size_;
        return slots_[i].second;
      }
    }
  }
  // Room for `n` entries without regrowing.
  void reserve(size_t n) {
    size_t want = 8;
    while (want < 2 * n) want *= 2;
    if (want <= slots_.size()) return;
    std::vector<std::pair<const Key*, Value>> old = std::move(slots_);
    slots_.assign(want, {nullptr, Value{}});
    size_ = 0;
    for (auto& e : old) {
      if (e.first) (*this)[e.first] = std::move(e.second);
    }
  }
  size_t size() const { return size_; }

 private:
  size_t slot_of(const Key* k) const {
    uint64_t h = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(k) >> 4) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h ^ (h >> 32)) & (slots_.size() - 1);
  }
  std::vector<std::pair<const Key*, Value>> slots_;   // power-of-two size; a null key = free
  size_t size_ = 0;
};

}  // namespace pypto::transforms
