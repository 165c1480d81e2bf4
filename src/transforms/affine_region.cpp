// Poly (affine_region.h): the symbolic arithmetic behind AutoDeriveTaskDependencies' region
// comparisons.
#include "affine_region.h"

#include <algorithm>

namespace pypto::transforms {

using ir::Var;

Poly Poly::constant(int64_t c) {
  Poly p;
  p.add({}, c);
  return p;
}

Poly Poly::atom(const Var* v) {
  Poly p;
  p.add({v}, 1);
  return p;
}

void Poly::add(const std::vector<const Var*>& mono, int64_t c) {
  if (c == 0) return;
  auto& slot = terms_[mono];
  slot += c;
  if (slot == 0) terms_.erase(mono);
}

Poly Poly::operator+(const Poly& o) const {
  Poly r = *this;
  for (auto& [m, c] : o.terms_) r.add(m, c);
  return r;
}

Poly Poly::operator-(const Poly& o) const {
  Poly r = *this;
  for (auto& [m, c] : o.terms_) r.add(m, -c);
  return r;
}

Poly Poly::operator*(const Poly& o) const {
  Poly r;
  for (auto& [ma, ca] : terms_) {
    for (auto& [mb, cb] : o.terms_) {
      std::vector<const Var*> m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      r.add(m, ca * cb);
    }
  }
  return r;
}

Poly Poly::substitute(const std::map<const Var*, Poly>& sub) const {
  Poly r;
  for (auto& [m, c] : terms_) {
    Poly term = constant(c);
    for (const Var* v : m) {
      auto it = sub.find(v);
      term = term * (it == sub.end() ? atom(v) : it->second);
    }
    r = r + term;
  }
  return r;
}

bool Poly::is_provably_nonneg(const Bounds& bounds) const {
  // Sum of per-monomial minima; saturates to "unknown" on overflow-prone magnitudes.
  constexpr int64_t kLimit = int64_t{1} << 40;
  int64_t total = 0;
  for (auto& [m, c] : terms_) {
    if (m.empty()) {
      total += c;
      continue;
    }
    int64_t lo = 1;
    std::optional<int64_t> hi = 1;
    bool all_nonneg = true;
    for (const Var* v : m) {
      auto it = bounds.find(v);
      if (it == bounds.end()) return false;
      const Bound& b = it->second;
      if (b.lo < 0) all_nonneg = false;
      lo *= b.lo;
      if (hi && b.hi) {
        hi = *hi * *b.hi;
      } else {
        hi.reset();
      }
      if (lo > kLimit || lo < -kLimit || (hi && (*hi > kLimit || *hi < -kLimit))) return false;
    }
    if (!all_nonneg && m.size() != 1) return false;
    if (c > 0) {
      total += c * lo;
    } else {
      if (!hi) return false;
      total += c * *hi;
    }
    if (total > kLimit || total < -kLimit) return false;
  }
  return total >= 0;
}

std::set<const Var*> Poly::atoms() const {
  std::set<const Var*> s;
  for (auto& [m, c] : terms_) s.insert(m.begin(), m.end());
  return s;
}

std::string Poly::str() const {
  if (terms_.empty()) return "0";
  std::string s;
  for (auto& [m, c] : terms_) {
    std::string t = std::to_string(c);
    for (const Var* v : m) t += "*" + v->name;
    s += (s.empty() ? "" : " + ") + t;
  }
  return s;
}

}  // namespace pypto::transforms
