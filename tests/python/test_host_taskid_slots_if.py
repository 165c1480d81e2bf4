"""A pl.parallel TaskId carry coming out of an `if` in a HOST-level orchestration (issue 13, §13).

Before, the if-result was one TaskHandle and VerifyHostProgram refused the fence yielded into
it ("this yields an array of TaskIds where one TaskId is carried"). Now it is an N-slot phi
array, as in L2 (tests/python/test_taskid_array_if_results.py): a branch's fence is copied
slot by slot, a branch yielding one TaskId is broadcast into every slot. Golden:
tests/golden/host_taskid_slots_if; here it runs on 2 chips, NumPy-checked, its order read from
the run's task records.
"""
import os
import re

import numpy as np
import pytest

import pypto.language as pl
from pypto import host

from codegen_test_util import GOLDEN_DIR, compile_cpp, load_single_program
from test_host_l3 import host_src


@pytest.fixture(scope="module")
def slots_if_program():
    program = load_single_program(os.path.join(GOLDEN_DIR, "host_taskid_slots_if", "host_program.py"))
    return host.compile_host(program, "host_main", chips=2)


@pytest.mark.parametrize("n", [0, 2, 3])
def test_fence_if_result_runs_and_orders_every_slot(slots_if_program, n):
    out = np.random.default_rng(n).standard_normal((64, 16)).astype(np.float32)
    want = out * 2 ** min(n, 3)        # one doubling per phase that ran
    want[:16] *= 2                     # the consumer
    stats = slots_if_program(out, n)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    phases = min(n, 3)
    assert stats["tasks_executed"] == 4 * phases + 1
    # the first phase waits on nothing; each later phase on 4 slots through one barrier (4 waits
    # in, one per task out: ExpandManualPhaseFence); the consumer on 4 (or 0)
    assert stats["wait_edges"] == 8 * max(phases - 1, 0) + (4 if phases else 0)
    assert stats["barriers"] == max(phases - 1, 0)
    tasks = stats.task_records
    for p in range(1, phases + 1):
        before = tasks[4 * (p - 1):4 * p]
        after = tasks[4 * p:4 * p + 4] if p < phases else tasks[-1:]
        assert all(a["start_us"] >= b["end_us"] for a in after for b in before)


def test_one_task_id_branch_is_broadcast_into_the_phi_array():
    src = host_src("""
        d, t = pl.submit(self.chip_add, a, b, d)
        prev = t
        if flag:
            for i in pl.parallel(3):
                e, prev = pl.submit(self.chip_inc, e, deps=[prev])
        d, u = pl.submit(self.chip_add, a, e, d, deps=[prev])
        return d
    """).replace("e: pl.InOut[pl.Tensor[[16], pl.FP32]])",
                 "e: pl.InOut[pl.Tensor[[16], pl.FP32]], flag: pl.Scalar[pl.BOOL])")
    program = pl.parse_program(src, "t.py")
    code = host.generate_host_orchestration(program, "main").code
    phi = re.search(r"TaskHandle (prev(?:_\d+)?)\[3\];\n\s*if \(flag\)", code)
    assert phi, code
    assert re.search(r"%s\[k_?\d*\] = t;" % phi.group(1), code), code          # else: t broadcast
    assert re.search(r"%s\[k_?\d*\] = prev_\d+\[k_?\d*\];" % phi.group(1), code), code   # then: slot copies
    assert re.search(r"if \(%s\[k_?\d*\]\.is_valid\(\)\) args_t2\.add_dep_wait" % phi.group(1), code), code
    ok, log = compile_cpp(code, "slots_if_broadcast")
    assert ok, log

    prog = host.compile_host(pl.parse_program(src, "t.py"), "main", chips=2)
    for flag in (True, False):
        a, b = np.full(16, 1, np.float32), np.full(16, 2, np.float32)
        d, e = np.zeros(16, np.float32), np.zeros(16, np.float32)
        stats = prog(a, b, d, e, flag)
        np.testing.assert_allclose(e, np.full(16, 3 if flag else 0, np.float32))
        np.testing.assert_allclose(d, a + e)
        # the last chip_add waits on the 3 slots (after chip_inc x3, each waiting on t), or on t
        # broadcast into them (the same handle three times is one edge)
        assert stats["wait_edges"] == (3 + 3 if flag else 1)
