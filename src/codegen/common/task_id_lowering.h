// One TaskId lowering for the L2 orchestration and HOST code generators
// (orchestration_codegen.txt "TaskId sourcing", "Array carry for pl.parallel TaskId iter_args").
// The two differ only in spelling (PTO2TaskId / TaskHandle) and in where a dependency goes
// (`params_deps[count++] = t;` / `args.add_dep_wait(t);`); the shapes are these:
//
//   an array carry          PTO2TaskId arr[4];
//                           for (int64_t k = 0; k < 4; ++k) {
//                               arr[k] = init;          (or init[k] for an array init)
//                           }
//   a slot yield            arr[i] = tid;               (i, (i - start), i / step, ...)
//   an array yield          for (k) { outer[k] = inner[k]; }
//   a nested slot yield     for (k) { outer[i * 3 + k] = inner[k]; }   (pl.parallel in pl.parallel)
//   one dependency          if (prev.is_valid()) <sink(prev)>     (unguarded for a fresh id)
//                           for (k) { if (arr[k].is_valid()) <sink(arr[k])> }
//
//   L2Writer w(emitter);  TaskIdLowering low(w, L2TaskIds());
//   low.copy_slots("outer", "inner", 4);
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include "pypto/ir/function.h"

namespace pypto::codegen::common {

// The ResolveTaskIds stamps of one function (Function::task_ids), looked up by Var:
//   TaskIdStamps stamps(*fn);  stamps.of(tid).fresh  ->  no is_valid() guard
class TaskIdStamps {
 public:
  explicit TaskIdStamps(const ir::Function& fn);
  // The stamp of TaskId `v`; InternalError when it has none (the pipeline did not run).
  const ir::TaskIdInfo& of(const ir::Var* v) const;
  // N when `v` names an array of N TaskId slots; 0 for one TaskId or a value of another type.
  int64_t slots(const ir::Var* v) const;
  // The TaskId Var the pl.submit result tuple `tuple` is unpacked into where it is submitted
  // (TaskIdInfo::submit), or null: `stamps.unpacked_at_submit(tup)` -> t for `out, t = pl.submit(...)`.
  const ir::Var* unpacked_at_submit(const ir::Var* tuple) const;

 private:
  std::unordered_map<const ir::Var*, const ir::TaskIdInfo*> by_var_;
  std::unordered_map<const ir::Var*, const ir::Var*> by_submit_;
};

// Where the lowering writes: each code generator adapts its emitter.
class TaskIdWriter {
 public:
  virtual ~TaskIdWriter() = default;
  virtual void line(const std::string& text) = 0;
  virtual void open_block(const std::string& header) = 0;   // prints "<header> {"
  virtual void close_block() = 0;                            // prints "}"
  // A fresh name for one slot loop's index (`k`, `k_1`, ...); released after its block.
  virtual std::string slot_index() = 0;
  virtual void release_slot_index() {}
};

// The runtime's spelling of a TaskId.
struct TaskIdSpelling {
  std::string type;                  // PTO2TaskId / TaskHandle
  std::string invalid;               // PTO2TaskId::invalid() / TaskHandle::invalid()
  bool brace_init_invalid = false;   // `T arr[N] = {};` for an array of invalid ids
};
inline TaskIdSpelling L2TaskIds() { return {"PTO2TaskId", "PTO2TaskId::invalid()", false}; }
inline TaskIdSpelling HostTaskIds() { return {"TaskHandle", "TaskHandle::invalid()", true}; }

class TaskIdLowering {
 public:
  TaskIdLowering(TaskIdWriter& w, TaskIdSpelling s) : w_(w), s_(std::move(s)) {}
  const TaskIdSpelling& spelling() const { return s_; }

  // for (int64_t k = 0; k < n; ++k) { <each(k)> }
  void for_each_slot(int64_t n, const std::function<void(const std::string& k)>& each);
  // dst[k] = src[k]; for every slot.
  void copy_slots(const std::string& dst, const std::string& src, int64_t n);
  // dst[iter * n + k] = src[k]; for every slot of src: pl.parallel iteration `iter`'s n slots
  // of a nested carry (`iter` as parallel_slot prints it).
  void copy_slots_at(const std::string& dst, const std::string& iter, const std::string& src, int64_t n);
  // `T arr[n];` (unless `declared`) and every slot set to `init` (init[k] when init_is_array).
  void init_array(const std::string& arr, int64_t n, const std::string& init, bool init_is_array, bool declared);
  // The slot of the current iteration of pl.parallel `loop` whose index is `loop_var`:
  // `i`, `(i - start)`, `i / step` or `(i - start) / step`; `expr` prints start / step.
  static std::string parallel_slot(const std::string& loop_var, const ir::ForStmt& loop,
                                   const std::function<std::string(const ir::ExprPtr&)>& expr);
  // One dependency on the TaskId(s) `text` names: `sink(t)` for each valid one (an array of
  // `array_size` slots, or a scalar; unguarded when `always_valid`).
  void for_each_valid(const std::string& text, int64_t array_size, bool always_valid,
                      const std::function<std::string(const std::string& t)>& sink);

 private:
  TaskIdWriter& w_;
  TaskIdSpelling s_;
};

}  // namespace pypto::codegen::common
