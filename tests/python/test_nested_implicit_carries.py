"""A scalar first bound in an inner loop keeps, as in Python, its value from an earlier iteration of
an enclosing loop on an iteration where the inner loop runs no iteration (docs/dsl.md "Allocations
that outlive their loop or branch"; spec anchor_features §17: the reference's source is non-SSA).

Before, each inner loop's implicit carry was seeded with 0 right before it, so the enclosing loop's
later iteration reset the name (found by tests/python/kernel_flow_fuzz.py, seed 172)."""
import numpy as np
import pytest

import pypto
import pypto.errors
import pypto.language as pl
from pypto import ir

KERNEL = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 4], pl.INT64], n: pl.Scalar[pl.INDEX],
          os: pl.InOut[pl.Tensor[[1, 4], pl.INT64]]) -> pl.Tensor[[1, 4], pl.INT64]:
        acc = 0
        for i in pl.range(3):
            for j in pl.range(n - i):
                last = j + 10 * i
            acc = acc + last            # read around the outer loop's back edge
        for a in pl.range(2):
            for b in pl.range(2):
                for c in pl.range(n - a - b):
                    deep = 100 * a + 10 * b + c
        pl.tensor.write(os, [0, 0], pl.cast(last, pl.INT64))
        pl.tensor.write(os, [0, 1], pl.cast(acc, pl.INT64))
        pl.tensor.write(os, [0, 2], pl.cast(deep, pl.INT64))
        return os

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 4], pl.INT64], n: pl.Scalar[pl.INDEX],
             os: pl.InOut[pl.Tensor[[1, 4], pl.INT64]]) -> pl.Tensor[[1, 4], pl.INT64]:
        os = self.k(x, n, os)
        return os
'''


def python_reference(n):
    last = acc = deep = 0   # the DSL's seed where Python would have no value (zero trips)
    for i in range(3):
        for j in range(n - i):
            last = j + 10 * i
        acc = acc + last
    for a in range(2):
        for b in range(2):
            for c in range(n - a - b):
                deep = 100 * a + 10 * b + c
    return [last, acc, deep]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
def test_kernel_keeps_a_value_from_an_earlier_outer_iteration(n, monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    prog = pypto.compile(pl.parse_program(KERNEL, "nested.py"))
    os = np.full((1, 4), -7, np.int64)
    prog(np.zeros((1, 4), np.int64), n, os)
    assert list(os[0, :3]) == python_reference(n)
    assert os[0, 3] == -7


def test_n2_is_the_case_the_old_seed_got_wrong():
    # n = 2: i = 2 runs no inner iteration; Python keeps last = 10 (from i = 1), the old seed gave 0;
    # c runs no iteration for (a, b) = (1, 1) and deep keeps 100 from (1, 0)
    assert python_reference(2) == [10, 1 + 10 + 10, 100]


ORCHESTRATION = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def put(self, v: pl.Scalar[pl.INT64], k: pl.Scalar[pl.INDEX],
            os: pl.InOut[pl.Tensor[[1, 4], pl.INT64]]) -> pl.Tensor[[1, 4], pl.INT64]:
        pl.tensor.write(os, [0, k], v)
        return os

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, n: pl.Scalar[pl.INDEX], os: pl.InOut[pl.Tensor[[1, 4], pl.INT64]]) -> pl.Tensor[[1, 4], pl.INT64]:
        acc = 0
        for i in pl.range(3):
            for j in pl.range(n - i):
                last = j + 10 * i
            acc = acc + last
        os = self.put(pl.cast(last, pl.INT64), 0, os)
        os = self.put(pl.cast(acc, pl.INT64), 1, os)
        return os
'''


@pytest.mark.parametrize("n", [0, 2, 3])
def test_orchestration_keeps_a_value_from_an_earlier_outer_iteration(n, monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    prog = pypto.compile(pl.parse_program(ORCHESTRATION, "nested_orch.py"))
    os = np.full((1, 4), -7, np.int64)
    prog(n, os)
    assert list(os[0, :2]) == python_reference(n)[:2]


def test_the_outer_loop_carries_the_name_and_the_inner_loop_starts_from_its_carry():
    text = ir.python_print(pl.parse_program(KERNEL, "nested.py"))
    # seeded once, before the outer loop; the inner loop starts from the outer carry
    assert "last = 0\n        for i, (acc_1, last_1) in pl.range(0, 3, 1, init_values=(acc, last)):" in text
    assert "for j, (last_2,) in pl.range(0, n - i, 1, init_values=(last_1,)):" in text
    # three levels: each loop carries `deep`, seeded before the outermost
    assert "deep = 0\n        for a, (deep_1,) in pl.range(0, 2, 1, init_values=(deep,)):" in text
    assert pl.parse_program(text) is not None   # the printed form re-parses


def test_a_name_bound_first_in_the_outer_body_is_unchanged():
    # bound unconditionally at the outer body's top level: the inner loop starts from that binding,
    # and the outer loop's carry (read after it) is never read in its body
    src = KERNEL.replace("            for j in pl.range(n - i):\n                last = j + 10 * i\n",
                         "            last = 10 * i\n            for j in pl.range(n - i):\n"
                         "                last = j + 10 * i\n")
    text = ir.python_print(pl.parse_program(src, "nested.py"))
    assert ("for i, (acc_1, last_1) in pl.range(0, 3, 1, init_values=(acc, last)):\n"
            "            last_2 = 10 * i\n"
            "            for j, (last_3,) in pl.range(0, n - i, 1, init_values=(last_2,)):") in text
    assert text.count("last_1") == 1


def test_a_nested_carry_changing_type_in_the_outer_body_is_a_located_error():
    # the outer loop now carries `last`: an FP32 rebinding of the inner loop's INDEX is a type change
    src = KERNEL.replace("            acc = acc + last            # read around the outer loop's back edge\n",
                         "            last = pl.cast(last, pl.FP32) * 0.5\n")
    with pytest.raises(pypto.errors.PyptoError, match="'last' changes type in the loop") as e:
        pl.parse_program(src, "nested.py")
    assert "nested.py:10:" in str(e.value) or "--> nested.py:10" in str(e.value)


BOOL_FLAG = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 4], pl.INT64], n: pl.Scalar[pl.INDEX],
          os: pl.InOut[pl.Tensor[[1, 4], pl.INT64]]) -> pl.Tensor[[1, 4], pl.INT64]:
        for i in pl.range(3):
            for j in pl.range(n - i):
                seen = j == 0
        pl.tensor.write(os, [0, 0], pl.cast(seen, pl.INT64))
        return os

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 4], pl.INT64], n: pl.Scalar[pl.INDEX],
             os: pl.InOut[pl.Tensor[[1, 4], pl.INT64]]) -> pl.Tensor[[1, 4], pl.INT64]:
        os = self.k(x, n, os)
        return os
'''


@pytest.mark.parametrize("n,want", [(0, 0), (1, 1), (2, 1), (3, 1)])
def test_a_bool_keeps_its_value_from_an_earlier_outer_iteration(n, want, monkeypatch):
    # n = 1: only i = 0 runs j (j = 0: True); i = 1, 2 run none and keep True, not the seed False
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    prog = pypto.compile(pl.parse_program(BOOL_FLAG, "flag.py"))
    os = np.full((1, 4), -7, np.int64)
    prog(np.zeros((1, 4), np.int64), n, os)
    assert os[0, 0] == want
