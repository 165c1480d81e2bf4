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
    with pytest.raises(RunError) as err:
        prog(a, idx, np.zeros((6, 8), np.float32))
    assert "failed: s.py:%d: mscatter of tensor 'o': index %d is outside [0, 48)" % (
        _line(SCATTER_SRC, "o = pl.mscatter(ta, ti, o)"), bad) in str(err.value), err.value
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
