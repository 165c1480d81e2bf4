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

namespace {

// a * b, clamped to +-2^62: once a product is that large it stays so whatever the factor order
// (factors are integers; 0 makes it 0 in every order), so the limit checks below do not depend
// on the order of Var pointers in a monomial.
int64_t saturating_mul(int64_t a, int64_t b) {
  constexpr __int128 kSat = __int128{1} << 62;
  __int128 p = static_cast<__int128>(a) * b;
  return static_cast<int64_t>(p > kSat ? kSat : p < -kSat ? -kSat : p);
}

}  // namespace

bool Poly::is_provably_nonneg(const Bounds& bounds) const {
  // Sum of per-monomial minima; "unknown" on overflow-prone magnitudes. Each check looks at a
  // whole term or the whole sum, never a partial one, so term order (by address) cannot matter.
  constexpr int64_t kLimit = int64_t{1} << 40;
  __int128 total = 0;
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
      lo = saturating_mul(lo, b.lo);
      if (hi && b.hi) {
        hi = saturating_mul(*hi, *b.hi);
      } else {
        hi.reset();
      }
    }
    if (lo > kLimit || lo < -kLimit || (hi && (*hi > kLimit || *hi < -kLimit))) return false;
    if (!all_nonneg && m.size() != 1) return false;
    __int128 term = c > 0 ? static_cast<__int128>(c) * lo : hi ? static_cast<__int128>(c) * *hi : 0;
    if (c <= 0 && !hi) return false;
    if (term > kLimit || term < -kLimit) return false;
    total += term;
  }
  return total >= 0 && total <= kLimit;
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
