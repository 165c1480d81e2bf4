"""Printed IR after every pass of the default pipeline is valid DSL: the dumps
(`<NN>_<Pass>.py`, written with pypto.ir.python_print) parse back with pl.parse_program.

Pass output does not always round-trip exactly (argument directions print as comments), but a
user must be able to read, edit and re-run any dump.
"""

import pathlib

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError

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
    codegen.run_pipeline(prog, dump_dir=str(tmp_path), verify=True)
    dumps = sorted(tmp_path.glob("*.py"))
    assert dumps, "the pipeline wrote no dumps"
    for dump in dumps:
        text = dump.read_text()
        try:
            again = pl.parse_program(text)
        except PyptoError as e:
            if "producer of predicate tensor" in e.message:
                # The parser's best-effort predicate contract check now sees a producer that
                # the source hid in one of its blind spots (e.g. an outlined pl.cluster):
                # the text is valid DSL, the check is about the program, not the printer.
                continue
            pytest.fail(f"{dump.name} does not parse: {e}\n--- dump ---\n{text}")
        # Printing what was parsed back is stable from then on.
        assert ir.python_print(pl.parse_program(ir.python_print(again))) == ir.python_print(again)
