// The C++ block structure an orchestration function lowers to, as the L2 code generator builds
// it, for VerifyOrchestrationProgram's lifetime checks. Private to src/transforms.
//
// Each value's C++ text names locals declared in some blocks (entry, PTO2_SCOPE, loop, branch);
// a value is usable while all of those blocks are open. A TaskId is bound like any value (the
// generator binds a pl.parallel slot carry's iter_arg to its init and the loop's result to the
// slot array); its array-ness is ResolveTaskIds' stamp (Function::task_ids).
//
//   OrchestrationScopeModel model(fn);
//   model.push();  model.declare(v);  ...  model.pop();
//   model.visible(v)        // every block its text names is still open
//   model.resolve(tid)      // nullopt: the TaskId's scope has closed here
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "pypto/ir/error.h"
#include "pypto/ir/stmt.h"
#include "pypto/ir/function.h"
#include "pypto/transforms/return_lineage.h"

namespace pypto::transforms {

class OrchestrationScopeModel {
 public:
  using Blocks = std::vector<int>;   // the blocks a value's C++ text names
  struct TaskIdRef {
    Blocks blocks;
    int64_t array_size = 0;
  };

  explicit OrchestrationScopeModel(const ir::Function& fn) {
    const size_t vars = fn.params.size() + CountVarDefs(fn.body);   // no rehash on long bodies
    bindings_.reserve(vars);
    roots_.reserve(vars);
    for (const ir::TaskIdInfo& t : fn.task_ids) slots_[t.var.get()] = t.slots;
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
    note_alias(v);
  }
  // `v` is bound to the same text as `src` (a Var copy, an in-place result, a loop result).
  void alias(const ir::Var* v, const ir::Var* src) {
    bindings_[v] = binding_of(src);
    roots_[v] = root_of(src);
    note_alias(v);
  }
  // The generator declares `v`'s C++ name again after the runtime scope that declared it (an
  // exit slot's tensor): `v` and every value bound to the same name are usable in this block now.
  void redeclare_with_aliases(const ir::Var* v) {
    const Root r = root_of(v);
    declare(v);
    if (r.second >= 0) return;
    auto it = aliases_.find(r.first);
    if (it == aliases_.end()) return;
    for (const ir::Var* a : it->second) bindings_[a] = Blocks{current()};
  }
  Root root_of(const ir::Var* v) const {
    auto it = roots_.find(v);
    return it == roots_.end() ? Root{v, -1} : it->second;
  }
  bool bound(const ir::Var* v) const { return bindings_.count(v) > 0; }

 private:
  void note_alias(const ir::Var* v) {
    const Root& r = roots_[v];
    if (r.second < 0 && r.first != v) aliases_[r.first].push_back(v);
  }

 public:
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
  // True when every block `b` names is `block` or encloses it (the text outlives `block`'s end
  // no sooner than `block` itself).
  bool outlives(const Blocks& b, int block) const {
    size_t depth = 0;
    while (depth < open_.size() && open_[depth] != block) ++depth;
    for (int id : b) {
      bool found = false;
      for (size_t d = 0; d <= depth && d < open_.size(); ++d) found = found || open_[d] == id;
      if (!found) return false;
    }
    return true;
  }

  // The TaskId `v` names here: its blocks and slots (Function::task_ids), or nullopt when its
  // text is out of scope.
  std::optional<TaskIdRef> resolve(const ir::Var* v) const {
    if (!bound(v) || !visible(v)) return std::nullopt;
    auto it = slots_.find(v);
    PYPTO_CHECK(it != slots_.end(), "TaskId '" << v->name << "' has no ResolveTaskIds stamp");
    return TaskIdRef{binding_of(v), it->second};
  }

 private:
  std::vector<int> open_;
  int next_block_ = 0;
  std::unordered_map<const ir::Var*, Blocks> bindings_;
  std::unordered_map<const ir::Var*, Root> roots_;
  std::unordered_map<const void*, std::vector<const ir::Var*>> aliases_;   // root Var -> the Vars bound to its text
  std::unordered_map<const ir::Var*, int64_t> slots_;   // ResolveTaskIds
};

}  // namespace pypto::transforms
