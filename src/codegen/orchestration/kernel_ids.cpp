// Core type inference and kernel ids.
//
// Core type: a kernel declared FunctionType.AIC is AIC and FunctionType.AIV is AIV; an InCore
// kernel is AIC (cube) when any tile in it lives in Left / Right / Acc / Mat, else AIV
// (vector). A Group function is MIXED: its body calls one AIC kernel and one AIV kernel.
// Kernel ids are per callee, in order of first use (spec README decision 3).
#include "emitter.h"
#include "pypto/ir/error.h"
#include "pypto/ir/visitor.h"

namespace pypto::codegen {

using namespace ir;

namespace {

struct CubeTileFinder : IRVisitor {
  bool cube = false;
  void visit_type(const TypePtr& t) override {
    if (auto* tile = t ? t->as<TileType>() : nullptr) {
      MemorySpace m = tile->memory;
      cube = cube || m == MemorySpace::Left || m == MemorySpace::Right || m == MemorySpace::Acc || m == MemorySpace::Mat;
    }
    IRVisitor::visit_type(t);
  }
  void visit_(const Call* op) override {
    // pl.move(t, target_memory=pl.MemorySpace.Left) names the space in an attr as well.
    if (auto* s = attr_get<std::string>(op->attrs, "target_memory")) {
      MemorySpace m;
      if (parse_memory_space(*s, &m)) cube = cube || m != MemorySpace::Vec;
    }
    IRVisitor::visit_(op);
  }
};

}  // namespace

std::string InferCoreType(const Program& program, const Function& fn) {
  switch (fn.type) {
    case FunctionType::AIC: return "AIC";
    case FunctionType::AIV: return "AIV";
    case FunctionType::Group: return "MIXED";
    case FunctionType::InCore: {
      CubeTileFinder f;
      f.visit_function(fn);
      return f.cube ? "AIC" : "AIV";
    }
    case FunctionType::Opaque:
    case FunctionType::Orchestration:
    case FunctionType::Spmd:
    case FunctionType::Inline: break;
  }
  PYPTO_CHECK(false, "InferCoreType: function '" << fn.name << "' of type " << to_string(fn.type) << " is not a kernel");
  return "";
}

namespace orchestration {

int Emitter::kernel_id(const std::string& callee) {
  auto it = kernel_ids_.find(callee);
  if (it != kernel_ids_.end()) return it->second;
  int id = static_cast<int>(kernel_ids_.size());
  kernel_ids_[callee] = id;
  return id;
}

}  // namespace orchestration
}  // namespace pypto::codegen
