"""A kernel's failed tensor access (pl.load / pl.store out of bounds at run time) names the DSL
line of the access (pypto.runtime.dsl_terms): the message named only the line that submitted
the task ('submitted at t.py:22') and the tensor, not which pl.load / pl.store of the kernel
failed. The kernels carry no source lines (their object cache is keyed by the source); the line
comes from the kernel's IR, on the error path only."""
import textwrap

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import host
from pypto.runtime.dsl_terms import locate_kernel_accesses
from pypto.runtime.loader import RunError

SRC = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_shift(self, a: pl.Tensor[[64], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]],
                     k: pl.Scalar[pl.INDEX], j: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16], pl.FP32]:
        t = pl.load(a, [k], [16])
        u = pl.load(a, [j], [8])
        w = pl.load(a, [j + 8], [8])
        c = pl.store(t, [0], c)
        c = pl.store(pl.add(u, w), [k - 8], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]],
             k: pl.Scalar[pl.INDEX], j: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16], pl.FP32]:
        c = self.kernel_shift(a, c, k, j)
        return c
'''


def _line(src, text):
    return next(i + 1 for i, l in enumerate(src.splitlines()) if text in l)


@pytest.fixture(scope="module")
def prog():
    return pypto.compile(pl.parse_program(SRC, "t.py"))


@pytest.mark.parametrize("k, j, sites, failure", [
    (60, 0, ["t = pl.load(a, [k], [16])"], "load of tensor 'a' out of bounds on axis 0: offset 60 + size 16"),
    # two loads of 'a' with a box of 8: the message cannot tell them apart, both are named
    (8, 60, ["u = pl.load(a, [j], [8])", "w = pl.load(a, [j + 8], [8])"],
     "load of tensor 'a' out of bounds on axis 0: offset 60 + size 8"),
    (20, 0, ["c = pl.store(pl.add(u, w), [k - 8], c)"], "store of tensor 'c' out of bounds on axis 0: offset 12 + size 8"),
])
def test_out_of_bounds_access_names_its_dsl_line(prog, k, j, sites, failure):
    a, c = np.arange(64, dtype=np.float32), np.zeros(16, np.float32)
    with pytest.raises(RunError) as err:
        prog(a, c, k, j)
    where = " or ".join("t.py:%d" % _line(SRC, s) for s in sites)
    assert "submitted at t.py:%d" % _line(SRC, "c = self.kernel_shift(a, c, k, j)") in str(err.value)
    assert "failed: %s: %s" % (where, failure) in str(err.value), err.value
    prog(a, c, 8, 0)   # in range: runs (c = a[8:24], then c[0:8] = a[0:8] + a[8:16])
    np.testing.assert_array_equal(c, np.concatenate([a[0:8] + a[8:16], a[16:24]]))


SCATTER_SRC = '''import pypto.language as pl


@pl.program
class S:
    @pl.function(type=pl.FunctionType.InCore)
    def scatter(self, a: pl.Tensor[[4, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32],
                o: pl.Out[pl.Tensor[[6, 8], pl.FP32]]) -> pl.Tensor[[6, 8], pl.FP32]:
        ta = pl.load(a, [0, 0], [4, 8])
        ti = pl.load(idx, [0, 0], [4, 8])
        o = pl.mscatter(ta, ti, o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32],
             o: pl.Out[pl.Tensor[[6, 8], pl.FP32]]) -> pl.Tensor[[6, 8], pl.FP32]:
        o = self.scatter(a, idx, o)
        return o
'''


@pytest.mark.parametrize("bad", [48, -1, 2 ** 31 - 1])
def test_mscatter_index_out_of_range_names_its_dsl_line(bad):
    prog = pypto.compile(pl.parse_program(SCATTER_SRC, "s.py"))
    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    idx = np.arange(32, dtype=np.int32).reshape(4, 8)
    idx[1, 3] = bad
    o = np.full((6, 8), -5.0, np.float32)
    with pytest.raises(RunError) as err:
        prog(a, idx, o)
    assert "failed: s.py:%d: mscatter of tensor 'o': index %d is outside [0, 48)" % (
        _line(SCATTER_SRC, "o = pl.mscatter(ta, ti, o)"), bad) in str(err.value), err.value
    assert (o == -5.0).all(), o   # the indices are checked first: the 11 before the bad one were not written
    o = np.zeros((6, 8), np.float32)
    prog(a, np.arange(32, dtype=np.int32)[::-1].reshape(4, 8).copy(), o)   # in range: o.flat[31 - k] = a.flat[k]
    np.testing.assert_array_equal(o.reshape(-1)[:32], a.reshape(-1)[::-1])
    prog.close()


def test_host_chips_kernel_access_is_located():
    src = SRC.replace("class P:", "class P:" + textwrap.indent(textwrap.dedent('''
        @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
        def host_main(self, a: pl.Tensor[[64], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]],
                      k: pl.Scalar[pl.INDEX], j: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16], pl.FP32]:
            c, t = pl.submit(self.main, a, c, k, j)
            return c
    '''), "    "))
    hp = host.compile_host(pl.parse_program(src, "t.py"), "host_main", chips=1)
    with pytest.raises(Exception) as err:
        hp(np.zeros(64, np.float32), np.zeros(16, np.float32), 60, 0)
    assert "t.py:%d: load of tensor 'a' out of bounds" % _line(src, "t = pl.load(a, [k], [16])") in str(err.value), \
        err.value


def test_messages_without_a_known_access_are_unchanged(prog):
    other = ("task #1 (AIV kernel 'nope' (id 0)) submitted at t.py:16 block 0/1 on a worker failed: load of tensor "
             "'a' out of bounds on axis 0: offset 60 + size 16 exceeds extent 64")
    assert locate_kernel_accesses(other, prog.program) == other
    assert locate_kernel_accesses("the run failed: deadlock", prog.program) == "the run failed: deadlock"


def test_a_failed_run_without_an_explanation_still_raises(prog):
    # Runtime.run without explain= (the library API, tests/python/auto_deps_fuzz.py) must raise
    # the runtime's message unchanged.
    from pypto.runtime.args import runtime_dtype_code
    from pypto.runtime.loader import TensorArg
    a, c = np.arange(64, dtype=np.float32), np.zeros(16, np.float32)
    rt = prog._lib.create_runtime(0, 1)
    fp32 = runtime_dtype_code("FP32")
    with pytest.raises(RunError, match=r"failed: load of tensor 'a' out of bounds on axis 0: offset 60"):
        rt.run([TensorArg(x.ctypes.data, fp32, x.shape) for x in (a, c)], [60, 0])
    rt.close()


# ---- tile ops' indices: pl.tile.gather / scatter / scatter_update ---------------------------------
# Their helpers said 'gather: index 32 is outside [0, 32)', naming neither the tiles nor the line.
# Two gathers and two scatters with different tiles: the message tells them apart.

TILE_INDEX_SRC = '''import pypto.language as pl


@pl.program
class T:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32], jdx: pl.Tensor[[4, 8], pl.INT32],
          u: pl.Tensor[[1, 4], pl.INT32], o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        ta = pl.load(a, [0, 0], [4, 8])
        ti = pl.load(idx, [0, 0], [4, 8])
        tj = pl.load(jdx, [0, 0], [4, 8])
        tu = pl.load(u, [0, 0], [1, 4])
        g = pl.tile.gather(ta, ti)
        h = pl.tile.gather(g, tj)
        s = pl.tile.scatter(h, ta, ti)
        w = pl.tile.scatter_update(s, tu, ta)
        v = pl.tile.scatter(w, g, tj)
        o = pl.store(v, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32], jdx: pl.Tensor[[4, 8], pl.INT32],
             u: pl.Tensor[[1, 4], pl.INT32], o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        o = self.k(a, idx, jdx, u, o)
        return o
'''


def _tile_index_args():
    perm = np.arange(32, dtype=np.int32).reshape(4, 8)
    return np.arange(32, dtype=np.float32).reshape(4, 8), perm.copy(), perm[::-1].copy(), np.array([[3, 1, 2, 0]],
                                                                                                   np.int32)


@pytest.fixture(scope="module")
def tile_index_prog():
    p = pypto.compile(pl.parse_program(TILE_INDEX_SRC, "g.py"))
    yield p
    p.close()


@pytest.mark.parametrize("arg, at, bad, site, failure", [
    (1, (2, 5), 32, "g = pl.tile.gather(ta, ti)",
     "gather from tile 'ta' with indices from tile 'ti': flat index 32 is outside [0, 32)"),
    (2, (0, 0), -1, "h = pl.tile.gather(g, tj)",
     "gather from tile 'g' with indices from tile 'tj': flat index -1 is outside [0, 32)"),
    (3, (0, 2), 4, "w = pl.tile.scatter_update(s, tu, ta)",
     "scatter_update of tile 's' with indices from tile 'tu': row 4 is outside [0, 4)"),
    (3, (0, 3), -2 ** 31, "w = pl.tile.scatter_update(s, tu, ta)",
     "scatter_update of tile 's' with indices from tile 'tu': row -2147483648 is outside [0, 4)"),
])
def test_tile_index_out_of_range_names_the_tiles_and_the_dsl_line(tile_index_prog, arg, at, bad, site, failure):
    args = list(_tile_index_args())
    args[arg][at] = bad
    with pytest.raises(RunError) as err:
        tile_index_prog(*args)
    assert "failed: g.py:%d: %s" % (_line(TILE_INDEX_SRC, site), failure) in str(err.value), err.value


def test_scatter_index_out_of_range_names_the_tiles_and_the_dsl_line():
    # gather reads tj before the scatters: a scatter-only failure needs indices in range for gather
    src = TILE_INDEX_SRC.replace("h = pl.tile.gather(g, tj)", "h = pl.tile.gather(g, ti)")
    prog = pypto.compile(pl.parse_program(src, "g.py"))
    a, idx, jdx, u = _tile_index_args()
    want = prog(a, idx, jdx, u)                          # in range: runs
    assert want.shape == (4, 8)
    jdx[3, 7] = 2 ** 31 - 1
    with pytest.raises(RunError) as err:
        prog(a, idx, jdx, u)
    assert "failed: g.py:%d: scatter into tile 'w' with indices from tile 'tj': flat index 2147483647 is outside " \
           "[0, 32)" % _line(src, "v = pl.tile.scatter(w, g, tj)") in str(err.value), err.value
    prog.close()


def test_tensor_level_gather_names_the_tensors_and_the_dsl_line():
    # pl.gather(a, idx) on tensors: lowered to a tile.gather of two nested loads
    src = '''import pypto.language as pl


@pl.program
class T:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32],
          o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        o = pl.assemble(o, pl.gather(a, idx), [0, 0])
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32],
             o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        o = self.k(a, idx, o)
        return o
'''
    prog = pypto.compile(pl.parse_program(src, "t.py"))
    a, idx, _, _ = _tile_index_args()
    idx[1, 1] = 40
    with pytest.raises(RunError) as err:
        prog(a, idx)
    assert "failed: t.py:%d: gather from tensor 'a' with indices from tensor 'idx': flat index 40 is outside " \
           "[0, 32)" % _line(src, "pl.gather(a, idx)") in str(err.value), err.value
    prog.close()


def test_valid_box_gather_is_located():
    # the gather_valid helper (indices with a valid box, reference_ops.md §1.5)
    src = TILE_INDEX_SRC.replace("ti = pl.load(idx, [0, 0], [4, 8])", "ti = pl.load(idx, [0, 0], [4, 8], [2, 3])")
    prog = pypto.compile(pl.parse_program(src, "g.py"))
    assert "gather_valid(" in prog.files["kernels/k.cpp"]
    a, idx, jdx, u = _tile_index_args()
    idx[1, 2] = 99
    with pytest.raises(RunError) as err:
        prog(a, idx, jdx, u)
    assert "failed: g.py:%d: gather from tile 'ta' with indices from tile 'ti': flat index 99 is outside [0, 32)" % (
        _line(src, "g = pl.tile.gather(ta, ti)")) in str(err.value), err.value
    prog.close()


# ---- blocks at run-time offsets: tile.slice / tile.extract / tile.assemble / gather_row's dst ----
# Their helpers said 'tile.slice: block [5, 9) x [0, 8) is outside the [8, 8] tile' (gather_row:
# 'gather_row: block ...'), naming neither the tile nor the line.

BLOCK_SRC = '''import pypto.language as pl


@pl.program
class B:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[8, 8], pl.FP32], r: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        ta = pl.load(a, [0, 0], [8, 8])
        tb = pl.tile.slice(ta, [4, 8], [r, 0])
        tc = pl.tile.extract(ta, s, 0, [4, 8])
        td = pl.tile.slice(tc, [2, 8], [s, 0])
        te = pl.tile.assemble(tb, td, [r, 0])
        tf = pl.tile.gather_row(te, a, [s, 0], [0, 0], [2, 8])
        out = pl.store(tf, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 8], pl.FP32], r: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        out = self.k(a, r, s, out)
        return out
'''


@pytest.fixture(scope="module")
def block_prog():
    prog = pypto.compile(pl.parse_program(BLOCK_SRC, "b.py"))
    yield prog
    prog.close()


@pytest.mark.parametrize("r, s, site, failure", [
    (5, 0, "tb = pl.tile.slice(ta, [4, 8], [r, 0])",
     "tile.slice of tile 'ta': a [4, 8] block at (5, 0) is outside the [8, 8] tile"),
    (0, -1, "tc = pl.tile.extract(ta, s, 0, [4, 8])",
     "tile.extract of tile 'ta': a [4, 8] block at (-1, 0) is outside the [8, 8] tile"),
    (0, 3, "td = pl.tile.slice(tc, [2, 8], [s, 0])",
     "tile.slice of tile 'tc': a [2, 8] block at (3, 0) is outside the [4, 8] tile"),
    (3, 2, "te = pl.tile.assemble(tb, td, [r, 0])",
     "tile.assemble into tile 'tb': a [2, 8] source at (3, 0) does not fit in the [4, 8] target"),
    (2, 2 ** 62, "tc = pl.tile.extract(ta, s, 0, [4, 8])",
     "tile.extract of tile 'ta': a [4, 8] block at (4611686018427387904, 0) is outside the [8, 8] tile"),
])
def test_a_block_at_run_time_offsets_names_the_tile_and_the_dsl_line(block_prog, r, s, site, failure):
    with pytest.raises(RunError) as err:
        block_prog(np.ones((8, 8), np.float32), r, s, np.zeros((4, 8), np.float32))
    assert "failed: b.py:%d: %s" % (_line(BLOCK_SRC, site), failure) in str(err.value), err.value


TWO_SLICES_SRC = '''import pypto.language as pl


@pl.program
class S:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[6, 8], pl.FP32], j: pl.Scalar[pl.INDEX], o1: pl.Out[pl.Tensor[[1, 8], pl.FP32]],
          o2: pl.Out[pl.Tensor[[3, 8], pl.FP32]]) -> tuple[pl.Tensor[[1, 8], pl.FP32], pl.Tensor[[3, 8], pl.FP32]]:
        t = pl.load(x, [0, 0], [6, 8])
        o1 = pl.store(pl.tile.slice(t, [1, 8], [j, 0]), [0, 0], o1)
        o2 = pl.store(pl.tile.slice(t, [3, 8], [j, 0]), [0, 0], o2)
        return o1, o2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[6, 8], pl.FP32], j: pl.Scalar[pl.INDEX], o1: pl.Out[pl.Tensor[[1, 8], pl.FP32]],
             o2: pl.Out[pl.Tensor[[3, 8], pl.FP32]]) -> tuple[pl.Tensor[[1, 8], pl.FP32], pl.Tensor[[3, 8], pl.FP32]]:
        o1, o2 = self.k(x, j, o1, o2)
        return o1, o2
'''


def test_of_two_slices_of_one_tile_the_one_of_the_failing_shape_is_named():
    # both slice tile 't'; only the [3, 8] one fails at j = 4 (it named "s.py:10 or s.py:11")
    prog = pypto.compile(pl.parse_program(TWO_SLICES_SRC, "s.py"))
    try:
        with pytest.raises(RunError) as err:
            prog(np.zeros((6, 8), np.float32), 4, np.zeros((1, 8), np.float32), np.zeros((3, 8), np.float32))
    finally:
        prog.close()
    line = _line(TWO_SLICES_SRC, "o2 = pl.store(pl.tile.slice(t, [3, 8], [j, 0]), [0, 0], o2)")
    assert ("failed: s.py:%d: tile.slice of tile 't': a [3, 8] block at (4, 0) is outside the [6, 8] tile" % line
            in str(err.value)), err.value
    assert err.value.line == line


def test_a_gather_row_block_outside_its_destination_is_located(block_prog):
    """With s = 2 every block fits; with the gather_row's block made [3, 8], it no longer fits at
    row 2 of the [4, 8] destination: a run failure located at the gather_row."""
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    out = np.zeros((4, 8), np.float32)
    block_prog(a, 0, 2, out)    # every block fits: out = te with a's rows 0..1 at row 2
    assert (out[2:4] == a[0:2]).all(), out
    prog = pypto.compile(pl.parse_program(BLOCK_SRC.replace("[2, 8])\n        out", "[3, 8])\n        out"), "b.py"))
    try:
        with pytest.raises(RunError) as err:
            prog(a, 0, 2, out)
        assert ("failed: b.py:%d: gather_row of tensor 'a': a [3, 8] block at (2, 0) is outside the [4, 8] tile"
                % _line(BLOCK_SRC, "tf = pl.tile.gather_row(te, a, [s, 0], [0, 0], [2, 8])")) in str(err.value), err.value
    finally:
        prog.close()
