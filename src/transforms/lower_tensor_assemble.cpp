// LowerTensorAssemble
//
// What: in Orchestration functions, a `tensor.assemble(target, source, offsets)` whose source
//   is not already the view of `target` at `offsets` (written in place by the kernels that
//   produced it) gets an explicit copy task into that view:
//       out = pl.tensor.assemble(out, part, [16, 0])
//   ==> dst = pl.tensor.slice(out, [16, 16], [16, 0])
//       dst = self.pypto_copy_fp32_16x16(part, dst)      # synthesized InCore kernel
//       out = pl.tensor.assemble(out, dst, [16, 0])       # now in place: a pure rebinding
//   One copy kernel per (dtype, shape) is added to the program:
//       def pypto_copy_fp32_16x16(self, src, dst: pl.Out[...]):
//           dst_1 = pl.store(pl.load(src, [0, 0], [16, 16]), [0, 0], dst); return dst
// Input invariants: ReturnParamsExplicit (call results alias the argument their callee returns).
// Output invariants: every tensor.assemble with a statically shaped source is in place; other
//   statements are unchanged. ReturnParamsExplicit still holds (the copy kernels return their
//   Out param explicitly).
// Why: the PTO2 runtime has no copy primitive and orchestration code must not touch tensor
//   data behind the dependency tracker's back; a copy is a task like any other, so it is
//   ordered after `source`'s producers and before `target`'s later readers automatically.
//   Codegen then lowers every assemble as an emit-name remap onto the target.
#include <map>
#include <unordered_map>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/return_lineage.h"

namespace pypto::transforms {

using namespace ir;

namespace {

struct Storage {
  const Var* root = nullptr;            // the tensor whose storage a value is
  const Call* view = nullptr;           // the tensor.slice that made it, if a view
};

class Lowering : public IRMutator {
 public:
  Lowering(const Program& program, const Function& fn, std::map<std::string, FunctionPtr>* kernels)
      : program_(program), kernels_(kernels), body_(fn.body) {}

  // Only a statement `v = tensor.assemble(...)` is rewritten (and no Var is renamed): any other
  // assignment stays as it is, without walking its expressions.
  StmtPtr mutate_(const AssignStmt* op, const StmtPtr& self) override {
    auto* c = op->value->as<Call>();
    if (!c || !c->is_op || c->callee != "tensor.assemble" || c->args.size() != 3) return self;
    if (!collected_) {   // the definitions, on the first assemble (most functions have none)
      collect(body_);
      collected_ = true;
    }
    if (in_place(c->args[0], c->args[1], c->args[2])) return IRMutator::mutate_(op, self);
    auto* st = c->args[1]->type->as<TensorType>();
    std::vector<int64_t> dims;
    for (auto& d : st->shape) {
      auto* k = d->as<ConstInt>();
      if (!k) return IRMutator::mutate_(op, self);   // dynamic source: codegen reports it
      dims.push_back(k->value);
    }
    ExprPtr target = mutate_expr(c->args[0]), source = mutate_expr(c->args[1]), offsets = mutate_expr(c->args[2]);
    FunctionPtr kernel = copy_kernel(st->dtype, dims, op->span);
    std::vector<ExprPtr> shape;
    for (int64_t d : dims) shape.push_back(ConstInt::make(d));
    auto slice = Call::make_op("tensor.slice", {target, MakeTuple::make(shape, op->span), offsets}, {}, op->span);
    auto dst = Var::make(op->var->name + "_dst", slice->type, op->span);
    std::vector<StmtPtr> stmts;
    if (!as_var(source)) {   // an inline source (`pl.assemble(c, pl.slice(d, ...), ...)`): a task argument is a Var
      auto src = Var::make(op->var->name + "_src", source->type, op->span);
      stmts.push_back(AssignStmt::make(src, source, op->span));
      source = src;
    }
    auto copy = Call::make_func(kernel->name, {source, dst}, kernel->call_result_type(), {}, op->span);
    auto written = Var::make(op->var->name + "_dst", copy->type, op->span);
    auto assemble = Call::make_op("tensor.assemble", {target, written, offsets}, c->attrs, op->span);
    VarPtr var = mutate_def(op->var);
    stmts.push_back(AssignStmt::make(dst, slice, op->span));
    stmts.push_back(AssignStmt::make(written, copy, op->span));
    stmts.push_back(AssignStmt::make(var, assemble, op->span));
    return SeqStmts::make(stmts, op->span);
  }

 private:
  void collect(const StmtPtr& s) {
    for (auto& st : flatten_stmts(s)) {
      if (auto* a = st->as<AssignStmt>()) defs_[a->var.get()] = a->value;
      if (auto* f = st->as<ForStmt>()) collect(f->body);
      if (auto* i = st->as<IfStmt>()) {
        collect(i->then_body);
        collect(i->else_body);
      }
      if (auto* r = st->as<RuntimeScopeStmt>()) collect(r->body);
      if (auto* sc = st->as<ScopeStmt>()) collect(sc->body);
    }
  }

  // The argument a function call's result `pos` writes back.
  ExprPtr aliased(const std::string& callee, const std::vector<ExprPtr>& args, size_t pos) {
    FunctionPtr f = program_.get(callee);
    if (!f) return nullptr;
    auto rets = ExplicitReturnedParamIndices(*f);
    if (pos >= rets.size() || rets[pos] < 0 || static_cast<size_t>(rets[pos]) >= args.size()) return nullptr;
    return args[rets[pos]];
  }

  ExprPtr through(const ExprPtr& value, size_t pos) {
    if (auto* c = value->as<Call>()) {
      if (!c->is_op) return aliased(c->callee, c->args, pos);
      if (c->callee == "tensor.assemble" && pos == 0) return c->args[0];
      return nullptr;
    }
    if (auto* s = value->as<Submit>()) return aliased(s->callee, s->args, pos);
    if (auto* g = value->as<TupleGetItem>()) {
      auto* tv = as_var(g->tuple);
      auto it = tv ? defs_.find(tv) : defs_.end();
      return it == defs_.end() ? nullptr : through(it->second, static_cast<size_t>(g->index));
    }
    if (as_var(value) && pos == 0) return value;
    return nullptr;
  }

  Storage storage(const ExprPtr& e) {
    Storage s;
    const Var* v = as_var(e);
    for (int guard = 0; v && guard < 10000; ++guard) {
      s.root = v;
      auto it = defs_.find(v);
      if (it == defs_.end()) break;
      if (auto* c = it->second->as<Call>(); c && c->is_op && c->callee == "tensor.slice") {
        s.view = c;
        break;
      }
      ExprPtr next = through(it->second, 0);
      v = next ? as_var(next) : nullptr;
    }
    return s;
  }

  bool in_place(const ExprPtr& target, const ExprPtr& source, const ExprPtr& offsets) {
    Storage src = storage(source);
    if (!src.view) return false;
    if (storage(src.view->args[0]).root != storage(target).root) return false;
    auto* a = src.view->args[2]->as<MakeTuple>();
    auto* b = offsets->as<MakeTuple>();
    if (!a || !b || a->elements.size() != b->elements.size()) return false;
    for (size_t i = 0; i < a->elements.size(); ++i) {
      if (!structural_equal(a->elements[i], b->elements[i])) return false;
    }
    return true;
  }

  // The synthesized kernel carries the span of the first assemble that needs it (every
  // statement needs one: diagnostics and the well-formedness verifier).
  FunctionPtr copy_kernel(DataType dtype, const std::vector<int64_t>& dims, const Span& span) {
    std::string name = std::string("pypto_copy_") + to_string(dtype);
    for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (size_t i = 0; i < dims.size(); ++i) name += (i ? "x" : "_") + std::to_string(dims[i]);
    while (program_.get(name) && !kernels_->count(name)) name += "_";
    auto it = kernels_->find(name);
    if (it != kernels_->end()) return it->second;
    std::vector<ExprPtr> shape, zeros;
    for (int64_t d : dims) {
      shape.push_back(ConstInt::make(d));
      zeros.push_back(ConstInt::make(0));
    }
    auto tt = TensorType::make(shape, dtype);
    auto src = Var::make("src", tt, span), dst = Var::make("dst", tt, span);
    auto load = Call::make_op("tile.load", {src, MakeTuple::make(zeros, span), MakeTuple::make(shape, span)}, {}, span);
    auto t = Var::make("t", load->type, span);
    auto store = Call::make_op("tile.store", {t, MakeTuple::make(zeros, span), dst}, {}, span);
    auto stored = Var::make("dst_1", store->type, span);
    auto body = SeqStmts::make({AssignStmt::make(t, load, span), AssignStmt::make(stored, store, span),
                                ReturnStmt::make({dst}, span)},
                               span);
    auto fn = Function::make(name, FunctionType::InCore, {src, dst}, {ParamDirection::In, ParamDirection::Out}, {tt}, body,
                             Level::None, Role::None, {}, span);
    (*kernels_)[name] = fn;
    return fn;
  }

  const Program& program_;
  std::map<std::string, FunctionPtr>* kernels_;
  StmtPtr body_;
  bool collected_ = false;
  std::unordered_map<const Var*, ExprPtr> defs_;   // every assignment's value (collect)
};

ProgramPtr Run(const ProgramPtr& program) {
  std::map<std::string, FunctionPtr> kernels;
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (fn->type != FunctionType::Orchestration) continue;
    Lowering l(*program, *fn, &kernels);
    FunctionPtr nf = l.mutate_function(fn);
    if (nf != fn) out = out->with_function(nf);
  }
  for (auto& [name, k] : kernels) out = out->with_function(k);
  return out;
}

}  // namespace

Pass LowerTensorAssemble() {
  return Pass{"LowerTensorAssemble", {IRProperty::ReturnParamsExplicit}, {IRProperty::TensorAssemblesInPlace}, Run,
              /*invalidated=*/{IRProperty::CallDirectionsDerived}};
}

}  // namespace pypto::transforms
