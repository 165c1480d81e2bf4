"""StampCountedLoops: ForStmt.counted on every loop the generators must print counted (Python's
range, no `i += step` that could pass INT64_MAX): a run-time step, or a constant step other than
+-1 whose stop is neither a literal with `stop + step` in int64 nor a tensor extent of a chip-level
function (named directly or through a copy). DSL Before / Expected, the property check, the
printed keyword's round trip and its parse errors."""

import pytest

import pypto.language as pl
from pypto import codegen, ir
from pypto.ir import passes

from pass_test_util import assert_pass

M = pl.dynamic("M")
BIG = 2**63 - 3


def _loops(fn):
    out = []

    def walk(s):
        if isinstance(s, ir.ForStmt):
            out.append(s)
            walk(s.body)
        elif isinstance(s, ir.SeqStmts):
            for x in s.stmts:
                walk(x)
        elif isinstance(s, ir.RuntimeScopeStmt) or isinstance(s, ir.ScopeStmt):
            walk(s.body)
    walk(fn.body)
    return out


def test_orchestration_loops():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[M, 16], pl.FP32], lo: pl.Scalar[pl.INDEX],
                 hi: pl.Scalar[pl.INDEX], st: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            rows = pl.tensor.dim(x, 0)
            for a, (s,) in pl.range(lo, hi, 5, init_values=(lo,)):        # run-time stop, step 5: counted
                s2 = pl.yield_(s + a)
            for b, (t,) in pl.range(0, M, 16, init_values=(s2,)):         # a tensor extent: not counted
                t2 = pl.yield_(t + b)
            for c, (u,) in pl.range(0, rows, 16, init_values=(t2,)):      # a copy of the extent: not counted
                u2 = pl.yield_(u + c)
            for d, (v,) in pl.range(lo, hi, 1, init_values=(u2,)):        # step 1: not counted
                v2 = pl.yield_(v + d)
            for e, (w,) in pl.range(0, hi, st, init_values=(v2,)):        # run-time step: counted
                w2 = pl.yield_(w + e)
            for f, (y,) in pl.range(0, BIG, 5, init_values=(w2,)):        # literal stop + 5 overflows: counted
                y2 = pl.yield_(y + f)
            for g, (z,) in pl.range(0, 1000, 7, init_values=(y2,)):       # literal stop: not counted
                z2 = pl.yield_(z + g)
            return z2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[M, 16], pl.FP32], lo: pl.Scalar[pl.INDEX],
                 hi: pl.Scalar[pl.INDEX], st: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            rows = pl.tensor.dim(x, 0)
            for a, (s,) in pl.range(lo, hi, 5, init_values=(lo,), counted=True):
                s2 = pl.yield_(s + a)
            for b, (t,) in pl.range(0, M, 16, init_values=(s2,)):
                t2 = pl.yield_(t + b)
            for c, (u,) in pl.range(0, rows, 16, init_values=(t2,)):
                u2 = pl.yield_(u + c)
            for d, (v,) in pl.range(lo, hi, 1, init_values=(u2,)):
                v2 = pl.yield_(v + d)
            for e, (w,) in pl.range(0, hi, st, init_values=(v2,), counted=True):
                w2 = pl.yield_(w + e)
            for f, (y,) in pl.range(0, BIG, 5, init_values=(w2,), counted=True):
                y2 = pl.yield_(y + f)
            for g, (z,) in pl.range(0, 1000, 7, init_values=(y2,)):
                z2 = pl.yield_(z + g)
            return z2

    after = assert_pass(passes.StampCountedLoops(), Before, Expected)   # (the parser folds `rows = M`)
    loops = _loops(after.get("main"))
    assert [lp.counted for lp in loops] == [True, False, False, False, True, True, False]
    assert passes.verify_property(passes.IRProperty.CountedLoopsStamped, after) == []
    stale = passes.verify_property(passes.IRProperty.CountedLoopsStamped, Before)
    assert len(stale) == 3 and "counted=False, StampCountedLoops computes True" in stale[0]
    # the pipeline stamps it and the generator prints the counted form exactly there
    code = codegen.generate_orchestration(Before, "main").code
    assert code.count("pto2_range_count(") == 3


def test_kernel_extent_loops():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M, 16], pl.FP32], c: pl.Out[pl.Tensor[[M, 16], pl.FP32]],
              n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 16], pl.FP32]:
            for i in pl.range(0, M, 8):                  # a kernel's tensor extent: not counted
                t = pl.load(a, [i, 0], [8, 16])
                c = pl.store(t, [i, 0], c)
            for j in pl.range(0, n, 8):                  # a scalar stop: counted
                t2 = pl.load(a, [j, 0], [8, 16])
                c = pl.store(t2, [j, 0], c)
            return c

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M, 16], pl.FP32], c: pl.Out[pl.Tensor[[M, 16], pl.FP32]],
              n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 16], pl.FP32]:
            for i in pl.range(0, M, 8):
                t = pl.load(a, [i, 0], [8, 16])
                c = pl.store(t, [i, 0], c)
            for j in pl.range(0, n, 8, counted=True):
                t2 = pl.load(a, [j, 0], [8, 16])
                c = pl.store(t2, [j, 0], c)
            return c

    assert_pass(passes.StampCountedLoops(), Before, Expected)


def test_host_extents_are_not_trusted():
    @pl.program
    class Host:
        @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
        def host_main(self, x: pl.Tensor[[M], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(0, M, 16, init_values=(n,)):   # HOST extents are not 32-bit: counted
                s2 = pl.yield_(s + i)
            return s2

    @pl.program
    class HostExpected:
        @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
        def host_main(self, x: pl.Tensor[[M], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(0, M, 16, init_values=(n,), counted=True):
                s2 = pl.yield_(s + i)
            return s2

    after = assert_pass(passes.StampCountedLoops(), Host, HostExpected)
    assert [lp.counted for lp in _loops(after.get("host_main"))] == [True]


def test_printed_stamp_round_trips_and_bad_spellings_are_refused():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, lo: pl.Scalar[pl.INDEX], hi: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(lo, hi, 3, init_values=(lo,)):
                s2 = pl.yield_(s + i)
            return s2

    after = passes.StampCountedLoops()(Before)
    text = ir.python_print(after)
    assert "counted=True" in text
    again = pl.parse_program(text)
    assert ir.structural_equal(again, after)
    assert not ir.structural_equal(again, Before)   # the stamp is compared
    with pytest.raises(Exception, match="counted= must be True or False, got '1'"):
        pl.parse_program(text.replace("counted=True", "counted=1"))
    with pytest.raises(Exception, match="'counted' is no loop attr"):
        pl.parse_program(text.replace("counted=True", 'attrs={"counted": 1}'))
