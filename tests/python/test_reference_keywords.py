"""The reference compiler's keyword names (reference_ops.md §2-§7) are accepted next to ours:
`pl.store(t, [0, 0], output_tensor=y)`, `pl.add(lhs=a, rhs=b)`, `pl.lrelu(tile=t, slope=0.1)`,
`pl.row_sum(t, tmp_tile=tmp)`, `pl.cast(tile=t, target_type=pl.INT32, mode="floor")`. Before, each was
"pl.<op> has no parameter '<name>'" (or, for a first operand given by keyword, "needs a tensor or tile
as its first argument"). `pl.store`'s fourth parameter is the reference's `shapes=` (the extent of the
stored block); it was `atomic`, which the reference makes keyword-only."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError

from e2e_util import kernel_program, kernel_program_text, run_kernel_program

S, ROW, COL = [8, 16], [8, 1], [1, 16]
IN = [("a", S, "FP32"), ("b", S, "FP32"), ("r", ROW, "FP32")]


def test_reference_keywords_e2e_numpy():
    outs = [("o_add", S, "FP32", "pl.add(lhs=ta, rhs=tb)"),
            ("o_sub", S, "FP32", "pl.sub(ta, rhs=tb)"),
            ("o_lrelu", S, "FP32", "pl.lrelu(tile=ta, slope=0.25)"),
            ("o_rsum", ROW, "FP32", "pl.row_sum(tile=ta, tmp_tile=tb)"),
            ("o_rexp", S, "FP32", "pl.row_expand_add(tile=ta, row_vec=tr)"),
            ("o_csum", COL, "FP32", "pl.col_sum(tile=ta, tmp_tile=None)"),
            ("o_cast", S, "INT32", 'pl.cast(tile=ta, target_type=pl.INT32, mode="floor")'),
            ("o_resh", [16, 8], "FP32", "pl.reshape(tile=ta, shape=[16, 8])"),
            ("o_write", S, "FP32", "tw")]
    body = ["tw = pl.load(tensor=a, offsets=[0, 0], shapes=[8, 16])",
            "tw = pl.write(tile=tw, indices=[1, 2], value=5.0)"]
    compiled = kernel_program(IN, outs, body=body)
    rng = np.random.default_rng(11)
    v = {"a": rng.standard_normal(S).astype(np.float32) * 4, "b": rng.standard_normal(S).astype(np.float32),
         "r": rng.standard_normal(ROW).astype(np.float32)}
    got = run_kernel_program(compiled, v)
    a, b, r = v["a"], v["b"], v["r"]
    np.testing.assert_array_equal(got["o_add"], a + b)
    np.testing.assert_array_equal(got["o_sub"], a - b)
    np.testing.assert_array_equal(got["o_lrelu"], np.where(a > 0, a, a * np.float32(0.25)))
    np.testing.assert_allclose(got["o_rsum"], a.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got["o_rexp"], a + r)
    np.testing.assert_allclose(got["o_csum"], a.sum(axis=0, keepdims=True), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got["o_cast"], np.floor(a).astype(np.int32))
    np.testing.assert_array_equal(got["o_resh"], a.reshape(16, 8))
    want = a.copy()
    want[1, 2] = 5.0
    np.testing.assert_array_equal(got["o_write"], want)


@pytest.mark.parametrize("expr,printed", [
    ("pl.add(lhs=ta, rhs=tb)", "pl.add(ta, tb)"),
    ("pl.mul(lhs=a, rhs=b)", "pl.tensor.mul(a, b)"),     # tensors in a kernel: the tensor op
    ("pl.lrelu(tile=ta, slope=0.5)", "pl.lrelu(ta, 0.5)"),
    ("pl.row_max(ta, tmp_tile=tb)", "pl.row_max(ta, tb)"),
    ('pl.cast(tile=ta, target_type=pl.INT32, mode="trunc")', "pl.cast(ta, pl.INT32, mode=\"trunc\")"),
])
def test_keyword_call_prints_positionally_and_round_trips(expr, printed):
    prog = pl.parse_program(kernel_program_text(IN, [("o", S, "FP32", "ta")], body=["x = " + expr]))
    text = ir.python_print(prog)
    assert f"= {printed}" in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]


STORE = """
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 16])
        y = STORE
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        y = self.k(x, y)
        return y
"""


def _store_program(store: str):
    return pl.parse_program(STORE.replace("STORE", store), "store.py")


@pytest.mark.parametrize("store,rows,cols", [
    ("pl.store(t, [0, 0], output_tensor=y)", 8, 16),
    ("pl.store(tile=t, offsets=[0, 0], output_tensor=y, shapes=[8, 16])", 8, 16),
    ("pl.store(t, [0, 0], y, [3, 16])", 3, 16),                # the 4th positional is shapes
    ("pl.store(t, [0, 0], output_tensor=y, shapes=[8, 5])", 8, 5),
    ("pl.store(t, [0, 0], y, shapes=None)", 8, 16),
])
def test_store_output_tensor_and_shapes_e2e(store, rows, cols):
    x = np.arange(128, dtype=np.float32).reshape(8, 16) + 1
    y = np.full((8, 16), -7.0, np.float32)
    pypto.compile(_store_program(store))(x, y)
    want = np.full((8, 16), -7.0, np.float32)
    want[:rows, :cols] = x[:rows, :cols]
    np.testing.assert_array_equal(y, want)


def test_store_of_the_whole_tile_prints_no_slice():
    text = ir.python_print(_store_program("pl.store(t, [0, 0], y, shapes=[8, 16])"))
    assert "slice" not in text and "pl.store(t, [0, 0], y)" in text, text


@pytest.mark.parametrize("store,message", [
    ("pl.store(t, [0, 0], y, shapes=[9, 16])", "pl.store: shapes= extent 9 of axis 0 is outside the tile's [0, 16]"
     .replace("[0, 16]", "[0, 8]")),
    ("pl.store(t, [0, 0], y, shapes=[8])", "pl.store: shapes= has 1 entry for a tile of rank 2"),
    ("pl.store(t, [0, 0], y, shapes=8)", "pl.store: shapes= must be a list of extents, got '8'"),
    ("pl.store(t, [0, 0], y, pl.AtomicType.Add)", "pl.store: the 4th argument is shapes=; atomic= is keyword-only"),
    ("pl.store(t, [0, 0], y, output_tensor=y)", "pl.store got 'output_tensor' twice: it names the parameter 'tensor'"),
    ("pl.store(t, [0, 0], out_tensor=y)", "pl.store has no parameter 'out_tensor'"),
    ("pl.store(pl.add(ta, tb, lhs=ta), [0, 0], y)", "pl.add got 'lhs' twice: it names the parameter 'a'"),
    ("pl.store(pl.cast(t, pl.INT32, target_type=pl.FP16), [0, 0], y)", "pl.cast got 'target_type' twice"),
    ("pl.store(pl.cast(t, pl.FP16, mode=\"round\", dtype=pl.FP16), [0, 0], y)", "pl.cast has no parameter 'dtype'"),
    ("pl.store(pl.cast(t), [0, 0], y)", "pl.cast takes a value and a dtype"),
    ("pl.store(pl.lrelu(t, slopes=0.1), [0, 0], y)", "pl.lrelu has no parameter 'slopes'"),
])
def test_keyword_misuse_is_located(store, message):
    text = STORE.replace("STORE", store).replace("ta, tb", "t, t").replace("lhs=ta", "lhs=t")
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(text, "store.py")
    assert message in ei.value.message, ei.value.message
    assert (ei.value.file, ei.value.line) == ("store.py", 10)


def test_tensor_dim_by_keyword():
    text = kernel_program_text([("a", S, "FP32")], [("o", S, "FP32", "pl.adds(ta, pl.cast(n, pl.FP32))")],
                               body=["n = pl.tensor.dim(tensor=a, axis=-1)"])
    compiled = pypto.compile(pl.parse_program(text))
    a = np.ones(S, np.float32)
    got = run_kernel_program(compiled, {"a": a})
    np.testing.assert_array_equal(got["o"], a + 16)


@pytest.mark.parametrize("expr", ["pl.tile.gather_compare(src=t, kvalue=1.0, tmp=t, out_cols=4)",
                                  "pl.tpush_to_aiv(tile=t, split=0)"])
def test_accelerator_only_op_by_keyword_says_why_it_is_refused(expr):
    # its reference keywords are not ours (the refused ops have no parameter names): the refusal comes first
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(STORE.replace("STORE", f"pl.store({expr}, [0, 0], y)"), "store.py")
    assert "is an accelerator-only op" in ei.value.message, ei.value.message
    assert (ei.value.file, ei.value.line) == ("store.py", 10)


def test_store_shapes_of_a_run_time_extent():
    # shapes=[r, 16] with a scalar r: rows 0..r-1 stored; an extent outside [0, 8] fails the run, located
    text = STORE.replace("k(self, x: pl.Tensor[[8, 16], pl.FP32],", "k(self, x: pl.Tensor[[8, 16], pl.FP32], r: pl.Scalar[pl.INDEX],") \
        .replace("main(self, x: pl.Tensor[[8, 16], pl.FP32],", "main(self, x: pl.Tensor[[8, 16], pl.FP32], r: pl.Scalar[pl.INDEX],") \
        .replace("y = self.k(x, y)", "y = self.k(x, r, y)").replace("STORE", "pl.store(t, [0, 0], y, shapes=[r, 16])")
    prog = pypto.compile(pl.parse_program(text, "store_r.py"))
    x = np.arange(128, dtype=np.float32).reshape(8, 16) + 1
    for r in (0, 3, 8):
        y = np.full((8, 16), -7.0, np.float32)
        prog(x, r, y)
        want = np.full((8, 16), -7.0, np.float32)
        want[:r] = x[:r]
        np.testing.assert_array_equal(y, want)
    for r in (-1, 9, 1 << 40):
        y = np.full((8, 16), -7.0, np.float32)
        with pytest.raises(Exception) as e:
            prog(x, r, y)
        assert "valid extent" in str(e.value) and "store_r.py" in str(e.value), str(e.value)
        assert (y == -7.0).all()
