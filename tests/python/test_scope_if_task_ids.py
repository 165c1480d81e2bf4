"""A TaskId an `if` inside a runtime scope yields, carried by the enclosing loop: the TaskId of the
branch that ran orders the next iteration's task (TaskIdsCarriedOutOfScope takes if results as it
takes pl.submit TaskIds and loop results: the result's variable is declared before the
PTO2_SCOPE). It was refused, "TaskId 'tid' ... is used outside the runtime scope that produced
it", with a help that described what the program already did; the same loop without the `if`, or
without the scope, compiled. The race checker confirms each run's order."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen

SRC = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, src: pl.Tensor[[16, 16], pl.FP32], dst: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        dst = pl.store(pl.add(pl.load(src, [0, 0], [16, 16]), 1.0), [0, 0], dst)
        return dst

    @pl.function(type=pl.FunctionType.InCore)
    def dbl(self, src: pl.Tensor[[16, 16], pl.FP32], dst: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        dst = pl.store(pl.muls(pl.load(src, [0, 0], [16, 16]), 2.0), [0, 0], dst)
        return dst

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.InOut[pl.Tensor[[80, 16], pl.FP32]], c: pl.Scalar[pl.INT64]) -> pl.Tensor[[80, 16], pl.FP32]:
        tid = None
        for i in pl.range(4):
            with SCOPE:
                s = pl.tensor.slice(x, [16, 16], [i * 16, 0])
                d = pl.tensor.slice(x, [16, 16], [i * 16 + 16, 0])
BRANCHES
        return x
'''

BOTH = '''                if c > i:
                    d, tid = pl.submit(self.inc, s, d, deps=[tid])
                else:
                    d, tid = pl.submit(self.dbl, s, d, deps=[tid])
'''
# Only one branch submits: the other keeps the previous iteration's TaskId (the if result is the
# new TaskId or the carried one).
ONE = '''                if c > i:
                    d, tid = pl.submit(self.inc, s, d, deps=[tid])
'''


def _expected(x, c, one_branch):
    e = x.copy()
    for i in range(4):
        if c > i:
            e[i * 16 + 16:i * 16 + 32] = e[i * 16:i * 16 + 16] + 1
        elif not one_branch:
            e[i * 16 + 16:i * 16 + 32] = e[i * 16:i * 16 + 16] * 2
    return e


@pytest.mark.parametrize("scope", ["pl.scope()", "pl.manual_scope()"])
@pytest.mark.parametrize("branches", [BOTH, ONE], ids=["both", "one"])
def test_a_task_id_an_if_in_a_scope_yields_is_carried_by_the_loop(scope, branches):
    program = pl.parse_program(SRC.replace("SCOPE", scope).replace("BRANCHES\n", branches), "t.py")
    prog = pypto.compile(program)
    rng = np.random.default_rng(5)
    for c in (0, 2, 4):
        x = rng.standard_normal((80, 16)).astype(np.float32)
        want = _expected(x, c, branches is ONE)
        stats = prog(x, c, race_check=True)     # an unordered pair would fail the run
        assert stats.races == 0
        np.testing.assert_allclose(x, want, rtol=1e-6)
    # declared once, before the scope, and assigned by each branch that submits
    code = codegen.generate_orchestration(program, "main").code
    assert code.count("PTO2TaskId tid_2 = PTO2TaskId::invalid();") == 1, code
    assert code.count("tid_2 = tid_3;") == (2 if branches is BOTH else 1), code
