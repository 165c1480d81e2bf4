"""SplitChunkedLoops (spec anchor_features §7): a `chunk=C` loop of T trips becomes an outer loop
over chunks and an inner loop of C trips, the loop variable recomputed at the top of the inner
body. guarded (default): ceil(T / C) chunks, the body under `if i < stop` unless C divides T;
leading_full: T // C full chunks and a remainder loop of T % C trips (left out when it is empty).
DSL Before / Expected; the run-time step form is in test_anchor_auto_chunk_runtime_step.py."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError
from pypto.ir import passes

from pass_test_util import assert_pass


def test_guarded_chunks_guard_a_partial_last_chunk_only():
    # 10 trips in chunks of 4: 3 chunks, guarded; 6 trips (2..14 by 2) in chunks of 3: no guard.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 8], pl.FP32],
                 y: pl.Out[pl.Tensor[[64, 8], pl.FP32]]) -> pl.Tensor[[64, 8], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
                for i in pl.parallel(0, 10, 1, chunk=4):
                    y = pl.assemble(y, pl.tensor.slice(x, [4, 8], [i * 4, 0]), [i * 4, 0])
                for j in pl.range(2, 14, 2, chunk=3):
                    y = pl.assemble(y, pl.tensor.slice(x, [4, 8], [j * 4, 0]), [j * 4, 0])
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 8], pl.FP32],
                 y: pl.Out[pl.Tensor[[64, 8], pl.FP32]]) -> pl.Tensor[[64, 8], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
                for i_chunk, (y_1,) in pl.parallel(0, 3, 1, init_values=(y,), loop_origin="chunk_outer"):
                    for i_in, (y_2,) in pl.parallel(0, 4, 1, init_values=(y_1,), loop_origin="chunk_inner"):
                        i = i_chunk * 4 + i_in
                        if i < 10:
                            y_3 = pl.tensor.assemble(y_2, pl.tensor.slice(x, [4, 8], [i * 4, 0]), [i * 4, 0])
                            y_4 = pl.yield_(y_3)
                        else:
                            y_4 = pl.yield_(y_2)
                        y_5 = pl.yield_(y_4)
                    y_6 = pl.yield_(y_5)
                for j_chunk, (y_7,) in pl.range(0, 2, 1, init_values=(y_6,), loop_origin="chunk_outer"):
                    for j_in, (y_8,) in pl.range(0, 3, 1, init_values=(y_7,), loop_origin="chunk_inner"):
                        j = 2 + (j_chunk * 3 + j_in) * 2
                        y_9 = pl.tensor.assemble(y_8, pl.tensor.slice(x, [4, 8], [j * 4, 0]), [j * 4, 0])
                        y_10 = pl.yield_(y_9)
                    y_11 = pl.yield_(y_10)
            return y_11

    assert_pass(passes.SplitChunkedLoops(), Before, Expected)


def test_leading_full_runs_full_chunks_then_the_remainder_and_drops_an_empty_one():
    # 15 down to 1 by -2 (8 trips) in chunks of 3: 2 full chunks, then k = 3, 1 in the remainder;
    # 8 trips in chunks of 4: 2 full chunks and no remainder loop.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 8], pl.FP32],
                 y: pl.Out[pl.Tensor[[64, 8], pl.FP32]]) -> pl.Tensor[[64, 8], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
                for k in pl.range(15, 0, -2, chunk=3, chunk_policy="leading_full"):
                    y = pl.assemble(y, pl.tensor.slice(x, [4, 8], [k * 4, 0]), [k * 4, 0])
                for m in pl.range(0, 8, 1, chunk=4, chunk_policy="leading_full"):
                    y = pl.assemble(y, pl.tensor.slice(x, [4, 8], [m * 4, 0]), [m * 4, 0])
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 8], pl.FP32],
                 y: pl.Out[pl.Tensor[[64, 8], pl.FP32]]) -> pl.Tensor[[64, 8], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
                for k_chunk, (y_1,) in pl.range(0, 2, 1, init_values=(y,), loop_origin="chunk_outer"):
                    for k_in, (y_2,) in pl.range(0, 3, 1, init_values=(y_1,), loop_origin="chunk_inner"):
                        k = 15 + (k_chunk * 3 + k_in) * -2
                        y_3 = pl.tensor.assemble(y_2, pl.tensor.slice(x, [4, 8], [k * 4, 0]), [k * 4, 0])
                        y_4 = pl.yield_(y_3)
                    y_5 = pl.yield_(y_4)
                for k_rem, (y_6,) in pl.range(0, 2, 1, init_values=(y_5,), loop_origin="chunk_remainder"):
                    k_1 = 15 + (6 + k_rem) * -2
                    y_7 = pl.tensor.assemble(y_6, pl.tensor.slice(x, [4, 8], [k_1 * 4, 0]), [k_1 * 4, 0])
                    y_8 = pl.yield_(y_7)
                for m_chunk, (y_9,) in pl.range(0, 2, 1, init_values=(y_8,), loop_origin="chunk_outer"):
                    for m_in, (y_10,) in pl.range(0, 4, 1, init_values=(y_9,), loop_origin="chunk_inner"):
                        m = m_chunk * 4 + m_in
                        y_11 = pl.tensor.assemble(y_10, pl.tensor.slice(x, [4, 8], [m * 4, 0]), [m * 4, 0])
                        y_12 = pl.yield_(y_11)
                    y_13 = pl.yield_(y_12)
            return y_13

    assert_pass(passes.SplitChunkedLoops(), Before, Expected)


def test_a_program_without_chunked_loops_is_unchanged():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 8], pl.FP32],
                 y: pl.Out[pl.Tensor[[64, 8], pl.FP32]]) -> pl.Tensor[[64, 8], pl.FP32]:
            for i in pl.range(0, 4, 1):
                y = pl.assemble(y, pl.tensor.slice(x, [4, 8], [i * 4, 0]), [i * 4, 0])
            return y

    assert_pass(passes.SplitChunkedLoops(), Before, Before)


_ORIGIN_SRC = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 8], pl.FP32], y: pl.Out[pl.Tensor[[64, 8], pl.FP32]]) -> pl.Tensor[[64, 8], pl.FP32]:
        for i, (y_1,) in pl.parallel(0, 4, 1, init_values=(y,), ORIGIN):
            y_2 = pl.tensor.assemble(y_1, pl.tensor.slice(x, [4, 8], [i * 4, 0]), [i * 4, 0])
            y_3 = pl.yield_(y_2)
        return y_3
"""


def test_loop_origin_is_a_typed_loop_field_printed_and_compared():
    # ForStmt.loop_origin (an enum, not an attr) is what InterchangeChunkLoops reads; it prints
    # as the keyword loop_origin="..." and re-parses into the same field.
    by_origin = {}
    for name in ("chunk_outer", "chunk_inner", "chunk_remainder"):
        p = pl.parse_program(_ORIGIN_SRC.replace("ORIGIN", f'loop_origin="{name}"'))
        loop = p.functions[0].body.stmts[0]
        assert "loop_origin" not in loop.attrs
        text = ir.python_print(p)
        assert f'loop_origin="{name}"' in text and ir.structural_equal(pl.parse_program(text), p)
        by_origin[name] = (loop.loop_origin, p)
    assert by_origin["chunk_outer"][0] == ir.LoopOrigin.ChunkOuter
    assert by_origin["chunk_inner"][0] == ir.LoopOrigin.ChunkInner
    assert by_origin["chunk_remainder"][0] == ir.LoopOrigin.ChunkRemainder
    user = pl.parse_program(_ORIGIN_SRC.replace(", ORIGIN", ""))
    assert user.functions[0].body.stmts[0].loop_origin == ir.LoopOrigin.User
    ok, why = ir.structural_equal_explain(by_origin["chunk_outer"][1], by_origin["chunk_inner"][1])
    assert not ok and "loop_origin chunk_outer vs chunk_inner" in why
    assert ir.structural_hash(by_origin["chunk_outer"][1]) != ir.structural_hash(user)


@pytest.mark.parametrize("origin, message", [
    ('loop_origin="outer"', 'loop_origin= must be "chunk_outer", "chunk_inner" or "chunk_remainder", got \'outer\''),
    ("loop_origin=1", 'loop_origin= must be "chunk_outer", "chunk_inner" or "chunk_remainder", got 1'),
    ('attrs={"loop_origin": "chunk_outer"}', "'loop_origin' is no loop attr: it is a typed SplitChunkedLoops result"),
])
def test_a_bad_or_untyped_loop_origin_is_a_located_error(origin, message):
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(_ORIGIN_SRC.replace("ORIGIN", origin), "c.py")
    assert message in ei.value.message
    assert ei.value.line == 8
