"""TaskId arrays and pl.system.task_dummy barriers in HOST-level orchestrations (spec README
"Distributed HOST orchestration": every deps= entry may be any TaskId value).

The lowering forms (TaskHandle arrays, array deps, submit_barrier, pl.parallel fences), the
errors that stay (each located), and tests/golden/host_taskid_arrays run end to end on the
CPU L3 runtime with 2 chips: numbers against NumPy, ordering against the run's task records.
"""

import os
import re

import numpy as np
import pytest

import pypto.language as pl
from pypto import host

from codegen_test_util import GOLDEN_DIR, compile_cpp, load_single_program
from test_host_l3 import check, host_src


def _code(body: str) -> str:
    return host.generate_host_orchestration(pl.parse_program(host_src(body), "t.py"), "main").code


# -- lowering ----------------------------------------------------------------------------------
def test_task_id_array_slots_lower_to_a_handle_array():
    code = _code("""
        tids = pl.array.create(3, pl.TASK_ID)
        d, t = pl.submit(self.chip_add, a, b, d)
        tids[2] = t
        prev = tids[2]
        e, u = pl.submit(self.chip_inc, e, deps=[prev, tids[0]])
        return d
    """)
    assert "TaskHandle tids[3] = {};" in code
    assert "tids[2] = t;" in code
    assert "TaskHandle prev = tids[2];" in code          # a snapshot
    assert "TaskHandle tids_slot = tids[0];" in code     # an inline slot read, hoisted by the parser
    assert "if (prev.is_valid()) args_t1.add_dep_wait(prev);" in code
    assert "if (tids_slot.is_valid()) args_t1.add_dep_wait(tids_slot);" in code
    ok, log = compile_cpp(code, "slots")
    assert ok, log


def test_whole_array_dep_waits_on_every_slot():
    code = _code("""
        tids = pl.array.create(2, pl.TASK_ID)
        e, u = pl.submit(self.chip_inc, e, deps=[tids])
        return d
    """)
    assert "for (int64_t k = 0; k < 2; ++k) {" in code
    assert "if (tids[k].is_valid()) args_t0.add_dep_wait(tids[k]);" in code


def test_task_dummy_lowers_to_submit_barrier():
    code = _code("""
        d, t = pl.submit(self.chip_add, a, b, d)
        e, u = pl.submit(self.chip_inc, e)
        both = pl.system.task_dummy(deps=[t, u, None])
        e, v = pl.submit(self.chip_inc, e, deps=[both])
        nothing = pl.system.task_dummy(deps=[None])
        return d
    """)
    assert "// Task 2: dependency-only barrier" in code
    assert "args_t2.add_dep_wait(t);\n" in code and "args_t2.add_dep_wait(u);\n" in code
    assert "TaskHandle both = submit_barrier(args_t2);" in code
    assert "args_t3.add_dep_wait(both);" in code          # behind fresh submits: statically valid
    assert "TaskHandle nothing = submit_barrier(args_t4);\n    (void)nothing;" in code
    assert "args_t4.add_dep_wait" not in code             # None adds no wait: the handle is invalid
    ok, log = compile_cpp(code, "barrier")
    assert ok, log


def test_array_carried_through_a_loop_is_updated_in_place():
    code = _code("""
        tids = pl.array.create(4, pl.TASK_ID)
        for k in pl.range(4):
            e, t = pl.submit(self.chip_inc, e)
            tids[k] = t
        d, u = pl.submit(self.chip_add, a, b, d, deps=[tids])
        return d
    """)
    assert code.count("TaskHandle tids") == 1             # no copy of the array per iteration
    assert re.search(r'tids\[pto2_array_slot\(k, \d+, "[^"]+", \d+\)\] = t;', code)   # checked at run time
    assert "if (tids[k_1].is_valid()) args_t1.add_dep_wait(tids[k_1]);" in code


def test_parallel_task_id_carry_is_a_fence_array():
    code = _code("""
        d, t = pl.submit(self.chip_add, a, b, d)
        prev = t
        for i in pl.parallel(1, 7, 2):
            e, prev = pl.submit(self.chip_inc, e, deps=[prev])
        d, u = pl.submit(self.chip_add, a, e, d, deps=[prev])
        return d
    """)
    assert "TaskHandle prev[3];" in code
    assert "prev[k] = t;" in code
    assert "args_t1.add_dep_wait(t);" in code             # every iteration waits on the value before the loop
    assert "prev[(i - 1) / 2] = prev_1;" in code          # its own slot
    assert "if (prev[k_1].is_valid()) args_t2.add_dep_wait(prev[k_1]);" in code
    ok, log = compile_cpp(code, "fence")
    assert ok, log



def test_array_through_a_branch_and_scalar_arrays():
    src = host_src("""
        tids = pl.array.create(2, pl.TASK_ID)
        if flag:
            d, t = pl.submit(self.chip_add, a, b, d)
            tids[0] = t
        else:
            e, u = pl.submit(self.chip_inc, e)
            tids[1] = u
        e, v = pl.submit(self.chip_inc, e, deps=[tids])
        cnt = pl.array.create(2, pl.INT64)
        cnt[0] = 3
        n = cnt[0]
        return d
    """).replace("e: pl.InOut[pl.Tensor[[16], pl.FP32]])",
                 "e: pl.InOut[pl.Tensor[[16], pl.FP32]], flag: pl.Scalar[pl.BOOL])")
    code = host.generate_host_orchestration(pl.parse_program(src, "t.py"), "main").code
    assert "TaskHandle tids_1[2] = {};" in code           # the branch result: its own array
    assert "tids_1[k] = tids[k];" in code and "tids_1[k_1] = tids[k_1];" in code
    assert "if (tids_1[k_2].is_valid()) args_t2.add_dep_wait(tids_1[k_2]);" in code
    assert "int64_t cnt[2] = {};" in code and "int64_t n = cnt[0];" in code
    ok, log = compile_cpp(code, "branch_arrays")
    assert ok, log

# -- what stays rejected (located) -------------------------------------------------------------
def test_out_of_range_constant_slot_is_located():
    check(host_src("tids = pl.array.create(2, pl.TASK_ID)\n"
                   "d, t = pl.submit(self.chip_add, a, b, d)\n"
                   "tids[2] = t  #!\nreturn d"),
          "index 2 out of range for Array[2, TASK_ID]", "tids[2]")


def test_out_of_range_constant_read_is_located():
    check(host_src("tids = pl.array.create(2, pl.TASK_ID)\n"
                   "e, u = pl.submit(self.chip_inc, e, deps=[tids[5]])  #!\nreturn d"),
          "index 5 out of range for Array[2, TASK_ID]", "tids[5]")


def test_tensor_into_task_id_array_is_rejected():
    check(host_src("tids = pl.array.create(2, pl.TASK_ID)\n"
                   "tids[0] = a  #!\nreturn d"),
          "cannot store", "tids[0]")


def test_parallel_fence_needs_a_literal_trip_count():
    src = host_src("prev = None\n"
                   "for i in pl.parallel(n):  #!\n"
                   "    e, prev = pl.submit(self.chip_inc, e, deps=[prev])\nreturn d")
    src = src.replace("e: pl.InOut[pl.Tensor[[16], pl.FP32]])", "e: pl.InOut[pl.Tensor[[16], pl.FP32]], "
                      "n: pl.Scalar[pl.INDEX])")
    check(src, "statically-known trip count", "for", codegen=True)


def test_task_dummy_takes_only_deps():
    check(host_src("d, t = pl.submit(self.chip_add, a, b, d)\n"
                   "x = pl.system.task_dummy(deps=[t], predicate=t)  #!\nreturn d"),
          "pl.system.task_dummy has no parameter 'predicate'", "t)")


# -- end to end: tests/golden/host_taskid_arrays on 2 chips ------------------------------------
@pytest.fixture(scope="module")
def taskid_program():
    program = load_single_program(os.path.join(GOLDEN_DIR, "host_taskid_arrays", "host_program.py"))
    return host.compile_host(program, "host_main", chips=2)


def test_taskid_arrays_and_barrier_run_on_two_chips(taskid_program):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 16)).astype(np.float32)
    acc = rng.standard_normal((16, 16)).astype(np.float32)
    acc0 = acc.copy()
    parts = np.zeros_like(x)
    total, out = np.zeros_like(acc), np.zeros_like(acc)
    alpha = 1.5
    stats = taskid_program(x, parts, total, acc, out, alpha)

    parts_ref = alpha * x
    total_ref = parts_ref[0:16] + parts_ref[16:32] + parts_ref[32:48] + parts_ref[48:64]
    acc_ref = acc0 + 2 * total_ref
    np.testing.assert_allclose(parts, parts_ref, rtol=1e-6)
    np.testing.assert_allclose(total, total_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(acc, acc_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out, acc_ref + total_ref, rtol=1e-5, atol=1e-5)

    assert stats["tasks_executed"] == 4 + 1 + 2 + 1
    assert stats["barriers"] == 1
    # barrier: 4 slots; chip_sum: barrier + tids[1]; 2 fence iterations: t_sum; last: 2 slots + tids[3]
    assert stats["wait_edges"] == 4 + 2 + 2 + 3
    tasks = stats.task_records
    assert [t["target"] for t in tasks] == ["chip_part"] * 4 + ["chip_sum"] + ["chip_add"] * 3
    assert tasks[4]["index"] == 6                          # the barrier took index 5
    parts_done = max(t["end_us"] for t in tasks[:4])
    # chip_sum is another target: only the barrier (and tids[1]) keep it behind every part.
    assert tasks[4]["start_us"] >= parts_done
    assert all(t["start_us"] >= tasks[4]["end_us"] for t in tasks[5:])
    assert tasks[7]["start_us"] >= max(tasks[5]["end_us"], tasks[6]["end_us"])
