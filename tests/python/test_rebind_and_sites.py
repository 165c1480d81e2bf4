"""Rebinding the result of an op that returns its target tensor (issue 13): `c = pl.tensor.write(c,
...)` in a kernel or an orchestration, then `return c`, compiles and runs like the statement form.
The result of tensor.write carries its target's lineage (return_lineage.cpp), so NormalizeReturnOrder
makes the return explicit. An orchestration tensor.read / tensor.write whose run-time index is out of
range names the API and the axis (the generated call keeps the spec's signature). NumPy-checked end
to end; one compiled program is shared."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.compiler import RunError

REBIND = '''
import pypto.language as pl


@pl.program
class Rebind:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.FP32], c: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        c = pl.store(pl.muls(pl.load(a, [0, 0], [4, 8]), 2.0), [0, 0], c)
        c = pl.tensor.write(c, [0, 1], 1.0)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def two(self, a: pl.Tensor[[4, 8], pl.FP32], c: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
            d: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        c = pl.store(pl.load(a, [0, 0], [4, 8]), [0, 0], c)
        d = pl.store(pl.load(a, [0, 0], [4, 8]), [0, 0], d)
        d = pl.tensor.write(d, [3, 7], -5.0)
        return d

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.FP32], c: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
             d: pl.Out[pl.Tensor[[4, 8], pl.FP32]], e: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
             n: pl.Scalar[pl.INDEX], m: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4, 8], pl.FP32]:
        c = self.k(a, c)
        d = self.two(a, e, d)
        e = pl.assemble(e, pl.slice(a, [2, 8], [2, 0]), [0, 0])
        v = pl.tensor.read(a, [m, 5])
        c = pl.tensor.write(c, [n, 2], v + 7.0)
        return c
'''


@pytest.fixture(scope="module")
def compiled():
    prog = pypto.compile(pl.parse_program(REBIND, "rebind.py"))
    yield prog
    prog.close()


@pytest.mark.parametrize("race_check", [False, True])
def test_rebound_writes_compile_and_run(compiled, race_check):
    a = np.random.default_rng(13).standard_normal((4, 8)).astype(np.float32)
    c = np.zeros((4, 8), np.float32)
    d = np.zeros((4, 8), np.float32)
    e = np.zeros((4, 8), np.float32)
    stats = compiled(a, c, d, e, 3, 1, race_check=race_check)
    assert stats.races == 0
    want_c = 2 * a
    want_c[0, 1] = 1.0        # kernel k: c = pl.tensor.write(c, [0, 1], 1.0)
    want_c[3, 2] = a[1, 5] + 7.0   # orchestration: c = pl.tensor.write(c, [n, 2], v + 7.0)
    want_d = a.copy()
    want_d[3, 7] = -5.0       # kernel two: d = pl.tensor.write(d, [3, 7], -5.0), d not the sole Out
    np.testing.assert_array_equal(c, want_c)
    np.testing.assert_array_equal(d, want_d)
    want_e = a.copy()
    want_e[0:2] = a[2:4]      # e = pl.assemble(e, pl.slice(a, ...), [0, 0]): an inline source (was an ICE)
    np.testing.assert_array_equal(e, want_e)


@pytest.mark.parametrize("n,m,want", [
    (4, 0, "pl.tensor.write: index 4 out of range on axis 0 (extent 4)"),
    (0, -1, "pl.tensor.read: index -1 out of range on axis 0 (extent 4)"),
])
def test_orchestration_element_index_out_of_range_names_the_call(compiled, n, m, want):
    # The generated call keeps the spec's signature (it must compile against the real runtime
    # header); PTO2_ELEMENT_SITE before it names the DSL line, and the message the DSL op.
    z = lambda: np.zeros((4, 8), np.float32)
    with pytest.raises(RunError) as ei:
        compiled(z(), z(), z(), z(), n, m)
    assert want in str(ei.value), str(ei.value)
