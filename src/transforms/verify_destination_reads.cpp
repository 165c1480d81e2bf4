// VerifyDestinationReads
//
// What: refuses a read of a tile that a destination-passing tile op wrote into (spec
//   reference_ops.md §1.7: matmul_acc, gemv_acc, batch_matmul_acc, scatter, scatter_update and
//   scatter_mask write into their argument 0, and their result aliases it):
//       d = pl.matmul_acc(c, a, b)       # on the accelerator c's buffer now holds d
//       out = pl.store(c, [0, 0], out)   # -> UserError at this line: c is read after the op
//   A read counts after the op in program order, after an if whose branch ran the op, and in a
//   later iteration of a loop whose body runs the op on a tile defined outside it (the op's own
//   operand included: `for k: d = pl.matmul_acc(c, ...)` accumulates into c on the accelerator).
//   Reads of the op's result, of a name rebound to it (`c = pl.matmul_acc(c, a, b)`) and of a
//   loop's carry are fine. A destination or alias reached through `t2 = t` or a view names t's
//   buffer: set_validshape and reshape (metadata only), slice (a window of it) and transpose_view
//   (its layout reinterpreted), all zero-copy on the accelerator (reference_ops.md §1.6, §9).
//   The in-place ops (tile.write, fillpad_inplace, gather_row) write into the CPU buffer of the
//   tile they are given, so they differ only when that tile is a view — the CPU's view is a copy:
//       r = pl.tile.reshape(v, [1, 64])
//       pl.tile.write(r, [0, 0], x)      # on the accelerator v's buffer now holds x too
//       out = pl.store(v, [0, 0], out)   # -> UserError at this line (a read of r is fine)
// Input invariants: none; runs before ConvertTensorToTileOps, so only tile ops the user wrote are
//   checked (tensor ops give new values by definition: a tensor operand is loaded whole).
// Output: the program, unchanged, or a located ir::UserError.
// Why: the CPU gives every SSA value its own buffer, so `c` would keep its old values here and
//   hold the result there: the program would compute something else on the accelerator than in
//   its CPU check. An error is better than a result that differs.
#include <map>
#include <set>
#include <string>

#include "pypto/ir/error.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

bool is_tile(const Var* v) { return v && v->type && v->type->is<TileType>(); }

// The destination-passing tile ops (argument 0 is the destination).
bool writes_arg0(const Call* c) {
  static const std::set<std::string> kOps = {"tile.matmul_acc",   "tile.gemv_acc",      "tile.batch_matmul_acc",
                                             "tile.scatter",      "tile.scatter_update", "tile.scatter_mask"};
  return c->is_op && !c->args.empty() && kOps.count(c->callee);
}

// The tile Var whose buffer `e` names: the Var itself, or the operand of a view of its input on
// the accelerator — set_validshape (metadata only), reshape (a row-major reinterpretation), slice
// (a window) and transpose_view (the fractal layout reinterpreted) — followed through nested
// views. Null for any other expression. (A slice names its whole source: writing a window and
// reading another one of the same tile is refused too, conservatively.)
const Var* viewed_tile(const ExprPtr& e) {
  if (const Var* v = as_var(e)) return is_tile(v) ? v : nullptr;
  auto* c = e ? e->as<Call>() : nullptr;
  static const std::set<std::string> kViews = {"tile.set_validshape", "tile.reshape", "tile.slice",
                                               "tile.transpose_view"};
  if (c && c->is_op && !c->args.empty() && kViews.count(c->callee)) return viewed_tile(c->args[0]);
  return nullptr;
}

// An in-place op's write: into tile `dst` itself (`direct`), or into a view of it made in the
// call's own operand (`pl.tile.write(pl.tile.reshape(v, s), ...)`).
struct InPlaceWrite {
  const Var* dst;
  const Call* op;
  bool direct;
};

// The destinations of the destination-passing and in-place calls a walk meets, at any depth.
struct WriteCollector : IRVisitor {
  std::vector<std::pair<const Var*, const Call*>> writes;
  std::vector<InPlaceWrite> in_place;
  void visit_(const Call* op) override {
    if (writes_arg0(op)) {
      if (const Var* d = viewed_tile(op->args[0])) writes.emplace_back(d, op);
    } else if (WritesArg0InPlace(*op)) {
      if (const Var* d = viewed_tile(op->args[0])) in_place.push_back({d, op, as_var(op->args[0]) != nullptr});
    }
    IRVisitor::visit_(op);
  }
};

// The tile Vars an expression reads, and the destinations of the destination-passing calls in it.
// A type's shape holds scalars only: the type walk at each Var use is skipped.
struct ExprScan : WriteCollector {
  using WriteCollector::visit_;
  std::vector<const Var*> reads;
  void visit_(const Var* op) override {
    if (is_tile(op)) reads.push_back(op);
  }
  void visit_(const IterArg* op) override {
    if (is_tile(op)) reads.push_back(op);
  }
};

// The Vars a statement defines (assignments, loop variables, carries and results, if results)
// and the destination-passing calls it holds, at any depth.
struct BodyScan : WriteCollector {
  std::set<const Var*> defined;
  using WriteCollector::visit_;
  void visit_(const Var*) override {}
  void visit_(const IterArg*) override {}
  void visit_(const AssignStmt* op) override {
    defined.insert(op->var.get());
    IRVisitor::visit_(op);
  }
  void visit_(const ForStmt* op) override {
    for (auto& ia : op->iter_args) defined.insert(ia.get());
    for (auto& rv : op->return_vars) defined.insert(rv.get());
    IRVisitor::visit_(op);
  }
  void visit_(const IfStmt* op) override {
    for (auto& rv : op->return_vars) defined.insert(rv.get());
    IRVisitor::visit_(op);
  }
};

std::string op_name(const Call* c) { return "pl." + c->callee; }

class Checker {
 public:
  void block(const StmtPtr& s) {
    if (!s) return;
    if (auto* q = s->as<SeqStmts>()) {
      for_each_prefetched(q->stmts, [&](const StmtPtr& c) { block(c); });
    } else if (auto* a = s->as<AssignStmt>()) {
      expr(a->value, a->span);
      if (const Var* src = viewed_tile(a->value); src && is_tile(a->var.get())) {
        alias_[a->var.get()] = root(src);
        if (as_var(a->value)) buffer_[a->var.get()] = buffer(src);   // t2 = t shares t's CPU buffer
      }
    } else if (auto* e = s->as<EvalStmt>()) {
      expr(e->expr, e->span);
    } else if (auto* f = s->as<ForStmt>()) {
      loop(*f);
    } else if (auto* i = s->as<IfStmt>()) {
      expr(i->cond, i->span);
      auto before = written_;
      block(i->then_body);
      auto after_then = written_;
      written_ = before;
      block(i->else_body);
      written_.insert(after_then.begin(), after_then.end());   // written on either path
    } else if (auto* y = s->as<YieldStmt>()) {
      for (auto& v : y->values) expr(v, y->span);
    } else if (auto* r = s->as<ReturnStmt>()) {
      for (auto& v : r->values) expr(v, r->span);
    } else if (auto* sc = s->as<ScopeStmt>()) {
      block(sc->body);
    } else if (auto* rs = s->as<RuntimeScopeStmt>()) {
      block(rs->body);
    }
  }

 private:
  struct Write {
    const Call* op;
    bool earlier_iteration;
    // For an in-place op's write through a view: the CPU buffer it landed in (the view's own;
    // null for a view made in the call's operand), whose readers see the write on both targets.
    const Var* in_place_buffer = nullptr;
    bool in_place = false;
  };

  const Var* root(const Var* v) const {
    auto it = alias_.find(v);
    return it == alias_.end() ? v : it->second;
  }

  // The Var whose buffer `v` is on the CPU: itself, or what a plain rebinding chain started at.
  const Var* buffer(const Var* v) const {
    auto it = buffer_.find(v);
    return it == buffer_.end() ? v : it->second;
  }

  // Records an in-place write that lands in another buffer on the CPU than on the accelerator
  // (through a view); a write into the tile's own buffer is the same on both.
  void record_in_place(const InPlaceWrite& w, bool earlier_iteration) {
    const Var* cpu_buffer = w.direct ? buffer(w.dst) : nullptr;
    if (cpu_buffer == root(w.dst)) return;
    written_[root(w.dst)] = {w.op, earlier_iteration, cpu_buffer, true};
  }

  void expr(const ExprPtr& e, const Span& where) {
    if (!e) return;
    ExprScan scan;
    scan.visit_expr(e);
    for (const Var* v : scan.reads) check(v, where);
    for (auto& [dst, op] : scan.writes) written_[root(dst)] = {op, false};
    for (const InPlaceWrite& w : scan.in_place) record_in_place(w, false);
  }

  void loop(const ForStmt& f) {
    expr(f.start, f.span);
    expr(f.stop, f.span);
    expr(f.step, f.span);
    for (auto& ia : f.iter_args) expr(ia->init, f.span);
    // From the second iteration on, a tile defined outside the loop that the body writes into
    // holds what the previous iteration wrote.
    BodyScan body;
    body.visit_stmt(f.body);
    for (auto& ia : f.iter_args) body.defined.insert(ia.get());
    for (auto& [dst, op] : body.writes) {
      if (!body.defined.count(dst) && !body.defined.count(root(dst)) && !written_.count(root(dst)))
        written_[root(dst)] = {op, true};
    }
    for (const InPlaceWrite& w : body.in_place) {
      if (!body.defined.count(w.dst) && !written_.count(root(w.dst))) record_in_place(w, true);
    }
    block(f.body);
  }

  void check(const Var* v, const Span& where) {
    auto it = written_.find(root(v));
    if (it == written_.end()) return;
    if (it->second.in_place) {
      if (it->second.in_place_buffer != buffer(v)) in_place_through_view(v, it->second, where);
      return;
    }
    const Call* op = it->second.op;
    const std::string line = std::to_string(op->span.line);
    throw UserError(
        "tile '" + v->name + "' is read after " + op_name(op) + " (line " + line + ") wrote into it" +
            (it->second.earlier_iteration ? " in an earlier iteration of the loop" : "") +
            ": the op writes its result into its first operand (on the accelerator the two share a buffer), "
            "so '" + v->name + "' would hold the result there, while the CPU keeps its old values",
        where,
        it->second.earlier_iteration
            ? "carry the tile through the loop by rebinding its name to the result (" + v->name + " = " +
                  op_name(op) + "(" + v->name + ", ...)), or give the op a tile of its own each iteration"
            : "read the op's result instead (rebinding the name does that: " + v->name + " = " + op_name(op) + "(" +
                  v->name + ", ...)), or give the op a tile of its own (load it again, or compute it)");
  }

  [[noreturn]] void in_place_through_view(const Var* v, const Write& w, const Span& where) const {
    const std::string view = w.in_place_buffer ? "'" + w.in_place_buffer->name + "'" : "a view";
    throw UserError("tile '" + v->name + "' is read after " + op_name(w.op) + " (line " +
                        std::to_string(w.op->span.line) + ") wrote into " + view + " of it" +
                        (w.earlier_iteration ? " in an earlier iteration of the loop" : "") +
                        ": on the accelerator a view shares its tile's buffer, so '" + v->name +
                        "' would hold the write there, while the CPU writes into the view's own copy",
                    where,
                    "write into '" + root(v)->name + "' itself and take the view afterwards, or read " +
                        (w.in_place_buffer ? view : "the written view (bind it to a name first)") + " instead");
  }

  std::map<const Var*, const Var*> alias_;   // tile Var -> the Var whose buffer it names (t2 = t, a view)
  std::map<const Var*, const Var*> buffer_;  // tile Var -> the Var whose CPU buffer it shares (t2 = t)
  std::map<const Var*, Write> written_;      // root Var -> the op that wrote into its buffer
};

// Throws the located UserError of the first refused read, in function order.
void CheckAll(const Program& program) {
  for (auto& fn : program.functions) {
    if (fn->body) Checker().block(fn->body);
  }
}

}  // namespace

std::vector<std::string> CheckDestinationReads(const ProgramPtr& program) {
  try {
    CheckAll(*program);
  } catch (const UserError& e) {
    return {e.what()};
  }
  return {};
}

Pass VerifyDestinationReads() {
  return Pass{"VerifyDestinationReads", {}, {IRProperty::DestinationReadsChecked}, [](const ProgramPtr& program) {
                CheckAll(*program);
                return program;
              },
              /*invalidated=*/{}, /*checks_produced=*/true};
}

}  // namespace pypto::transforms
