// system.* ops: TaskId producers that are not real tasks.
//
//   system.task_invalid()                                   -> Scalar[TASK_ID]  (the `None` TaskId)
//   system.task_dummy() manual_dep_edges=[t1, t2], dummy_task=True -> Scalar[TASK_ID]
//                                                           (a barrier task depending on t1, t2;
//                                                           make_op stores the edges in Call::manual_dep_edges)
//   system.task_ref([loop_var]) task="k_tid3"               -> Scalar[TASK_ID]  (placeholder: the
//       instances of the submit bound to k_tid3 that a later task must follow; with a loop
//       variable, those of the previous iteration of that loop; every_iteration=True: the ids of
//       every iteration of the pl.range below the common scope, not its last; slot=k: only
//       iteration k's id of the pl.parallel below the common scope. Written by
//       AutoDeriveTaskDependencies, replaced by TaskId carries in PrepareCrossScopeTaskIdHoists.
//       make_op stores task / slot / every_iteration in the typed Call::task_ref.)
//   system.assert(cond) message="..."                       -> ()  (Python's assert: fails the run when cond is false)
#include "../describe.h"
#include "op_util.h"
#include "pypto/ir/error.h"

namespace pypto::ir::ops {

void register_system_ops(OpRegistry& r) {
  add_op(r, "system.task_invalid", {}, {}, "The invalid TaskId (`None` as a dependency: no producer).",
         [](const std::vector<ExprPtr>&, const Attrs&, const Span&) -> TypePtr {
           return ScalarType::make(DataType::TASK_ID);
         });

  add_op(r, "system.task_dummy", {}, {"manual_dep_edges", "dummy_task"},
         "A dummy task that completes after all of manual_dep_edges; its TaskId is a barrier.",
         [](const std::vector<ExprPtr>&, const Attrs& attrs, const Span& span) -> TypePtr {
           if (auto it = attrs.find("manual_dep_edges"); it != attrs.end()) {
             auto* edges = std::get_if<std::vector<ExprPtr>>(&it->second);
             PYPTO_USER_CHECK(edges, span, "system.task_dummy: manual_dep_edges must be a list of TaskIds", "");
             for (auto& e : *edges) {
               PYPTO_CHECK(e, "system.task_dummy: null dep edge");
               PYPTO_USER_CHECK(is_task_id(e->type), e->span.known() ? e->span : span,
                                "deps= entries must be TaskIds (from pl.submit, pl.at ... as tid, pl.system.task_dummy, a "
                                "TaskId loop carry or array slot, or None), got "
                                    << detail::describe(e->type),
                                "deps= never takes tensors: dependencies on data are derived automatically");
             }
           }
           expect_bool_attr("system.task_dummy", attrs, "dummy_task", span);
           return ScalarType::make(DataType::TASK_ID);
         });

  // `assert cond, "message"` in any DSL function: the run fails at the statement's line when the
  // condition (a number's truth, as in Python) is false.
  add_op(r, "system.assert", {"condition"}, {"message"},
         "Fails the run at this line, with the message, when the condition is false (Python's assert).",
         [](const std::vector<ExprPtr>& args, const Attrs& attrs, const Span& span) -> TypePtr {
           auto* s = args[0]->type->as<ScalarType>();
           PYPTO_USER_CHECK(s && s->dtype != DataType::TASK_ID, span,
                            "assert needs a number or a bool as its condition, got " << detail::describe(args[0]->type),
                            "compare values to make a condition: assert n > 0");
           if (auto it = attrs.find("message"); it != attrs.end()) {
             PYPTO_USER_CHECK(std::get_if<std::string>(&it->second), span, "assert: the message must be a string", "");
           }
           return TupleType::unit();
         });

  OpInfo ref;
  ref.name = "system.task_ref";
  ref.arg_names = {"loop"};
  ref.min_args = 0;
  ref.attr_names = {"task", "every_iteration", "slot"};
  ref.doc = "A compiler edge not yet hoisted: the TaskId(s) of the submit bound to `task` (with a loop variable: of "
            "the previous iteration of that loop); PrepareCrossScopeTaskIdHoists turns it into TaskId carries.";
  ref.infer = [](const std::vector<ExprPtr>& args, const Attrs& attrs, const Span& span) -> TypePtr {
    auto it = attrs.find("task");
    PYPTO_USER_CHECK(it != attrs.end() && std::get_if<std::string>(&it->second), span,
                     "system.task_ref needs task=\"<TaskId variable name>\"", "");
    PYPTO_USER_CHECK(args.empty() || args[0]->type->is<ScalarType>(), span,
                     "system.task_ref: the optional argument is a loop variable", "");
    if (auto s = attrs.find("slot"); s != attrs.end()) {
      auto* k = std::get_if<int64_t>(&s->second);
      PYPTO_USER_CHECK(k && *k >= 0, span, "system.task_ref: slot= must be an int >= 0", "");
    }
    if (auto e = attrs.find("every_iteration"); e != attrs.end()) {
      PYPTO_USER_CHECK(std::get_if<bool>(&e->second), span, "system.task_ref: every_iteration= must be True or False", "");
    }
    return ScalarType::make(DataType::TASK_ID);
  };
  r.add(std::move(ref));
}

}  // namespace pypto::ir::ops
