"""Printed IR after every pass of the default pipeline is valid DSL: the dumps
(`<NN>_<Pass>.py`, written with pypto.ir.python_print) parse back with pl.parse_program.

Pass output does not round-trip exactly (argument directions print as comments, a yield that
MaterializeRuntimeScopes put inside a `with pl.scope():` prints after it), but a user must be
able to read, edit and re-run any dump.
"""

import pathlib

import pytest

import pypto.language as pl
from pypto import ir

try:
    from pypto._core import codegen
except ImportError:  # the codegen binding is not built in this tree
    codegen = None

SPEC_DIR = pathlib.Path(__file__).parent / "spec_programs"
SPEC_FILES = sorted(SPEC_DIR.glob("*.py")) if SPEC_DIR.is_dir() else []


@pytest.mark.skipif(codegen is None or not hasattr(codegen, "run_pipeline"), reason="no pass pipeline binding")
@pytest.mark.parametrize("path", SPEC_FILES, ids=[p.stem for p in SPEC_FILES])
def test_every_pass_dump_parses(path, tmp_path):
    prog = pl.parse_program(path.read_text())
    codegen.run_pipeline(prog, str(tmp_path), True)
    dumps = sorted(tmp_path.glob("*.py"))
    assert dumps, "the pipeline wrote no dumps"
    for dump in dumps:
        text = dump.read_text()
        try:
            again = pl.parse_program(text)
        except Exception as e:  # pragma: no cover - message shows the dump
            pytest.fail(f"{dump.name} does not parse: {e}\n--- dump ---\n{text}")
        # Printing what was parsed back is stable from then on.
        assert ir.python_print(pl.parse_program(ir.python_print(again))) == ir.python_print(again)
