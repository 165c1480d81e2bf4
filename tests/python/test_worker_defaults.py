"""The worker counts of a call that names none (pypto.runtime.worker_defaults, docs/running.md,
"Workers"): a one-core-type program gets CPUs - 1 workers of its type and none of the other; a
worker count of 0 is accepted for a type no kernel uses and refused, naming the kernel, else."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto._core import ir
from pypto.compiler import ArgumentValueError
from pypto.runtime.build import KernelEntry
from pypto.runtime.worker_defaults import MIXED_DEFAULT, default_workers, usable_cpus

MM_SRC = """
import pypto.language as pl

@pl.program
class Mm:
    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
           c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ta = pl.move(pl.load(a, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Left)
        tb = pl.move(pl.load(b, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Right)
        c = pl.store(pl.matmul(ta, tb), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.mm(a, b, c)
        return c
"""

ADD_SRC = """
import pypto.language as pl

@pl.program
class Add:
    @pl.function(type=pl.FunctionType.InCore)
    def add(self, x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 8]), pl.load(x, [0, 0], [16, 8])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = self.add(x, y)
        return y
"""

AIC, AIV = ir.CoreType.AIC, ir.CoreType.AIV


@pytest.fixture(scope="module")
def mm():
    return pypto.compile(pl.parse_program(MM_SRC))


@pytest.fixture(scope="module")
def add():
    return pypto.compile(pl.parse_program(ADD_SRC))


def _mm_args():
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    return a, b, np.zeros((16, 16), np.float32)


@pytest.mark.parametrize("kernels, cpus, expected", [
    ([KernelEntry("mm", 0, AIC)], 4, (3, 0)),
    ([KernelEntry("mm", 0, AIC), KernelEntry("mm2", 1, AIC)], 2, (1, 0)),
    ([KernelEntry("add", 0, AIV)], 8, (0, 7)),
    ([KernelEntry("add", 0, AIV)], 1, (0, 1)),          # never 0 workers of the type in use
    ([KernelEntry("mm", 0, AIC), KernelEntry("add", 1, AIV)], 8, MIXED_DEFAULT),
    ([], 8, MIXED_DEFAULT),
])
def test_default_workers(kernels, cpus, expected):
    assert default_workers(kernels, cpus=cpus) == expected


def test_one_type_program_runs_on_cpus_minus_one_workers(mm, add):
    n = max(1, usable_cpus() - 1)
    a, b, c = _mm_args()
    mm(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    assert mm.default_workers == (n, 0) and mm._runtime.config[:2] == (n, 0)
    x = np.arange(128, dtype=np.float32).reshape(16, 8)
    y = np.zeros_like(x)
    add(x, y)
    np.testing.assert_array_equal(y, 2 * x)
    assert add._runtime.config[:2] == (0, n)


def test_named_counts_override_the_default(mm):
    a, b, c = _mm_args()
    mm(a, b, c, aic_workers=2, aiv_workers=1)
    assert mm._runtime.config[:2] == (2, 1)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    mm(a, b, c, aiv_workers=0)     # 0 of a type no kernel uses
    assert mm._runtime.config[:2] == (max(1, usable_cpus() - 1), 0)


def test_zero_workers_of_a_used_type_is_refused(mm, add):
    a, b, c = _mm_args()
    with pytest.raises(ArgumentValueError, match=r"aic_workers must be a positive integer for this program "
                                                 r"\(kernel 'mm' runs on AIC workers\), got 0"):
        mm(a, b, c, aic_workers=0)
    with pytest.raises(ArgumentValueError, match=r"aiv_workers must be a positive integer for this program "
                                                 r"\(kernel 'add' runs on AIV workers\), got 0"):
        add(np.zeros((16, 8), np.float32), np.zeros((16, 8), np.float32), aiv_workers=0, aic_workers=1)
    with pytest.raises(ArgumentValueError, match="aic_workers must be a non-negative integer, got -1"):
        mm(a, b, c, aic_workers=-1)
    # A huge count is out of range, not "not positive" (the message said so for 10**12).
    with pytest.raises(ArgumentValueError, match=r"aic_workers must be at most 4096 \(the runtime's bound on the "
                                                 r"workers of a core type\), got 1000000000000"):
        mm(a, b, c, aic_workers=10**12)
    with pytest.raises(ArgumentValueError, match=r"task_ring_size must be at most 16777216 \(the runtime's bound on "
                                                 r"tasks in flight\), got 4294967296"):
        mm(a, b, c, task_ring_size=1 << 32)
    assert not c.any()   # refused before running


def test_resource_bounds_past_the_runtime_range_are_refused_naming_the_option(mm):
    # memory_limit >= 2**64 reached the binding: a RunError carrying nanobind's signature dump;
    # task_ring_size 2**31 passed the "at most 4294967295" check and was refused by the runtime
    # with another bound ("out of range 0..16777216").
    a, b, c = _mm_args()
    with pytest.raises(ArgumentValueError, match=r"memory_limit must be at most 18446744073709551615 \(2\*\*64 - 1: "
                                                 r"it is a 64-bit byte count\), got 18446744073709551616"):
        mm(a, b, c, memory_limit=1 << 64)
    with pytest.raises(ArgumentValueError, match=r"task_ring_size must be at most 16777216 .*got 2147483648"):
        mm(a, b, c, task_ring_size=1 << 31)
    assert not c.any()   # refused before running
    mm(a, b, c, memory_limit=(1 << 64) - 1, task_ring_size=1 << 24)   # the bounds themselves run
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_clusters_above_the_worker_pairs_are_refused(mm):
    # A cluster pairs one AIC and one AIV worker; more than min(aic, aiv) were capped silently
    # (clusters=4 on 1 AIC + 2 AIV workers ran 1 cluster without a word).
    a, b, c = _mm_args()
    with pytest.raises(ArgumentValueError, match=r"clusters 4 is more than min\(aic_workers 1, aiv_workers 2\) = 1 "
                                                 r"\(a cluster pairs one AIC and one AIV worker\); give at most 1 "
                                                 r"\(0 = min\(aic, aiv\)\) or more workers$"):
        mm(a, b, c, aic_workers=1, aiv_workers=2, clusters=4)
    n = max(1, usable_cpus() - 1)
    with pytest.raises(ArgumentValueError,
                       match=r"clusters 1 is more than min\(aic_workers %d, aiv_workers 0\) = 0" % n):
        mm(a, b, c, clusters=1)    # the default counts of an AIC-only program: no AIV worker to pair
    assert not c.any()   # refused before running
    mm(a, b, c, aic_workers=2, aiv_workers=2, clusters=2)   # min(aic, aiv) itself runs
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_workers_above_the_runtime_bound_are_refused_before_running(mm):
    # The runtime's constructor refused them (RunError "cannot create the runtime") after the call's checks.
    a, b, c = _mm_args()
    with pytest.raises(ArgumentValueError, match=r"aiv_workers must be at most 4096 \(the runtime's bound on the "
                                                 r"workers of a core type\), got 4097"):
        mm(a, b, c, aiv_workers=4097)
    with pytest.raises(ArgumentValueError, match=r"aic_workers must be at most 4096 .*got 5000"):
        mm(a, b, c, aic_workers=5000)
    assert mm._runtime is None or max(mm._runtime.config[:2]) <= 4096


def test_more_than_8_workers_per_cpu_warn_once_per_runtime(mm, monkeypatch):
    import warnings

    import pypto.runtime.worker_defaults as wd
    monkeypatch.setattr(wd, "usable_cpus", lambda: 2)
    a, b, c = _mm_args()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")   # every warning recorded: the once is the code's, not the filter's
        mm(a, b, c, aic_workers=8, aiv_workers=8)   # 16 = 8 per CPU: no warning
        mm(a, b, c, aic_workers=1, aiv_workers=16)
        mm(a, b, c, aic_workers=1, aiv_workers=16)  # the same runtime: not again
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    assert [str(w.message) for w in caught if issubclass(w.category, wd.WorkerCountWarning)] == [
        wd.oversubscription(1, 16, cpus=2)]
    assert caught[0].filename == __file__   # the user's call, not pypto's
    assert "aic_workers 1, aiv_workers 16: 17 worker threads on 2 CPUs (more than 8 per CPU)" in str(caught[0].message)


@pytest.mark.parametrize("aic, aiv, chips, cpus, expected", [
    (0, 16, 1, 2, ""),
    (0, 17, 1, 2, "aiv_workers 17: 17 worker threads on 2 CPUs (more than 8 per CPU)"),
    (1, 2, 8, 2, "aic_workers 1, aiv_workers 2 on each of 8 chips: 24 worker threads on 2 CPUs"),
    (1, 2, 8, 4, ""),
    (9, 0, 1, 1, "aic_workers 9: 9 worker threads on 1 CPU (more than 8 per CPU)"),
])
def test_oversubscription(aic, aiv, chips, cpus, expected):
    from pypto.runtime.worker_defaults import oversubscription
    problem = oversubscription(aic, aiv, chips, cpus=cpus)
    assert problem.startswith(expected) and bool(problem) == bool(expected)
