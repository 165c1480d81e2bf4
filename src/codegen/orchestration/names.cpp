// C++ names: per-block declarations without shadowing and Var bindings (the naming rule and
// the reserved-word table are common: src/codegen/common/cpp_names.cpp).
#include <cctype>

#include "emitter.h"
#include "pypto/ir/error.h"

namespace pypto::codegen {

namespace orchestration {

void CppScopes::push() { blocks_.emplace_back(); }

std::vector<std::string> CppScopes::pop() {
  PYPTO_CHECK(!blocks_.empty(), "CppScopes::pop on an empty stack");
  std::vector<std::string> unused;
  for (auto& d : blocks_.back().order) {
    if (d.voidable && !d.used) unused.push_back(d.name);
  }
  blocks_.pop_back();
  return unused;
}

CppScopes::Decl* CppScopes::find(const std::string& name) {
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
    auto d = it->index.find(name);
    if (d != it->index.end()) return &it->order[d->second];
  }
  return nullptr;
}

void CppScopes::insert(std::string name, bool voidable) {
  Block& b = blocks_.back();
  b.index.emplace(name, b.order.size());
  b.order.push_back(Decl{std::move(name), false, voidable});
}

bool CppScopes::visible(const std::string& name) const {
  for (auto& b : blocks_) {
    if (b.index.count(name)) return true;
  }
  return IsReservedCppName(name);
}

std::string CppScopes::declare(const std::string& given, bool voidable) {
  PYPTO_CHECK(!blocks_.empty(), "CppScopes::declare outside a block");
  const std::string base = UnreservedCppBase(given);   // a local `__LINE__` did not compile
  int k = 0;   // the smallest free suffix, as a plain search from 0 would find it
  for (auto& b : blocks_) {
    auto t = b.taken_upto.find(base);
    if (t != b.taken_upto.end() && t->second + 1 > k) k = t->second + 1;
  }
  std::string name = k == 0 ? base : base + "_" + std::to_string(k);
  for (; visible(name); ++k) name = base + "_" + std::to_string(k + 1);
  blocks_.back().taken_upto[base] = k;
  insert(name, voidable);   // fresh along the chain: no re-check
  return name;
}

void CppScopes::declare_exact(const std::string& name, bool voidable) {
  PYPTO_CHECK(!blocks_.empty(), "CppScopes::declare outside a block");
  PYPTO_CHECK(!visible(name) || !blocks_.back().index.count(name), "C++ name '" << name << "' declared twice");
  insert(name, voidable);
}

bool CppScopes::is_used(const std::string& name) const {
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
    auto d = it->index.find(name);
    if (d != it->index.end()) return it->order[d->second].used;
  }
  return false;
}

void CppScopes::use(const std::string& name) {
  if (Decl* d = find(name)) d->used = true;
}

std::string Emitter::base_name(const ir::Var* v) const { return GetSSABaseName(v->name); }

std::string Emitter::declare(const ir::Var* v, const std::string& base, bool voidable) {
  std::string name = scopes_.declare(base.empty() ? base_name(v) : base, voidable);
  bindings_[v] = Binding{name, {name}};
  return name;
}

void Emitter::bind(const ir::Var* v, Binding b) { bindings_[v] = std::move(b); }

const Binding* Emitter::find_binding(const ir::Var* v) const {
  auto it = bindings_.find(v);
  return it == bindings_.end() ? nullptr : &it->second;
}

const Binding& Emitter::binding_of(const ir::Var* v) const {
  auto it = bindings_.find(v);
  PYPTO_CHECK(it != bindings_.end(), "orchestration codegen: variable '" << v->name << "' used before its definition");
  return it->second;
}

void Emitter::mark_used(const Binding& b) {
  if (!marking_) return;
  for (auto& n : b.idents) scopes_.use(n);
}

std::string Emitter::ref(const ir::Var* v) {
  auto it = bindings_.find(v);
  if (it == bindings_.end()) {
    PYPTO_CHECK(false, "orchestration codegen: variable '" << v->name << "' used before its definition");
  }
  // A value whose C++ text names a local of a block that has closed (a runtime-allocated
  // output of a pl.submit inside pl.manual_scope(), read after the scope) has no storage any
  // more: the runtime reclaims it when its scope ends.
  for (auto& n : it->second.idents) {
    PYPTO_CHECK(scopes_.visible(n), "'" << v->name << "' is used outside the block that declares '" << n
                                        << "' (VerifyOrchestrationProgram refuses it)");
  }
  mark_used(it->second);
  return it->second.text;
}

}  // namespace orchestration
}  // namespace pypto::codegen
