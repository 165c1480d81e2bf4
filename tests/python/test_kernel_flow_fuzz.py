"""Control flow in kernels (loops and branches carrying tiles and scalars) agrees with the same
statements run as Python on NumPy arrays (tests/python/kernel_flow_fuzz.py): a seeded smoke
here, more seeds under `make fuzz` (scripts/fuzz_exprs.py --kind flow), and the kernels the fuzzer
found failing their -Werror build."""
import re

import numpy as np
import pytest

import kernel_flow_fuzz as kf
import pypto
import pypto.language as pl


@pytest.mark.parametrize("seed", list(range(6)) + [7])   # 7: run-time rows
def test_kernel_control_flow_agrees_with_python(seed, monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    assert kf.check(seed) == []


def test_the_generator_covers_every_construct():
    text = "\n".join(kf.make_case(seed).body for seed in range(60))
    for construct in ("pl.unroll(", " in range(", "pl.parallel(", "pl.range(", "elif ", "else:", " if ",
                      "pl.tensor.write(", "pl.load(x, [(", "pl.store(", "_expand_", ", -1)", ", -2)",
                      " and ", " or ", "not ", "min(", "max(", "abs(", " // ", " % "):
        assert construct in text, construct
    assert re.search(r"\b(t\d+), (t\d+) = \2, \1\n", text)                       # a swap
    assert re.search(r"\b(t\d+), (t\d+) = \2, pl\.\w+\(\1, \2\)", text)         # both read before binding
    assert {kf.make_case(seed).dtype for seed in range(3)} == set(kf.DTYPES)
    assert "[nr, " in kf.make_case(7).body and "[nr, " not in kf.make_case(0).body
    # a scalar first bound in a loop body, read after the loop: the implicit carry
    escapes = 0
    for seed in range(60):
        lines = kf.make_case(seed).body.splitlines()
        for k, ln in enumerate(lines):
            m = re.match(r"( *)for i\d+ in ", ln)
            if not m:
                continue
            body_indent = len(m.group(1)) + 4
            end = next((j for j in range(k + 1, len(lines))
                        if len(lines[j]) - len(lines[j].lstrip()) < body_indent), len(lines))
            first = {re.match(r" *(s\d+) = ", lines[j]).group(1) for j in range(k + 1, end)
                     if len(lines[j]) - len(lines[j].lstrip()) == body_indent and re.match(r" *s\d+ = ", lines[j])}
            before = "\n".join(lines[:k])
            after = "\n".join(lines[end:])
            escapes += sum(1 for s in first if not re.search(r"\b%s\b" % s, before) and re.search(r"\b%s\b" % s, after))
    assert escapes >= 5


def test_the_check_sees_a_wrong_model(monkeypatch):
    # the model's pl.add subtracting: cases using it report findings
    real = kf._Model.__init__

    def broken(self, dtype):
        real(self, dtype)
        self.add = self.sub
    monkeypatch.setattr(kf._Model, "__init__", broken)
    seeds = [s for s in range(12) if "pl.add(" in kf.make_case(s).body]
    assert sum(1 for s in seeds if kf.check(s)) >= 2   # (an add may sit in a loop that runs no iteration)


def _run(body, n0, n1, dtype="INT32"):
    """Runs `body` as a kernel of kernel_flow_fuzz's shape ([2, 4] tiles) and its model; returns
    both (out, os) pairs."""
    case = kf.Case(0, dtype, 2, 4, body, sorted(set(re.findall(r"\b(s\d+) = ", body))))
    prog = pypto.compile(pl.parse_program(kf.program_text(case), "flow.py"))
    x = np.arange(kf.XS * 2 * 4, dtype=np.int32).reshape(kf.XS * 2, 4) - 5
    out, os = np.zeros((kf.OS * 2, 4), np.int32), np.full((1, kf.NW), -7, np.int64)
    want_out, want_os = out.copy(), os.copy()
    prog(x, n0, n1, out, os)
    kf.model_function(case)(kf._Model(dtype), x, n0, n1, want_out, want_os)
    return (out, os), (want_out, want_os)


SELF_COMPARE = """t0 = pl.load(x, [0, 0], [2, 4])
t1 = pl.load(x, [2, 0], [2, 4])
s1 = n0
for i2 in pl.range(n1):
    t0 = (t1 if s1 <= s1 else t0)
    if s1 == s1:
        t1 = pl.adds(t1, 1)
    s1 = (s1 + i2) % 100
out = pl.store(t0, [0, 0], out)
out = pl.store(t1, [2, 0], out)
pl.tensor.write(os, [0, 0], pl.cast(s1, pl.INT64))"""


@pytest.mark.parametrize("n1", [0, 3])
def test_a_loop_carried_scalar_compared_with_itself_builds_warning_free(n1, monkeypatch):
    # kernel_flow_fuzz seed 1: `s1 <= s1` on a loop carry (an IterArg) printed as is, which g++
    # reports under -Werror (tautological-compare); the printer folded it for other variables only
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    (out, os), (want_out, want_os) = _run(SELF_COMPARE, 4, n1)
    assert (out == want_out).all() and (os == want_os).all()
    assert os[0, 0] == 4 + sum(range(n1))


DEAD_IF_RESULT = """t0 = pl.load(x, [0, 0], [2, 4])
s1 = n0 % 5
if n1 > 0:
    s1 = (s1 + 1) % 7
    t0 = pl.adds(t0, s1)
s1 = n1 % 3
out = pl.store(t0, [0, 0], out)
pl.tensor.write(os, [0, 1], pl.cast(s1, pl.INT64))"""


@pytest.mark.parametrize("n1", [0, 2])
def test_an_if_result_nothing_reads_builds_warning_free(n1, monkeypatch):
    # kernel_flow_fuzz seed 12: the if-result s1 is rebound before any read; its slot was declared
    # and set but never used (-Werror=unused-but-set-variable)
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    (out, os), (want_out, want_os) = _run(DEAD_IF_RESULT, 3, n1)
    assert (out == want_out).all() and (os == want_os).all()
    assert out[0, 0] == -5 + (4 if n1 > 0 else 0)
