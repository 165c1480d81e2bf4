"""Row reductions of 1-byte tiles with a run-time valid row count build under -Werror and compute
the valid rows only. GCC 12 reported writes past the INT8 / UINT8 result (-Wstringop-overflow) on
iterations that never run, so `pl.row_max` of such a tile failed its build (session 54 tester E #4);
the 16-bit and wider dtypes built."""
import numpy as np
import pytest

import pypto
import pypto.language as pl

SRC = """
import pypto.language as pl

I = pl.Tensor[[4, 8], pl.{dt}]
O = pl.Tensor[[4, 6], pl.{dt}]


@pl.program
class NarrowRows:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, vr: pl.Scalar[pl.INDEX], a: I, r: pl.InOut[O]) -> O:
        t = pl.load(a, [0, 0], [4, 8], [vr, 8])
        r = pl.store(pl.row_max(t), [0, 0], r)
        r = pl.store(pl.row_min(t), [0, 1], r)
        r = pl.store(pl.row_prod(t), [0, 2], r)
        r = pl.store(pl.row_sum(t), [0, 3], r)
        r = pl.store(pl.sum(t, axis=1, keepdim=True), [0, 4], r)
        r = pl.store(pl.max(t, axis=1, keepdim=True), [0, 5], r)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, vr: pl.Scalar[pl.INDEX], a: I, r: pl.InOut[O]) -> O:
        r = self.k(vr, a, r)
        return r
"""


@pytest.mark.parametrize("dt", ["INT8", "UINT8"])
def test_row_reductions_of_a_narrow_tile_over_a_run_time_valid_row_count(dt):
    np_dt = np.dtype(dt.lower())
    prog = pypto.compile(pl.parse_program(SRC.format(dt=dt), "narrow_rows_%s.py" % dt.lower()))
    a = np.random.default_rng(3).integers(np.iinfo(np_dt).min, np.iinfo(np_dt).max, (4, 8)).astype(np_dt)
    for vr in (0, 2, 4):
        r = np.full((4, 6), 55, np_dt)
        prog(vr, a, r, race_check=True)
        v = a[:vr]
        with np.errstate(over="ignore"):
            want = np.stack([v.max(1, initial=np.iinfo(np_dt).min), v.min(1, initial=np.iinfo(np_dt).max),
                             v.prod(1, dtype=np_dt), v.sum(1, dtype=np_dt), v.sum(1, dtype=np_dt),
                             v.max(1, initial=np.iinfo(np_dt).min)], axis=1)
        np.testing.assert_array_equal(r[:vr], want, err_msg="vr = %d" % vr)
        assert (r[vr:] == 55).all(), "vr = %d: rows past the valid count were written" % vr
