// The C++ block structure an orchestration function lowers to, as the L2 code generator builds
// it, for VerifyOrchestrationProgram's lifetime checks. Private to src/transforms.
//
// Each value's C++ text names locals declared in some blocks (entry, PTO2_SCOPE, loop, branch);
// a value is usable while all of those blocks are open. A TaskId additionally dies when the
// PTO2_SCOPE it was defined in closes, unless its storage is still visible (an array carry
// backed by enclosing storage). Resolve() follows the generator's TaskId resolution
// (orchestration/task_ids.cpp): explicit registrations, loop results through their carries,
// Var copies, the TaskId element of a pl.submit.
//
//   model.push();  model.declare(v);  ...  model.pop();
//   model.visible(v)        // every block its text names is still open
//   model.resolve(tid)      // nullopt: the TaskId's scope has closed here
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pypto/ir/error.h"
#include "pypto/ir/stmt.h"
#include "pypto/ir/visitor.h"

namespace pypto::transforms {

class OrchestrationScopeModel {
 public:
  using Blocks = std::vector<int>;   // the blocks a value's C++ text names
  struct TaskIdRef {
    Blocks blocks;
    int64_t array_size = 0;
  };

  // Records the definitions Resolve() follows (AssignStmt values, loop results, carries).
  void scan(const ir::StmtPtr& body) {
    struct Scanner : ir::IRVisitor {
      OrchestrationScopeModel* m;
      void visit_(const ir::AssignStmt* op) override {
        m->defs_[op->var.get()] = op->value;
        IRVisitor::visit_(op);
      }
      void visit_(const ir::ForStmt* op) override {
        for (size_t i = 0; i < op->return_vars.size(); ++i) m->for_return_[op->return_vars[i].get()] = {op, i};
        for (size_t i = 0; i < op->iter_args.size(); ++i) m->carry_loop_[op->iter_args[i].get()] = {op, i};
        IRVisitor::visit_(op);
      }
    } s;
    s.m = this;
    s.visit_stmt(body);
  }

  void push() { open_.push_back(next_block_++); }
  void pop() { open_.pop_back(); }
  int current() const { return open_.back(); }
  // The block enclosing the current one (a MANUAL scope's hoisted allocations live there).
  int enclosing() const { return open_.size() > 1 ? open_[open_.size() - 2] : open_.back(); }

  // A C++ text's identity: the Var whose declaration it names, or a runtime-allocated output
  // (the submission, output index).
  using Root = std::pair<const void*, int>;

  void declare(const ir::Var* v) { declare_in(v, current()); }
  void declare_in(const ir::Var* v, int block) {
    bindings_[v] = Blocks{block};
    roots_[v] = Root{v, -1};
  }
  // `v` names text of its own mentioning `b` (an expression, a runtime-allocated output).
  void bind(const ir::Var* v, Blocks b, Root root = Root{nullptr, 0}) {
    bindings_[v] = std::move(b);
    roots_[v] = root.first ? root : Root{v, -1};
  }
  // `v` is bound to the same text as `src` (a Var copy, an in-place result, a loop result).
  void alias(const ir::Var* v, const ir::Var* src) {
    bindings_[v] = binding_of(src);
    roots_[v] = root_of(src);
  }
  Root root_of(const ir::Var* v) const {
    auto it = roots_.find(v);
    return it == roots_.end() ? Root{v, -1} : it->second;
  }
  bool bound(const ir::Var* v) const { return bindings_.count(v) > 0; }
  const Blocks& binding_of(const ir::Var* v) const {
    static const Blocks kNone;
    auto it = bindings_.find(v);
    return it == bindings_.end() ? kNone : it->second;
  }
  // The blocks an expression's text names (the union over its Vars).
  Blocks capture(const ir::ExprPtr& e) const {
    Blocks out;
    std::function<void(const ir::ExprPtr&)> walk = [&](const ir::ExprPtr& x) {
      if (auto* v = ir::as_var(x)) {
        const Blocks& b = binding_of(v);
        out.insert(out.end(), b.begin(), b.end());
      } else if (auto* bi = x->as<ir::BinaryExpr>()) {
        walk(bi->a);
        walk(bi->b);
      } else if (auto* u = x->as<ir::UnaryExpr>()) {
        walk(u->a);
      } else if (auto* c = x->as<ir::Cast>()) {
        walk(c->value);
      }
    };
    walk(e);
    return out;
  }
  bool open(const Blocks& b) const {
    for (int id : b) {
      bool found = false;
      for (int o : open_) found = found || o == id;
      if (!found) return false;
    }
    return true;
  }
  bool visible(const ir::Var* v) const { return open(binding_of(v)); }

  void register_ref(const ir::Var* v, TaskIdRef r) { refs_[v] = std::move(r); }
  void set_array_carry(const ir::Var* ia, TaskIdRef r) { array_carry_[ia] = std::move(r); }
  const TaskIdRef* array_carry(const ir::Var* ia) const {
    auto it = array_carry_.find(ia);
    return it == array_carry_.end() ? nullptr : &it->second;
  }
  const ir::ForStmt* loop_of_carry(const ir::Var* ia) const {
    auto it = carry_loop_.find(ia);
    return it == carry_loop_.end() ? nullptr : it->second.first;
  }

  std::optional<TaskIdRef> resolve(const ir::Var* v, int depth = 0) const {
    PYPTO_CHECK(depth < 512, "TaskId resolution of '" << v->name << "' does not terminate");
    if (dead_.count(v)) return std::nullopt;
    if (auto it = refs_.find(v); it != refs_.end()) return it->second;
    if (auto it = for_return_.find(v); it != for_return_.end()) {
      const ir::Var* ia = it->second.first->iter_args[it->second.second].get();
      if (auto a = array_carry_.find(ia); a != array_carry_.end()) return a->second;
      if (!bound(v)) return resolve(ia, depth + 1);
    }
    if (auto it = defs_.find(v); it != defs_.end() && bound(v)) {
      if (const ir::Var* src = ir::as_var(it->second)) return resolve(src, depth + 1);
    }
    if (!bound(v)) return std::nullopt;
    TaskIdRef r{binding_of(v), 0};
    if (auto* at = v->type->as<ir::ArrayType>()) r.array_size = at->size;
    return r;
  }

  // Leaving PTO2_SCOPE `body` (its block already popped): TaskIds defined inside die unless
  // their storage is still visible.
  void exit_runtime_scope(const ir::StmtPtr& body) {
    struct Defs : ir::IRVisitor {
      std::vector<const ir::Var*> vars;
      void add(const ir::Var* v) {
        if (ir::is_task_id(v->type)) vars.push_back(v);
      }
      void visit_(const ir::AssignStmt* op) override {
        add(op->var.get());
        IRVisitor::visit_(op);
      }
      void visit_(const ir::ForStmt* op) override {
        for (auto& ia : op->iter_args) add(ia.get());
        for (auto& rv : op->return_vars) add(rv.get());
        IRVisitor::visit_(op);
      }
      void visit_(const ir::IfStmt* op) override {
        for (auto& rv : op->return_vars) add(rv.get());
        IRVisitor::visit_(op);
      }
    } defs;
    defs.visit_stmt(body);
    for (const ir::Var* v : defs.vars) {
      if (dead_.count(v)) continue;
      std::optional<TaskIdRef> r = resolve(v);
      if (!r || !open(r->blocks)) {
        dead_.insert(v);
        refs_.erase(v);
      }
    }
  }

 private:
  std::vector<int> open_;
  int next_block_ = 0;
  std::unordered_map<const ir::Var*, Blocks> bindings_;
  std::unordered_map<const ir::Var*, Root> roots_;
  std::unordered_map<const ir::Var*, ir::ExprPtr> defs_;
  std::unordered_map<const ir::Var*, std::pair<const ir::ForStmt*, size_t>> for_return_;
  std::unordered_map<const ir::Var*, std::pair<const ir::ForStmt*, size_t>> carry_loop_;
  std::unordered_map<const ir::Var*, TaskIdRef> refs_;
  std::unordered_map<const ir::Var*, TaskIdRef> array_carry_;
  std::unordered_set<const ir::Var*> dead_;
};

}  // namespace pypto::transforms
