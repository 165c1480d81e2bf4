"""In an orchestration function whose calls are in blocks of their own (64 task statements or
more), each loop, if and runtime scope printed in the optimised entry is printed in an
unoptimised function of its own, called in place (emit_statements.cpp, Emitter::open_statement):
g++ -O2 time grows faster than linearly with one function's size, and an unrolled program of 500
two-call loops took 66 s and 791 MB to build (1.5 s and 146 MB so). The entry's outermost
PTO2_SCOPE is one such statement (its whole body), and the loops and ifs in it are in turn. The carries and results are declared before the function and bound after it, so a
loop's tensor and scalar carries, an if's tensor result and a nested loop compute what NumPy
computes."""

from __future__ import annotations

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen

from test_orchestration_many_calls import program_head


def source(loops: int, auto_scope: bool = True, n: str = "n") -> str:
    body = [
        "    @pl.function(type=pl.FunctionType.Orchestration%s)" % ("" if auto_scope else ", auto_scope=False"),
        "    def main(self, a: pl.Tensor[[8, 32], pl.FP32], b: pl.Tensor[[8, 8], pl.FP32],",
        "             out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:",
        "        t0 = pl.create_tensor([8, 8], dtype=pl.FP32)",
        "        t1 = pl.create_tensor([8, 8], dtype=pl.FP32)",
        "        s0 = pl.tensor.slice(a, [8, 8], [0, 0])",
        "        t0 = self.add(s0, b, t0)",
    ]
    for k in range(loops):   # t0 += b twice; t1 = t0 + b
        body += ["        for i%d in pl.range(2):" % k,
                 "            t0 = self.add(t0, b, t0)",
                 "            t1 = self.add(t0, b, t1)"]
    body += ["        %s = 0" % n,
             "        for j in pl.range(3):",      # a scalar carry: n = 3
             "            %s = %s + j" % (n, n),
             "        s = pl.tensor.slice(a, [8, 8], [0, %s * 8])" % n,
             "        if %s > 2:" % n,             # a tensor result
             "            t0 = self.add(t0, s, t0)",
             "        else:",
             "            t0 = self.add(t0, b, t0)",
             "        for p in pl.range(2):",     # nested: only the outer loop is wrapped
             "            for q in pl.range(2):",
             "                t0 = self.add(t0, b, t0)",
             "        out = self.add(t0, t1, out)",
             "        return out"]
    return "\n".join(program_head("Loops") + body) + "\n"


def expected(loops: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    t0 = a[:, 0:8] + b
    t1 = None
    for _ in range(loops):
        for _ in range(2):
            t0 = t0 + b
            t1 = t0 + b
    t0 = t0 + a[:, 24:32]   # n == 3
    t0 = t0 + 4 * b
    return t0 + t1


def wrapped_statements(code: str) -> list:
    """The first line of each statement printed in an unoptimised function of its own."""
    lines = code.split("\n")
    return [lines[i + 1].strip() for i, l in enumerate(lines)
            if l.strip() == "[&]() PYPTO_UNOPTIMISED {"]


@pytest.mark.parametrize("loops, auto_scope, n", [(3, True, "n"), (30, True, "n"), (30, False, "n"),
                                                (30, True, "PYPTO_UNOPTIMISED"), (30, False, "PYPTO_CALL_CHUNK")])
def test_loops_ifs_and_scopes_of_a_long_function_are_printed_unoptimised(loops, auto_scope, n, tmp_path, monkeypatch):
    # (a DSL name spelled as one of the file's own macros is renamed, not expanded)
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    program = pl.parse_program(source(loops, auto_scope, n), "loops.py")
    code = codegen.generate_orchestration(program, "main").code
    wrapped = wrapped_statements(code)
    if loops < 30:
        assert wrapped == [], code   # 2 * 3 + 5 task statements: the spec's plain form
    else:
        # every top-level loop and the if; not the nested loop. With the entry's outermost
        # PTO2_SCOPE, that scope first (the whole body), the loops and the if in it in turn.
        if auto_scope:
            assert wrapped[0] == "PTO2_SCOPE() {", wrapped
            wrapped = wrapped[1:]
        assert len(wrapped) == loops + 3, wrapped
        assert sum(w.startswith("if (") for w in wrapped) == 1, wrapped
        assert code.count("for (") == loops + 3, code
    rng = np.random.default_rng(loops)
    a = rng.standard_normal((8, 32)).astype(np.float32)
    b = rng.standard_normal((8, 8)).astype(np.float32)
    out = np.zeros((8, 8), np.float32)
    compiled = pypto.compile(program)
    compiled(a, b, out)
    compiled.close()
    np.testing.assert_allclose(out, expected(loops, a, b), rtol=1e-5, atol=1e-4)
