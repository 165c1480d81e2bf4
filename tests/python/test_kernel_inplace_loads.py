"""A tile.load that only matmul reads is read in place (load_view + matmul_strided; kernel_cpu
kernel_inplace_loads.cpp): the generated code, and results bit-for-bit equal to the copy path.

The copy path is the same program with one more use of the loaded tile (a store of it to a
second output), which keeps the copy: both then run the same matmul kernel on the same
elements in the same order, so any wrong stride or offset of the in-place read shows as a
difference (the check is exact, plus a float64 NumPy bound for both).
"""
import numpy as np
import pytest

import pypto
import pypto.language as pl


def _compile(text):
    return pypto.compile(pl.parse_program(text))


def _kernel_src(prog, name="k"):
    return prog.files["kernels/%s.cpp" % name]


# A kernel reading A [TM, TK] at (ra, ca) of a view `av` and B [TK, TN] at (rb, cb) of `bv`;
# the orchestration passes views (pl.tensor.slice) of the big arrays at (oa0, oa1) / (ob0, ob1).
# `extra` adds a statement after the matmul (the copy-path twin stores the tile to `d`, the
# in-place one zeros).
_PROGRAM = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, av: pl.Tensor[[{VA0}, {VA1}], pl.FP32], bv: pl.Tensor[[{VB0}, {VB1}], pl.FP32],
          c: pl.Out[pl.Tensor[[{TM}, {TN}], pl.FP32]], d: pl.Out[pl.Tensor[[{TM}, {TK}], pl.FP32]]
          ) -> pl.Tensor[[{TM}, {TN}], pl.FP32]:
        ta = pl.load(av, [{ra}, {ca}], [{TM}, {TK}])
        tb = pl.move(pl.load(bv, [{rb}, {cb}], [{TK}, {TN}]), target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(ta, tb)
        {extra}
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{A0}, {A1}], pl.FP32], b: pl.Tensor[[{B0}, {B1}], pl.FP32],
             c: pl.Out[pl.Tensor[[{TM}, {TN}], pl.FP32]], d: pl.Out[pl.Tensor[[{TM}, {TK}], pl.FP32]]
             ) -> pl.Tensor[[{TM}, {TN}], pl.FP32]:
        av = pl.tensor.slice(a, [{VA0}, {VA1}], [{oa0}, {oa1}])
        bv = pl.tensor.slice(b, [{VB0}, {VB1}], [{ob0}, {ob1}])
        c = self.k(av, bv, c, d)
        return c
"""


def _pair(**kw):
    """(in-place program, copy-path program) for the shapes / offsets in kw."""
    # (the in-place twin writes d with zeros: a pl.Out no store reaches is refused)
    view = _compile(_PROGRAM.format(extra="d = pl.store(pl.tile.full([%d, %d], pl.FP32, 0.0), [0, 0], d)"
                                          % (kw["TM"], kw["TK"]), **kw))
    copy = _compile(_PROGRAM.format(extra="d = pl.store(ta, [0, 0], d)", **kw))
    return view, copy


CASES = {
    # views with a row stride larger than their width and a non-zero offset, box inside them
    "strided views": dict(A0=40, A1=50, B0=60, B1=90, VA0=30, VA1=40, VB0=45, VB1=70, oa0=3, oa1=7, ob0=5, ob1=11,
                          TM=16, TK=24, TN=48, ra=9, ca=13, rb=17, cb=19),
    # boxes ending on the last row and column of their views (and of the arrays)
    "edge offsets": dict(A0=64, A1=64, B0=64, B1=96, VA0=32, VA1=48, VB0=40, VB1=64, oa0=32, oa1=16, ob0=24, ob1=32,
                         TM=12, TK=20, TN=36, ra=20, ca=28, rb=20, cb=28),
    # ragged sizes: no multiple of the 4 x 32 (AVX-512) / 4 x 16 (AVX2) blocks, 1-3 row and <= 8 column tails
    "tails": dict(A0=50, A1=50, B0=50, B1=80, VA0=41, VA1=45, VB0=45, VB1=75, oa0=1, oa1=2, ob0=3, ob1=4,
                  TM=37, TK=45, TN=70, ra=2, ca=0, rb=0, cb=3),
    "one row": dict(A0=8, A1=40, B0=40, B1=140, VA0=8, VA1=40, VB0=40, VB1=140, oa0=0, oa1=0, ob0=0, ob1=0,
                    TM=1, TK=33, TN=133, ra=7, ca=7, rb=7, cb=7),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_in_place_matches_the_copy_path_bit_for_bit(name):
    kw = CASES[name]
    view, copy = _pair(**kw)
    assert "load_view" in _kernel_src(view) and "matmul_strided" in _kernel_src(view)
    # The twin stores ta, so ta keeps its copy; tb is still only read by the matmul.
    src = _kernel_src(copy)
    assert src.count("load_view") == 1 and "pypto_kernel::load<" in src
    rng = np.random.default_rng(len(name))
    a = rng.uniform(-2, 2, (kw["A0"], kw["A1"])).astype(np.float32)
    b = rng.uniform(-2, 2, (kw["B0"], kw["B1"])).astype(np.float32)
    outs = []
    for prog in (view, copy):
        c = np.full((kw["TM"], kw["TN"]), np.nan, np.float32)
        d = np.zeros((kw["TM"], kw["TK"]), np.float32)
        prog(a, b, c, d)
        outs.append(c)
    r0, c0 = kw["oa0"] + kw["ra"], kw["oa1"] + kw["ca"]
    r1, c1 = kw["ob0"] + kw["rb"], kw["ob1"] + kw["cb"]
    ab = a[r0:r0 + kw["TM"], c0:c0 + kw["TK"]].astype(np.float64)
    bb = b[r1:r1 + kw["TK"], c1:c1 + kw["TN"]].astype(np.float64)
    # FP32 products accumulated in k order: within 2 (k + 1) 2^-24 sum |a b| (pypto_kernel_matmul.h)
    bound = 2 * (kw["TK"] + 1) * 2.0 ** -24 * (np.abs(ab) @ np.abs(bb))
    assert np.all(np.abs(outs[0] - ab @ bb) <= bound)
    assert np.array_equal(outs[0].view(np.uint32), outs[1].view(np.uint32))


def test_matmul_acc_in_a_loop_reads_in_place_like_the_example():
    """The tiled GEMM's kernel shape: loads inside the K loop, moves sharing their buffers."""
    import importlib.util
    import os
    import sys
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "tiled_matmul.py")
    spec = importlib.util.spec_from_file_location("t_inplace_tiled_matmul", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    prog = pypto.compile(mod.TiledMatmul)
    src = _kernel_src(prog, "mm_block")
    assert src.count("load_view") == 2 and "matmul_strided" in src and "pypto_kernel::load<" not in src
    mod.run()   # checks against NumPy


_KEEP_COPY = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], b: pl.Tensor[[16, 16], pl.FP32],
          c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
{body}
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], b: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.k(a, b, c)
        return c
"""

KEEP_COPY = {
    # a tensor written between the load and the matmul: the load's value is the old contents
    "store before use": """
        ta = pl.load(a, [0, 0], [16, 16])
        a = pl.store(pl.tile.full([16, 16], pl.FP32, 1.0), [0, 0], a)
        tb = pl.load(b, [0, 0], [16, 16])
        acc = pl.matmul(ta, tb)
        c = pl.store(acc, [0, 0], c)""",
    # the tile is read by an element-wise op too
    "other use": """
        ta = pl.load(a, [0, 0], [16, 16])
        tb = pl.load(b, [0, 0], [16, 16])
        acc = pl.add(pl.matmul(ta, tb), ta)
        c = pl.store(acc, [0, 0], c)""",
    # a store inside the loop after the matmul: the next iteration's matmul would see it
    "store in the loop": """
        ta = pl.load(a, [0, 0], [16, 16])
        acc = pl.tile.full([16, 16], pl.FP32, 0.0)
        for i in pl.range(2):
            acc = pl.matmul_acc(acc, ta, ta)
            a = pl.store(acc, [0, 0], a)
        c = pl.store(acc, [0, 0], c)""",
    # the tile is the accumulator, not an operand
    "accumulator": """
        ta = pl.load(a, [0, 0], [16, 16])
        tb = pl.load(b, [0, 0], [16, 16])
        acc = pl.matmul_acc(ta, tb, tb)
        c = pl.store(acc, [0, 0], c)""",
}


@pytest.mark.parametrize("name", sorted(KEEP_COPY))
def test_loads_keep_their_copy_when_in_place_is_unsafe(name):
    prog = _compile(_KEEP_COPY.format(body=KEEP_COPY[name]))
    src = _kernel_src(prog)
    loads_of_a = [l for l in src.splitlines() if "ctx->tensors[0]" in l and "load" in l]
    assert loads_of_a and all("load_view" not in l for l in loads_of_a), src
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (16, 16)).astype(np.float32)
    b = rng.uniform(-1, 1, (16, 16)).astype(np.float32)
    a0 = a.astype(np.float64)
    c = np.zeros((16, 16), np.float32)
    prog(a, b, c)
    expect = {"store before use": a0 @ b, "other use": a0 @ b + a0, "accumulator": a0 + b.astype(np.float64) @ b}
    if name in expect:
        np.testing.assert_allclose(c, expect[name], rtol=1e-5, atol=1e-5)
    else:   # iteration 1 reads the loaded (old) a, not the store of iteration 0
        np.testing.assert_allclose(c, 2 * (a0 @ a0), rtol=1e-5, atol=1e-5)


_TRANSPOSED = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, at: pl.Tensor[[24, 20], pl.FP32], b: pl.Tensor[[20, 40], pl.FP32],
          c: pl.Out[pl.Tensor[[13, 37], pl.FP32]]) -> pl.Tensor[[13, 37], pl.FP32]:
        ta = pl.load(at, [5, 2], [13, 17])
        tb = pl.load(b, [3, 1], [17, 37])
        acc = pl.matmul(ta, tb)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[20, 24], pl.FP32], b: pl.Tensor[[20, 40], pl.FP32],
             c: pl.Out[pl.Tensor[[13, 37], pl.FP32]]) -> pl.Tensor[[13, 37], pl.FP32]:
        at = pl.tensor.transpose(a, 0, 1)
        c = self.k(at, b, c)
        return c
"""


def test_a_view_without_unit_last_stride_is_copied_at_run_time():
    """load_view falls back to the copy when the kernel's tensor is a transposed view (last
    stride != 1: nothing to point at); the in-place B operand still works beside it."""
    prog = _compile(_TRANSPOSED)
    assert _kernel_src(prog).count("load_view") == 2
    rng = np.random.default_rng(3)
    a = rng.uniform(-2, 2, (20, 24)).astype(np.float32)
    b = rng.uniform(-2, 2, (20, 40)).astype(np.float32)
    c = np.zeros((13, 37), np.float32)
    prog(a, b, c)
    ab = a.T[5:18, 2:19].astype(np.float64)
    bb = b[3:20, 1:38].astype(np.float64)
    bound = 2 * 18 * 2.0 ** -24 * (np.abs(ab) @ np.abs(bb))
    assert np.all(np.abs(c - ab @ bb) <= bound)


# A loop's initial tile read nowhere else lends its buffer to the loop (no copy into a carry
# slot); an init read again — after the loop, or by the next iteration of an enclosing loop —
# keeps the copy.
_CARRY = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[8, 16], pl.FP32], c: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        ta = pl.load(a, [0, 0], [8, 16])
{body}
        c = pl.store(out, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 16], pl.FP32], c: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        c = self.k(a, c)
        return c
"""

CARRY = {
    "lends": ("""
        acc = pl.tile.full([8, 16], pl.FP32, 1.0)
        for i in pl.range(3):
            acc = pl.add(acc, ta)
        out = acc""", False, lambda a: 1 + 3 * a),
    "read after the loop": ("""
        init = pl.tile.full([8, 16], pl.FP32, 1.0)
        acc = init
        for i in pl.range(3):
            acc = pl.add(acc, ta)
        out = pl.sub(acc, init)""", True, lambda a: 3 * a),
    "outer loop reads it again": ("""
        init = pl.tile.full([8, 16], pl.FP32, 1.0)
        tot = pl.tile.full([8, 16], pl.FP32, 0.0)
        for j in pl.range(2):
            acc = init
            for i in pl.range(3):
                acc = pl.add(acc, ta)
            tot = pl.add(tot, acc)
        out = tot""", True, lambda a: 2 * (1 + 3 * a)),
}


@pytest.mark.parametrize("name", sorted(CARRY))
def test_a_loop_init_read_once_lends_its_buffer(name):
    body, copies, expect = CARRY[name]
    prog = _compile(_CARRY.format(body=body))
    src = _kernel_src(prog)
    fill_one = [l for l in src.splitlines() if "pypto_kernel::fill" in l and "(1.0f)" in l]
    assert len(fill_one) == 1
    buf = fill_one[0].split("(")[1].split(",")[0]
    assert (("pypto_kernel::copy(" in src and ", %s, " % buf in src) == copies), src
    a = np.random.default_rng(5).uniform(-1, 1, (8, 16)).astype(np.float32)
    c = np.zeros((8, 16), np.float32)
    prog(a, c)
    np.testing.assert_allclose(c, expect(a.astype(np.float64)), rtol=1e-6, atol=1e-6)
