"""Issue 13 "Done when": a diagnostics test for the misuse of every reference tile op (spec/reference_ops.md).

One misuse per registered tile op with a CPU meaning (the accelerator-only ops are refused, see
test_diagnostics_ops.py). Each must be a PyptoError located at the call, with the message (and, where the
compiler gives one, the help) below. test_every_cpu_tile_op_has_a_misuse_case keeps the table complete
when an op is added to the registry.
"""
import pytest

import pypto.language as pl
from pypto._core import ir
from pypto.errors import PyptoError

HEAD = """import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32], i: pl.Tensor[[16, 32], pl.INT32],
          h: pl.Tensor[[16, 32], pl.INT16], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]], s: pl.Scalar[pl.FP32],
          n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 32], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 32])
        ti = pl.load(i, [0, 0], [16, 32])
        th = pl.load(h, [0, 0], [16, 32])
        tr = pl.load(a, [0, 0], [16, 1])
        tc = pl.load(a, [0, 0], [1, 32])
        t8 = pl.load(a, [0, 0], [8, 32])
        tm = pl.load(a, [0, 0], [16, 16])
        x = {expr}
        c = pl.store(ta, [0, 0], c)
        return c
"""

SHAPES = "requires compatible shapes, but got [16, 32] and [8, 32]"
INT_ONLY = "requires integer tile dtype, but got FP32"
ROW_VEC = "shape mismatch: tile is [16, 32], row_vec must be [16, 1], got [1, 32]"
ROW = "shape mismatch: a is [16, 32], row must be [16, 1], got [1, 32]"
COL_VEC = "shape mismatch: tile is [16, 32], col_vec must be [1, 32], got [16, 1]"

# op -> (DSL expression, message, help or None)
CASES = {
    "tile.abs": ("pl.abs(s)", "pl.abs needs a tensor or a tile, got a scalar (pl.Scalar[pl.FP32])", "pl.tile.abs"),
    "tile.add": ("pl.tile.add(ta, t8)", "tile.add: " + SHAPES, "equal or 1"),
    "tile.addc": ("pl.addc(ta, ta, t8)", "tile.addc: " + SHAPES, None),
    "tile.adds": ("pl.tile.adds(ta, ta)", "tile.adds: argument 'rhs' must be a scalar, got Tile[[16, 32], FP32]",
                  "pl.add"),
    "tile.addsc": ("pl.addsc(ta, ta, ta)", "tile.addsc: argument 'rhs' must be a numeric scalar", None),
    "tile.and": ("pl.and_(ti, ta)", "tile.and: " + INT_ONLY, "integer dtype"),
    "tile.ands": ("pl.ands(ta, 3)", "tile.ands: " + INT_ONLY, None),
    "tile.arange": ("pl.tile.arange(0, [2, 16], dtype=pl.INT32)", "tile.arange: every leading dim must be 1", None),
    "tile.assemble": ("pl.tile.assemble(ta, ti, [0, 0])", "tile.assemble: dtype mismatch", "pl.cast"),
    "tile.batch_matmul": ("pl.batch_matmul(ta, tm)", "tile.batch_matmul: inner dimensions differ", "[..., K, N]"),
    "tile.batch_matmul_acc": ("pl.tile.batch_matmul_acc(ta, tm, tm)",
                              "tile.batch_matmul_acc: acc shape [16, 32] does not match the product's shape", None),
    "tile.cast": ("pl.tile.cast(ta, pl.FP32)", "tile.cast: the tile is already FP32", "remove the pl.cast"),
    "tile.ci": ("pl.tile.ci(0, [1, 16], dtype=pl.FP32)", "tile.ci: result dtype must be one of INT16, INT32", None),
    "tile.cmp": ("pl.tile.cmp(ta, ta, cmp_type=-1)", "tile.cmp: cmp_type -1 is out of range", "EQ=0"),
    "tile.cmps": ("pl.tile.cmps(ta, ta)", "tile.cmps: argument 'rhs' must be a numeric scalar", None),
    "tile.col_expand": ("pl.col_expand(ta, tr)", "tile.col_expand: " + COL_VEC, "pl.col_max"),
    "tile.col_expand_add": ("pl.col_expand_add(ta, tr)", "tile.col_expand_add: " + COL_VEC, None),
    "tile.col_expand_div": ("pl.col_expand_div(ta, tr)", "tile.col_expand_div: " + COL_VEC, None),
    "tile.col_expand_expdif": ("pl.tile.col_expand_expdif(ta, tr)", "tile.col_expand_expdif: " + COL_VEC, None),
    "tile.col_expand_max": ("pl.col_expand_max(ta, tr)", "tile.col_expand_max: " + COL_VEC, None),
    "tile.col_expand_min": ("pl.col_expand_min(ta, tr)", "tile.col_expand_min: " + COL_VEC, None),
    "tile.col_expand_mul": ("pl.col_expand_mul(ta, tr)", "tile.col_expand_mul: " + COL_VEC, None),
    "tile.col_expand_sub": ("pl.col_expand_sub(ta, tr)", "tile.col_expand_sub: " + COL_VEC, None),
    "tile.col_max": ("pl.col_max(ta, ta)", "pl.col_max takes at most 1 positional arguments (tile), got 2", None),
    "tile.col_min": ("pl.col_min(ta, ta)", "pl.col_min takes at most 1 positional arguments (tile), got 2", None),
    "tile.col_prod": ("pl.tile.col_prod(ta, ta)", "pl.tile.col_prod takes at most 1 positional arguments", None),
    "tile.col_sum": ("pl.tile.col_sum(ta, ti)", "tile.col_sum: requires tmp_tile dtype to match", None),
    "tile.concat": ("pl.tile.concat(ta, ti)", "tile.concat: dtype mismatch", "pl.cast"),
    "tile.cos": ("pl.tile.cos(ti)", "tile.cos is FP32-only, got INT32", "pl.cast(tile, pl.FP32)"),
    "tile.create": ("pl.tile.create([0, 16], dtype=pl.FP32)",
                    "tile.create: shape entries must be positive integer constants, got [0, 16]", None),
    "tile.div": ("pl.div(ta, t8)", "tile.div: " + SHAPES, None),
    "tile.divs": ("pl.divs(ta, ta)", "tile.divs: argument 'rhs' must be a scalar", "pl.div"),
    "tile.exp": ("pl.tile.exp(s)", "tile.exp: argument 'a' must be a Tile, got Scalar[FP32]", None),
    "tile.expands": ("pl.expands(ta, ta)", "tile.expands: argument 'scalar' must be a numeric scalar", None),
    "tile.extract": ("pl.tile.extract(ta, 10, 0, [8, 8])", "tile.extract: block [10, 18) of dimension 0 is outside",
                     None),
    "tile.fillpad": ("pl.fillpad(ta, 5)", "pl.fillpad: pad_value 5 is not a fill value", "pl.PadValue.zero"),
    "tile.fillpad_inplace": ("pl.tile.fillpad_inplace(ta, pl.PadValue.null)",
                             "pl.tile.fillpad_inplace: pad_value PadValue.null (no pad value) is not a fill value",
                             "pl.PadValue.zero"),
    "tile.full": ("pl.tile.full([16, 16], dtype=pl.FP32, value=ta)", "tile.full: argument 'value' must be", None),
    "tile.gather": ("pl.tile.gather(ta, ti, ta)", "tile.gather: tmp dtype must be one of INT32, got FP32", None),
    "tile.gather_mask": ("pl.tile.gather_mask(ta, mask_pattern=9)",
                         "tile.gather_mask: requires mask_pattern in range [1, 7], got 9", "even/odd"),
    "tile.gather_row": ("pl.tile.gather_row(ta, ta, [0, 0], [0, 0], [4, 4])",
                        "tile.gather_row: argument 'src' must be a Tensor, got Tile[[16, 32], FP32]", None),
    "tile.gemv": ("pl.gemv(tm, ti)", "tile.gemv: dtype mismatch: lhs is FP32, rhs is INT32", "pl.cast"),
    "tile.gemv_acc": ("pl.gemv_acc(ti, tm, tm)", "tile.gemv_acc: acc shape [16, 32] does not match", None),
    "tile.gemv_bias": ("pl.gemv_bias(tm, tm, tr)", "tile.gemv_bias: requires bias to have shape [1, N] = [1, 16]",
                       None),
    "tile.get_block_idx": ("pl.get_block_idx(1)", "pl.get_block_idx takes at most 0 positional arguments", None),
    "tile.get_block_num": ("pl.tile.get_block_num(ta)", "pl.tile.get_block_num takes at most 0 positional arguments",
                           None),
    "tile.get_subblock_idx": ("pl.tile.get_subblock_idx(1)",
                              "pl.tile.get_subblock_idx takes at most 0 positional arguments", None),
    "tile.load": ("pl.load(a, [0, 0], [16])", "tile.load: tile shape [16] has a different rank than the tensor", None),
    "tile.log": ("pl.log(ta, ta)", "pl.log takes at most 1 positional arguments (a), got 2", None),
    "tile.lrelu": ("pl.lrelu(ta, ta)", "tile.lrelu: argument 'rhs' must be a scalar", None),
    "tile.matmul": ("pl.tile.matmul(ta, tm)", "tile.matmul: inner dimensions differ: a is [16, 32], b is [16, 16]",
                    "a must be [M, K] and b [K, N]"),
    "tile.matmul_acc": ("pl.matmul_acc(ta, tm, tm)", "tile.matmul_acc: acc shape [16, 32] does not match", None),
    "tile.matmul_bias": ("pl.tile.matmul_bias(tm, tm, ta)",
                         "tile.matmul_bias: requires bias to have shape [1, N] = [1, 16], got [16, 32]", None),
    "tile.max": ("pl.tile.max(ta, axis=5)", "tile.max: axis 5 is out of range for a tile of rank 2", None),
    "tile.maximum": ("pl.tile.maximum(ta, t8)", "tile.maximum: " + SHAPES, None),
    "tile.maximums": ("pl.maximums(ta, ta)", "tile.maximums: argument 'rhs' must be a scalar", "pl.maximum"),
    "tile.min": ("pl.min(ta, axis=n)", "'axis=' must be a compile-time constant, got 'n'", None),
    "tile.minimum": ("pl.tile.minimum(ta, t8)", "tile.minimum: " + SHAPES, None),
    "tile.minimums": ("pl.minimums(ta, ta)", "tile.minimums: argument 'rhs' must be a scalar", "pl.minimum"),
    "tile.move": ("pl.move(ta, target_memory=3)", "tile.move: target_memory must be a memory space name",
                  "pl.MemorySpace.Left"),
    "tile.mscatter": ("pl.mscatter(ta, ta, c)", "tile.mscatter: idx dtype must be one of INT32, got FP32", None),
    "tile.mul": ("pl.tile.mul(ta, t8)", "tile.mul: " + SHAPES, None),
    "tile.muls": ("pl.tile.muls(ta, ta)", "tile.muls: argument 'rhs' must be a scalar", "pl.mul"),
    "tile.neg": ("pl.neg(ta, ta)", "pl.neg takes at most 1 positional arguments (a), got 2", None),
    "tile.not": ("pl.tile.not_(ti)", "tile.not: requires int16 or uint16 tile dtype, but got INT32", "pl.INT16"),
    "tile.or": ("pl.or_(ta, ta)", "tile.or: " + INT_ONLY, None),
    "tile.ors": ("pl.ors(ti, 1.5)", "tile.ors: requires shift/bitwise scalar to be an integer type", None),
    "tile.part_add": ("pl.part_add(ta, t8)", "tile.part_add: " + SHAPES, None),
    "tile.part_max": ("pl.part_max(ta, t8)", "tile.part_max: " + SHAPES, None),
    "tile.part_min": ("pl.tile.part_min(ta, t8)", "tile.part_min: " + SHAPES, None),
    "tile.part_mul": ("pl.tile.part_mul(ta, t8)", "tile.part_mul: " + SHAPES, None),
    "tile.prelu": ("pl.prelu(ta, t8)", "tile.prelu: " + SHAPES, None),
    "tile.read": ("pl.read(ta, [0])", "tile.read: indices count (1) must match tile rank (2)", "one index per axis"),
    "tile.recip": ("pl.recip(s)", "pl.recip needs a tensor or a tile, got a scalar", None),
    "tile.relu": ("pl.relu(ta, ta)", "pl.relu takes at most 1 positional arguments (a), got 2", None),
    "tile.rem": ("pl.rem(ta, t8)", "tile.rem: " + SHAPES, None),
    "tile.rems": ("pl.tile.rems(ta, ta)", "tile.rems: argument 'rhs' must be a scalar", "pl.rem"),
    "tile.reshape": ("pl.reshape(ta, [16, 16])", "tile.reshape: cannot reshape tile of size 512 into shape with size 256",
                     "same number of elements"),
    "tile.row_expand": ("pl.row_expand(ta, tc)", "tile.row_expand: " + ROW_VEC, "pl.row_max"),
    "tile.row_expand_add": ("pl.row_expand_add(ta, tc)", "tile.row_expand_add: " + ROW, None),
    "tile.row_expand_div": ("pl.tile.row_expand_div(ta, tc)", "tile.row_expand_div: " + ROW, None),
    "tile.row_expand_expdif": ("pl.row_expand_expdif(ta, tc)", "tile.row_expand_expdif: " + ROW_VEC, None),
    "tile.row_expand_max": ("pl.row_expand_max(ta, tc)", "tile.row_expand_max: " + ROW_VEC, None),
    "tile.row_expand_min": ("pl.row_expand_min(ta, tc)", "tile.row_expand_min: " + ROW_VEC, None),
    "tile.row_expand_mul": ("pl.row_expand_mul(ta, tc)", "tile.row_expand_mul: " + ROW, None),
    "tile.row_expand_sub": ("pl.row_expand_sub(ta, tc)", "tile.row_expand_sub: " + ROW, None),
    "tile.row_max": ("pl.row_max(s)", "pl.row_max needs a tensor or a tile, got a scalar", None),
    "tile.row_min": ("pl.row_min(ta, 1.0)", "tile.row_min: argument 'tmp' must be a Tile, got Scalar[FP32]", None),
    "tile.row_prod": ("pl.row_prod(ta, ta, ta)", "pl.row_prod takes at most 2 positional arguments", None),
    "tile.row_sum": ("pl.tile.row_sum(s)", "tile.row_sum: argument 'a' must be a Tile, got Scalar[FP32]", None),
    "tile.rsqrt": ("pl.tile.rsqrt(ta, tr)", "pl.tile.rsqrt: 'tmp' must have the operand's type", "scratch"),
    "tile.scatter": ("pl.tile.scatter(ta, ti, ti)", "tile.scatter: dtype mismatch", "pl.cast"),
    "tile.scatter_mask": ("pl.tile.scatter_mask(ta, ta, mask_pattern=2)",
                          "tile.scatter_mask: dst [16, 32] must have src's rows and 2x its columns", None),
    "tile.scatter_update": ("pl.tile.scatter_update(ta, ti, ta, dim=-1)",
                            "tile.scatter_update: only dim=-2 is currently supported", None),
    "tile.sel": ("pl.tile.sel(ti, ta, ta)", "tile.sel: the mask must be a UINT8 tile (from pl.cmp)", None),
    "tile.sels": ("pl.sels(ta, t8, 1)", "tile.sels: " + SHAPES, None),
    "tile.set_validshape": ("pl.set_validshape(ta, 17, 4)", "tile.set_validshape: valid_rows 17 is outside [0, 16]",
                            "inside the tile [16, 32]"),
    "tile.shl": ("pl.tile.shl(ti, 2)", "tile.shl: argument 'rhs' must be a Tile, got Scalar[INDEX]", None),
    "tile.shls": ("pl.shls(ti, 1.5)", "tile.shls: requires shift/bitwise scalar to be an integer type", None),
    "tile.shr": ("pl.tile.shr(ta, ta)", "tile.shr: " + INT_ONLY, None),
    "tile.shrs": ("pl.shrs(ti, -2)", "tile.shrs: shift count -2 is negative", "shift counts must be >= 0"),
    "tile.sin": ("pl.tile.sin(th)", "tile.sin is FP32-only, got INT16", "pl.cast(tile, pl.FP32)"),
    "tile.slice": ("pl.tile.slice(ta, [4, 8], [0])", "tile.slice: shape and offset must have 2 entries for a 2-D tile",
                   None),
    "tile.sqrt": ("pl.tile.sqrt(s)", "tile.sqrt: argument 'a' must be a Tile, got Scalar[FP32]", None),
    "tile.store": ("pl.store(ta, [0], c)", "tile.store: 1 offsets for a tensor of shape [16, 32]",
                   "one offset per tensor dimension"),
    "tile.sub": ("pl.sub(ta, t8)", "tile.sub: " + SHAPES, None),
    "tile.subc": ("pl.subc(ta, ta, t8)", "tile.subc: " + SHAPES, None),
    "tile.subs": ("pl.subs(ta, ta)", "tile.subs: argument 'rhs' must be a scalar", "pl.sub"),
    "tile.subsc": ("pl.subsc(ta, 1.0, t8)", "tile.subsc: " + SHAPES, None),
    "tile.sum": ("pl.sum(ta, axis=3)", "tile.sum: axis 3 is out of range for a tile of rank 2", None),
    "tile.transpose": ("pl.transpose(ta, 0, 2)", "tile.transpose: axis out of range for a 2-D tile (axes 0, 2)", None),
    "tile.transpose_view": ("pl.tile.transpose_view(s)",
                            "tile.transpose_view: argument 'tile' must be a Tile, got Scalar[FP32]", None),
    "tile.write": ("pl.tile.write(ta, [0, 0], 1)", "tile.write: value Scalar[INDEX] must have the tile's dtype FP32",
                   "pl.cast(v, pl.FP32)"),
    "tile.xor": ("pl.xor(ti, ta)", "tile.xor: " + INT_ONLY, None),
    "tile.xors": ("pl.xors(ta, 3)", "tile.xors: " + INT_ONLY, None),
}


@pytest.mark.parametrize("op", sorted(CASES))
def test_misuse_is_a_located_error(op):
    expr, message, help = CASES[op]
    src = HEAD.format(expr=expr)
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "t.py")
    e = ei.value
    line = next(n for n, text in enumerate(src.splitlines(), 1) if text.strip().startswith("x = "))
    assert message in e.message, f"{expr}\nwant: {message}\ngot:  {e.message}"
    assert (e.file, e.line) == ("t.py", line), str(e)
    if help is not None:
        assert help in (e.help or ""), f"{expr}\nwant help: {help}\ngot:       {e.help}"


def test_every_cpu_tile_op_has_a_misuse_case():
    from pypto._core import kernel_cpu
    cpu_ops = {n for n in ir.op_names() if n.startswith("tile.") and n in dict(kernel_cpu.accepted_ops())}
    assert sorted(cpu_ops - set(CASES)) == [], "tile ops without a misuse case here"
    assert sorted(set(CASES) - cpu_ops) == []


# A constant element index outside a constant extent is a located error when the IR is built (the flat
# run-time check of tile.read / tile.write alone would read another element: [0, 40] of a [16, 32] tile is [1, 8]).
OUT_OF_RANGE = [
    ("pl.tile.read(ta, [0, 40])", "tile.read: index 40 of axis 1 is outside [0, 32)"),
    ("pl.read(ta, [-1, 0])", "tile.read: index -1 of axis 0 is outside [0, 16)"),
    ("pl.tile.write(ta, [16, 0], s)", "tile.write: index 16 of axis 0 is outside [0, 16)"),
    ("pl.tensor.read(a, [0, 32])", "tensor.read: index 32 of axis 1 is outside [0, 32)"),
    ("pl.tensor.write(c, [16, 0], s)", "tensor.write: index 16 of axis 0 is outside [0, 16)"),
]


@pytest.mark.parametrize("expr,message", OUT_OF_RANGE)
def test_constant_index_outside_the_extent_is_located(expr, message):
    src = HEAD.format(expr=expr)
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "t.py")
    line = next(n for n, text in enumerate(src.splitlines(), 1) if text.strip().startswith("x = "))
    assert message in ei.value.message, ei.value.message
    assert (ei.value.file, ei.value.line) == ("t.py", line)
    assert "extent minus 1" in ei.value.help


def test_indices_inside_the_extent_and_run_time_indices_still_parse():
    for expr in ("pl.tile.read(ta, [15, 31])", "pl.tile.read(ta, [n, 0])", "pl.tensor.read(a, [15, n])"):
        pl.parse_program(HEAD.format(expr=expr))
