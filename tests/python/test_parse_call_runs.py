"""The parser's fast path for runs of `x = self.k(...)` lines (pypto/frontend/call_runs.py)
gives exactly what the ast path gives: the same IR, the same spans on every node, the same
errors (message, location, help) and warnings. Each program is parsed with the fast path on
(runs of 2 lines or more) and off, and both results are compared."""

from __future__ import annotations

import textwrap

import pytest

import pypto.language as pl
from pypto._core import ir
from pypto.errors import PyptoError
from pypto.frontend import call_runs

_SKIP = {"make", "make_func", "make_op", "same_as", "kind", "type"}


def _walk(node, out, depth=0):
    """(kind, span) of every IR node reachable from `node`, in a fixed order."""
    if depth > 60:
        return
    if isinstance(node, (list, tuple)):
        for n in node:
            _walk(n, out, depth + 1)
        return
    span = getattr(node, "span", None)
    if not isinstance(span, ir.Span):
        return
    out.append((type(node).__name__, span.file, span.line, span.col, span.end_line, span.end_col,
                span.source_line))
    for name in sorted(dir(node)):
        if name.startswith("_") or name in _SKIP or name == "span":
            continue
        try:
            v = getattr(node, name)
        except Exception:  # noqa: BLE001 - a property that does not apply to this node
            continue
        if callable(v):
            continue
        _walk(v, out, depth + 1)


def _parse(text: str, min_run: int, monkeypatch):
    monkeypatch.setattr(call_runs, "MIN_RUN", min_run)
    try:
        prog = pl.parse_program(text, "runs.py")
    except PyptoError as e:
        return ("error", str(e), e.line, e.col, e.end_line, e.end_col, getattr(e, "help", None))
    spans = []
    _walk(list(prog.functions), spans)
    return ("ok", ir.python_print(prog), spans)


def _same(text: str, monkeypatch):
    fast, slow = _parse(text, 2, monkeypatch), _parse(text, 10 ** 9, monkeypatch)
    assert fast == slow
    return fast


def _program(orch_body: str, extra: str = "", params: str = "") -> str:
    head = textwrap.dedent('''\
        import pypto.language as pl

        N = 4
        GIANT = 2 ** 70


        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.INDEX],
                  c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
                c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
                return c

            @pl.function(type=pl.FunctionType.InCore)
            def h(self, a: pl.Tensor[[8, 16], pl.FP32], c: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
                c = pl.store(pl.load(a, [0, 0], [8, 16]), [0, 0], c)
                return c
        ''')
    orch = ("    @pl.function(type=pl.FunctionType.Orchestration)\n"
            "    def main(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]"
            + params + ") -> pl.Tensor[[16, 16], pl.FP32]:\n")
    return head + extra + "\n" + orch + textwrap.indent(textwrap.dedent(orch_body), " " * 8)


_GOOD = """\
t0 = pl.create_tensor([16, 16], dtype=pl.FP32)
t1 = pl.create_tensor([16, 16], dtype=pl.FP32)
t0 = self.k(a, 0, t0)
t1 = self.k(t0, 1, t1)
t0 = self.k(t1,  N , t0)
t1 = self.k(t0,2,t1)
out = self.k(t1, 3, out)
return out
"""


def test_runs_are_masked_and_give_the_ast_result(monkeypatch):
    text = _program(_GOOD)
    masked, runs = call_runs.mask_call_runs(text.splitlines(keepends=True), 2)
    assert masked is not None and sum(len(r) for r in runs.values()) == 5
    assert [t for r in runs.values() for t in r.targets] == ["t0", "t1", "t0", "t1", "out"]
    assert len(masked.splitlines()) == len(text.splitlines())
    assert _same(text, monkeypatch)[0] == "ok"


@pytest.mark.parametrize("bad, where", [
    ("t1 = self.k(t0, 1, nope)", "unknown name"),
    ("t1 = self.kk(t0, 1, t1)", "unknown function"),
    ("t1 = self.k(t0, 1)", "takes 3 arguments"),
    ("t1 = self.k(t0, t1, t1)", "expects"),
    ("t1 = self.k(t0, GIANT, t1)", "64 bits"),
    ("t1 = self.k(t0, 99999999999999999999999, t1)", "64 bits"),
    ("t1 = self.main(t0, t1)", "calls itself"),
    ("t1 = self.h(t0, t1)", "shape"),
    ("t1 = self.k(t0, None, t1)", "expects"),
])
def test_errors_inside_a_run_are_the_ast_errors(monkeypatch, bad, where):
    body = _GOOD.replace("t1 = self.k(t0,2,t1)", bad)
    r = _same(_program(body), monkeypatch)
    assert r[0] == "error" and where in r[1], r


def test_an_entry_input_written_inside_a_run_warns_as_on_the_ast_path(monkeypatch):
    # (It was an error on both paths; it is now upgraded to pl.Out with a warning, anchor §16 A.)
    import warnings
    body = _GOOD.replace("t1 = self.k(t0,2,t1)", "t1 = self.k(t0, 1, a)")
    for min_run in (2, 10 ** 9):
        monkeypatch.setattr(call_runs, "MIN_RUN", min_run)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pl.parse_program(_program(body), "runs.py")
        assert any("'a' is declared pl.In in 'main', but 'k' writes its parameter 'c'" in str(w.message)
                   for w in caught), (min_run, [str(w.message) for w in caught])
    assert _same(_program(body), monkeypatch)[0] == "ok"


def test_statement_after_return_and_module_constants(monkeypatch):
    body = _GOOD.replace("return out\n", "return out\nt0 = self.k(a, 0, t0)\nt1 = self.k(t0, 1, t1)\n")
    r = _same(_program(body), monkeypatch)
    assert r[0] == "error" and "after return" in r[1]


def test_runs_in_loops_carry_their_names(monkeypatch):
    body = """\
    t0 = pl.create_tensor([16, 16], dtype=pl.FP32)
    t1 = pl.create_tensor([16, 16], dtype=pl.FP32)
    for i in pl.range(4):
        t0 = self.k(a, i, t0)
        t1 = self.k(t0, i, t1)
        t0 = self.k(t1, 2, t0)
    out = self.k(t0, 3, out)
    out = self.k(out, 3, out)
    return out
    """
    assert _same(_program(body), monkeypatch)[0] == "ok"


def test_lines_inside_strings_and_brackets_are_not_masked(monkeypatch):
    body = '''\
    """
    t0 = self.k(a, 0, t0)
    t1 = self.k(t0, 1, t1)
    """
    t0 = pl.create_tensor([16, 16], dtype=pl.FP32)
    t1 = pl.create_tensor([16, 16], dtype=pl.FP32)
    t0 = self.k(a, 0, t0)
    t1 = self.k(t0, 1, t1)
    out = self.k(t1, 3, out)
    return out
    '''
    assert _same(_program(body), monkeypatch)[0] == "ok"
    bracket = _GOOD.replace("t0 = self.k(a, 0, t0)", "t0 = self.k(a, 0, t0) + (\n")
    r = _same(_program(bracket), monkeypatch)
    assert r[0] == "error" and "syntax error" in r[1]


def test_runs_outside_functions_are_class_errors(monkeypatch):
    extra = "    x = self.k(a, 0, t0)\n    y = self.k(a, 0, t0)\n"
    r = _same(_program(_GOOD, extra=extra), monkeypatch)
    assert r[0] == "error" and "may only contain" in r[1]


def test_self_bound_in_the_python_scope_uses_the_ast_path(monkeypatch):
    text = _program(_GOOD).replace("N = 4\n", "N = 4\nself = object()\n")
    assert _same(text, monkeypatch)[0] == "ok"


def test_dump_tags_and_scalar_params(monkeypatch):
    body = """\
    t0 = pl.create_tensor([16, 16], dtype=pl.FP32)
    t1 = pl.create_tensor([16, 16], dtype=pl.FP32)
    pl.dump_tag(t0)
    t0 = self.k(a, n, t0)
    t1 = self.k(t0, n, t1)
    t1 = self.k(t0, 1, t1)
    out = self.k(t1, 3, out)
    return out
    """
    assert _same(_program(body, params=", n: pl.Scalar[pl.INDEX]"), monkeypatch)[0] == "ok"


def test_bench_program(monkeypatch):
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "codegen_bench.py")
    spec = importlib.util.spec_from_file_location("codegen_bench", path)
    cb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cb)
    assert _same(cb.make_source(300), monkeypatch)[0] == "ok"


def test_the_fast_path_builds_nearly_every_statement(monkeypatch):
    """Only the first call per (parameter slot, argument type) goes through the ast parser (its
    tensor shape check has not passed yet); the rest are built in C++."""
    fallbacks = []
    original = call_runs.run_stmt
    monkeypatch.setattr(call_runs, "run_stmt", lambda ctx, st: (fallbacks.append(st.lineno), original(ctx, st)))
    lines = ["        t%d = self.k(t%d, %d, t%d)" % ((n + 1) % 2, n % 2, n, (n + 1) % 2) for n in range(200)]
    body = "t0 = pl.create_tensor([16, 16], dtype=pl.FP32)\nt1 = pl.create_tensor([16, 16], dtype=pl.FP32)\n"
    text = _program(body + "\n".join(s.strip() for s in lines) + "\nout = self.k(t0, 0, out)\nreturn out\n")
    monkeypatch.setattr(call_runs, "MIN_RUN", 4)
    prog = pl.parse_program(text, "runs.py")
    assert len(prog.functions[-1].body.stmts) == 2 + 200 + 2
    assert 0 < len(fallbacks) <= 4, fallbacks
