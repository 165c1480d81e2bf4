// Task submission: a Call or Submit of a kernel (or Group) function becomes
//
//   Arg params_tN;
//   params_tN.add_input(ext_a);          // tensors in argument order, by arg direction
//   params_tN.add_output(c);
//   params_tN.add_scalar(to_u64(scale)); // then scalars: floats via to_u64, ints/bools (uint64_t)
//   params_tN.dump(ext_a);               // tensors marked by pl.dump_tag / dumps=, if any
//   rt_submit_aiv_task(<kernel id>, params_tN);      // or rt_submit_aic_task / MixedKernels
//
// (in its own `{ }` block in a function of 64 task statements or more, Function::task_statements) and the call's results are bound to the arguments they
// alias (the callee's explicit return -> param map): no alias declarations. Tuple-valued
// calls get a `_tc_N` record.
#include <functional>

#include "emitter.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/return_lineage.h"

namespace pypto::codegen::orchestration {

using namespace ir;

namespace {

// `PTO2_SOURCE_SITE(params_t3, "prog.py", 42);`: the runtime names this DSL line in race
// reports (the generated file defines the macro as a no-op for runtimes without it).
std::string source_site_line(const std::string& params, const Span& span) {
  return "PTO2_SOURCE_SITE(" + params + ", " + Emitter::source_site_args(span) + ");";
}

// `pto2_check_arg_extent(a, 0, 16, "k", "x", "prog.py", 16);` for each axis where the argument's
// extent is dynamic and the parameter's is a constant (the frontend checks the static ones).
std::vector<std::string> dynamic_extent_checks(const std::string& arg, const TensorType& at, const Var& param,
                                               const std::string& callee, const Span& span) {
  std::vector<std::string> out;
  auto* pt = param.type->as<TensorType>();
  if (!pt || pt->shape.size() != at.shape.size()) return out;
  for (size_t d = 0; d < pt->shape.size(); ++d) {
    auto* want = pt->shape[d]->as<ConstInt>();
    if (!want || at.shape[d]->is<ConstInt>()) continue;
    out.push_back("pto2_check_arg_extent(" + arg + ", " + std::to_string(d) + ", " + std::to_string(want->value) + ", \"" +
                  callee + "\", \"" + param.name + "\", " + Emitter::source_site_args(span) + ");");
  }
  return out;
}

}  // namespace

std::string Emitter::source_site_args(const Span& span) { return common::CppSourceSiteArgs(span); }

void Emitter::emit_task(const Expr& e, const Var* result) {
  const Call* call = e.as<Call>();
  const Submit* sub = e.as<Submit>();
  const std::string& callee = call ? call->callee : sub->callee;
  const auto& args = call ? call->args : sub->args;
  const auto& dirs = call ? call->arg_directions : sub->arg_directions;
  FunctionPtr f = program_->get(callee);
  PYPTO_CHECK(f, "call to unknown function '" << callee << "'");
  PYPTO_CHECK(f->is_kernel() || f->type == FunctionType::Group, "task of '" << callee << "', a " << to_string(f->type) << " function");
  PYPTO_CHECK(dirs.size() == args.size(), "call to '" << callee << "' has no derived arg directions");

  const int n = next_task();
  blank();
  line("// Task " + std::to_string(n) + ": " + callee);
  // In a function of many calls, a task's Arg (about 1.4 KB) and its helpers live in their
  // own block: straight-line code then reuses one stack slot instead of growing the frame per
  // call (thousands of calls would overflow the stack). A Submit's TaskOutputTensors is used
  // later: declared before the block, assigned in it. Small functions keep the spec's form.
  const bool own_block = calls_in_own_blocks();
  std::string task_outs;
  if (sub && own_block) {
    task_outs = scopes_.declare("task_" + std::to_string(n) + "_outs");
    line("TaskOutputTensors " + task_outs + ";");
  }
  if (own_block) open_block("");
  for (size_t i = 0; i < args.size() && i < f->params.size(); ++i) {   // dynamic extents, checked at run time
    auto* at = args[i]->type->as<TensorType>();
    auto* v = as_var(args[i]);
    if (!at || !v) continue;
    auto checks = dynamic_extent_checks(ref(v), *at, *f->params[i], callee, e.span);
    for (auto& c : checks) line(c);
  }
  std::string params = scopes_.declare("params_t" + std::to_string(n), false);
  line("Arg " + params + ";");
  std::vector<std::string> signature;   // func_name_to_signature: NoDep counts as INOUT
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i]->type->is<TensorType>()) continue;
    const char* method = nullptr;
    switch (dirs[i]) {
      case ArgDirection::In: method = "add_input"; signature.push_back("IN"); break;
      case ArgDirection::Out: method = "add_output"; signature.push_back("OUT"); break;
      case ArgDirection::InOut: method = "add_inout"; signature.push_back("INOUT"); break;
      case ArgDirection::NoDep: method = "add_no_dep"; signature.push_back("INOUT"); break;
      case ArgDirection::Unset:
      case ArgDirection::Scalar:
        PYPTO_CHECK(false, "tensor argument " << i << " of '" << callee << "' has direction " << to_string(dirs[i]));
    }
    auto* v = as_var(args[i]);
    PYPTO_CHECK(v, "tensor argument " << i << " of '" << callee << "' is not a variable");
    line(params + "." + method + "(" + ref(v) + ");");
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i]->type->is<TensorType>()) continue;
    auto* pt = f->params[i]->type->as<ScalarType>();
    PYPTO_CHECK(pt && pt->dtype != DataType::TASK_ID, "argument " << i << " of '" << callee << "' is not a number");
    line(params + ".add_scalar(" + scalar_slot(args[i], pt->dtype, common::ArgumentSiteArgs(e.span, f->params[i]->name, callee)) + ");");
  }
  // pl.submit may leave out trailing Out arguments: the runtime allocates them (manual deps).
  std::vector<int> runtime_outs(f->params.size(), -1);
  for (size_t i = args.size(), k = 0; i < f->params.size(); ++i, ++k) {
    auto* tt = f->params[i]->type->as<TensorType>();
    PYPTO_CHECK(sub && tt && f->param_directions[i] == ParamDirection::Out,
                "call to '" << callee << "' omits argument " << i << ", which is not a trailing Out tensor");
    std::string base = params + "_out" + std::to_string(k);
    std::string shapes = scopes_.declare(base + "_ci_shapes", false), info = scopes_.declare(base + "_ci", false);
    std::string dims;
    for (size_t d = 0; d < tt->shape.size(); ++d) dims += (d ? ", " : "") + u32(tt->shape[d], e.span);
    std::string r = std::to_string(tt->shape.size());
    line("uint32_t " + shapes + "[" + r + "] = {" + dims + "};");
    line("TensorCreateInfo " + info + "(" + shapes + ", " + r + ", " + runtime_dtype(tt->dtype, e.span) + ");");
    line(params + ".add_output(" + info + ");");
    signature.push_back("OUT");
    runtime_outs[i] = static_cast<int>(k);
  }
  // pl.dump_tag / dumps=: the marked tensor arguments, in argument order (anchor §6).
  const auto& dumps = call ? call->dump_vars : sub->dump_vars;
  if (!dumps.empty()) {
    std::string list;
    for (auto& a : args) {
      bool marked = false;
      for (auto& d : dumps) marked |= d.get() == a.get();
      auto* v = as_var(a);
      if (!marked || !v || !a->type->is<TensorType>()) continue;
      std::string r = ref(v);
      if ((", " + list + ", ").find(", " + r + ", ") == std::string::npos) {   // each tensor once
        list += (list.empty() ? "" : ", ") + r;
      }
    }
    if (!list.empty()) line(params + ".dump(" + list + ");");
  }
  if (sub) {
    if (sub->core_num) line(params + ".launch_spec.set_block_num(" + i64(sub->core_num) + ");");   // range-checked at full width
    if (sub->sync_start) line(params + ".launch_spec.set_require_sync_start(true);");
    if (sub->allow_early_resolve) line(params + ".set_allow_early_resolve(true);");
    if (sub->timing_slot >= 0) line(params + ".set_task_timing_slot(" + std::to_string(sub->timing_slot) + ");");
  }
  DependencyEmitter::emit_task_dependencies(*this, e, params);

  std::string submit;
  const CoreType core = transforms::StampedCoreType(*f);
  if (f->type == FunctionType::Group) {
    kernels_.set_core_type(callee, core);
    const GroupKernels& g = f->group_kernels;   // StampGroupKernels
    PYPTO_CHECK(!g.empty(), "Group function '" << f->name << "' has no stamped kernels (StampGroupKernels; "
                                                   "VerifyOrchestrationProgram refuses an invalid Group)");
    // A cluster of one kernel (e.g. a pl.cluster around a pl.spmd) leaves the other id invalid.
    // Both kernels of a mixed task get the task's signature.
    std::string aic = g.aic.empty() ? "INVALID_KERNEL_ID" : std::to_string(kernels_.submit(g.aic, CoreType::AIC, signature));
    std::string aiv = g.aiv.empty() ? "INVALID_KERNEL_ID" : std::to_string(kernels_.submit(g.aiv, CoreType::AIV, signature));
    std::string mixed = scopes_.declare("mixed_" + std::to_string(n), false);
    line("MixedKernels " + mixed + " = {" + aic + ", " + aiv + ", INVALID_KERNEL_ID};");
    submit = "rt_submit_task(" + mixed + ", " + params + ")";
  } else {
    int id = kernels_.submit(callee, core, signature);
    submit = std::string(core == CoreType::AIC ? "rt_submit_aic_task(" : "rt_submit_aiv_task(") + std::to_string(id) +
             ", " + params + ")";
  }
  if (e.span.known()) line(source_site_line(params, e.span));
  if (sub && own_block) {
    line(task_outs + " = " + submit + ";");
  } else if (sub) {
    task_outs = scopes_.declare("task_" + std::to_string(n) + "_outs");
    line("TaskOutputTensors " + task_outs + " = " + submit + ";");
  } else {
    line(submit + ";");
  }
  if (own_block) close_block();

  // Results alias the Out/InOut arguments they write back (Function::returned_params).
  if (!result) return;
  const std::vector<int64_t>& rets = f->returned_params;
  std::vector<Binding> elems;
  std::vector<bool> runtime_allocated;
  for (size_t r = 0; r < f->return_types.size(); ++r) {
    const int64_t p = r < rets.size() ? rets[r] : -1;
    PYPTO_CHECK(p >= 0, "result " << r << " of '" << callee << "' does not resolve to an Out/InOut parameter");
    if (static_cast<size_t>(p) >= args.size() && runtime_outs[p] >= 0) {   // runtime-allocated output
      elems.push_back(Binding{task_outs + ".get_ref(" + std::to_string(runtime_outs[p]) + ")", {task_outs}});
      runtime_allocated.push_back(true);
      continue;
    }
    runtime_allocated.push_back(false);
    auto* v = as_var(args[p]);
    PYPTO_CHECK(v, "aliased argument of '" << callee << "' is not a variable");
    elems.push_back(binding_of(v));
  }
  if (result->type->is<TupleType>()) {
    TupleRecord rec;
    rec.key = "_tc_" + std::to_string(next_tuple());
    rec.elements = std::move(elems);
    rec.runtime_allocated = std::move(runtime_allocated);
    rec.task_outs = task_outs;
    tuples_.record(result, std::move(rec));
  } else if (!elems.empty()) {
    bind(result, elems[0]);
  }
}

void TupleValues::record(const Var* v, TupleRecord rec) { records_[v] = std::move(rec); }

TupleRecord& TupleValues::of(const Var* v) {
  auto it = records_.find(v);
  PYPTO_CHECK(it != records_.end(), "tuple element of an unknown tuple value");
  return it->second;
}

void Emitter::emit_tuple_element(const Var* target, const TupleGetItem& g) {
  auto* tv = as_var(g.tuple);
  TupleRecord& rec = tuples_.of(tv);
  size_t i = static_cast<size_t>(g.index);
  if (i < rec.elements.size()) {
    if (i < rec.runtime_allocated.size() && rec.runtime_allocated[i]) {
      // A runtime-allocated output keeps its binding: const Tensor& tmp = task_0_outs.get_ref(0);
      mark_used(rec.elements[i]);
      std::string name = declare(target);
      line("const Tensor& " + name + " = " + rec.elements[i].text + ";");
      rec.elements[i] = Binding{name, {name}};
      rec.runtime_allocated[i] = false;
    }
    bind(target, rec.elements[i]);
    return;
  }
  // The element after the kernel results of a Submit is its TaskId.
  PYPTO_CHECK(!rec.task_outs.empty() && i == rec.elements.size(), "tuple index " << i << " out of range (" << rec.key << ")");
  scopes_.use(rec.task_outs);
  if (const std::string* hoisted = hoisted_task_id(target)) {   // declared before its PTO2_SCOPE
    line(*hoisted + " = " + rec.task_outs + ".task_id();");
    return;
  }
  std::string name = declare(target);
  line("PTO2TaskId " + name + " = " + rec.task_outs + ".task_id();");
}

}  // namespace pypto::codegen::orchestration
