"""pl.auto_chunk chains (spec anchor_features §7): nested chunked loops. InterchangeChunkLoops
moves every outer chunk loop of a chain outward when all its inner loops are parallel and wraps
the inner loops plus the body in one InCore scope (one task per combination of outer
iterations); a chain with a sequential inner loop is wrapped whole; a nested level whose bounds
depend on an enclosing loop stays inside; a nested remainder loop gets its own scope, in a copy of
the enclosing inner loops. DSL Before / Expected,
NumPy-checked race-checked runs. Golden C++: tests/golden/anchor_auto_chunk_chain/."""
import os

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.ir import passes

from codegen_test_util import GOLDEN_DIR, load_single_program
from pass_test_util import assert_pass


def run_until(program, last):
    for ps in passes.default_pipeline():
        program = ps(program)
        if ps.name == last:
            return program
    return program


def test_two_level_guarded_chain_moves_both_outer_loops_out():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[40, 24], pl.FP32],
                 y: pl.Out[pl.Tensor[[40, 24], pl.FP32]]) -> pl.Tensor[[40, 24], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
                for i_chunk, (y_1,) in pl.parallel(0, 3, 1, init_values=(y,), loop_origin="chunk_outer"):
                    for i_in, (y_2,) in pl.parallel(0, 4, 1, init_values=(y_1,), loop_origin="chunk_inner"):
                        i = i_chunk * 4 + i_in
                        if i < 10:
                            for j_chunk, (y_3,) in pl.parallel(0, 2, 1, init_values=(y_2,),
                                                               loop_origin="chunk_outer"):
                                for j_in, (y_4,) in pl.parallel(0, 3, 1, init_values=(y_3,),
                                                                loop_origin="chunk_inner"):
                                    j = j_chunk * 3 + j_in
                                    t = pl.tensor.slice(x, [4, 4], [i * 4, j * 4])
                                    y_5 = pl.tensor.assemble(y_4, pl.tensor.adds(t, 1.0), [i * 4, j * 4])
                                    y_6 = pl.yield_(y_5)
                                y_7 = pl.yield_(y_6)
                            y_8 = pl.yield_(y_7)
                        else:
                            y_8 = pl.yield_(y_2)
                        y_9 = pl.yield_(y_8)
                    y_10 = pl.yield_(y_9)
            return y_10

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[40, 24], pl.FP32],
                 y: pl.Out[pl.Tensor[[40, 24], pl.FP32]]) -> pl.Tensor[[40, 24], pl.FP32]:
            for i_chunk, (y_1,) in pl.parallel(0, 3, 1, init_values=(y,), loop_origin="chunk_outer"):
                for j_chunk, (y_3,) in pl.parallel(0, 2, 1, init_values=(y_1,), loop_origin="chunk_outer"):
                    with pl.at(level=pl.Level.CORE_GROUP):
                        for i_in, (y_2,) in pl.parallel(0, 4, 1, init_values=(y_3,),
                                                        loop_origin="chunk_inner"):
                            i = i_chunk * 4 + i_in
                            if i < 10:
                                for j_in, (y_4,) in pl.parallel(0, 3, 1, init_values=(y_2,),
                                                                loop_origin="chunk_inner"):
                                    j = j_chunk * 3 + j_in
                                    t = pl.tensor.slice(x, [4, 4], [i * 4, j * 4])
                                    y_5 = pl.tensor.assemble(y_4, pl.tensor.adds(t, 1.0), [i * 4, j * 4])
                                    y_6 = pl.yield_(y_5)
                                y_8 = pl.yield_(y_6)
                            else:
                                y_8 = pl.yield_(y_2)
                            y_9 = pl.yield_(y_8)
                    y_7 = pl.yield_(y_9)
                y_10 = pl.yield_(y_7)
            return y_10

    assert_pass(passes.InterchangeChunkLoops(), Before, Expected)


def test_chain_with_a_sequential_inner_loop_is_wrapped_whole():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
                for i_chunk, (y_1,) in pl.parallel(0, 2, 1, init_values=(y,), loop_origin="chunk_outer"):
                    for i_in, (y_2,) in pl.parallel(0, 2, 1, init_values=(y_1,), loop_origin="chunk_inner"):
                        i = i_chunk * 2 + i_in
                        for j_chunk, (y_3,) in pl.range(0, 2, 1, init_values=(y_2,), loop_origin="chunk_outer"):
                            for j_in, (y_4,) in pl.range(0, 2, 1, init_values=(y_3,), loop_origin="chunk_inner"):
                                j = j_chunk * 2 + j_in
                                y_5 = pl.tensor.assemble(y_4, pl.tensor.slice(x, [4, 4], [i * 4, j * 4]), [i * 4, j * 4])
                                y_6 = pl.yield_(y_5)
                            y_7 = pl.yield_(y_6)
                        y_8 = pl.yield_(y_7)
                    y_9 = pl.yield_(y_8)
            return y_9

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP):
                for i_chunk, (y_1,) in pl.parallel(0, 2, 1, init_values=(y,), loop_origin="chunk_outer"):
                    for i_in, (y_2,) in pl.parallel(0, 2, 1, init_values=(y_1,), loop_origin="chunk_inner"):
                        i = i_chunk * 2 + i_in
                        for j_chunk, (y_3,) in pl.range(0, 2, 1, init_values=(y_2,), loop_origin="chunk_outer"):
                            for j_in, (y_4,) in pl.range(0, 2, 1, init_values=(y_3,), loop_origin="chunk_inner"):
                                j = j_chunk * 2 + j_in
                                y_5 = pl.tensor.assemble(y_4, pl.tensor.slice(x, [4, 4], [i * 4, j * 4]), [i * 4, j * 4])
                                y_6 = pl.yield_(y_5)
                            y_7 = pl.yield_(y_6)
                        y_8 = pl.yield_(y_7)
                    y_9 = pl.yield_(y_8)
            return y_9

    assert_pass(passes.InterchangeChunkLoops(), Before, Expected)


def test_nested_remainder_gets_its_own_scope_in_a_copy_of_the_enclosing_inner_loops():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[40, 24], pl.FP32],
                 y: pl.Out[pl.Tensor[[40, 24], pl.FP32]]) -> pl.Tensor[[40, 24], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
                for i_chunk, (y_1,) in pl.parallel(0, 3, 1, init_values=(y,), loop_origin="chunk_outer"):
                    for i_in, (y_2,) in pl.parallel(0, 4, 1, init_values=(y_1,), loop_origin="chunk_inner"):
                        i = i_chunk * 4 + i_in
                        if i < 10:
                            for j_chunk, (y_3,) in pl.parallel(0, 1, 1, init_values=(y_2,),
                                                               loop_origin="chunk_outer"):
                                for j_in, (y_4,) in pl.parallel(0, 4, 1, init_values=(y_3,),
                                                                loop_origin="chunk_inner"):
                                    j = j_chunk * 4 + j_in
                                    y_5 = pl.tensor.assemble(y_4, pl.tensor.slice(x, [4, 4], [i * 4, j * 4]), [i * 4, j * 4])
                                    y_6 = pl.yield_(y_5)
                                y_7 = pl.yield_(y_6)
                            for j_rem, (y_8,) in pl.parallel(0, 2, 1, init_values=(y_7,),
                                                             loop_origin="chunk_remainder"):
                                j_1 = 4 + j_rem
                                y_9 = pl.tensor.assemble(y_8, pl.tensor.slice(x, [4, 4], [i * 4, j_1 * 4]), [i * 4, j_1 * 4])
                                y_10 = pl.yield_(y_9)
                            y_11 = pl.yield_(y_10)
                        else:
                            y_11 = pl.yield_(y_2)
                        y_12 = pl.yield_(y_11)
                    y_13 = pl.yield_(y_12)
            return y_13

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[40, 24], pl.FP32],
                 y: pl.Out[pl.Tensor[[40, 24], pl.FP32]]) -> pl.Tensor[[40, 24], pl.FP32]:
            for i_chunk, (y_1,) in pl.parallel(0, 3, 1, init_values=(y,), loop_origin="chunk_outer"):
                for j_chunk, (y_2,) in pl.parallel(0, 1, 1, init_values=(y_1,), loop_origin="chunk_outer"):
                    with pl.at(level=pl.Level.CORE_GROUP):
                        for i_in, (y_3,) in pl.parallel(0, 4, 1, init_values=(y_2,),
                                                        loop_origin="chunk_inner"):
                            i = i_chunk * 4 + i_in
                            if i < 10:
                                for j_in, (y_4,) in pl.parallel(0, 4, 1, init_values=(y_3,),
                                                                loop_origin="chunk_inner"):
                                    j = j_chunk * 4 + j_in
                                    y_5 = pl.tensor.assemble(y_4, pl.tensor.slice(x, [4, 4], [i * 4, j * 4]), [i * 4, j * 4])
                                    y_6 = pl.yield_(y_5)
                                y_7 = pl.yield_(y_6)
                            else:
                                y_7 = pl.yield_(y_3)
                            y_8 = pl.yield_(y_7)
                    y_9 = pl.yield_(y_8)
                with pl.at(level=pl.Level.CORE_GROUP):
                    for i_in_1, (y_10,) in pl.parallel(0, 4, 1, init_values=(y_9,),
                                                       loop_origin="chunk_inner"):
                        i_1 = i_chunk * 4 + i_in_1
                        if i_1 < 10:
                            for j_rem, (y_11,) in pl.parallel(0, 2, 1, init_values=(y_10,),
                                                              loop_origin="chunk_remainder"):
                                j_1 = 4 + j_rem
                                y_12 = pl.tensor.assemble(y_11, pl.tensor.slice(x, [4, 4], [i_1 * 4, j_1 * 4]),
                                                          [i_1 * 4, j_1 * 4])
                                y_13 = pl.yield_(y_12)
                            y_14 = pl.yield_(y_13)
                        else:
                            y_14 = pl.yield_(y_10)
                        y_15 = pl.yield_(y_14)
                y_16 = pl.yield_(y_15)
            return y_16

    assert_pass(passes.InterchangeChunkLoops(), Before, Expected)


def golden():
    return load_single_program(os.path.join(GOLDEN_DIR, "anchor_auto_chunk_chain", "program.py"))


def test_golden_chain_e2e_race_checked_one_task_per_outer_combination():
    p = run_until(golden(), "OutlineIncoreScopes")
    main = ir.python_print(next(f for f in p.functions if f.name == "main"))
    # three chunk levels: all three outer loops in the orchestration, one kernel call inside them
    assert main.count('loop_origin="chunk_outer"') == 3 and "chunk_inner" not in main, main
    compiled = pypto.compile(golden())
    x = np.random.default_rng(11).standard_normal((40, 24)).astype(np.float32)
    y = np.zeros((40, 24), np.float32)
    compiled(x, y, race_check=True)
    np.testing.assert_allclose(y, np.exp(x) + 1, rtol=1e-5)
    # 3 row chunks x 2 column chunks x 2 half-block chunks (each kernel writes the whole y, so
    # the runtime orders them: the chunk loops do not slice the carried tensor)
    assert compiled.task_graph(static=True).count('kind="task"') == 3 * 2 * 2


SRC = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[40, 24], pl.FP32], n: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[40, 24], pl.FP32]]) -> pl.Tensor[[40, 24], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
            for i in {I}:
                for j in {J}:
                    y = pl.assemble(y, pl.mul(pl.slice(x, [4, 4], [i * 4, j * 4]), 2.0), [i * 4, j * 4])
        return y
'''

# (outer loop, inner loop, covered (i, j) blocks for n, kernel loops left in the orchestration)
CASES = {
    "guarded_both": ("pl.parallel(10, chunk=4)", "pl.parallel(6, chunk=4)",
                     lambda n: [(i, j) for i in range(10) for j in range(6)], 2),
    "runtime_bounds": ("pl.parallel(n, chunk=3)", "pl.parallel(1, n - 4, chunk=2)",
                       lambda n: [(i, j) for i in range(n) for j in range(1, n - 4)], 2),
    "outer_leading_full": ('pl.parallel(10, chunk=4, chunk_policy="leading_full")', "pl.parallel(6, chunk=3)",
                           lambda n: [(i, j) for i in range(10) for j in range(6)], 2),
    "inner_remainder_own_scope": ("pl.parallel(10, chunk=4)", 'pl.parallel(6, chunk=4, chunk_policy="leading_full")',
                                  lambda n: [(i, j) for i in range(10) for j in range(6)], 2),
    "both_leading_full": ('pl.parallel(10, chunk=4, chunk_policy="leading_full")',
                          'pl.parallel(n - 4, chunk=4, chunk_policy="leading_full")',
                          lambda n: [(i, j) for i in range(10) for j in range(n - 4)], 2),
    "triangular_stays_inside": ("pl.parallel(6, chunk=4)", "pl.parallel(0, i + 1, chunk=2)",
                                lambda n: [(i, j) for i in range(6) for j in range(i + 1)], 1),
    "sequential_inner_wrapped_whole": ("pl.parallel(10, chunk=4)", "pl.range(6, chunk=4)",
                                       lambda n: [(i, j) for i in range(10) for j in range(6)], 0),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("n", [9, 10])
def test_chain_variants_e2e_race_checked(case, n):
    outer, inner, blocks, outer_loops = CASES[case]
    program = pl.parse_program(SRC.replace("{I}", outer).replace("{J}", inner), "t.py")
    main = ir.python_print(next(f for f in run_until(program, "OutlineIncoreScopes").functions if f.name == "main"))
    assert main.split("= self.")[0].count('loop_origin="chunk_outer"') == outer_loops, main
    compiled = pypto.compile(program)
    x = np.random.default_rng(n).standard_normal((40, 24)).astype(np.float32)
    y = np.zeros((40, 24), np.float32)
    compiled(x, n, y, race_check=True)
    want = np.zeros((40, 24), np.float32)
    for i, j in blocks(n):
        want[i * 4:i * 4 + 4, j * 4:j * 4 + 4] = x[i * 4:i * 4 + 4, j * 4:j * 4 + 4] * 2
    np.testing.assert_allclose(y, want, rtol=1e-6)
