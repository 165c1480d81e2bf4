// HOST orchestration codegen: statements. A pl.submit of a chip-level Orchestration function
// becomes a TaskArgs + submit_next_level; deps= entries become add_dep_wait (ordering only);
// loops and branches carry TaskHandles / Tensors / scalars / arrays through C++ variables.
// Runtime scopes have no L3 meaning and are flattened (their bodies are emitted inline).
// TaskId-specific forms (deps=, task_dummy, arrays, pl.parallel fences): host_task_ids.cpp.
#include <algorithm>

#include "host_emitter.h"
#include "pypto/ir/attrs.h"
#include "pypto/ir/error.h"
#include "pypto/ir/type.h"
#include "pypto/transforms/passes.h"

namespace pypto::codegen::host {

using namespace pypto::ir;

namespace {

bool is_tid_scalar(const TypePtr& t) {
  auto* s = t ? t->as<ScalarType>() : nullptr;
  return s && s->dtype == DataType::TASK_ID;
}

}  // namespace

void HostEmitter::emit_stmt(const StmtPtr& s) {
  if (!s) return;
  switch (s->kind) {
    case NodeKind::SeqStmts: emit_seq(s->as<SeqStmts>()->stmts); return;
    case NodeKind::RuntimeScopeStmt: emit_stmt(s->as<RuntimeScopeStmt>()->body); return;
    case NodeKind::AssignStmt: emit_assign(*s->as<AssignStmt>()); return;
    case NodeKind::EvalStmt: {
      const ExprPtr& e = s->as<EvalStmt>()->expr;
      if (auto* c = e->as<Call>(); c && c->is_op && c->callee == "system.assert") {
        line("pto2_assert(" + common::CppTruthText(expr(c->args[0]), common::ScalarDtypeOf(c->args[0])) + ", " +
             common::CppAssertArgs(*c) + ");");
        return;
      }
      PYPTO_CHECK(e->is<Submit>() || (e->is<Call>() && !e->as<Call>()->is_op),
                  "HOST codegen: an expression statement that is not a submit");
      emit_submit(*e, nullptr);
      return;
    }
    case NodeKind::ForStmt: print_for(*s->as<ForStmt>()); return;
    case NodeKind::IfStmt: print_if(*s->as<IfStmt>()); return;
    case NodeKind::YieldStmt: print_yield(*s->as<YieldStmt>()); return;
    case NodeKind::ReturnStmt: return;   // results are the Out/InOut tensors, written in place
    case NodeKind::ScopeStmt:            // outlined by OutlineIncoreScopes / OutlineClusterScopes
#define PYPTO_EXPR_NODE(Name) case NodeKind::Name:   // no expression is a statement
#include "pypto/ir/node_kinds.def"
      PYPTO_CHECK(false, "HOST codegen: unexpected statement " << to_string(s->kind));
  }
}

namespace {

// A submission, or a statement that only binds one of its results (prints nothing).
bool in_submit_run(const Stmt& s) {
  auto* a = s.as<AssignStmt>();
  return transforms::IsSelfContainedTask(s) || transforms::TupleResult(s) || (a && a->value->is<TupleGetItem>());
}

}  // namespace

// In a long entry, each run of submissions is printed kChunkSize at a time in an unoptimised
// function of its own, called in place; the handles are declared before it (they are all a
// submission declares that later statements read) and assigned in it:
//
//   TaskHandle t;  TaskHandle t_1;  ...
//   [&]() PYPTO_UNOPTIMISED {
//       { TaskArgs args_t0; ...; t = submit_next_level(0, args_t0); }
//       ...
//   }();
//
// One -O0 function of 3,000 submissions built in 3.1 s and 362 MB, chunks in 2.2 s and 160 MB.
void HostEmitter::emit_seq(const std::vector<StmtPtr>& stmts) {
  constexpr size_t kChunkSize = 64;
  for (size_t i = 0; i < stmts.size();) {
    if (!long_ || handle_decls_ || !in_submit_run(*stmts[i])) {
      emit_stmt(stmts[i++]);
      continue;
    }
    size_t end = i;
    for (size_t tasks = 0; end < stmts.size() && in_submit_run(*stmts[end]); ++end) {
      const bool task = !stmts[end]->is<AssignStmt>() || !stmts[end]->as<AssignStmt>()->value->is<TupleGetItem>();
      if (task && tasks++ == kChunkSize) break;
    }
    std::ostringstream chunk;
    std::vector<std::string> decls;
    const int level = indent_;
    blank();
    handle_decls_ = &decls;
    write_to(&chunk, level);   // the chunk first, then the declarations it collected before it
    open_block("[&]() PYPTO_UNOPTIMISED");
    for (; i < end; ++i) emit_stmt(stmts[i]);
    close_block("}();");
    write_to(&body_, level);
    handle_decls_ = nullptr;
    for (const std::string& d : decls) line(d);
    body_ << chunk.str();
  }
}

void HostEmitter::emit_assign(const AssignStmt& a) {
  const Var* var = a.var.get();
  const ExprPtr& v = a.value;
  if (v->is<Submit>()) {
    emit_submit(*v, var);
    return;
  }
  if (auto* c = v->as<Call>()) {
    if (!c->is_op) {
      emit_submit(*v, var);
      return;
    }
    if (c->callee == "system.task_invalid") {
      bind(var, "TaskHandle::invalid()");
      return;
    }
    if (c->callee == "system.task_dummy") return emit_task_dummy(var, *c);
    if (c->callee == "array.create") return emit_array_create(var);
    if (c->callee == "array.get_element") return emit_array_get(var, *c);
    if (c->callee == "array.update_element") return emit_array_update(var, *c);
    PYPTO_CHECK(false, "HOST codegen: no form for '" << c->callee << "' (VerifyHostProgram refuses it)");
  }
  if (auto* g = v->as<TupleGetItem>()) {
    auto* tv = as_var(g->tuple);
    auto it = tv ? tuple_elems_.find(tv) : tuple_elems_.end();
    PYPTO_CHECK(it != tuple_elems_.end() && g->index >= 0 && g->index < static_cast<int>(it->second.size()),
                "HOST codegen: unpacking of an unknown tuple");
    bind(var, it->second[g->index]);
    used_.insert(tv);
    return;
  }
  if (auto* src = as_var(v)) {
    bind(var, ref(src, v->span));   // a copy names the same C++ value
    return;
  }
  auto* st = var->type ? var->type->as<ScalarType>() : nullptr;
  if (st && st->dtype != DataType::TASK_ID) {
    std::string name = fresh(GetSSABaseName(var->name));
    line(ctype(st->dtype) + " " + name + " = " + expr(v) + ";");
    line("(void)" + name + ";");
    bind(var, name);
    return;
  }
  PYPTO_CHECK(false, "HOST codegen: unsupported assignment (VerifyHostProgram refuses it)");
}

void HostEmitter::emit_submit(const Expr& e, const Var* result) {
  std::string callee;
  const std::vector<ExprPtr>* args = nullptr;
  const std::vector<ExprPtr>* deps = nullptr;
  auto* sub = e.as<Submit>();
  if (sub) {
    callee = sub->callee;
    args = &sub->args;
    deps = &sub->deps;
    PYPTO_CHECK(!sub->core_num && !sub->sync_start && !sub->allow_early_resolve && sub->timing_slot < 0 && !sub->predicate,
                "HOST codegen: a pl.submit with more than deps=");
  } else {
    auto* c = e.as<Call>();
    callee = c->callee;
    args = &c->args;
  }
  FunctionPtr fn = program_->get(callee);
  auto tid_it = target_ids_.find(callee);
  PYPTO_CHECK(fn && tid_it != target_ids_.end() && args->size() == fn->params.size(),
              "HOST codegen: a submit of '" << callee << "' that is not a full chip-level submit");
  submitted_.insert(callee);

  const int n = task_count_++;
  const int target = tid_it->second;
  if (!block_just_opened()) line("");
  line("// Task " + std::to_string(n) + ": " + callee + " (target " + std::to_string(target) + ")");
  // In a long entry the TaskArgs live in a block of their own (the handle declared before it,
  // assigned in it): thousands of them live together in one function cost g++'s stack-variable
  // work time that grows faster than linearly.
  const std::string a = fresh("args_t" + std::to_string(n));
  const Var* tid = sub && result ? stamps_.unpacked_at_submit(result) : nullptr;   // ResolveTaskIds' at_submit
  const std::string h = tid ? fresh(GetSSABaseName(tid->name)) : "";
  if (long_) {
    if (tid && handle_decls_) handle_decls_->push_back("TaskHandle " + h + ";");   // before the chunk (emit_seq)
    else if (tid) line("TaskHandle " + h + ";");
    open_block("");
  }
  line("TaskArgs " + a + ";");
  std::vector<std::string> arg_text(args->size());
  for (size_t i = 0; i < args->size(); ++i) {
    const ExprPtr& x = (*args)[i];
    if (fn->params[i]->type->is<TensorType>()) {
      auto* xv = as_var(x);
      PYPTO_CHECK(xv && x->type && x->type->is<TensorType>(), "argument " << i << " of '" << callee << "' is not a tensor");
      arg_text[i] = ref(xv, x->span);
      line(a + ".add_tensor(" + arg_text[i] + ");");
    } else if (auto* st = fn->params[i]->type->as<ScalarType>()) {
      line(a + ".add_scalar(" + scalar_slot(x, st->dtype, common::ArgumentSiteArgs(e.span, fn->params[i]->name, callee)) + ");");
    } else {
      PYPTO_CHECK(false, "parameter '" << fn->params[i]->name << "' of '" << callee << "' is neither tensor nor scalar");
    }
  }
  if (deps) emit_dep_waits(a, *deps);

  // The callee's results alias the arguments passed for the parameters it returns.
  std::vector<std::string> results;
  for (size_t k = 0; k < fn->return_types.size(); ++k) {
    const int64_t idx = k < fn->returned_params.size() ? fn->returned_params[k] : -1;   // StampReturnedParams
    PYPTO_CHECK(idx >= 0 && !arg_text[idx].empty(), "result " << k << " of '" << callee << "' is not a tensor parameter");
    results.push_back(arg_text[idx]);
  }

  const std::string call = "submit_next_level(" + std::to_string(target) + ", " + a + ")";
  // The Var the submit's TaskId is unpacked into names the handle.
  if (tid) {
    line((long_ ? h + " = " : "TaskHandle " + h + " = ") + call + ";");
    if (long_) close_block();
    if (!stamps_.of(tid).read) line("(void)" + h + ";");
    results.push_back(h);
  } else {
    line(call + ";");
    if (long_) close_block();
    if (sub) results.push_back("TaskHandle::invalid()");
  }
  if (!result) return;
  if (sub || results.size() != 1) tuple_elems_[result] = results;
  else bind(result, results[0]);
}

std::string HostEmitter::declare_carry(const Var* v, const std::string& init_text, const Span& span) {
  if (auto* at = v->type ? v->type->as<ArrayType>() : nullptr) {
    // A loop-carried array is updated in place: the carry is the init's storage. An if result
    // gets its own array, filled by each branch's yield.
    if (!init_text.empty()) return init_text;
    std::string name = fresh(GetSSABaseName(v->name));
    line(at->dtype == DataType::TASK_ID ? "TaskHandle " + name + "[" + std::to_string(at->size) + "] = {};"
                                        : common::ArrayDecl(ctype(at->dtype), name, at->size, " = {}"));
    return name;
  }
  std::string name = fresh(GetSSABaseName(v->name));
  if (is_tid_scalar(v->type)) {
    line("TaskHandle " + name + " = " + init_text + ";");
  } else if (v->type && v->type->is<TensorType>()) {
    line("Tensor " + name + " = " + init_text + ";");
  } else if (auto* st = v->type ? v->type->as<ScalarType>() : nullptr) {
    line(ctype(st->dtype) + " " + name + " = " + init_text + ";");
    line("(void)" + name + ";");
  } else {
    PYPTO_CHECK(false, "carry '" << v->name << "' at line " << span.line << " has a type HOST code cannot carry");
  }
  return name;
}

namespace {

int64_t array_size_of(const TypePtr& t) {
  auto* at = t ? t->as<ArrayType>() : nullptr;
  return at ? at->size : 0;
}

}  // namespace

HostCarry HostEmitter::loop_carry(const ForStmt& f, size_t i) {
  const IterArg* ia = f.iter_args[i].get();
  const int64_t fence = i < f.carries.size() ? f.carries[i].slots : 0;
  if (fence > 0 && is_tid_scalar(ia->type)) return declare_fence(f, i, fence);
  std::string init = expr(ia->init);
  PYPTO_CHECK(!(as_var(ia->init) && handle_array_size(as_var(ia->init)) > 0 && is_tid_scalar(ia->type)),
              "scalar TaskId carry '" << ia->name << "' starts from an array");
  std::string name = declare_carry(ia, init, ia->span);
  bind(ia, name);
  return HostCarry{name, array_size_of(ia->type), nullptr};
}

void HostEmitter::open_loop(const ForStmt& f, const std::vector<HostCarry>&) {
  std::string i = fresh(GetSSABaseName(f.loop_var->name));
  bind(f.loop_var.get(), i);
  if (auto* c = f.step->as<ConstInt>(); c && !f.counted) {   // StampCountedLoops
    std::string step = expr(f.step);
    open_block(common::ForHeader(i, expr(f.start), common::LoopStop(f.stop, expr(f.stop)), step, c->value < 0));
    return;
  }
  // A step known only at run time, or one whose last `i += step` could overflow (ForStmt::counted):
  // Python's range (pto2_range_count; a zero step fails the run naming the DSL line), the loop
  // variable computed from the iteration number.
  common::RangeLoopNames n{i, fresh(i + "_start"), fresh(i + "_step"), fresh(i + "_count"), fresh(i + "_k")};
  common::RangeLoopPrologue(*this, n, expr(f.start), expr(f.step), expr(f.stop), f.span);
  open_block(common::RangeLoopHeader(n));
  line(common::RangeLoopVarLine(n));
  line("(void)" + i + ";");
}

void HostEmitter::bind_loop_results(const ForStmt& f, const std::vector<HostCarry>& carries) {
  for (size_t k = 0; k < f.return_vars.size() && k < carries.size(); ++k) bind(f.return_vars[k].get(), carries[k].text);
}

// Tensor has no public default constructor: a Tensor result is an optional filled by the
// branches (`std::optional<Tensor> tmp;`), read after the if as `tmp.value()`.
HostCarry HostEmitter::branch_result(const IfStmt& s, size_t k) {
  const VarPtr& rv = s.return_vars[k];
  if (rv->type && rv->type->is<TensorType>()) {
    std::string name = fresh(GetSSABaseName(rv->name));
    line("std::optional<Tensor> " + name + ";");
    needs_optional_header_ = true;
    return HostCarry{name, 0, nullptr};
  }
  if (const int64_t n = is_tid_scalar(rv->type) ? handle_array_size(rv.get()) : 0; n > 0) {
    // A TaskId phi array (ResolveTaskIds stamps N slots: a branch yields a pl.parallel fence).
    std::string name = fresh(GetSSABaseName(rv->name));
    line("TaskHandle " + name + "[" + std::to_string(n) + "];");
    return HostCarry{name, n, nullptr, true};
  }
  std::string init = is_tid_scalar(rv->type)                 ? "TaskHandle::invalid()"
                     : rv->type && rv->type->is<ArrayType>() ? ""
                                                             : "0";
  std::string name = declare_carry(rv.get(), init, rv->span);
  return HostCarry{name, array_size_of(rv->type), nullptr};
}

void HostEmitter::bind_branch_results(const IfStmt& s, const std::vector<HostCarry>& results) {
  for (size_t k = 0; k < s.return_vars.size(); ++k) {
    const VarPtr& rv = s.return_vars[k];
    bind(rv.get(), rv->type && rv->type->is<TensorType>() ? results[k].text + ".value()" : results[k].text);
  }
}

}  // namespace pypto::codegen::host
