// The shared TaskId lowering (task_id_lowering.h).
#include "task_id_lowering.h"

#include "pypto/ir/error.h"

namespace pypto::codegen::common {

using namespace ir;

TaskIdStamps::TaskIdStamps(const Function& fn) {
  for (const TaskIdInfo& t : fn.task_ids) {
    by_var_[t.var.get()] = &t;
    if (t.submit) by_submit_[t.submit.get()] = t.var.get();
  }
}

const Var* TaskIdStamps::unpacked_at_submit(const Var* tuple) const {
  auto it = by_submit_.find(tuple);
  return it == by_submit_.end() ? nullptr : it->second;
}

const TaskIdInfo& TaskIdStamps::of(const Var* v) const {
  auto it = by_var_.find(v);
  PYPTO_CHECK(it != by_var_.end(), "TaskId '" << v->name << "' has no ResolveTaskIds stamp (run the default pipeline)");
  return *it->second;
}

int64_t TaskIdStamps::slots(const Var* v) const {
  return v && is_task_id(v->type) ? of(v).slots : 0;
}

void TaskIdLowering::for_each_slot(int64_t n, const std::function<void(const std::string& k)>& each) {
  const std::string k = w_.slot_index();
  w_.open_block("for (int64_t " + k + " = 0; " + k + " < " + std::to_string(n) + "; ++" + k + ")");
  each(k);
  w_.close_block();
  w_.release_slot_index();
}

void TaskIdLowering::copy_slots(const std::string& dst, const std::string& src, int64_t n) {
  for_each_slot(n, [&](const std::string& k) { w_.line(dst + "[" + k + "] = " + src + "[" + k + "];"); });
}

void TaskIdLowering::copy_slots_at(const std::string& dst, const std::string& iter, const std::string& src,
                                   int64_t n) {
  // `iter` is `i`, `(i - s)`, `i / t` or `(i - s) / t`: `*` binds left to right after the `/`.
  const std::string base = iter + " * " + std::to_string(n) + " + ";
  for_each_slot(n, [&](const std::string& k) { w_.line(dst + "[" + base + k + "] = " + src + "[" + k + "];"); });
}

void TaskIdLowering::init_array(const std::string& arr, int64_t n, const std::string& init, bool init_is_array,
                                bool declared) {
  const std::string size = std::to_string(n);
  if (!declared && s_.brace_init_invalid && init == s_.invalid) {
    w_.line(s_.type + " " + arr + "[" + size + "] = {};");
    return;
  }
  if (!declared) w_.line(s_.type + " " + arr + "[" + size + "];");
  if (init_is_array) {
    copy_slots(arr, init, n);
    return;
  }
  for_each_slot(n, [&](const std::string& k) { w_.line(arr + "[" + k + "] = " + init + ";"); });
}

std::string TaskIdLowering::parallel_slot(const std::string& loop_var, const ForStmt& loop,
                                          const std::function<std::string(const ExprPtr&)>& expr) {
  auto* s0 = loop.start->as<ConstInt>();
  auto* st = loop.step->as<ConstInt>();
  std::string slot = loop_var;
  if (!(s0 && s0->value == 0)) slot = "(" + slot + " - " + expr(loop.start) + ")";
  if (!(st && st->value == 1)) slot = slot + " / " + expr(loop.step);
  return slot;
}

void TaskIdLowering::for_each_valid(const std::string& text, int64_t array_size, bool always_valid,
                                    const std::function<std::string(const std::string& t)>& sink) {
  if (array_size > 0) {
    for_each_slot(array_size, [&](const std::string& k) {
      const std::string elem = text + "[" + k + "]";
      w_.line("if (" + elem + ".is_valid()) " + sink(elem));
    });
  } else if (always_valid) {
    w_.line(sink(text));
  } else {
    w_.line("if (" + text + ".is_valid()) " + sink(text));
  }
}

}  // namespace pypto::codegen::common
