// ResolvePeerBufferBases (kernel pipeline)
//
// What: stamps attr `base` on every `system.import_peer_buffer` call: the base of the
//   `system.reserve_buffer` with the same `name` in the peer function `peer_func` (its first
//   such reservation; -1 when that reservation is pl.AUTO), so the import carries the value it
//   binds (spec anchor_features §8):
//       consumer:  ring = pl.reserve_buffer(name="ring", size=4096, base=256)
//       producer:  p = pl.import_peer_buffer(name="ring", peer_func="consumer")
//                  ==>  p = pl.system.import_peer_buffer(base=256, name="ring", peer_func="consumer")
// Input invariants: none. Output: PeerBufferBasesResolved.
// UserError (at the import) when `peer_func` is no function of the program or reserves no
//   buffer of that name (the DSL frontend already refuses both at parse time).
// Why: the CPU kernel backend prints the import's base; it does not walk the peer function.
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

// Stamps `base` on the imports of one function.
struct Stamper : IRMutator {
  const Program* program = nullptr;
  ExprPtr mutate_(const Call* op, const ExprPtr& self) override {
    ExprPtr e = IRMutator::mutate_(op, self);
    auto* call = e->as<Call>();
    if (!IsImport(*call)) return e;
    const int64_t base = PeerBufferBaseOf(*program, *call);
    if (const int64_t* have = attr_get<int64_t>(call->attrs, "base"); have && *have == base) return e;
    Attrs attrs = call->attrs;
    attrs["base"] = base;
    return Call::make_op(call->callee, call->args, std::move(attrs), call->span);
  }
  using IRMutator::mutate_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
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
      if (!IsImport(*op)) return;
      const int64_t* have = attr_get<int64_t>(op->attrs, "base");
      int64_t want = 0;
      try {
        want = PeerBufferBaseOf(*program, *op);
      } catch (const UserError& e) {
        out.push_back("function '" + fn + "': " + e.message());
        return;
      }
      if (!have || *have != want) {
        out.push_back("function '" + fn + "': import_peer_buffer '" + *attr_get<std::string>(op->attrs, "name") +
                      "' has " + (have ? "base=" + std::to_string(*have) : std::string("no base")) +
                      ", ResolvePeerBufferBases stamps base=" + std::to_string(want));
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
