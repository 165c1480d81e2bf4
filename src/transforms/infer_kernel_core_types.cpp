// InferKernelCoreTypes (kernel pipeline)
//
// What: stamps Function::core_type on every kernel and Group function:
//   FunctionType.AIC -> AIC, FunctionType.AIV -> AIV, Group -> MIXED (its body calls one AIC
//   and one AIV kernel), InCore -> AIC when it computes a matrix product (tile.matmul*, gemv*,
//   batch_matmul*) or any tile in it lives in a cube memory space (Left / Right / Acc / Mat, as
//   a Var's or a call's type or as a pl.move target_memory), else AIV:
//       @pl.function(type=pl.FunctionType.InCore)          @pl.function(type=pl.FunctionType.InCore,
//       def k(self, ...):                          ==>                  core_type=pl.CoreType.AIC)
//           a = pl.load(x, ..., target_memory=pl.MemorySpace.Left)
//   Orchestration and other functions keep CoreType.Unknown.
// Input invariants: none. Output: KernelCoreTypesInferred.
// Why: the orchestration code generator (which submit call, which kernel registration), the
//   CPU kernel backend (Group synchronisation) and the Python driver (kernel entries) all
//   need the core type; one pass decides it, they read it.
#include "pypto/ir/error.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

bool is_cube(MemorySpace m) { return m != MemorySpace::Vec; }

struct CubeTileFinder : IRVisitor {
  bool cube = false;
  void visit_type(const TypePtr& t) override {
    if (auto* tile = t ? t->as<TileType>() : nullptr) cube = cube || is_cube(tile->memory);
    IRVisitor::visit_type(t);
  }
  void visit_(const Call* op) override {
    // pl.move(t, target_memory=pl.MemorySpace.Left) names the space in an attr as well.
    if (auto* s = attr_get<std::string>(op->attrs, "target_memory")) {
      MemorySpace m;
      if (parse_memory_space(*s, &m)) cube = cube || is_cube(m);
    }
    // A matrix product is the cube's work whatever its operands' spaces (a `pl.matmul_acc` into a
    // Vec accumulator), and a nested call's result (`pl.store(pl.matmul(a, b), ...)`) is bound
    // to no Var whose type would say Acc: both ran on AIV.
    cube = cube || (op->is_op && IsMatrixProduct(op->callee));
    visit_type(op->type);
    IRVisitor::visit_(op);
  }
  static bool IsMatrixProduct(const std::string& name) {
    return name.rfind("tile.matmul", 0) == 0 || name.rfind("tile.gemv", 0) == 0 || name.rfind("tile.batch_matmul", 0) == 0;
  }
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    CoreType t = KernelCoreTypeOf(*fn);
    if (t != fn->core_type) out = out->with_function(fn->with_core_type(t));
  }
  return out;
}

}  // namespace

CoreType KernelCoreTypeOf(const Function& fn) {
  switch (fn.type) {
    case FunctionType::AIC: return CoreType::AIC;
    case FunctionType::AIV: return CoreType::AIV;
    case FunctionType::Group: return CoreType::MIXED;
    case FunctionType::InCore: {
      CubeTileFinder f;
      f.visit_function(fn);
      return f.cube ? CoreType::AIC : CoreType::AIV;
    }
    case FunctionType::Opaque:
    case FunctionType::Orchestration:
    case FunctionType::Spmd:
    case FunctionType::Inline: return CoreType::Unknown;
  }
  return CoreType::Unknown;
}

CoreType StampedCoreType(const Function& fn) {
  PYPTO_CHECK(fn.core_type != CoreType::Unknown, "function '" << fn.name << "' has no stamped core type: run the pass "
                                                                             "pipeline (InferKernelCoreTypes) first");
  return fn.core_type;
}

Pass InferKernelCoreTypes() {
  return Pass{"InferKernelCoreTypes", {}, {IRProperty::KernelCoreTypesInferred}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
