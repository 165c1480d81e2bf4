// Buffer roots (see buffer_roots.h). A forward walk over the function body, repeated until no
// root set grows (loop carries feed back from the yield to the IterArg).
#include "buffer_roots.h"

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/return_lineage.h"

namespace pypto::transforms {

using namespace ir;

int WrittenTensorArg(const std::string& op) {
  if (op == "tile.store" || op == "tile.mscatter") return 2;
  if (op == "tensor.assemble" || op == "tensor.write") return 0;
  return -1;
}

namespace {

const RootSet kEmpty;

bool is_view_op(const std::string& op) {
  return op == "tensor.slice" || op == "tensor.transpose" || op == "tensor.reshape";
}

}  // namespace

BufferRoots::BufferRoots(const Program& program, const Function& fn, bool views_are_roots)
    : program_(program), views_are_roots_(views_are_roots) {
  roots_.reserve(fn.params.size() + CountVarDefs(fn.body));
  for (auto& p : fn.params) roots_[p.get()] = {p.get()};
  for (int round = 0; round < 64; ++round) {   // each round can only grow a set; carries converge fast
    changed_ = false;
    saw_loop_ = false;
    walk(fn.body);
    // Without a loop nothing feeds back (every use follows its definition): one round is the
    // fixed point, and a second would only confirm it.
    if (!changed_ || !saw_loop_) break;
  }
}

const RootSet& BufferRoots::of(const Var* v) const {
  auto it = roots_.find(v);
  return it == roots_.end() ? kEmpty : it->second;
}

const RootSet& BufferRoots::of(const ExprPtr& e) const { return of(as_var(e)); }

bool BufferRoots::merge(const Var* v, const RootSet& roots) {
  RootSet& mine = roots_[v];
  size_t before = mine.size();
  mine.insert(roots.begin(), roots.end());
  if (mine.size() != before) changed_ = true;
  return mine.size() != before;
}

std::vector<RootSet> BufferRoots::value_roots(const Var* self, const ExprPtr& value) {
  if (as_var(value)) return {of(value)};
  if (auto* g = value->as<TupleGetItem>()) {
    auto it = tuple_roots_.find(as_var(g->tuple));
    if (it != tuple_roots_.end() && g->index >= 0 && static_cast<size_t>(g->index) < it->second.size()) {
      return {it->second[g->index]};
    }
    return {{}};
  }
  const std::vector<ExprPtr>* args = nullptr;
  std::string callee;
  if (auto* c = value->as<Call>()) {
    if (c->is_op) {
      int w = WrittenTensorArg(c->callee);
      if (w >= 0 && static_cast<size_t>(w) < c->args.size()) return {of(c->args[w])};
      if (is_view_op(c->callee) && !c->args.empty() && !views_are_roots_) return {of(c->args[0])};
      return {{self}};   // a new buffer (tensor.create, a view root, a tile, a scalar)
    }
    args = &c->args;
    callee = c->callee;
  } else if (auto* s = value->as<Submit>()) {
    args = &s->args;
    callee = s->callee;
  } else {
    return {{self}};
  }
  // A call: result k is the argument its callee writes back, else a runtime-allocated buffer.
  const std::vector<int>& lineage = callee_lineage(callee);
  size_t n = std::max<size_t>(lineage.size(), 1);
  std::vector<RootSet> out(n);
  for (size_t k = 0; k < n; ++k) {
    if (k < lineage.size() && lineage[k] >= 0 && static_cast<size_t>(lineage[k]) < args->size()) {
      out[k] = of((*args)[lineage[k]]);
    } else {
      out[k] = {self};
    }
  }
  return out;
}

void BufferRoots::assign(const Var* v, const ExprPtr& value) {
  if (!v->type->is<TupleType>()) {   // the common case, without copying a root set
    if (const RootSet* single = single_value_roots(v, value)) {
      merge(v, *single);
      return;
    }
    if (!value->is<TupleGetItem>() && !value->is<Submit>() && !(value->is<Call>() && !value->as<Call>()->is_op)) {
      merge_self(v);   // a new buffer: value_roots gives {{v}}
      return;
    }
  }
  auto rs = value_roots(v, value);
  if (v->type->is<TupleType>()) {
    auto& slots = tuple_roots_[v];
    if (slots.size() < rs.size()) slots.resize(rs.size());
    for (size_t k = 0; k < rs.size(); ++k) {
      size_t before = slots[k].size();
      slots[k].insert(rs[k].begin(), rs[k].end());
      if (slots[k].size() != before) changed_ = true;
    }
    return;
  }
  merge(v, rs.empty() ? RootSet{} : rs[0]);
}

// The root set value_roots(self, value)[0] when it is an existing set (a Var, a written or
// viewed argument, a callee's first written-back argument); null otherwise.
const RootSet* BufferRoots::single_value_roots(const Var* self, const ExprPtr& value) {
  if (as_var(value)) return &of(value);
  auto* c = value->as<Call>();
  if (!c) return nullptr;
  if (c->is_op) {
    int w = WrittenTensorArg(c->callee);
    if (w >= 0 && static_cast<size_t>(w) < c->args.size()) return &of(c->args[w]);
    if (is_view_op(c->callee) && !c->args.empty() && !views_are_roots_) return &of(c->args[0]);
    return nullptr;
  }
  const std::vector<int>& lineage = callee_lineage(c->callee);
  (void)self;
  if (!lineage.empty() && lineage[0] >= 0 && static_cast<size_t>(lineage[0]) < c->args.size()) {
    return &of(c->args[lineage[0]]);
  }
  return nullptr;
}

// merge(v, {v}) without building the set.
void BufferRoots::merge_self(const Var* v) {
  if (roots_[v].insert(v)) changed_ = true;
}

const std::vector<int>& BufferRoots::callee_lineage(const std::string& callee) {
  auto cached = lineage_.find(callee);
  if (cached == lineage_.end()) {
    FunctionPtr f = program_.get(callee);
    cached = lineage_.emplace(callee, f ? ReturnedParamIndices(program_, *f) : std::vector<int>{}).first;
  }
  return cached->second;
}

void BufferRoots::walk(const StmtPtr& s) {
  if (!s) return;
  if (auto* seq = s->as<SeqStmts>()) {
    for (size_t i = 0; i < seq->stmts.size(); ++i) {
      prefetch_stmts_ahead(seq->stmts, i);
      walk(seq->stmts[i]);
    }
  } else if (auto* a = s->as<AssignStmt>()) {
    assign(a->var.get(), a->value);
  } else if (auto* f = s->as<ForStmt>()) {
    saw_loop_ = true;
    for (auto& ia : f->iter_args) merge(ia.get(), of(ia->init));
    walk(f->body);
    const YieldStmt* y = trailing_yield(f->body);
    for (size_t i = 0; i < f->iter_args.size(); ++i) {
      if (y && i < y->values.size()) merge(f->iter_args[i].get(), of(y->values[i]));
      if (i < f->return_vars.size()) merge(f->return_vars[i].get(), of(f->iter_args[i].get()));
    }
  } else if (auto* i = s->as<IfStmt>()) {
    walk(i->then_body);
    walk(i->else_body);
    for (const StmtPtr& branch : {i->then_body, i->else_body}) {
      const YieldStmt* y = branch ? trailing_yield(branch) : nullptr;
      for (size_t k = 0; y && k < i->return_vars.size() && k < y->values.size(); ++k) {
        merge(i->return_vars[k].get(), of(y->values[k]));
      }
    }
  } else if (auto* sc = s->as<ScopeStmt>()) {
    walk(sc->body);
  } else if (auto* rs = s->as<RuntimeScopeStmt>()) {
    walk(rs->body);
  }
}

}  // namespace pypto::transforms
