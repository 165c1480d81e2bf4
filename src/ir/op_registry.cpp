// The global op registry. Ops are registered on first use of OpRegistry::global() by an
// explicit call to each namespace's registration function (not by static initializers, which
// a static-library link could drop).
#include "pypto/ir/op_registry.h"

#include "ops/op_util.h"
#include "pypto/ir/error.h"

namespace pypto::ir {

OpRegistry& OpRegistry::global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    ops::register_tensor_ops(*r);
    ops::register_tile_ops(*r);
    ops::register_tensor_compute_ops(*r);   // mirrors tile ops: after them
    ops::register_system_ops(*r);
    ops::register_array_ops(*r);
    return r;
  }();
  return *registry;
}

void OpRegistry::add(OpInfo info) {
  PYPTO_CHECK(!info.name.empty(), "OpRegistry::add: op without a name");
  PYPTO_CHECK(info.infer, "OpRegistry::add: op '" << info.name << "' has no type inference");
  PYPTO_CHECK(!ops_.count(info.name), "OpRegistry::add: op '" << info.name << "' registered twice");
  std::string name = info.name;
  ops_.emplace(std::move(name), std::move(info));
}

const OpInfo* OpRegistry::get(const std::string& name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  out.reserve(ops_.size());
  for (const auto& kv : ops_) out.push_back(kv.first);
  return out;
}

}  // namespace pypto::ir
