"""`with pl.at(level=pl.Level.CORE_GROUP):` scopes inside orchestration control flow agree with the
same statements run as Python on NumPy arrays (tests/python/at_flow_fuzz.py): a seeded smoke here,
more seeds under `make fuzz` (scripts/fuzz_exprs.py --kind at), and what the fuzzer found."""
import ast

import numpy as np
import pytest

import at_flow_fuzz as af
import pypto
import pypto.language as pl
from pypto.errors import PyptoError


@pytest.mark.parametrize("seed", range(4))
def test_scopes_in_control_flow_agree_with_python(seed, monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    assert af.check(seed) == []


def test_the_generator_spells_every_form():
    cases = [af.make_case(seed) for seed in range(30)]
    text = "\n".join(c.body for c in cases)
    for form in ("with pl.at(level=pl.Level.CORE_GROUP):", "with pl.scope():", "with pl.at(level=pl.Level.CORE_GROUP) as tid", "with pl.spmd(1):",
                 "optimizations=[pl.auto_chunk]", ", chunk=", "chunk_policy='leading_full'", "pl.slice(x, ", "pl.slice(out, ", "out = pl.assemble(out, ",
                 "pl.tensor.write(os, ", "pl.row_max(", "pl.row_expand_", " if ", "elif ", "pl.unroll(", "pl.parallel(", "pl.tensor.read("):
        assert form in text, form
    lines = [ln.strip() for ln in text.splitlines()]
    # swaps inside a scope, loops and branches inside a scope, and tensor statements left outside
    assert any(ln.startswith("t") and ", t" in ln.split("=")[0] for ln in lines)
    bodies = [c.body.splitlines() for c in cases]
    inside = [b[k + 1].strip() for b in bodies for k, ln in enumerate(b[:-1]) if ln.strip().startswith("with pl.")]
    assert any(s.startswith(("for ", "if ")) for s in inside)
    computing = [st for c in cases for st in _outside_scopes(ast.parse(c.body).body) if af._computes(st)]
    assert computing == [], ast.unparse(computing[0])   # every computing statement is in a scope


def _outside_scopes(stmts):
    for st in stmts:
        if isinstance(st, ast.With) and ast.unparse(st.items[0].context_expr) != "pl.scope()":
            continue
        yield st
        if isinstance(st, (ast.For, ast.If, ast.With)):
            yield from _outside_scopes(st.body + getattr(st, "orelse", []))


def test_the_check_sees_a_wrong_model(monkeypatch):
    monkeypatch.setattr(af._AtModel, "slice", staticmethod(   # loads from the wrong row block
        lambda x, shape, offsets: x[offsets[0] + 1:offsets[0] + 1 + shape[0], :shape[1]].copy()
        if offsets[0] + 1 + shape[0] <= x.shape[0] else x[offsets[0]:offsets[0] + shape[0], :shape[1]].copy()))
    assert sum(1 for s in range(6) if af.check(s)) >= 1


HEAD = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 4], pl.FP32], n: pl.Scalar[pl.INDEX], out: pl.InOut[pl.Tensor[[8, 4], pl.FP32]],
             os: pl.InOut[pl.Tensor[[1, 4], pl.INT64]]) -> pl.Tensor[[8, 4], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.slice(x, [4, 4], [0, 0])
            b = pl.slice(x, [4, 4], [4, 0])
BODY
        return out
'''


def _run(body, n):
    src = HEAD.replace("BODY", "\n".join("        " + ln for ln in body.strip("\n").splitlines()))
    prog = pypto.compile(pl.parse_program(src, "at_case.py"))
    x = np.arange(32, dtype=np.float32).reshape(8, 4) - 10
    out = np.full((8, 4), -1, np.float32)
    os = np.full((1, 4), -7, np.int64)
    prog(x, n, out, os)
    return x[:4], x[4:], out, os


@pytest.mark.parametrize("n", [0, 1, 2])
@pytest.mark.parametrize("then", ["", "if n > 1:\n        a, b = b, a", "for i in pl.range(n):\n        a, b = b, a"])
def test_a_swap_inside_a_scope_hands_the_outside_tensor_on(n, then, monkeypatch):
    # at_flow_fuzz seeds 0-2: `a, b = b, pl.add(a, b)` in a scope was "'a' is computed inside the
    # pl.at scope and used after it": a is b, a tensor of the caller the scope does not write
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    a, b, out, _ = _run('''
with pl.at(level=pl.Level.CORE_GROUP):
    a, b = b, pl.add(a, b)
    THEN
out = pl.assemble(out, a, [0, 0])
out = pl.assemble(out, b, [4, 0])
'''.replace("THEN", then or "pass"), n)
    first, second = b, a + b
    if (then.startswith("if") and n > 1) or (then.startswith("for") and n % 2 == 1):
        first, second = second, first
    np.testing.assert_array_equal(out, np.concatenate([first, second]))


@pytest.mark.parametrize("n", [0, 3])
def test_a_write_inside_a_scope_reaches_the_tensor_the_writes_after_it_reach(n, monkeypatch):
    # at_flow_fuzz seed 5: a pl.tensor.write in a scope was not a write of `os` to the outliner, so the
    # loop around it carried a value the scope computed: "'os' is computed inside the pl.at scope and
    # used after it"
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    _, _, _, os = _run('''
with pl.at(level=pl.Level.CORE_GROUP):
    for i in pl.range(n):
        pl.tensor.write(os, [0, i % 2], pl.cast(i + 10, pl.INT64))
    out = pl.assemble(out, a, [0, 0])
pl.tensor.write(os, [0, 3], pl.cast(n + 100, pl.INT64))
''', n)
    want = [-7, -7, -7, n + 100]
    for i in range(n):
        want[i % 2] = i + 10
    assert list(os[0]) == want


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_loop_in_a_scope_carrying_a_computed_tensor_returns_it(n, monkeypatch):
    # at_flow_fuzz seed 3: the loop's result was taken for the outside tensor it started from
    # ("computed inside the pl.at scope and used after it")
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    a, b, out, _ = _run('''
with pl.at(level=pl.Level.CORE_GROUP):
    for i in pl.range(n):
        a = pl.add(a, b)
out = pl.assemble(out, a, [0, 0])
''', n)
    np.testing.assert_array_equal(out[:4], a + n * b)


@pytest.mark.parametrize("n", [0, 2])
def test_a_value_that_is_either_of_two_tensors_is_read_as_a_copy(n, monkeypatch):
    # at_flow_fuzz seeds 1, 8 and 17: an internal error ("result 0 of 'main_incore_1' does not resolve
    # to an Out/InOut parameter") when returned, "a loop-carried / branch tensor must stay the same
    # tensor parameter in a kernel" when read
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    a, b, out, _ = _run('''
with pl.at(level=pl.Level.CORE_GROUP):
    c = a if n > 1 else b
    d = pl.mul(a if n < 1 else b, 2.0)
out = pl.assemble(out, c, [0, 0])
out = pl.assemble(out, d, [4, 0])
''', n)
    np.testing.assert_array_equal(out, np.concatenate([a if n > 1 else b, 2 * (a if n < 1 else b)]))


def test_a_write_through_a_value_of_two_tensors_is_a_located_error():
    src = HEAD.replace("BODY", '''
        with pl.at(level=pl.Level.CORE_GROUP):
            c = a if n > 1 else b
            c = pl.assemble(c, pl.mul(a, 2.0), [0, 0])
        out = pl.assemble(out, c, [0, 0])''')
    # was an internal error: "result 0 of 'main_incore_1' does not resolve to an Out/InOut parameter"
    with pytest.raises(PyptoError, match="tensor.assemble writes into 'c', which may be 'a' or 'b'|"
                                         "tensor.assemble writes into 'c', which may be 'b' or 'a'") as e:
        pypto.compile(pl.parse_program(src, "at_case.py"))
    assert "write into each tensor in its own branch" in str(e.value)
    assert "c = pl.assemble(c, pl.mul(a, 2.0), [0, 0])" in e.value.source_line


@pytest.mark.parametrize("n", [0, 1, 2])
def test_a_loop_in_a_scope_that_writes_a_tensor_then_replaces_it_returns_the_new_value(n, monkeypatch):
    # found reviewing the fix above: a carry the body wrote into (pl.assemble) and then replaced by a
    # computed value was still taken for the written tensor: `out` got `a` as it was, silently
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    a, b, out, _ = _run('''
with pl.at(level=pl.Level.CORE_GROUP):
    for i in pl.range(n):
        a = pl.assemble(a, b, [0, 0])
        a = pl.add(a, b)
out = pl.assemble(out, a, [0, 0])
''', n)
    np.testing.assert_array_equal(out[:4], a if n == 0 else b + b)


def test_a_loop_carry_handed_storage_made_in_the_loop_keeps_its_back_edge():
    # at_flow_fuzz seed 669: with dependencies derived at compile time, a loop whose two pl.at
    # regions swap their carries (`t1, t0 = (t0, pl.minimum(t1, t0))`, the new values made in the
    # iteration) read, in the next iteration, what the previous one wrote with no edge: the race
    # check found 4 unordered pairs. AutoDeriveTaskDependencies took such storage for new storage
    # every iteration. Such storage is now ordered by carried edges and allocated before the
    # iteration's scope (test_auto_deps_handed_on_storage.py).
    import orch_flow_fuzz as of
    assert of.derives_dependencies(669)
    assert not af.check(669)
