"""VerifyDestinationReads (reference_ops.md §1.7): matmul_acc, gemv_acc, batch_matmul_acc, scatter,
scatter_update and scatter_mask write their result into argument 0 on the accelerator, so a later
read of that tile would see the result there and its old values on the CPU (every SSA value has
its own buffer). Such a read is refused, located at the read; rebinding the name, a loop carry and
tensor ops are fine. The in-place ops (tile.write, fillpad_inplace, gather_row) differ only when
they write through a view, which the CPU copies: a read of the viewed tile is refused then."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.errors import PyptoError

HEAD = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 4], pl.FP32], i: pl.Tensor[[4, 4], pl.INT32], f: pl.Scalar[pl.INDEX],
          o: pl.Out[pl.Tensor[[8, 4], pl.FP32]]) -> pl.Tensor[[8, 4], pl.FP32]:
        ta = pl.load(a, [0, 0], [4, 4])
        tb = pl.load(a, [0, 0], [4, 4])
        ti = pl.load(i, [0, 0], [4, 4])
        tl = pl.load(a, [0, 0], [4, 4], target_memory=pl.MemorySpace.Left)
        tr = pl.load(a, [0, 0], [4, 4], target_memory=pl.MemorySpace.Right)
'''
TAIL = '''        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 4], pl.FP32], i: pl.Tensor[[4, 4], pl.INT32], f: pl.Scalar[pl.INDEX],
             o: pl.Out[pl.Tensor[[8, 4], pl.FP32]]) -> pl.Tensor[[8, 4], pl.FP32]:
        o = self.k(a, i, f, o)
        return o
'''


def _program(body):
    return HEAD + "".join("        " + line + "\n" for line in body) + TAIL


def _compile(body):
    return pypto.compile(pl.parse_program(_program(body), "d.py"))


def _line(body, text):
    return _program(body).splitlines().index("        " + text) + 1


REFUSED = [
    # (body, the refused read, the op and its line, in an earlier iteration)
    (["c = pl.matmul(tl, tr)", "d = pl.matmul_acc(c, tl, tr)", "o = pl.store(d, [0, 0], o)",
      "o = pl.store(c, [4, 0], o)"], "o = pl.store(c, [4, 0], o)", ("pl.tile.matmul_acc", "d = pl.matmul_acc(c, tl, tr)"),
     False),
    (["s = pl.tile.scatter(ta, tb, ti)", "o = pl.store(pl.add(s, ta), [0, 0], o)"],
     "o = pl.store(pl.add(s, ta), [0, 0], o)", ("pl.tile.scatter", "s = pl.tile.scatter(ta, tb, ti)"), False),
    # written on one branch of an if: the read after the if may see it
    (["if f > 0:", "    s = pl.tile.scatter_update(ta, pl.load(i, [0, 0], [4, 1]), tb)",
      "    o = pl.store(s, [0, 0], o)", "o = pl.store(ta, [4, 0], o)"], "o = pl.store(ta, [4, 0], o)",
     ("pl.tile.scatter_update", "    s = pl.tile.scatter_update(ta, pl.load(i, [0, 0], [4, 1]), tb)"), False),
    # a tile defined before the loop and written in it: the next iteration's op reads what it wrote
    (["c = pl.matmul(tl, tr)", "for j in pl.range(3):", "    d = pl.matmul_acc(c, tl, tr)",
      "    o = pl.store(d, [0, 0], o)"], "    d = pl.matmul_acc(c, tl, tr)",
     ("pl.tile.matmul_acc", "    d = pl.matmul_acc(c, tl, tr)"), True),
    # an alias names the same buffer
    (["t2 = ta", "s = pl.tile.scatter(t2, tb, ti)", "o = pl.store(s, [0, 0], o)", "o = pl.store(ta, [4, 0], o)"],
     "o = pl.store(ta, [4, 0], o)", ("pl.tile.scatter", "s = pl.tile.scatter(t2, tb, ti)"), False),
    # set_validshape and reshape are views of their operand: a write through one is a write into it
    (["v = pl.set_validshape(ta, 2, 2)", "s = pl.tile.scatter(v, tb, ti)", "o = pl.store(s, [0, 0], o)",
      "o = pl.store(ta, [4, 0], o)"], "o = pl.store(ta, [4, 0], o)",
     ("pl.tile.scatter", "s = pl.tile.scatter(v, tb, ti)"), False),
    (["s = pl.tile.scatter(pl.tile.reshape(ta, [4, 4]), tb, ti)", "o = pl.store(s, [0, 0], o)",
      "o = pl.store(ta, [4, 0], o)"], "o = pl.store(ta, [4, 0], o)",
     ("pl.tile.scatter", "s = pl.tile.scatter(pl.tile.reshape(ta, [4, 4]), tb, ti)"), False),
    # so are slice (a window) and transpose_view (the layout reinterpreted)
    (["c = pl.matmul(tl, tr)", "d = pl.matmul_acc(pl.tile.slice(c, [4, 4], [0, 0]), tl, tr)",
      "o = pl.store(c, [4, 0], o)"], "o = pl.store(c, [4, 0], o)",
     ("pl.tile.matmul_acc", "d = pl.matmul_acc(pl.tile.slice(c, [4, 4], [0, 0]), tl, tr)"), False),
    (["w = pl.tile.slice(ta, [4, 4], [0, 0])", "s = pl.tile.scatter(w, tb, ti)", "o = pl.store(s, [0, 0], o)",
      "o = pl.store(pl.tile.slice(ta, [2, 4], [2, 0]), [4, 0], o)"],
     "o = pl.store(pl.tile.slice(ta, [2, 4], [2, 0]), [4, 0], o)",
     ("pl.tile.scatter", "s = pl.tile.scatter(w, tb, ti)"), False),
    (["s = pl.tile.scatter(pl.tile.transpose_view(ta), tb, ti)", "o = pl.store(s, [0, 0], o)",
      "o = pl.store(ta, [4, 0], o)"], "o = pl.store(ta, [4, 0], o)",
     ("pl.tile.scatter", "s = pl.tile.scatter(pl.tile.transpose_view(ta), tb, ti)"), False),
    # an op whose result is dropped still writes into its destination
    (["pl.tile.scatter(ta, tb, ti)", "o = pl.store(ta, [0, 0], o)"], "o = pl.store(ta, [0, 0], o)",
     ("pl.tile.scatter", "pl.tile.scatter(ta, tb, ti)"), False),
]


@pytest.mark.parametrize("body, read, op, earlier", REFUSED)
def test_a_read_of_a_written_destination_is_refused_at_the_read(body, read, op, earlier):
    with pytest.raises(PyptoError) as ei:
        _compile(body)
    e = ei.value
    name, at = op
    assert (e.file, e.line) == ("d.py", _line(body, read)), (e.file, e.line, str(e))
    assert "is read after %s (line %d) wrote into it" % (name, _line(body, at)) in e.message, e.message
    assert ("in an earlier iteration of the loop" in e.message) == earlier, e.message
    assert "on the accelerator" in e.message and e.help, e


def _run(body, a, idx, f=1):
    prog = _compile(body)
    try:
        o = np.zeros((8, 4), np.float32)
        prog(a, idx, f, o)
        return o
    finally:
        prog.close()


def test_rebinding_the_name_and_a_loop_carry_are_fine():
    a = np.arange(16, dtype=np.float32).reshape(4, 4) / 8
    idx = np.arange(16, dtype=np.int32)[::-1].reshape(4, 4).copy()
    o = _run(["c = pl.matmul(tl, tr)", "c = pl.matmul_acc(c, tl, tr)",          # rebinding: the result is 'c'
              "for j in pl.range(2):", "    c = pl.matmul_acc(c, tl, tr)",   # a carry: each iteration's own
              "ta = pl.tile.scatter(ta, tb, ti)",                            # rebinding a scatter
              "o = pl.store(c, [0, 0], o)", "o = pl.store(ta, [4, 0], o)"], a, idx)
    np.testing.assert_allclose(o[:4], 4 * (a @ a), rtol=1e-6)
    np.testing.assert_array_equal(o[4:], a.reshape(-1)[::-1].reshape(4, 4))


def test_a_read_on_the_other_branch_and_a_scatter_of_a_tile_into_itself_are_fine():
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    idx = np.arange(16, dtype=np.int32)[::-1].reshape(4, 4).copy()
    body = ["if f > 0:", "    s = pl.tile.scatter(ta, ta, ti)", "else:", "    s = pl.add(ta, ta)",
            "o = pl.store(s, [0, 0], o)"]
    np.testing.assert_array_equal(_run(body, a, idx, 1)[:4], a.reshape(-1)[::-1].reshape(4, 4))
    np.testing.assert_array_equal(_run(body, a, idx, 0)[:4], 2 * a)


def test_tensor_ops_give_new_values():
    """pl.scatter on a tensor scatters into a copy it loads (docs/dsl.md): the tensor reads the same after."""
    src = '''import pypto.language as pl


@pl.program
class T:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 4], pl.FP32], i: pl.Tensor[[4, 4], pl.INT32],
          o: pl.Out[pl.Tensor[[8, 4], pl.FP32]]) -> pl.Tensor[[8, 4], pl.FP32]:
        s = pl.scatter(a, pl.add(a, a), i)
        o = pl.assemble(o, s, [0, 0])
        o = pl.assemble(o, pl.add(a, 0.0), [4, 0])
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 4], pl.FP32], i: pl.Tensor[[4, 4], pl.INT32],
             o: pl.Out[pl.Tensor[[8, 4], pl.FP32]]) -> pl.Tensor[[8, 4], pl.FP32]:
        o = self.k(a, i, o)
        return o
'''
    prog = pypto.compile(pl.parse_program(src, "t.py"))
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    o = np.zeros((8, 4), np.float32)
    prog(a, np.zeros((4, 4), np.int32), o)    # every index 0: the last write wins
    prog.close()
    want = a.copy()
    want[0, 0] = 2 * a[3, 3]
    np.testing.assert_array_equal(o[:4], want)
    np.testing.assert_array_equal(o[4:], a)


def test_the_property_names_the_read():
    from pypto.ir import passes
    prog = pl.parse_program(_program(["s = pl.tile.scatter(ta, tb, ti)", "o = pl.store(ta, [0, 0], o)"]), "d.py")
    found = passes.verify_property(passes.IRProperty.DestinationReadsChecked, prog)
    assert len(found) == 1 and "tile 'ta' is read after pl.tile.scatter" in found[0], found
    ok = pl.parse_program(_program(["s = pl.tile.scatter(ta, tb, ti)", "o = pl.store(s, [0, 0], o)"]), "d.py")
    assert passes.verify_property(passes.IRProperty.DestinationReadsChecked, ok) == []


# The in-place ops write into the CPU buffer of the tile they are given: the same as the accelerator
# unless that tile is a view (reshape, set_validshape, slice, transpose_view), which the CPU copies.
IN_PLACE_THROUGH_A_VIEW = [
    # (body, the refused read, the op's line, the view's name or None, in an earlier iteration)
    (["r = pl.tile.reshape(ta, [2, 8])", "pl.tile.write(r, [0, 0], pl.cast(f, pl.FP32))",
      "o = pl.store(ta, [0, 0], o)"], "o = pl.store(ta, [0, 0], o)",
     "pl.tile.write(r, [0, 0], pl.cast(f, pl.FP32))", "r", False),
    (["v = pl.set_validshape(ta, 2, 2)", "v2 = v", "w = pl.tile.fillpad_inplace(v2, pl.PadValue.zero)",
      "o = pl.store(w, [0, 0], o)", "o = pl.store(ta, [4, 0], o)"], "o = pl.store(ta, [4, 0], o)",
     "w = pl.tile.fillpad_inplace(v2, pl.PadValue.zero)", "v", False),   # v2 = v shares v's copy
    (["pl.tile.write(pl.tile.slice(ta, [2, 4], [0, 0]), [0, 0], 5.0)", "o = pl.store(ta, [0, 0], o)"],
     "o = pl.store(ta, [0, 0], o)", "pl.tile.write(pl.tile.slice(ta, [2, 4], [0, 0]), [0, 0], 5.0)", None, False),
    (["r = pl.tile.reshape(ta, [2, 8])", "for j in pl.range(2):", "    o = pl.store(ta, [0, 0], o)",
      "    pl.tile.write(r, [0, j], 5.0)"], "    o = pl.store(ta, [0, 0], o)",
     "    pl.tile.write(r, [0, j], 5.0)", "r", True),
]


@pytest.mark.parametrize("body, read, at, view, earlier", IN_PLACE_THROUGH_A_VIEW)
def test_a_read_of_a_tile_written_in_place_through_a_view_is_refused(body, read, at, view, earlier):
    with pytest.raises(PyptoError) as ei:
        _compile(body)
    e = ei.value
    assert (e.file, e.line) == ("d.py", _line(body, read)), (e.file, e.line, str(e))
    op = at.strip().split("(")[0].split(" = ")[-1]
    where = f"'{view}'" if view else "a view"
    assert f"tile 'ta' is read after {op} (line {_line(body, at)}) wrote into {where} of it" in e.message, e.message
    assert ("in an earlier iteration of the loop" in e.message) == earlier, e.message
    assert "the CPU writes into the view's own copy" in e.message and "'ta' itself" in e.help, e


def test_in_place_writes_into_a_tile_or_its_rebinding_and_reads_of_the_view_are_fine():
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    idx = np.zeros((4, 4), np.int32)
    body = ["t2 = ta", "pl.tile.write(t2, [0, 0], 7.0)",               # t2 = ta: one buffer on both
            "r = pl.tile.reshape(tb, [2, 8])", "pl.tile.write(r, [0, 1], 9.0)",
            "o = pl.store(ta, [0, 0], o)", "o = pl.store(pl.tile.reshape(r, [4, 4]), [4, 0], o)"]
    o = _run(body, a, idx)
    want = a.copy()
    want[0, 0] = 7.0
    np.testing.assert_array_equal(o[:4], want)
    want = a.copy()
    want[0, 1] = 9.0
    np.testing.assert_array_equal(o[4:], want)
