// Symbolic tensor regions for AutoDeriveTaskDependencies: offsets and extents as polynomials
// over "atoms" (loop variables, scalar parameters, pl.dynamic sizes, values the analysis cannot
// see through), compared symbolically.
//
//   Poly i = Poly::atom(i_var);                       // i
//   Poly off = (i * Poly::constant(32));              // i*32
//   Poly next = off.substitute({{i_var, i + 1}});     // i*32 + 32
//   (next - off - Poly::constant(32)).is_provably_nonneg(nonneg)   // true: tiles disjoint
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pypto/ir/expr.h"

namespace pypto::transforms {

// A polynomial with integer coefficients: monomial (sorted atom list; empty = constant) -> coefficient.
class Poly {
 public:
  static Poly constant(int64_t c);
  static Poly atom(const ir::Var* v);
  Poly operator+(const Poly& o) const;
  Poly operator-(const Poly& o) const;
  Poly operator*(const Poly& o) const;
  bool operator==(const Poly& o) const { return terms_ == o.terms_; }
  bool is_constant() const { return terms_.empty() || (terms_.size() == 1 && terms_.begin()->first.empty()); }
  // The value when constant (no atoms), e.g. Poly::constant(3).constant_value() == 3.
  std::optional<int64_t> constant_value() const {
    if (terms_.empty()) return 0;
    if (terms_.size() == 1 && terms_.begin()->first.empty()) return terms_.begin()->second;
    return std::nullopt;
  }
  // Replaces each atom found in `sub` by its polynomial.
  Poly substitute(const std::map<const ir::Var*, Poly>& sub) const;
  // Known range of an atom: lo <= v (<= hi when bounded). Atoms without a Bound are unknown.
  struct Bound {
    int64_t lo = 0;
    std::optional<int64_t> hi;
  };
  using Bounds = std::map<const ir::Var*, Bound>;
  // True when the value is >= 0 for every value of the atoms within `bounds`: the sum of each
  // monomial's minimum over the box (products only of atoms known >= 0) is >= 0. Sound, not
  // complete: anything else is "unknown" (false).
  bool is_provably_nonneg(const Bounds& bounds) const;
  // Atoms mentioned.
  std::set<const ir::Var*> atoms() const;
  std::string str() const;

 private:
  void add(const std::vector<const ir::Var*>& mono, int64_t c);
  std::map<std::vector<const ir::Var*>, int64_t> terms_;
};

}  // namespace pypto::transforms
