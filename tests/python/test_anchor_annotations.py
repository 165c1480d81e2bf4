"""anchor_features.md §14, annotation strictness: INDEX <-> integer dtypes bind a pl.cast, an omitted tile
memory space keeps the inferred one (Acc from pl.matmul), an explicit one retargets a pl.load / pl.create_tile,
dynamic dims match anything. Golden C++: tests/golden/anchor_annotations/ (test_golden.py)."""
import os

import numpy as np

import pypto
import pypto.language as pl
from pypto import ir

from codegen_test_util import GOLDEN_DIR, load_single_program
from test_diagnostics import T, body_check, check, program


def golden():
    return load_single_program(os.path.join(GOLDEN_DIR, "anchor_annotations", "program.py"))


def _function(prog, name):
    return next(f for f in prog.functions if f.name == name)


def test_annotations_e2e_numpy():
    compiled = pypto.compile(golden())
    rng = np.random.default_rng(14)
    a, b = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    x = rng.standard_normal((5, 16)).astype(np.float32)
    c = np.zeros((16, 16), np.float32)
    y = np.full((5, 16), 7.0, np.float32)
    compiled(a, b, c, x, y)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(y, np.maximum(x, 0), rtol=0, atol=0)


def test_index_int64_binds_a_cast_and_acc_stays_acc():
    text = ir.python_print(golden())
    assert "i = pl.cast(r, pl.INDEX)" in text
    assert "rows = pl.cast(N, pl.INT64)" in text
    assert "acc: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Acc] = pl.matmul(tl, tr)" in text
    assert "pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)" in text
    # the printed form reparses to the same program
    assert ir.structural_equal(pl.parse_program(text, "p.py"), golden())


def test_dynamic_dim_matches_static_and_index_matches_int32():
    src = program("q: pl.Scalar[pl.INT32] = n\nv: pl.Tensor[[16, N], pl.FP32] = a\nd = self.kernel_add(v, b, d)\n"
                  "return d", prelude='N = pl.dynamic("N")')
    main = _function(pl.parse_program(src, "t.py"), "main")
    assert "q = pl.cast(n, pl.INT32)" in ir.python_print(main)


def test_scalar_dtype_mismatch_is_located():
    body_check("x: pl.Scalar[pl.FP32] = n  #!\nreturn d",
               "'x' is annotated pl.Scalar[pl.FP32] but the value is a scalar (pl.Scalar[pl.INDEX]): "
               "dtype FP32 differs from INDEX", "pl.Scalar", help="write x: pl.Scalar[pl.INDEX] = ...")


def test_two_non_index_integer_dtypes_still_differ():
    body_check("q = pl.cast(n, pl.INT32)\nx: pl.Scalar[pl.INT64] = q  #!\nreturn d",
               "dtype INT64 differs from INT32", "pl.Scalar")


def test_static_dim_mismatch_is_located():
    body_check("x: pl.Tensor[[16, 8], pl.FP32] = a  #!\nreturn d",
               "'x' is annotated pl.Tensor[[16, 8], pl.FP32] but the value is a tensor "
               f"({T}): the rank or a static dimension differs", "pl.Tensor")


def test_explicit_memory_space_on_a_computed_tile_is_located():
    extra = f'''
    @pl.function(type=pl.FunctionType.InCore)
    def bad(self, a: {T}, c: pl.Out[{T}]) -> {T}:
        t: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Left] = pl.relu(pl.load(a, [0, 0], [16, 16]))  #!
        c = pl.store(t, [0, 0], c)
        return c
'''
    check(program("return d", extra=extra), "its memory space is Vec, not Left", "pl.Tile",
          help="write t: pl.Tile[[16, 16], pl.FP32] = ...")


# -- pl.TileView / pl.MemRef items and the pl.NZ refusal (§14) --------------------------------
def _tile_ann_check(ann: str, message: str, at: str, help: str = ""):  # noqa: A002
    extra = f'''
    @pl.function(type=pl.FunctionType.InCore)
    def bad(self, a: {T}, c: pl.Out[{T}]) -> {T}:
        t: {ann} = pl.load(a, [0, 0], [16, 16])  #!
        c = pl.store(t, [0, 0], c)
        return c
'''
    check(program("return d", extra=extra), message, at, help=help)


def test_tile_view_and_memref_are_checked_no_ops():
    mm = ir.python_print(_function(golden(), "mm"))
    # the Mat space given by pl.Mem.Mat retargets the load; the view and the address leave the type alone
    assert "ta: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Mat] = pl.load(a, [0, 0], [16, 16], " \
           "target_memory=pl.MemorySpace.Mat)" in mm
    # a MemRef may carry the space itself (the reference's older spelling)
    extra = f'''
    @pl.function(type=pl.FunctionType.InCore)
    def ok(self, a: {T}, c: pl.Out[{T}]) -> {T}:
        t: pl.Tile[[16, 16], pl.FP32, pl.MemRef(pl.MemorySpace.Mat, 0, 1024, 3)] = pl.load(a, [0, 0], [16, 16])
        c = pl.store(pl.move(t, target_memory=pl.MemorySpace.Vec), [0, 0], c)
        return c
'''
    ok = _function(pl.parse_program(program("return d", extra=extra), "t.py"), "ok")
    assert "target_memory=pl.MemorySpace.Mat" in ir.python_print(ok)


def test_tile_annotation_item_errors():
    _tile_ann_check("pl.Tile[[16, 16], pl.FP32, pl.NZ]", "a tile annotation takes no layout marker ('pl.NZ')",
                    "pl.NZ", help="drop it")
    _tile_ann_check("pl.Tile[[16, 16], pl.FP32, pl.MemRef(0, 64)]",
                    "pl.MemRef needs an explicit memory space in the annotation", "pl.MemRef",
                    help="pl.Mem.Vec")
    _tile_ann_check("pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.MemRef(pl.Mem.Mat, 0, 64)]",
                    "pl.MemRef names memory space Mat but the annotation names Vec", "pl.MemRef")
    _tile_ann_check("pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.MemRef(-1, 64)]",
                    "pl.MemRef addr must be an int literal >= 0, got '-1'", "-1")
    _tile_ann_check("pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.MemRef(0)]",
                    "pl.MemRef takes ([memory space,] addr, size[, id]), got 1 arguments", "pl.MemRef")
    _tile_ann_check("pl.Tile[[16, 16], pl.FP32, pl.TileView(valid_shape=[8, 32])]",
                    "valid_shape entry 32 exceeds the tile's dimension 1 (16)", "32])")
    _tile_ann_check("pl.Tile[[16, 16], pl.FP32, pl.TileView(valid_shape=[8])]",
                    "valid_shape= must be a list of 2 entries (the tile's rank), got '[8]'", "[8]")
    _tile_ann_check("pl.Tile[[16, 16], pl.FP32, pl.TileView(stride=[16, 0])]",
                    "a stride must be an int literal >= 1, got '0'", "0]")
    _tile_ann_check("pl.Tile[[16, 16], pl.FP32, pl.TileView(blayout=1)]",
                    "pl.TileView has no keyword 'blayout' here", "1)", help="refused like pl.NZ")
    _tile_ann_check("pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.Mem.Mat]",
                    "a tile annotation takes one memory space", "pl.Mem.Mat")
    _tile_ann_check("pl.Tile[[16, 16], pl.FP32, pl.TileView(), pl.TileView()]",
                    "a tile annotation takes one pl.TileView", "pl.TileView()]")


def test_nz_on_a_tensor_is_located():
    body_check("x: pl.Tensor[[16, 16], pl.FP32, pl.NZ] = a  #!\nreturn d",
               "pl.NZ is a fractal tile layout, not a tensor layout", "pl.NZ",
               help="pl.Layout.ND (default) and pl.Layout.DN")
