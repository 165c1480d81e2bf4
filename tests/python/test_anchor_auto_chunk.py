"""pl.auto_chunk (spec anchor_features.md §7): chunk= / chunk_policy= on pl.range / pl.parallel /
pl.unroll inside `pl.at(level=CORE_GROUP, optimizations=[pl.auto_chunk])`; the passes
SplitChunkedLoops and InterchangeChunkLoops; NumPy-checked runs and a located error per misuse.
Golden C++: tests/golden/anchor_auto_chunk/."""
import os

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.ir import passes

from codegen_test_util import GOLDEN_DIR, load_single_program
from test_diagnostics import body_check, program


def golden():
    return load_single_program(os.path.join(GOLDEN_DIR, "anchor_auto_chunk", "program.py"))


def run_until(program, last):
    for ps in passes.default_pipeline():
        program = ps(program)
        if ps.name == last:
            return program
    return program


def test_auto_chunk_e2e():
    compiled = pypto.compile(golden())
    x = np.random.default_rng(7).standard_normal((40, 16)).astype(np.float32)
    y, z = np.zeros((40, 16), np.float32), np.zeros((40, 16), np.float32)
    compiled(x, y, z)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-5)
    np.testing.assert_allclose(z, np.exp(x) * 2, rtol=1e-5)


def test_prints_and_reparses():
    p = golden()
    text = ir.python_print(p)
    assert 'optimizations=[pl.auto_chunk]' in text
    assert 'chunk=4, chunk_policy="leading_full"' in text
    assert ir.structural_equal(pl.parse_program(text, "p.py"), p)


def test_split_chunked_loops_guarded_and_leading_full():
    text = ir.python_print(run_until(golden(), "SplitChunkedLoops"))
    # guarded: ceil(10 / 4) = 3 outer trips, the body under `if r < 10`, carries through the if
    assert 'for r_chunk, (y_1,) in pl.parallel(0, 3, 1, init_values=(y,), loop_origin="chunk_outer")' in text
    assert "r = r_chunk * 4 + r_in" in text
    assert "if r < 10:" in text
    # leading_full: 10 // 4 = 2 full chunks (no guard) and a remainder loop of 2 trips
    assert 'pl.parallel(0, 2, 1, init_values=(z,), loop_origin="chunk_outer")' in text
    assert 'pl.parallel(0, 2, 1, init_values=(z_5,), loop_origin="chunk_remainder")' in text
    assert "r_2 = 8 + r_rem" in text
    assert "chunk=" not in text


def test_interchange_makes_one_task_per_outer_iteration():
    p = run_until(golden(), "OutlineIncoreScopes")
    main = ir.python_print(next(f for f in p.functions if f.name == "main"))
    assert "auto_chunk" not in main
    assert "rows_out: pl.Tensor[[40, 16], pl.FP32] = self.rows(y_1, r_chunk, x)" in main   # inside the chunk loop
    assert "self.rows_1(z_3, y_3)" in main                                                # the remainder's task
    names = [f.name for f in p.functions]
    assert {"rows", "rows_0", "rows_1"} <= set(names)                                      # name_hint on each


DYN_SRC = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 8], pl.FP32], n: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[64, 8], pl.FP32]]) -> pl.Tensor[[64, 8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.auto_chunk]):
            s = pl.mul(x, 3.0)
            for i in pl.range(n, 1, -1, chunk=3):
                y = pl.assemble(y, pl.add(pl.slice(s, [4, 8], [i * 4, 0]), 1.0), [i * 4, 0])
            for k in pl.unroll(2, chunk=1):
                y = pl.assemble(y, pl.slice(s, [4, 8], [k * 4, 0]), [60 - k * 4, 0])
        return y
'''


@pytest.mark.parametrize("n", [15, 7, 1])
def test_dynamic_bound_negative_step_sequential_and_unroll_e2e(n):
    compiled = pypto.compile(pl.parse_program(DYN_SRC, "t.py"))
    x = np.random.default_rng(n).standard_normal((64, 8)).astype(np.float32)
    y = np.zeros((64, 8), np.float32)
    compiled(x, n, y)
    want = np.zeros((64, 8), np.float32)
    for i in range(n, 1, -1):
        want[i * 4:i * 4 + 4] = x[i * 4:i * 4 + 4] * 3 + 1
    for k in range(2):
        want[60 - k * 4:64 - k * 4] = x[k * 4:k * 4 + 4] * 3
    np.testing.assert_allclose(y, want, rtol=1e-5)


def test_sequential_chain_is_wrapped_whole_and_split_moves_to_each_scope():
    p = run_until(pl.parse_program(DYN_SRC, "t.py"), "InterchangeChunkLoops")
    text = ir.python_print(p)
    assert "if i > 1:" in text                                                   # guard of a negative step
    assert text.count("with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):") == 3
    # the sequential chain sits inside its scope: no chunk loop is left in the orchestration
    main = text.split("with pl.at")[0]
    assert "chunk_outer" not in main


_AC = "with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]{}){}:  #!\n"


@pytest.mark.parametrize("body,message,at", [
    ("with pl.at(level=pl.Level.HOST, optimizations=[pl.auto_chunk]):  #!\n    d = self.kernel_add(a, b, d)\n",
     "pl.auto_chunk needs level=pl.Level.CORE_GROUP, got pl.Level.HOST", "pl.auto_chunk"),
    ("with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk, pl.optimizations.auto_chunk]):  #!\n"
     "    d = self.kernel_add(a, b, d)\n", "duplicate optimization 'pl.optimizations.auto_chunk'",
     "pl.optimizations.auto_chunk"),
    ("with pl.spmd(2, optimizations=[pl.auto_chunk]):  #!\n    d = self.kernel_add(a, b, d)\n",
     "pl.auto_chunk is not valid on pl.spmd", "pl.auto_chunk"),
    ("with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk()]):  #!\n    d = self.kernel_add(a, b, d)\n",
     "pl.auto_chunk is not called", "pl.auto_chunk()"),
    (_AC.format(", deps=[None]", "") + "    d = self.kernel_add(a, b, d)\n",
     "deps= is not allowed on a pl.auto_chunk scope", "[None]"),
    (_AC.format(", allow_early_resolve=True", "") + "    d = self.kernel_add(a, b, d)\n",
     "allow_early_resolve= is not allowed on a pl.auto_chunk scope", "True"),
    (_AC.format(", no_dep_args=[a]", "") + "    d = self.kernel_add(a, b, d)\n",
     "no_dep_args= is not allowed on a pl.auto_chunk scope", "[a]"),
    (_AC.format(", dumps=[a]", "") + "    d = self.kernel_add(a, b, d)\n",
     "dumps= is not allowed on a pl.auto_chunk scope", "[a]"),
    # predicate= is not in the §7 Decision's list, but the reference rebuilds the InCore scopes
    # without attributes, so it would be dropped just the same: refused like deps= (docs/dsl.md)
    (_AC.format(", predicate=(rc[0, 0] > 0)", "") + "    d = self.kernel_add(a, b, d)\n",
     "predicate= is not allowed on a pl.auto_chunk scope", "rc[0, 0] > 0)"),
    (_AC.format("", " as tid") + "    d = self.kernel_add(a, b, d)\n",
     "`as tid` is not allowed on a pl.auto_chunk scope", "tid"),
    ("for i in pl.range(4, chunk=2):  #!\n    d = self.kernel_add(a, b, d)\n",
     "chunk= on pl.range is only valid inside", "2)"),
    ("for i in pl.spmd(4, chunk=2):  #!\n    d = self.kernel_add(a, b, d)\n",
     "pl.spmd has no keyword 'chunk'", "2)"),
])
def test_misuse(body, message, at):
    body_check(body + "return d", message, at)


@pytest.mark.parametrize("opts,message,at", [
    ("chunk=0", "chunk= must be a positive int constant, got '0'", "0)"),
    ("chunk=n", "chunk= must be a positive int constant, got 'n'", "n)"),
    ("chunk=2.5", "chunk= must be a positive int constant, got '2.5'", "2.5"),
    ('chunk=2, chunk_policy="fast"', "unknown chunk_policy 'fast'", '"fast"'),
    ("chunk=2, chunk_policy=p", "chunk_policy= must be a string literal, got 'p'", "p)"),
    ('chunk_policy="guarded"', "chunk_policy= needs chunk=C", '"guarded"'),
])
def test_chunk_keyword_errors(opts, message, at):
    body = (_AC.format("", "").replace("  #!", "") + f"    for i in pl.parallel(4, {opts}):  #!\n"
            "        d = self.kernel_add(a, b, d)\nreturn d")
    body_check(body, message, at)


@pytest.mark.parametrize("bounds", ["0, 8, n", "8, 0, -n"])
def test_chunk_runtime_step_accepted(bounds):
    """A run-time step: its sign is unknown, so the guard tests it at run time
    (test_anchor_auto_chunk_runtime_step.py runs it)."""
    body = (_AC.format("", "").replace("  #!", "") + f"    for i in pl.parallel({bounds}, chunk=2):\n"
            "        d = self.kernel_add(a, b, d)\nreturn d")
    p = run_until(pl.parse_program(program(body), "t.py"), "SplitChunkedLoops")
    step = bounds.split(", ")[2]
    assert f"{step} > 0 and i < " in ir.python_print(p)


def test_chunk_folded_constant_step():
    """A step folded at compile time (-S, S a module constant) is a constant step: chunk= accepts it."""
    body = (_AC.format("", "").replace("  #!", "") + "    for i in pl.parallel(8, 0, -S, chunk=3):\n"
            "        d = self.kernel_add(a, b, d)\nreturn d")
    p = run_until(pl.parse_program(program(body, prelude="S = 2"), "t.py"), "SplitChunkedLoops")
    assert "if i > 0:" in ir.python_print(p)   # guard of a negative step: 4 trips in chunks of 3


READ_BOUND = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 4], pl.INT32], out: pl.InOut[pl.Tensor[[8, 4], pl.INT32]]) -> pl.Tensor[[8, 4], pl.INT32]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
            out = pl.assemble(out, pl.add(pl.slice(x, [8, 4], [0, 0]), 1), [0, 0])
            for i in pl.parallel(pl.cast(pl.tensor.read(out, [0, 1]), pl.INDEX) % 8, 8, 1, chunk=3):
                out = pl.assemble(out, pl.mul(pl.slice(out, [1, 4], [i, 0]), 10), [i, 0])
        return out
'''


@pytest.mark.parametrize("first", [0, 3, 6, 7])
def test_a_chunked_loop_bound_reading_a_tensor_element_e2e(first, monkeypatch):
    # at_flow_fuzz seed 417: the bound's read (hoisted before the loop) went into a kernel, and the
    # chunk loops in the orchestration read it after that kernel: "'out_elem' is computed inside
    # the pl.at scope and used after it". It stays in the orchestration, like a scalar assignment
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    prog = pypto.compile(pl.parse_program(READ_BOUND, "read_bound.py"))
    x = np.arange(32, dtype=np.int32).reshape(8, 4)
    x[0, 1] = first - 1 + 8 * 5   # out[0, 1] = x[0, 1] + 1: the loop starts at `first`
    out = np.zeros((8, 4), np.int32)
    prog(x, out)
    want = x + 1
    want[first:] *= 10
    np.testing.assert_array_equal(out, want)


COND_BOUND_SRC = '''
import pypto.language as pl

@pl.program
class CondBound:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 8], pl.FP32], n: pl.Scalar[pl.INDEX], m: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        t = x
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
            for i in pl.range(0, (m if n % 2 == 0 else n) % 4, chunk=2):
                t = pl.mul(t, t)
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, t, [0, 0])
        return out
'''


@pytest.mark.parametrize("n, m", [(0, 3), (1, 7), (2, 0), (5, 2)])
def test_a_conditional_expression_in_a_chunked_loop_bound_stays_in_the_orchestration(n, m):
    # at_flow_fuzz seed 1071: the if the conditional expression becomes was grouped into a kernel
    # scope while the chunk loops that read its result stay in the orchestration ("'cond_value'
    # is computed inside the pl.at scope and used after it"). A pure scalar if now stays with them.
    compiled = pypto.compile(pl.parse_program(COND_BOUND_SRC, "cond_bound.py"))
    x = np.full((4, 8), 1.25, np.float32)
    out = np.zeros((4, 8), np.float32)
    compiled(x, n, m, out, race_check="error")
    trips = (m if n % 2 == 0 else n) % 4
    np.testing.assert_allclose(out, np.full((4, 8), 1.25 ** (2 ** trips), np.float32), rtol=1e-6)
