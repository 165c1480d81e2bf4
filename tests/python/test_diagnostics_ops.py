"""Diagnostics of the reference tile ops: each misuse is a located UserError raised when the IR
is built (op type inference), naming the op, with the caret on the call."""
import pytest

import pypto.language as pl
from pypto.errors import PyptoError

HEAD = """import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32], i: pl.Tensor[[16, 32], pl.INT32],
          h: pl.Tensor[[16, 32], pl.INT16], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 32])
        ti = pl.load(i, [0, 0], [16, 32])
        th = pl.load(h, [0, 0], [16, 32])
        tr = pl.load(a, [0, 0], [16, 1])
        tc = pl.load(a, [0, 0], [1, 32])
        t8 = pl.load(a, [0, 0], [8, 32])
        x = {expr}
        c = pl.store(ta, [0, 0], c)
        return c
"""

CASES = [
    ("pl.shl(ta, ta)", "tile.shl: requires integer tile dtype, but got FP32", "integer dtype"),
    ("pl.and_(ti, ta)", "tile.and: requires integer tile dtype, but got FP32", None),
    ("pl.shls(ti, -1)", "tile.shls: shift count -1 is negative", "shift counts must be >= 0"),
    ("pl.shls(ti, 1.5)", "tile.shls: requires shift/bitwise scalar to be an integer type", None),
    ("pl.tile.shl(ti, 2)", "tile.shl: argument 'rhs' must be a Tile", "pl.shls"),
    ("pl.maximums(ta, ta)", "tile.maximums: argument 'rhs' must be a scalar", "pl.maximum"),
    # the other form's spelling was the op's name minus its last letter: pl.lrel, pl.and, pl.or
    ("pl.lrelu(ta, ta)", "tile.lrelu: argument 'rhs' must be a scalar", "pl.prelu"),
    ("pl.ands(ti, ti)", "tile.ands: argument 'rhs' must be a scalar", "the tile x tile form is pl.and_"),
    ("pl.ors(ti, ti)", "tile.ors: argument 'rhs' must be a scalar", "the tile x tile form is pl.or_"),
    ("pl.and_(ti, 3)", "tile.and: argument 'rhs' must be a Tile", "the tile x scalar form is pl.ands"),
    ("pl.rem(ta, t8)", "tile.rem: requires compatible shapes, but got [16, 32] and [8, 32]", None),
    ("pl.add(ta, t8)", "tile.add: requires compatible shapes, but got [16, 32] and [8, 32]", None),
    ("pl.rem(ta, ti)", "tile.rem: dtype mismatch", "pl.cast"),
    ("pl.tile.sin(th)", "tile.sin is FP32-only, got INT16", "pl.cast(tile, pl.FP32)"),
    ("pl.not_(ti)", "tile.not: requires int16 or uint16 tile dtype, but got INT32", None),
    ("pl.cmp(ta, ta, cmp_type=6)", "tile.cmp: cmp_type 6 is out of range", "EQ=0"),
    ("pl.sel(ta, ta, ta)", "tile.sel: the mask must be a UINT8 tile", None),
    ("pl.col_expand_add(ta, tr)", "tile.col_expand_add: shape mismatch", "pl.col_max"),
    ("pl.row_expand_max(ta, tc)", "tile.row_expand_max: shape mismatch", "pl.row_max"),
    ("pl.col_sum(ta, ti)", "tile.col_sum: requires tmp_tile dtype to match", None),
    ("pl.tile.transpose(ta, 1, 1)", "tile.transpose: axis1 and axis2 must be different", None),
    ("pl.tile.reshape(ta, [16, 16])", "tile.reshape: cannot reshape tile of size 512 into shape with size 256", None),
    ("pl.concat(ta, t8)", "tile.concat: row counts differ", None),
    ("pl.tile.extract(ta, 10, 0, [8, 8])", "tile.extract: block [10, 18) of dimension 0 is outside", None),
    ("pl.tile.gather(ta, ta)", "tile.gather: indices dtype must be one of INT32, got FP32", None),
    ("pl.tile.gather_mask(ta, mask_pattern=9)", "tile.gather_mask: requires mask_pattern in range [1, 7]", None),
    ("pl.matmul_bias(ta, ta, tc)", "tile.matmul_bias: inner dimensions differ", None),
    ("pl.sum(ta)", "tile.sum: axis is required", "axis=1"),
    ("pl.max(ta, axis=2)", "tile.max: axis 2 is out of range for a tile of rank 2", "axes of a rank-2 tile are -2..1"),
    # an axis in range of a rank-3 tile: the rank is the limit, not the axis
    ("pl.sum(pl.tile.reshape(ta, [2, 8, 32]), axis=1)",
     "tile.sum: the CPU backend reduces 1-D and 2-D tiles, got a tile of rank 3", "reshape it to 2-D first"),
    ("pl.tile.tpush_to_aiv(ta)", "tile.tpush_to_aiv is an accelerator-only op", "Accelerator-only"),
    ("pl.tile.alloc()", "tile.alloc is an accelerator-only op", None),
    ("pl.row_sum(ta, ta, ta)", "pl.row_sum takes at most 2 positional arguments", None),
    ("pl.tile.mrgsort_format2(ta, ta, ta)", "tile.mrgsort_format2 is an accelerator-only op", "Accelerator-only"),
    ("pl.tile.mrgsort(ta, ta, ta)", "tile.mrgsort (tile.mrgsort_format1 / _format2) is an accelerator-only op",
     "Accelerator-only"),
    # the reference's tensor-only names are tensor ops; on a tile they point at the tile spelling
    ("pl.sin(ta)", "pl.sin is a tensor op (as in the reference DSL), got a tile", "on tiles write pl.tile.sin(...)"),
    ("pl.gather(ta, ti)", "pl.gather is a tensor op (as in the reference DSL), got a tile",
     "on tiles write pl.tile.gather(...)"),
]


@pytest.mark.parametrize("expr,message,help", CASES, ids=[c[0] for c in CASES])
def test_reference_op_misuse_is_located(expr, message, help):
    src = HEAD.format(expr=expr)
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "t.py")
    e = ei.value
    line = next(n for n, text in enumerate(src.splitlines(), 1) if text.strip().startswith("x = "))
    assert message in e.message, f"\nwant: {message}\ngot:  {e.message}"
    assert (e.file, e.line) == ("t.py", line), str(e)
    if help is not None:
        assert help in e.help, f"\nwant help: {help}\ngot:       {e.help}"


# -- tile ops in an orchestration, outside a kernel scope -----------------------------------------
# A tile op runs in a kernel: written directly in an Orchestration body (not in a CORE_GROUP pl.at /
# pl.spmd body) it is refused where it is written, naming the op and the two ways out.

ORCH = """import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 8], pl.FP32], o: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
{body}
        return o
"""

ORCH_TILE_CASES = [
    # (body, the op named, the text the caret starts at)
    ("o = pl.store(pl.tile.full([8, 8], pl.FP32, 1.0), [0, 0], o)", "pl.store", "pl.store("),
    ("t = pl.create_tile([8, 8], dtype=pl.FP32)", "pl.create_tile", "pl.create_tile("),
    ("t = pl.load(x, [0, 0], [8, 8])", "pl.load", "pl.load("),
    ("for i in pl.range(2):\n    t = pl.load(x, [0, 0], [8, 8])", "pl.load", "pl.load("),
    ("with pl.at(level=pl.Level.HOST):\n    t = pl.load(x, [0, 0], [8, 8])", "pl.load", "pl.load("),
]


@pytest.mark.parametrize("body,op,at", ORCH_TILE_CASES, ids=[c[0].splitlines()[-1] for c in ORCH_TILE_CASES])
def test_tile_op_outside_a_kernel_scope_is_located(body, op, at):
    src = ORCH.format(body="\n".join("        " + line for line in body.splitlines()))
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "t.py")
    e = ei.value
    line, text = next((n, t) for n, t in enumerate(src.splitlines(), 1) if at in t)
    assert e.message.startswith(f"{op} is a tile operation, which only a kernel can run"), e.message
    assert "outside a kernel scope" in e.message
    assert (e.file, e.line) == ("t.py", line), str(e)
    assert e.col == text.index(at) + 1, str(e)   # the caret is on the tile op, not the statement
    assert "pl.at(level=pl.Level.CORE_GROUP)" in e.help and "InCore function" in e.help, e.help


def test_tile_ops_in_a_kernel_scope_of_an_orchestration_parse():
    body = ("with pl.at(level=pl.Level.CORE_GROUP):\n"
            "    o = pl.store(pl.tile.full([8, 8], pl.FP32, 1.0), [0, 0], o)")
    src = ORCH.format(body="\n".join("        " + line for line in body.splitlines()))
    prog = pl.parse_program(src, "t.py")
    assert "tile.full" in str(prog)
