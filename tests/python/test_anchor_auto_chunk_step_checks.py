"""pl.auto_chunk (spec anchor_features §7), two gaps closed:

- a nested `leading_full` level whose step is known only at run time moves out of the kernel
  like the static case: its outer loop joins the chain in the orchestration, its remainder gets
  a scope of its own (before, SplitChunkedLoops' trip-count assignment ahead of the full chunks
  hid the level and the whole nest stayed in one kernel);
- `step * chunk` (the outer loop's stride) is checked for int64 overflow: constants at compile
  time (a located error), run-time values when the run reaches the loop (the run fails naming
  the DSL line, like a zero step).
"""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.runtime.loader import RunError

from test_anchor_auto_chunk_chains import SRC, run_until


def _outer_loops_in_orchestration(program):
    main = ir.python_print(next(f for f in run_until(program, "OutlineIncoreScopes").functions if f.name == "main"))
    return main.split("= self.")[0].count('loop_origin="chunk_outer"'), main


# (outer loop, inner loop with a run-time step, blocks covered for (n, s))
NESTED = {
    "inner_leading_full_runtime_step": (
        "pl.parallel(10, chunk=4)", 'pl.parallel(0, 6, s, chunk=4, chunk_policy="leading_full")',
        lambda n, s: [(i, j) for i in range(10) for j in range(0, 6, s)]),
    "inner_leading_full_runtime_step_down": (
        "pl.parallel(n, chunk=3)", 'pl.parallel(5, -1, s, chunk=2, chunk_policy="leading_full")',
        lambda n, s: [(i, j) for i in range(n) for j in range(5, -1, s)]),
    "both_leading_full_runtime_step": (
        'pl.parallel(0, n, 1, chunk=4, chunk_policy="leading_full")',
        'pl.parallel(0, 6, s, chunk=4, chunk_policy="leading_full")',
        lambda n, s: [(i, j) for i in range(n) for j in range(0, 6, s)]),
}


def _nested_program(case):
    outer, inner, _ = NESTED[case]
    src = SRC.replace("{I}", outer).replace("{J}", inner).replace(
        "n: pl.Scalar[pl.INDEX],", "n: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.INDEX],")
    return pl.parse_program(src, "t.py")


@pytest.mark.parametrize("case", sorted(NESTED))
def test_nested_leading_full_with_a_runtime_step_moves_out_of_the_kernel(case):
    count, main = _outer_loops_in_orchestration(_nested_program(case))
    assert count == 2, main                      # both outer chunk loops are in the orchestration
    assert "chunk_inner" not in main.split("= self.")[0], main
    compiled = pypto.compile(_nested_program(case))
    blocks = NESTED[case][2]
    x = np.random.default_rng(3).standard_normal((40, 24)).astype(np.float32)
    steps = [1, 2, 5] if "down" not in case else [-1, -2, -4]
    for n in (9, 10):
        for s in steps:
            y = np.zeros((40, 24), np.float32)
            compiled(x, n, s, y, race_check=True)
            want = np.zeros((40, 24), np.float32)
            for i, j in blocks(n, s):
                want[i * 4:i * 4 + 4, j * 4:j * 4 + 4] = x[i * 4:i * 4 + 4, j * 4:j * 4 + 4] * 2
            np.testing.assert_allclose(y, want, rtol=1e-6, err_msg=f"n={n}, s={s}")


# -- step * chunk overflow ---------------------------------------------------------------------
from test_anchor_auto_chunk_runtime_step import compiled_variant  # noqa: E402

BIG = 2 ** 62


@pytest.mark.parametrize("loop,message", [
    (f"pl.parallel(0, 10, {BIG}, chunk=4)", f"step * chunk = {BIG} * 4 overflows int64"),
    (f"pl.range(10, 0, -{BIG}, chunk=3, chunk_policy=\"leading_full\")", f"step * chunk = -{BIG} * 3 overflows int64"),
    # more iterations than int64 counts (step 2 counts: test_auto_chunk_trip_counts.py)
    ("pl.parallel(-9223372036854775000, 9223372036854775000, 1, chunk=2)", "bounds of this chunked loop overflow int64"),
])
def test_constant_step_times_chunk_overflow_is_a_located_error(loop, message):
    from pypto.errors import PyptoError
    src = SRC_ONE.replace("{LOOP}", loop)
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(src, "t.py"))
    e = ei.value
    assert message in e.message, e
    assert (e.file, e.line) == ("t.py", 10), e


SRC_ONE = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 8], pl.FP32],
             y: pl.Out[pl.Tensor[[64, 8], pl.FP32]]) -> pl.Tensor[[64, 8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
            for i in {LOOP}:
                y = pl.assemble(y, pl.add(pl.slice(x, [4, 8], [0, 0]), 1.0), [0, 0])
        return y
'''


@pytest.mark.parametrize("kind,where", [("parallel", "orchestration entry threw"), ("range", "AIV kernel")])
@pytest.mark.parametrize("policy", ["guarded", "leading_full"])
def test_runtime_step_times_chunk_overflow_fails_the_run_naming_the_line(kind, where, policy):
    """The stride s * 3 of the outer chunk loop: in the orchestration (parallel chain) or in the
    kernel (a sequential chain is wrapped whole); before, it wrapped around silently."""
    compiled = compiled_variant(kind, policy)
    x = np.zeros((64, 8), np.float32)
    for s in (BIG, -BIG):
        with pytest.raises(RunError) as ei:
            compiled(x, 0, 8, s, np.zeros((64, 8), np.float32))
        msg = str(ei.value)
        assert where in msg and "t.py:10: pl.auto_chunk: step * chunk" in msg and "overflows int64" in msg, msg
    y = np.zeros((64, 8), np.float32)       # the largest step that does not overflow still runs
    compiled(x, 0, 8, (2 ** 63 - 1) // 3, y)
    np.testing.assert_allclose(y[0:4], x[0:4] + 1)


# -- InterchangeChunkLoops on a nested run-time leading_full level (DSL Before / Expected) ----
from pass_test_util import assert_pass  # noqa: E402
from pypto.ir import passes  # noqa: E402

_HEAD = "import pypto.language as pl\n\n\n@pl.program\nclass P:\n"
_BEFORE = _HEAD + """    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[40, 24], pl.FP32], s: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[40, 24], pl.FP32]]) -> pl.Tensor[[40, 24], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
            for i_chunk, (y_1,) in pl.parallel(0, 2, 1, init_values=(y,), loop_origin="chunk_outer"):
                for i_in, (y_2,) in pl.parallel(0, 4, 1, init_values=(y_1,), loop_origin="chunk_inner"):
                    i = i_chunk * 4 + i_in
                    j_trips = max(0 - -6 // (s + pl.cast(s == 0, pl.INDEX)), 0)
                    for j_chunk, (y_3,) in pl.parallel(0, 6 - 3 * s, s * 4, init_values=(y_2,), chunk_stride=4, loop_origin="chunk_outer"):
                        for j_in, (y_4,) in pl.parallel(0, 4, 1, init_values=(y_3,), loop_origin="chunk_inner"):
                            j = j_chunk + j_in * s
                            y_5: pl.Tensor[[40, 24], pl.FP32] = pl.tensor.assemble(y_4, pl.tensor.slice(x, [4, 4], [i * 4, j * 4]), [i * 4, j * 4])
                            y_6 = pl.yield_(y_5)
                        y_7 = pl.yield_(y_6)
                    for j_rem, (y_8,) in pl.parallel(0, j_trips % 4 * pl.cast(s != 0, pl.INDEX), 1, init_values=(y_7,), loop_origin="chunk_remainder"):
                        j_1 = (j_trips - j_trips % 4 + j_rem) * s
                        y_9: pl.Tensor[[40, 24], pl.FP32] = pl.tensor.assemble(y_8, pl.tensor.slice(x, [4, 4], [i * 4, j_1 * 4]), [i * 4, j_1 * 4])
                        y_10 = pl.yield_(y_9)
                    y_11 = pl.yield_(y_10)
                y_12 = pl.yield_(y_11)
        return y_12
"""
_EXPECTED = _HEAD + """    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[40, 24], pl.FP32], s: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[40, 24], pl.FP32]]) -> pl.Tensor[[40, 24], pl.FP32]:
        for i_chunk, (y_1,) in pl.parallel(0, 2, 1, init_values=(y,), loop_origin="chunk_outer"):
            for j_chunk, (y_2,) in pl.parallel(0, 6 - 3 * s, s * 4, init_values=(y_1,), chunk_stride=4, loop_origin="chunk_outer"):
                with pl.at(level=pl.Level.CORE_GROUP):
                    for i_in, (y_3,) in pl.parallel(0, 4, 1, init_values=(y_2,), loop_origin="chunk_inner"):
                        i = i_chunk * 4 + i_in
                        for j_in, (y_4,) in pl.parallel(0, 4, 1, init_values=(y_3,), loop_origin="chunk_inner"):
                            j = j_chunk + j_in * s
                            y_5: pl.Tensor[[40, 24], pl.FP32] = pl.tensor.assemble(y_4, pl.tensor.slice(x, [4, 4], [i * 4, j * 4]), [i * 4, j * 4])
                            y_6 = pl.yield_(y_5)
                        y_7 = pl.yield_(y_6)
                y_8 = pl.yield_(y_7)
            with pl.at(level=pl.Level.CORE_GROUP):
                for i_in_1, (y_9,) in pl.parallel(0, 4, 1, init_values=(y_8,), loop_origin="chunk_inner"):
                    i_1 = i_chunk * 4 + i_in_1
                    j_trips = max(0 - -6 // (s + pl.cast(s == 0, pl.INDEX)), 0)
                    for j_rem, (y_10,) in pl.parallel(0, j_trips % 4 * pl.cast(s != 0, pl.INDEX), 1, init_values=(y_9,), loop_origin="chunk_remainder"):
                        j_1 = (j_trips - j_trips % 4 + j_rem) * s
                        y_11: pl.Tensor[[40, 24], pl.FP32] = pl.tensor.assemble(y_10, pl.tensor.slice(x, [4, 4], [i_1 * 4, j_1 * 4]), [i_1 * 4, j_1 * 4])
                        y_12 = pl.yield_(y_11)
                    y_13 = pl.yield_(y_12)
            y_14 = pl.yield_(y_13)
        return y_14
"""


def test_interchange_moves_a_runtime_step_leading_full_level_out_with_its_trip_count_in_the_remainder():
    """Before: SplitChunkedLoops' form of `for i in pl.parallel(8, chunk=4): for j in
    pl.parallel(0, 6, s, chunk=4, chunk_policy="leading_full")`; `j_trips` sits between the inner
    loop's index and the level's full chunks. After: both outer loops in the orchestration, one
    scope for the full chunks, and the remainder's scope computing j_trips itself."""
    assert_pass(passes.InterchangeChunkLoops(), pl.parse_program(_BEFORE), pl.parse_program(_EXPECTED))
