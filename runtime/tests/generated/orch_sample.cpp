// Shapes generated orchestration code takes (spec orchestration_codegen.txt); compiled with
// -Wall -Wextra -Werror by the pto2_header_check target and run by test_generated_code.cpp.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipStorageTaskArgs& orch_args) {
    (void)orch_args;
    return PTO2OrchestrationConfig{ .expected_arg_count = 3 };
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipStorageTaskArgs& orch_args) {
    Tensor ext_a = from_tensor_arg(orch_args.tensor(0));
    Tensor ext_b = from_tensor_arg(orch_args.tensor(1));
    Tensor ext_d = from_tensor_arg(orch_args.tensor(2));
    int64_t M = (int64_t)orch_args.tensor(0).ref().shapes[0];
    union { uint64_t u64; float val; } scale_conv;
    scale_conv.u64 = orch_args.scalar(0);
    float scale = scale_conv.val;

    PTO2_SCOPE() {
        uint32_t c_ci_shapes[2] = {16, 16};
        TensorCreateInfo c_ci(c_ci_shapes, 2, DataType::FLOAT32);
        TaskOutputTensors alloc_0 = alloc_tensors(c_ci);
        const Tensor& c = alloc_0.get_ref(0);

        Arg params_t0;
        params_t0.add_input(ext_a);
        params_t0.add_input(ext_b);
        params_t0.add_output(c);
        params_t0.add_scalar(to_u64(scale));
        rt_submit_aiv_task(0, params_t0);

        Arg params_t1;
        params_t1.add_input(c);
        params_t1.add_input(ext_b);
        params_t1.add_output(ext_d);
        params_t1.add_scalar(to_u64(1.0f));
        TaskOutputTensors task_1_outs = rt_submit_aiv_task(0, params_t1);
        PTO2TaskId t1 = task_1_outs.task_id();

        PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
            PTO2TaskId arr[4];
            for (int64_t i = 0; i < 4; ++i) arr[i] = PTO2TaskId::invalid();
            arr[0] = t1;
            for (int64_t k = 0; k < M / 16; ++k) {
                PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
                    uint32_t vs[2] = {16, 8};
                    uint32_t vo[2] = {0, 8};
                    Tensor v = ext_d.view(vs, vo);
                    Tensor vt = v.transpose(0, 1);
                    (void)vt;
                    int64_t cs[2] = {16, 8}, co[2] = {0, k};   // the checked forms (dsl_checks.cpp)
                    Tensor cv = pto2_view_at(ext_d, 2, cs, co, "cv", "sample.py", 12);
                    pto2_check_arg_extent(cv, 0, 16, "kernel", "x", "sample.py", 13);
                    uint32_t ce[1] = {pto2_extent_u32(k + 1, "sample.py", 14)};
                    (void)ce;
                    for (uint64_t n = 0, c = pto2_range_count(0, k, 2, "sample.py", 15); n < c; ++n) {}
                    int64_t q = (k + 2) / pto2_divisor(k + 1, "sample.py", 16);
                    (void)q;
                    Arg params_t2;
                    params_t2.add_no_dep(v);
                    uint32_t o_shapes[1] = {4};
                    params_t2.add_output(TensorCreateInfo(o_shapes, 1, DataType::INT32));
                    PTO2TaskId params_t2_deps[4];
                    uint32_t params_t2_deps_count = 0;
                    for (int64_t j = 0; j < 4; ++j) {
                        if (arr[j].is_valid()) params_t2_deps[params_t2_deps_count++] = arr[j];
                    }
                    params_t2.set_dependencies(params_t2_deps, params_t2_deps_count);
                    params_t2.set_allow_early_resolve(true);
                    params_t2.set_task_timing_slot(3);
                    params_t2.launch_spec.set_block_num(2);
                    params_t2.launch_spec.set_require_sync_start(false);
                    params_t2.set_predicate(CoreTaskPredicate(ext_a, {0, 0}, PredicateOp::GE, -1));
                    TaskOutputTensors task_2_outs = rt_submit_aiv_task(0, params_t2);
                    const Tensor& o = task_2_outs.get_ref(0);
                    (void)o;
                    arr[1] = task_2_outs.task_id();
                    MixedKernels mixed_0 = {1, 0, INVALID_KERNEL_ID};
                    Arg params_t3;
                    params_t3.add_inout(ext_d);
                    PTO2TaskId dd[1] = {arr[1]};
                    params_t3.set_dependencies(dd, 1);
                    rt_submit_task(mixed_0, params_t3);
                    Arg params_t4;
                    params_t4.set_dependencies(arr, 2);
                    PTO2TaskId barrier = rt_submit_dummy_task(params_t4).task_id();
                    arr[2] = barrier;
                }
            }
        }
        int64_t idx[2] = {0, 0};
        float v0 = get_tensor_data<float>(ext_d, 2, idx);
        if (v0 < 0) {
            SIMPLER_SCOPE(ScopeMode::MANUAL) {
                TaskId x = TaskId::invalid();
                (void)x;
            }
        }
    }
}

}  // extern "C"
