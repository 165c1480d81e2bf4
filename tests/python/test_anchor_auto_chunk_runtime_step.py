"""pl.auto_chunk with a step known only at run time (spec anchor_features §7). SplitChunkedLoops
cannot know the step's sign, so the outer loop walks the chunks' first indices with step
`s * C` and the inner loop guards the body with a run-time sign test `(s > 0 and i < stop) or
(s < 0 and i > stop)`; leading_full's remainder runs the last T % C iterations. A zero step is a
run-time error naming the DSL line, never a hang. Also: a kernel loop with a run-time step (the
inner side of such a split) counts down for a negative step and fails on a zero one.
Golden C++: tests/golden/anchor_auto_chunk_runtime_step/."""
import os

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError
from pypto.ir import passes
from pypto.runtime.loader import RunError

from codegen_test_util import GOLDEN_DIR, load_single_program
from pass_test_util import assert_pass
from test_diagnostics import program


def test_split_guarded_and_leading_full_with_a_runtime_step():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 8], pl.FP32], n: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.INDEX],
                 y: pl.Out[pl.Tensor[[64, 8], pl.FP32]]) -> pl.Tensor[[64, 8], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
                for i in pl.parallel(0, n, s, chunk=4):
                    y = pl.assemble(y, pl.tensor.slice(x, [4, 8], [i * 4, 0]), [i * 4, 0])
                for k in pl.range(n, 0, s, chunk=2, chunk_policy="leading_full"):
                    y = pl.assemble(y, pl.tensor.slice(x, [4, 8], [k * 4, 0]), [k * 4, 0])
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 8], pl.FP32], n: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.INDEX],
                 y: pl.Out[pl.Tensor[[64, 8], pl.FP32]]) -> pl.Tensor[[64, 8], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
                for i_chunk, (y_1,) in pl.parallel(0, n, s * 4, init_values=(y,), chunk_stride=4,
                                                   loop_origin="chunk_outer"):
                    # what range(i_chunk, n, s) has left, at most 4 (4 where i_chunk - n wraps)
                    for i_in, (y_2,) in pl.parallel(
                            0, min(4, max(0 - (pl.cast((i_chunk - n > 0) == (s > 0), pl.INDEX) * (0 - s)
                                               + (1 - pl.cast((i_chunk - n > 0) == (s > 0), pl.INDEX)) * (i_chunk - n))
                                          // s, 4 * pl.cast((i_chunk - n > 0) == (s > 0), pl.INDEX))), 1,
                            init_values=(y_1,), loop_origin="chunk_inner"):
                        i = i_chunk + i_in * s
                        if s > 0 and i < n or s < 0 and i > n:
                            y_3 = pl.tensor.assemble(y_2, pl.tensor.slice(x, [4, 8], [i * 4, 0]), [i * 4, 0])
                            y_4 = pl.yield_(y_3)
                        else:
                            y_4 = pl.yield_(y_2)
                        y_5 = pl.yield_(y_4)
                    y_6 = pl.yield_(y_5)
                k_trips = max((1 - pl.cast(s > 0, pl.INDEX)) * n // (max(s, 0 - s) + pl.cast(s == 0, pl.INDEX))
                              - pl.cast(s > 0, pl.INDEX) * n // (max(s, 0 - s) + pl.cast(s == 0, pl.INDEX))
                              + pl.cast((1 - pl.cast(s > 0, pl.INDEX)) * n % (max(s, 0 - s) + pl.cast(s == 0, pl.INDEX))
                                        > pl.cast(s > 0, pl.INDEX) * n % (max(s, 0 - s) + pl.cast(s == 0, pl.INDEX)),
                                        pl.INDEX), 0)
                for k_chunk, (y_7,) in pl.range(n, pl.cast((0 - s > 0) == (s > 0), pl.INDEX) * n
                                                + (1 - pl.cast((0 - s > 0) == (s > 0), pl.INDEX)) * (0 - s), s * 2,
                                                init_values=(y_6,), chunk_stride=2, loop_origin="chunk_outer"):
                    for k_in, (y_8,) in pl.range(0, 2, 1, init_values=(y_7,), loop_origin="chunk_inner"):
                        k = k_chunk + k_in * s
                        y_9 = pl.tensor.assemble(y_8, pl.tensor.slice(x, [4, 8], [k * 4, 0]), [k * 4, 0])
                        y_10 = pl.yield_(y_9)
                    y_11 = pl.yield_(y_10)
                for k_rem, (y_12,) in pl.range(0, k_trips % 2 * pl.cast(s != 0, pl.INDEX), 1, init_values=(y_11,),
                                               loop_origin="chunk_remainder"):
                    k_1 = n + (k_trips - k_trips % 2 + k_rem) * s
                    y_13 = pl.tensor.assemble(y_12, pl.tensor.slice(x, [4, 8], [k_1 * 4, 0]), [k_1 * 4, 0])
                    y_14 = pl.yield_(y_13)
            return y_14

    assert_pass(passes.SplitChunkedLoops(), Before, Expected)


SRC = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 8], pl.FP32], a: pl.Scalar[pl.INDEX], b: pl.Scalar[pl.INDEX],
             s: pl.Scalar[pl.INDEX], y: pl.Out[pl.Tensor[[64, 8], pl.FP32]]) -> pl.Tensor[[64, 8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
            for i in pl.{KIND}(a, b, s, chunk=3{POLICY}):
                y = pl.assemble(y, pl.add(pl.slice(x, [4, 8], [i * 4, 0]), 1.0), [i * 4, 0])
        return y
'''

# up, down, empty both ways, steps larger than the chunk, partial last chunks
BOUNDS = [(0, 16, 1), (0, 16, 5), (15, -1, -1), (15, 2, -4), (3, 3, 2), (5, 0, 1), (0, 10, -1), (2, 15, 7)]


def compiled_variant(kind, policy):
    pol = ', chunk_policy="leading_full"' if policy == "leading_full" else ""
    return pypto.compile(pl.parse_program(SRC.replace("{KIND}", kind).replace("{POLICY}", pol), "t.py"))


@pytest.mark.parametrize("kind", ["parallel", "range"])
@pytest.mark.parametrize("policy", ["guarded", "leading_full"])
def test_runtime_step_e2e_race_checked(kind, policy):
    compiled = compiled_variant(kind, policy)
    x = np.random.default_rng(5).standard_normal((64, 8)).astype(np.float32)
    for a, b, s in BOUNDS:
        y = np.zeros((64, 8), np.float32)
        compiled(x, a, b, s, y, race_check=True)
        want = np.zeros((64, 8), np.float32)
        for i in range(a, b, s):
            want[i * 4:i * 4 + 4] = x[i * 4:i * 4 + 4] + 1
        np.testing.assert_allclose(y, want, rtol=1e-6, err_msg=f"range({a}, {b}, {s})")


@pytest.mark.parametrize("kind,where", [("parallel", "orchestration entry threw"), ("range", "AIV kernel")])
@pytest.mark.parametrize("policy", ["guarded", "leading_full"])
def test_zero_runtime_step_fails_the_run_naming_the_line(kind, where, policy):
    """The parallel chain's outer loop is in the orchestration; a sequential chain is wrapped
    whole, so its outer loop runs inside the kernel: both fail, neither hangs."""
    compiled = compiled_variant(kind, policy)
    x = np.zeros((64, 8), np.float32)
    with pytest.raises(RunError) as ei:
        compiled(x, 0, 8, 0, np.zeros((64, 8), np.float32))
    msg = str(ei.value)
    assert where in msg and "t.py:10: pl.range() step is 0 at run time" in msg and "non-zero step" in msg, msg


def test_runtime_step_chain_interchanged_e2e():
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[40, 24], pl.FP32], s: pl.Scalar[pl.INDEX], t: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[40, 24], pl.FP32]]) -> pl.Tensor[[40, 24], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
            for i in pl.parallel(0, 10, s, chunk=2):
                for j in pl.parallel(5, -1, t, chunk=2):
                    y = pl.assemble(y, pl.exp(pl.slice(x, [4, 4], [i * 4, j * 4])), [i * 4, j * 4])
        return y
'''
    p = pl.parse_program(src, "t.py")
    q = p
    for ps in passes.default_pipeline():
        q = ps(q)
        if ps.name == "OutlineIncoreScopes":
            break
    main = ir.python_print(next(f for f in q.functions if f.name == "main"))
    assert main.count('loop_origin="chunk_outer"') == 2, main   # both run-time-step outer loops moved out
    compiled = pypto.compile(p)
    x = np.random.default_rng(2).standard_normal((40, 24)).astype(np.float32)
    for s, t in [(1, -1), (3, -2), (4, -5)]:
        y = np.zeros((40, 24), np.float32)
        compiled(x, s, t, y, race_check=True)
        want = np.zeros((40, 24), np.float32)
        for i in range(0, 10, s):
            for j in range(5, -1, t):
                want[i * 4:i * 4 + 4, j * 4:j * 4 + 4] = np.exp(x[i * 4:i * 4 + 4, j * 4:j * 4 + 4])
        np.testing.assert_allclose(y, want, rtol=1e-5, err_msg=f"s={s}, t={t}")


KERNEL_LOOP = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 8], pl.FP32], s: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(12, -1, s):
                y = pl.assemble(y, pl.add(pl.slice(x, [4, 8], [i, 0]), 1.0), [i, 0])
        return y
'''


def test_kernel_loop_with_a_runtime_step_counts_down_and_refuses_zero():
    compiled = pypto.compile(pl.parse_program(KERNEL_LOOP, "k.py"))
    x = np.random.default_rng(4).standard_normal((16, 8)).astype(np.float32)
    y = np.zeros((16, 8), np.float32)
    compiled(x, -4, y, race_check=True)
    want = np.zeros((16, 8), np.float32)
    want[0:16] = x + 1                         # i = 12, 8, 4, 0
    np.testing.assert_allclose(y, want, rtol=1e-6)
    with pytest.raises(RunError, match=r"k\.py:10: pl\.range\(\) step is 0 at run time"):
        compiled(x, 0, np.zeros((16, 8), np.float32))


def golden():
    return load_single_program(os.path.join(GOLDEN_DIR, "anchor_auto_chunk_runtime_step", "program.py"))


def test_golden_e2e():
    compiled = pypto.compile(golden())
    x = np.random.default_rng(8).standard_normal((64, 8)).astype(np.float32)
    for n, s in [(16, 1), (16, 3), (15, -2), (0, -1)]:
        y = np.zeros((64, 8), np.float32)
        compiled(x, n, s, y, race_check=True)
        want = np.zeros((64, 8), np.float32)
        for i in (range(0, n, s) if s > 0 else range(n, -1, s)):
            want[i * 4:i * 4 + 4] = x[i * 4:i * 4 + 4] * 2
        np.testing.assert_allclose(y, want, rtol=1e-6, err_msg=f"n={n}, s={s}")


def test_constant_zero_step_with_chunk_is_a_located_error():
    from test_diagnostics import body_check
    body = ("with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):\n"
            "    for i in pl.parallel(0, 8, 0, chunk=2):  #!\n        d = self.kernel_add(a, b, d)\nreturn d")
    body_check(body, "step must not be 0", "0, chunk")


# -- ForStmt.chunk_stride: SplitChunkedLoops' typed result (printed chunk_stride=C) ------------
_STRIDE_SRC = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 8], pl.FP32], n: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[64, 8], pl.FP32]]) -> pl.Tensor[[64, 8], pl.FP32]:
        for i, (y_1,) in pl.parallel(0, n, s * 4, init_values=(y,), STRIDE):
            y_2 = pl.tensor.assemble(y_1, pl.tensor.slice(x, [4, 8], [i * 4, 0]), [i * 4, 0])
            y_3 = pl.yield_(y_2)
        return y_3
'''


def _stmts(s):
    return list(s.stmts) if isinstance(s, ir.SeqStmts) else [s]


def _first_loop(program):
    return next(s for s in _stmts(program.functions[0].body) if isinstance(s, ir.ForStmt))


def test_chunk_stride_is_a_typed_loop_field_printed_and_compared():
    after = passes.SplitChunkedLoops()(_split_runtime_step())
    outer = _stmts(_stmts(after.functions[0].body)[0].body)[0]   # in the auto_chunk scope
    assert outer.chunk_stride == 4 and "chunk_stride" not in outer.attrs
    inner = _stmts(outer.body)[0]
    assert isinstance(inner, ir.ForStmt) and inner.chunk_stride == 0
    text = ir.python_print(after)
    assert 'chunk_stride=4, loop_origin="chunk_outer"' in text and '"chunk_stride"' not in text
    assert ir.structural_equal(pl.parse_program(text), after)
    # structural equality and the hash see the field: the same loop without it differs
    stamped = pl.parse_program(_STRIDE_SRC.replace("STRIDE", 'chunk_stride=4, loop_origin="chunk_outer"'))
    plain = pl.parse_program(_STRIDE_SRC.replace("STRIDE", 'loop_origin="chunk_outer"'))
    assert _first_loop(stamped).chunk_stride == 4 and _first_loop(plain).chunk_stride == 0
    ok, why = ir.structural_equal_explain(stamped, plain)
    assert not ok and "chunk_stride 4 vs 0" in why
    assert ir.structural_hash(stamped) != ir.structural_hash(plain)


def _split_runtime_step():
    text = _STRIDE_SRC.replace(
        "        for i, (y_1,) in pl.parallel(0, n, s * 4, init_values=(y,), STRIDE):\n"
        "            y_2 = pl.tensor.assemble(y_1, pl.tensor.slice(x, [4, 8], [i * 4, 0]), [i * 4, 0])\n"
        "            y_3 = pl.yield_(y_2)\n"
        "        return y_3\n",
        "        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):\n"
        "            for i in pl.parallel(0, n, s, chunk=4):\n"
        "                y = pl.assemble(y, pl.tensor.slice(x, [4, 8], [i * 4, 0]), [i * 4, 0])\n"
        "        return y\n")
    return pl.parse_program(text)


@pytest.mark.parametrize("stride, step", [("chunk_stride=3", "s * 4"), ("chunk_stride=1", "s * 1"),
                                          ("chunk_stride=4", "s"), ('chunk_stride="4"', "s * 4")])
def test_a_chunk_stride_that_is_not_the_steps_factor_is_a_located_error(stride, step):
    src = _STRIDE_SRC.replace("STRIDE", stride).replace("s * 4, init_values", step + ", init_values")
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "c.py")
    assert "chunk_stride= must be an int C > 1 on a loop whose step is `s * C`" in ei.value.message
    assert ei.value.line == 9


def test_chunked_loops_split_verifier_refuses_a_chunk_stride_off_an_outer_chunk_loop():
    stray = pl.parse_program(_STRIDE_SRC.replace("STRIDE", "chunk_stride=4"))
    issues = passes.verify_property(passes.IRProperty.ChunkedLoopsSplit, stray)
    assert len(issues) == 1 and "has chunk_stride 4 but is not the outer loop of a chunked loop" in issues[0], issues
    assert passes.verify_property(passes.IRProperty.ChunkedLoopsSplit, passes.SplitChunkedLoops()(_split_runtime_step())) == []
