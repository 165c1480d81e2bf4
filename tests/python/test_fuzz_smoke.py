"""Fixed-seed smoke of the program fuzzer (scripts/fuzz.py; `make fuzz` runs 2,000 mutants).

200 mutants of the example and spec programs: all parsed and code-generated, every 25th built
and run, every 5th semantics-preserving one (a renamed local, a loop in a scope, or the same
program called with differently laid out In arrays, other worker counts and the race checker on)
run next to its original and compared. Every
outcome must be "ran" or "located" (a PyptoError with file:line); a failure prints each finding
with the command that reproduces it."""

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _fuzz_module():
    spec = importlib.util.spec_from_file_location("pypto_fuzz", ROOT / "scripts" / "fuzz.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_mutants_are_reproducible():
    fz = _fuzz_module()
    programs = fz.load_programs()
    assert len(programs) >= 20          # every example and spec program is a seed
    assert fz.make_mutant(programs, 5, 17) == fz.make_mutant(programs, 5, 17)
    texts = {fz.make_mutant(programs, 5, i)[2] for i in range(40)}
    assert len(texts) > 30              # mutants differ from one another


def test_a_second_mutation_reads_nodes_the_first_made():
    """A second mutation may pick a node the first inserted (an ast.Constant with no position):
    its description reads the line, so the first mutation's nodes get locations (seed 18, mutant
    275 once crashed the fuzzer itself with AttributeError 'lineno')."""
    fz = _fuzz_module()
    programs = fz.load_programs()
    for i in range(600):
        fz.make_mutant(programs, 18, i)


def test_call_variants_keep_the_values_and_change_the_layout():
    # call_variant (semantics-preserving): In arrays in other layouts, other worker counts, the
    # race checker on; the outputs are compared with the plain call's.
    import numpy as np
    fz = _fuzz_module()
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    for how, check in (("strided", lambda b: not b.flags.c_contiguous), ("fortran", lambda b: b.flags.f_contiguous),
                       ("reversed", lambda b: b.strides[0] < 0), ("readonly", lambda b: not b.flags.writeable)):
        b = fz.relayout(a, how)
        assert check(b) and np.array_equal(a, b), how
    programs = fz.load_programs()
    variants = [v for v in (fz.make_mutant(programs, 3, i)[5] for i in range(400)) if v and "layout" in v]
    assert variants and {v["layout"] for v in variants} == set(fz.LAYOUTS)


def test_outcomes_are_classified():
    fz = _fuzz_module()
    from pypto.errors import InternalCompilerError, PyptoError
    assert fz._classify_exception(PyptoError("x", file="f.py", line=3, col=1))[0] == "located"
    assert fz._classify_exception(PyptoError("x"))[0] == "unlocated"
    from pypto.runtime.loader import RaceError, RunError
    # A run error is located where its message names a DSL line (failure_location; seed 777 mutant
    # 1050 and seed 2932 mutant 330 were counted unlocated when only the message named it).
    assert fz._classify_exception(RunError(
        "the run failed: orchestration entry threw: mutant_2932_330.py:44: argument 'row' of 'mm_block' = 128 does "
        "not fit pl.INT8", file="/x/mutant_2932_330.py", line=44, col=9))[0] == "located"
    # one naming a line that was not located there is a finding: failure_location missed it
    assert fz._classify_exception(RunError(
        "the run failed: task #2 (AIV kernel 'write_rows' (id 0)) submitted at mutant_777_1050.py:16 block 0/1 on the "
        "orchestrator thread (helping) failed: load of tensor 'x' out of bounds on axis 0"))[0] == "unlocated"
    assert fz._classify_exception(RunError("the run failed: deadlock"))[0] == "unlocated"
    # a race report names its tasks' lines in the message
    assert fz._classify_exception(RaceError("race check: task #2 (k) submitted at p.py:9 and task #3 ..."))[0] == \
        "located"
    assert fz._classify_exception(RaceError("race check: a value of 3.py is odd"))[0] == "unlocated"
    assert fz._classify_exception(InternalCompilerError("x"))[0] == "internal"
    assert fz._classify_exception(TypeError("x"))[0] == "internal"


class _ScriptedWorker:
    """A fuzz Worker stand-in that returns the given digests in turn."""
    def __init__(self, digests):
        self.digests, self.runs = list(digests), 0

    def run(self, job, timeout):
        self.runs += 1
        return {"outcome": "ran", "digest": self.digests.pop(0)}


def test_a_mismatch_is_wrong_unless_the_original_itself_varies():
    # cluster_spmd.py's result depends on which SPMD block writes last (1 run in a few hundred
    # gives the other): seed 2424 mutant 207 was reported wrong for it.
    fz = _fuzz_module()
    assert not fz.original_varies(_ScriptedWorker([[1.0]] * 5), {}, [1.0], timeout=1)   # deterministic: wrong
    w = _ScriptedWorker([[1.0], [1.0], [2.0], [1.0], [1.0]])
    assert fz.original_varies(w, {}, [1.0], timeout=1) and w.runs == 3                   # varies: no evidence
    programs = {Path(p[0]).name for p in fz.load_programs()}
    assert set(fz.SCHEDULE_DEPENDENT) <= programs      # the list names programs the fuzzer mutates


def test_fuzz_smoke_200_mutants(capsys):
    fz = _fuzz_module()
    res = fz.fuzz(count=200, seed=0, run_every=25, timeout=120, compare_every=5, py=sys.executable,
                  out=sys.stdout)
    counts = {o: res[o] for o in fz.OUTCOMES}
    assert sum(counts.values()) == 200
    assert counts["ran"] > 20 and counts["located"] > 20, counts
    if res["findings"]:
        pytest.fail(f"fuzz findings {counts}:\n" + capsys.readouterr().out)


def test_every_mutation_family_applies_and_is_reproducible():
    """--family OP makes every mutant with OP (fuzz28's cxx_name, edge_int, shape_rank,
    empty_range, deep_nesting, deep_wrap among them), from (seed, index, family) alone."""
    fz = _fuzz_module()
    programs = fz.load_programs()
    for op in fz.Mutator.MUTATING + fz.Mutator.PRESERVING:
        made = [fz.make_mutant(programs, 11, i, op) for i in range(12)]
        applied = [m for m in made if m[3] != "(no mutation applied)"]
        assert len(applied) >= 10, (op, [m[3] for m in made])
        assert all(m[4] == (op in fz.Mutator.PRESERVING) for m in made), op
        assert made[5] == fz.make_mutant(programs, 11, 5, op)
    _, original, deep, desc, _, _ = fz.make_mutant(programs, 11, 0, "deep_nesting")
    assert len(deep.splitlines()) >= len(ast.unparse(ast.parse(original)).splitlines()) + 5, desc


def test_host_programs_are_code_generated_by_their_own_generator():
    """The worker ran the L2 generator on every Orchestration function: a HOST-level one was a
    located error, so two_chips.py and each of its mutants ended 'located' and the HOST path was
    never built nor run by the fuzzer (fuzz28)."""
    fz = _fuzz_module()
    name, text = next(p for p in fz.load_programs() if "two_chips" in p[0])
    res = fz.work_one({"text": text, "file": name, "run": False, "input_seed": 0})
    assert res["outcome"] == "ran", res


@pytest.mark.parametrize("args, says", [
    (["--count", "-5"], "--count must be >= 1"),
    (["--count", "0"], "--count must be >= 1"),
    (["--run-every", "-1"], "--run-every"),
    (["--timeout", "0"], "--timeout > 0"),
    (["--only", "-3"], "--only"),
    (["--source", "no_such_program"], "names no program"),
])
def test_bad_command_line_is_a_usage_error(args, says, capsys):
    """A count, interval or timeout out of range, or a --source that names no program, is a usage
    error (exit 2), not a traceback or a run of nothing."""
    fz = _fuzz_module()
    with pytest.raises(SystemExit) as e:
        fz.main(args)
    assert e.value.code == 2
    assert says in capsys.readouterr().err


def test_a_literal_written_as_arithmetic_is_accepted_wherever_the_literal_is(capsys):
    # int_as_arith (strict): a refusal of the mutant where the original is accepted is a finding
    # ("refused"); tensor.transpose axes, predicate= indices and // in load sizes were such places.
    fz = _fuzz_module()
    res = fz.fuzz(count=40, seed=7, run_every=0, timeout=120, compare_every=0, py=sys.executable,
                  out=sys.stdout, family="int_as_arith")
    counts = {o: res[o] for o in fz.OUTCOMES}
    assert counts["ran"] == 40, counts
    if res["findings"]:
        pytest.fail(f"fuzz findings {counts}:\n" + capsys.readouterr().out)


def test_op_arguments_passed_by_keyword_are_accepted(capsys):
    # keyword_args (strict): an op call's trailing arguments passed by keyword, under our names or the
    # reference's (pl.store(t, [0, 0], output_tensor=y)); a refusal is a finding ("refused").
    fz = _fuzz_module()
    programs = fz.load_programs()
    callees = {fz.make_mutant(programs, 8, i, "keyword_args")[3].split("by keyword: ")[1].split("(")[0]
               for i in range(60)}
    assert {"pl.load", "pl.store", "pl.add", "pl.submit"} <= callees, callees   # ops and kernel calls are candidates
    assert any(c.startswith("self.") for c in callees), callees
    res = fz.fuzz(count=40, seed=8, run_every=0, timeout=120, compare_every=0, py=sys.executable,
                  out=sys.stdout, family="keyword_args")
    counts = {o: res[o] for o in fz.OUTCOMES}
    assert counts["ran"] == 40, counts
    if res["findings"]:
        pytest.fail(f"fuzz findings {counts}:\n" + capsys.readouterr().out)


def test_python_spellings_are_accepted_wherever_the_originals_are(capsys):
    # python_idioms (strict): a literal as a compile-time conditional expression, pl.tensor.dim as
    # x.shape[k], an assert of a true condition; a refusal is a finding ("refused"). The first run
    # found an assert in a single-call pl.spmd block refused with an unclear message (now clear;
    # the family leaves such blocks alone).
    fz = _fuzz_module()
    programs = fz.load_programs()
    kinds = {fz.make_mutant(programs, 9, i, "python_idioms")[3].split(" ")[1] for i in range(40)}
    assert {"int", "assert"} <= kinds, kinds
    res = fz.fuzz(count=30, seed=9, run_every=0, timeout=120, compare_every=0, py=sys.executable,
                  out=sys.stdout, family="python_idioms")
    counts = {o: res[o] for o in fz.OUTCOMES}
    assert counts["ran"] == 30, counts
    if res["findings"]:
        pytest.fail(f"fuzz findings {counts}:\n" + capsys.readouterr().out)


def test_runs_of_statements_wrapped_in_scopes_compute_what_the_originals_do(capsys):
    # scope_run (preserving): 1 to 4 neighbouring orchestration statements wrapped in
    # `with pl.scope():`; a runtime scope does not scope names, so the values the run assigns are
    # read after it as before (only a tensor the runtime allocates in it, or a TaskId, cannot
    # leave: a located refusal). Every 4th mutant is built, run and compared with its original.
    fz = _fuzz_module()
    res = fz.fuzz(count=20, seed=11, run_every=0, timeout=120, compare_every=4, py=sys.executable,
                  out=sys.stdout, family="scope_run")
    counts = {o: res[o] for o in fz.OUTCOMES}
    assert counts["ran"] >= 16, counts
    if res["findings"]:
        pytest.fail(f"fuzz findings {counts}:\n" + capsys.readouterr().out)
