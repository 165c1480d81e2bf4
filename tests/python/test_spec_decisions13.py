"""Issue 13 decisions confirmed against the spec text and pinned (docs/dsl.md).

1. Casts float -> integer (reference_ops.md §5): a *tile* pl.cast rounds to nearest, ties away
   from zero, by default (`mode="round"`), warning once per program without `mode=`; a *scalar*
   pl.cast takes only the default mode and stays the C++ conversion, which truncates toward zero
   (the reference's scalar cast has no mode), in the orchestration and in a kernel alike.
2. Out -> InOut at call sites (anchor_features §16 B, R-seq): any enclosing sequential loop
   promotes, also for a buffer created (or sliced) inside the loop body.
"""
import warnings

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen
from pypto.frontend.diagnostics import PyptoWarning

CASTS = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, f: pl.Scalar[pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
             z: pl.Out[pl.Tensor[[8, 8], pl.INT32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        k = pl.cast(f, pl.INDEX)                      # scalar, orchestration
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.tile.full([8, 8], dtype=pl.FP32, value=0.0)
            g = pl.cast(f, pl.INT32)                  # scalar, kernel
            y = pl.store(pl.adds(pl.adds(t, pl.cast(k, pl.FP32)), pl.cast(g, pl.FP32) * 1000.0), [0, 0], y)
            z = pl.store(pl.cast(pl.adds(t, f), pl.INT32), [0, 0], z)   # tile
        return y
'''


def _round_half_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def test_tile_casts_round_scalar_casts_truncate():
    with pytest.warns(PyptoWarning, match="rounds to nearest"):
        compiled = pypto.compile(pl.parse_program(CASTS, "casts.py"))
    for f in (2.5, -2.5, 2.7, -2.7, 0.5, -0.4):
        y = np.zeros((8, 8), np.float32)
        z = np.zeros((8, 8), np.int32)
        compiled(f, y, z, race_check=True)
        trunc = float(np.trunc(np.float32(f)))
        np.testing.assert_array_equal(y, np.full((8, 8), trunc + 1000 * trunc, np.float32), err_msg=f"f={f}")
        np.testing.assert_array_equal(z, np.full((8, 8), _round_half_away(np.float32(f)), np.int32), err_msg=f"f={f}")


def test_scalar_cast_takes_only_the_default_mode_and_a_tile_cast_any():
    with warnings.catch_warnings():
        warnings.simplefilter("error", PyptoWarning)   # an explicit mode does not warn
        pl.parse_program(CASTS.replace("pl.cast(f, pl.INDEX)", 'pl.cast(f, pl.INDEX, mode="round")')
                         .replace("pl.INT32), [0, 0], z)", 'pl.INT32, mode="trunc"), [0, 0], z)'), "casts.py")
    from pypto.errors import PyptoError
    with pytest.raises(PyptoError, match="a scalar pl.cast accepts only the default mode"):
        pl.parse_program(CASTS.replace("pl.cast(f, pl.INDEX)", 'pl.cast(f, pl.INDEX, mode="trunc")'), "casts.py")


DIRECTIONS = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        c = pl.store(pl.add(t, t), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32],
             o: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        for i in {LOOP}(4):
            t = pl.create_tensor([16, 16], dtype=pl.FP32)
            t = self.twice(a, t)                              # created in the body
            v = pl.slice(o, [16, 16], [i * 16, 0])
            v = self.twice(t, v)                              # sliced in the body
        return o
'''


@pytest.mark.parametrize("loop,direction", [("pl.range", "add_inout"), ("pl.parallel", "add_output")])
def test_a_buffer_created_inside_a_sequential_loop_is_promoted(loop, direction):
    program = pl.parse_program(DIRECTIONS.replace("{LOOP}", loop), "dirs.py")
    code = codegen.generate_orchestration(program, "main").code
    assert code.count("params_t0.%s(t" % direction) == 1, code
    assert code.count("params_t1.%s(v" % direction) == 1, code
    compiled = pypto.compile(program)
    a = np.random.default_rng(1).standard_normal((16, 16)).astype(np.float32)
    o = np.zeros((64, 16), np.float32)
    compiled(a, o, race_check=True)
    np.testing.assert_allclose(o, np.tile(4 * a, (4, 1)), rtol=1e-6)
