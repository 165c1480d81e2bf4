// Internal tensors: every tensor.create of one C++ block (function body scope, for body,
// if branch) is batched into alloc_tensors calls at the block's entry (one per 64 creates):
//
//   uint32_t c_ci_shapes[2] = {16, 16};
//   TensorCreateInfo c_ci(c_ci_shapes, 2, DataType::FLOAT32);     // `, true` when manual_dep
//   TaskOutputTensors alloc_0 = alloc_tensors(c_ci, d_ci);
//   const Tensor& c = alloc_0.get_ref(0);
//   PTO2_TENSOR_NAMES(alloc_0, "c", "d");     // for the race checker's reports
//
// In a function of 64 task statements or more each group's infos are in a block of their own:
//
//   TaskOutputTensors alloc_0;
//   {
//       uint32_t c_ci_shapes[2] = {16, 16};  TensorCreateInfo c_ci(...);  ...
//       alloc_0 = alloc_tensors(c_ci, d_ci);
//   }
//   const Tensor& c = alloc_0.get_ref(0);
//
// A create whose shape mentions a value defined later in the same block cannot move to the
// block entry; it gets its own alloc_tensors call where it stands. Which creates are batched is
// StampAllocationBatches' decision (Function::batched_creates).
#include <cstdio>

#include <algorithm>

#include "emitter.h"
#include "pypto/codegen/control_flow_printer.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"

namespace pypto::codegen::orchestration {

using namespace ir;

namespace {

const Call* as_create(const StmtPtr& s) {
  auto* a = s->as<AssignStmt>();
  if (!a) return nullptr;
  auto* c = a->value->as<Call>();
  return (c && c->is_op && c->callee == "tensor.create") ? c : nullptr;
}

std::vector<ExprPtr> shape_of(const Call& c) {
  auto* t = c.args.empty() ? nullptr : c.args[0]->as<MakeTuple>();
  PYPTO_CHECK(t, "tensor.create without a shape list");
  return t->elements;
}

// The argument of `set_initial_value` (spec anchor_features §2): `0` for zero of any dtype,
// else the value typed as the tensor's element (`static_cast<float>(0.25)`,
// `static_cast<int32_t>(7)`); floats keep round-trip precision. The op's type rule already
// rejected non-finite, non-integral-for-integer and non-zero FP16 / BF16 values.
std::string initial_value_literal(double v, DataType dtype) {
  if (v == 0.0) return "0";
  std::string text;
  if (is_float(dtype)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    text = buf;
    if (text.find_first_of(".en") == std::string::npos) text += ".0";
  } else {
    text = std::to_string(static_cast<int64_t>(v));
  }
  return "static_cast<" + Emitter::ctype(dtype) + ">(" + text + ")";
}

}  // namespace

namespace {

std::unordered_set<const Var*> BatchedCreates(const Function& fn) {
  std::unordered_set<const Var*> set;
  for (const VarPtr& v : fn.batched_creates) set.insert(v.get());
  return set;
}

}  // namespace

AllocationBatches::AllocationBatches(const Function& fn) : stamped_(BatchedCreates(fn)) {}

// The creates at the top level of `stmts` (one block) that StampAllocationBatches puts in the
// block's entry batch (Function::batched_creates) and that are not allocated yet: a MANUAL
// scope's are allocated before its PTO2_SCOPE, then skipped at its body's entry.
std::vector<Emitter::CreateSite> Emitter::batchable_creates(const std::vector<StmtPtr>& stmts) {
  std::vector<CreateSite> out;
  for (auto& s : stmts) {
    const Call* c = as_create(s);
    const Var* v = c ? s->as<AssignStmt>()->var.get() : nullptr;
    if (!c || batches_.allocated(v) || !batches_.stamped(v)) continue;
    out.push_back(CreateSite{v, c});
  }
  return out;
}

void Emitter::emit_alloc_batch(const std::vector<CreateSite>& creates) {
  if (creates.empty()) return;
  // At most kAllocGroup tensors a call: alloc_tensors is a variadic template, and g++ -O2 spent
  // 2 s of a 1,000-create block's 2.6 s build on its one instantiation of 1,008 arguments.
  constexpr size_t kAllocGroup = 64;
  // In a function of many tasks each group's create infos live in a block of their own (the
  // group's TaskOutputTensors declared before it, assigned in it): thousands of them in one
  // block were thousands of locals live together, and g++'s stack-variable work grew faster
  // than linearly with them (6,000 creates: 16 s to build, 6 s so).
  const bool scoped = calls_in_own_blocks();
  std::vector<std::string> names, infos;
  // `TensorCreateInfo <base>_ci(...)` and its shapes for one create; returns the info's name.
  auto declare_info = [&](const CreateSite& a, const std::string& base) {
    const Call& c = *a.call;
    auto shape = shape_of(c);
    auto* tt = a.var->type->as<TensorType>();
    PYPTO_CHECK(tt, "tensor.create result is not a tensor");
    std::string dims;
    for (size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + u32(shape[i], c.span);
    std::string shapes = scopes_.declare(base + "_ci_shapes", false);
    std::string info = scopes_.declare(base + "_ci", false);
    const bool* manual = attr_get<bool>(c.attrs, "manual_dep");
    std::string r = std::to_string(shape.size());
    line("uint32_t " + shapes + "[" + r + "] = {" + dims + "};");
    line("TensorCreateInfo " + info + "(" + shapes + ", " + r + ", " + runtime_dtype(tt->dtype, c.span) +
         (manual && *manual ? ", true" : "") + ");");
    if (const double* init = attr_get<double>(c.attrs, "init_value")) {
      line(info + ".set_initial_value(" + initial_value_literal(*init, tt->dtype) + ");");
    }
    batches_.mark_allocated(a.var);
    return info;
  };
  if (!scoped) {   // the spec's form: every info, then the alloc_tensors calls and the names
    for (const CreateSite& a : creates) {
      names.push_back(scopes_.declare(base_name(a.var)));
      infos.push_back(declare_info(a, names.back()));
    }
  }
  for (size_t g = 0; g < creates.size(); g += kAllocGroup) {
    const size_t end = std::min(creates.size(), g + kAllocGroup);
    std::string alloc = scopes_.declare("alloc_" + std::to_string(next_alloc()), false);
    if (scoped) {
      line("TaskOutputTensors " + alloc + ";");
      open_block("");
      for (size_t i = g; i < end; ++i) infos.push_back(declare_info(creates[i], base_name(creates[i].var)));
    }
    std::string list;
    for (size_t i = g; i < end; ++i) list += (i > g ? ", " : "") + infos[i];
    if (scoped) {
      line(alloc + " = alloc_tensors(" + list + ");");
      close_block();
      for (size_t i = g; i < end; ++i) names.push_back(scopes_.declare(base_name(creates[i].var)));
    } else {
      line("TaskOutputTensors " + alloc + " = alloc_tensors(" + list + ");");
    }
    std::string dsl_names;
    bool from_source = false;
    for (size_t i = g; i < end; ++i) {
      line("const Tensor& " + names[i] + " = " + alloc + ".get_ref(" + std::to_string(i - g) + ");");
      bind(creates[i].var, Binding{names[i], {names[i]}});
      dsl_names += ", \"" + common::CppStringBody(creates[i].var->name) + "\"";
      from_source = from_source || creates[i].call->span.known();
    }
    // The race checker's reports name them ("tensor 'acc'", not "a tensor from alloc_tensors").
    // Like PTO2_SOURCE_SITE, only for a program from source: IR built in C++ prints the spec's lines.
    if (from_source) line("PTO2_TENSOR_NAMES(" + alloc + dsl_names + ");");
  }
  blank();
}

}  // namespace pypto::codegen::orchestration
