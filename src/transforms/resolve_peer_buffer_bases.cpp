// ResolvePeerBufferBases (kernel pipeline)
//
// What: stamps the typed Call::peer_base on every `system.import_peer_buffer` call: the base of the
//   `system.reserve_buffer` with the same `name` in the peer function `peer_func` (its first
//   such reservation; -1 when that reservation is pl.AUTO), so the import carries the value it
//   binds (spec anchor_features §8); and the typed Call::cpu_base on every reservation and import:
//   the address the buffer binds on the CPU (its base, 0 for pl.AUTO: the CPU reserves no memory):
//       consumer:  ring = pl.reserve_buffer(name="ring", size=4096, base=256)
//                  ==>  ring = pl.system.reserve_buffer(base=256, name="ring", size=4096, cpu_base=256)
//       producer:  p = pl.import_peer_buffer(name="ring", peer_func="consumer")
//                  ==>  p = pl.system.import_peer_buffer(base=256, name="ring", peer_func="consumer", cpu_base=256)
//       AUTO:      b = pl.reserve_buffer(name="b", size=64)
//                  ==>  b = pl.system.reserve_buffer(base=-1, name="b", size=64, cpu_base=0)
// Input invariants: none. Output: PeerBufferBasesResolved.
// UserError (at the import) when `peer_func` is no function of the program or reserves no
//   buffer of that name (the DSL frontend already refuses both at parse time).
// Why: the CPU kernel backend prints the stamped `cpu_base`; it neither walks the peer function
//   nor decides what AUTO binds.
#include "pypto/ir/attrs.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

constexpr const char* kImport = "system.import_peer_buffer";

// The first system.reserve_buffer named `name` in `fn`'s body, or null.
const Call* FindReservation(const Function& fn, const std::string& name) {
  struct Finder : IRVisitor {
    const std::string* name = nullptr;
    const Call* found = nullptr;
    void visit_(const Call* op) override {
      auto* n = attr_get<std::string>(op->attrs, "name");
      if (!found && op->is_op && op->callee == "system.reserve_buffer" && n && *n == *name) found = op;
      IRVisitor::visit_(op);
    }
  } finder;
  finder.name = &name;
  finder.visit_function(fn);
  return finder.found;
}

bool IsImport(const Call& call) { return call.is_op && call.callee == kImport; }
bool IsReserve(const Call& call) { return call.is_op && call.callee == "system.reserve_buffer"; }

// The address a pipe buffer of base `base` binds on the CPU: `base`, 0 for pl.AUTO (-1).
int64_t CpuBase(int64_t base) { return base >= 0 ? base : 0; }

// The base a reservation / an import binds (a reservation's own, an import's peer's).
int64_t BaseOf(const Program& program, const Call& call) {
  if (IsImport(call)) return PeerBufferBaseOf(program, call);
  const int64_t* base = attr_get<int64_t>(call.attrs, "base");
  return base ? *base : -1;
}

// Stamps Call::peer_base on the imports and Call::cpu_base on the reservations and imports of one function.
struct Stamper : IRMutator {
  const Program* program = nullptr;
  ExprPtr mutate_(const Call* op, const ExprPtr& self) override {
    ExprPtr e = IRMutator::mutate_(op, self);
    auto* call = e->as<Call>();
    if (!IsImport(*call) && !IsReserve(*call)) return e;
    const int64_t base = BaseOf(*program, *call);
    if (IsImport(*call)) e = with_peer_base(e, base);
    return with_cpu_base(e, CpuBase(base));
  }
  using IRMutator::mutate_;
};

// Whether `fn` reserves or imports a pipe buffer: a read-only walk, cheaper than the Stamper's
// rebuild-if-changed walk over a long orchestration body that has none.
bool HasPipeBufferCall(const Function& fn) {
  struct Finder : IRVisitor {
    bool found = false;
    void visit_(const Call* op) override {
      found = found || IsImport(*op) || IsReserve(*op);
      IRVisitor::visit_(op);
    }
  } finder;
  finder.visit_function(fn);
  return finder.found;
}

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (!HasPipeBufferCall(*fn)) continue;
    Stamper s;
    s.program = program.get();
    FunctionPtr stamped = s.mutate_function(fn);
    if (stamped != fn) out = out->with_function(stamped);
  }
  return out;
}

}  // namespace

int64_t PeerBufferBaseOf(const Program& program, const Call& import) {
  PYPTO_CHECK(IsImport(import), "PeerBufferBaseOf: '" << import.callee << "' is not " << kImport);
  const std::string* name = attr_get<std::string>(import.attrs, "name");
  const std::string* peer = attr_get<std::string>(import.attrs, "peer_func");
  PYPTO_CHECK(name && peer, kImport << " without name= / peer_func= (its type inference requires both)");
  FunctionPtr fn = program.get(*peer);
  PYPTO_USER_CHECK(fn != nullptr, import.span, "peer_func='" << *peer << "' is not a function of this program",
                   "the peer kernel must call pl.reserve_buffer(name=\"" + *name + "\", size=...)");
  const Call* reserve = FindReservation(*fn, *name);
  PYPTO_USER_CHECK(reserve != nullptr, import.span,
                   "peer_func='" << *peer << "' does not reserve a buffer named '" << *name << "'",
                   "the peer kernel must call pl.reserve_buffer(name=\"" + *name + "\", size=...)");
  const int64_t* base = attr_get<int64_t>(reserve->attrs, "base");
  return base ? *base : -1;
}

std::vector<std::string> CheckPeerBufferBases(const Program& program) {
  struct Checker : IRVisitor {
    const Program* program = nullptr;
    std::string fn;
    std::vector<std::string> out;
    void visit_(const Call* op) override {
      IRVisitor::visit_(op);
      if (!IsImport(*op) && !IsReserve(*op)) return;
      int64_t want = 0;
      try {
        want = BaseOf(*program, *op);
      } catch (const UserError& e) {
        out.push_back("function '" + fn + "': " + e.message());
        return;
      }
      const std::string what = "function '" + fn + "': " + op->callee.substr(7) + " '" +
                               *attr_get<std::string>(op->attrs, "name") + "' has ";
      if (IsImport(*op) && op->peer_base != want) {
        out.push_back(what + (op->peer_base != Call::kNoPeerBase ? "base=" + std::to_string(op->peer_base) : std::string("no base")) +
                      ", ResolvePeerBufferBases stamps base=" + std::to_string(want));
      }
      if (op->cpu_base != CpuBase(want)) {
        out.push_back(what + (op->cpu_base >= 0 ? "cpu_base=" + std::to_string(op->cpu_base) : std::string("no cpu_base")) +
                      ", ResolvePeerBufferBases stamps cpu_base=" + std::to_string(CpuBase(want)));
      }
    }
  } c;
  c.program = &program;
  for (const FunctionPtr& f : program.functions) {
    c.fn = f->name;
    c.visit_function(*f);
  }
  return c.out;
}

Pass ResolvePeerBufferBases() {
  return Pass{"ResolvePeerBufferBases", {}, {IRProperty::PeerBufferBasesResolved}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
