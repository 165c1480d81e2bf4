// CPU kernel code generation of the pipe-buffer ops (spec anchor_features §8, Accept / no-op):
// no on-chip memory is reserved; the value is the buffer's base address.
//
//   buf = pl.reserve_buffer(name="ring", size=4096, base=256)    ->  static_cast<int32_t>(256)
//   buf = pl.reserve_buffer(name="ring", size=4096)              ->  static_cast<int32_t>(0)   (AUTO)
//   p = pl.import_peer_buffer(name="ring", peer_func="consumer") ->  the consumer's base for "ring"
//   pl.aiv_initialize_pipe(1, 512, buf, 0)                       ->  ((void)(buf), (void)(0), 0)
#include "kernel_ops_util.h"

#include "pypto/ir/attrs.h"
#include "pypto/ir/visitor.h"

namespace pypto::codegen::kernel_cpu {

using namespace ir;

namespace {

int64_t BaseOf(const Call& reserve) {
  auto* base = attr_get<int64_t>(reserve.attrs, "base");
  return base && *base >= 0 ? *base : 0;
}

// The base of the reserve_buffer named `name` in function `fn`, 0 when there is none.
int64_t PeerBase(const Program& program, const std::string& fn, const std::string& name) {
  struct Finder : IRVisitor {
    const std::string* name;
    int64_t base = 0;
    void visit_(const Call* op) override {
      auto* n = attr_get<std::string>(op->attrs, "name");
      if (op->is_op && op->callee == "system.reserve_buffer" && n && *n == *name) base = BaseOf(*op);
      IRVisitor::visit_(op);
    }
  } finder;
  finder.name = &name;
  if (FunctionPtr f = program.get(fn)) finder.visit_function(*f);
  return finder.base;
}

}  // namespace

bool PipeBufferScalarText(const Program& program, const Call& call, std::string* out) {
  if (!call.is_op) return false;
  int64_t base = 0;
  if (call.callee == "system.reserve_buffer") {
    base = BaseOf(call);
  } else if (call.callee == "system.import_peer_buffer") {
    auto* name = attr_get<std::string>(call.attrs, "name");
    auto* peer = attr_get<std::string>(call.attrs, "peer_func");
    base = name && peer ? PeerBase(program, *peer, *name) : 0;
  } else {
    return false;
  }
  *out = "static_cast<int32_t>(" + std::to_string(base) + ")";
  return true;
}

bool InitializePipeText(KernelEmitter& em, const Call& call, std::string* out) {
  if (!call.is_op || (call.callee != "system.aic_initialize_pipe" && call.callee != "system.aiv_initialize_pipe")) {
    return false;
  }
  std::string text = "(";
  for (const auto& a : call.args) text += "(void)(" + em.scalar(a) + "), ";
  *out = text + "0 /* " + call.callee + ": no-op on the CPU */)";
  return true;
}

}  // namespace pypto::codegen::kernel_cpu
