"""Every complete DSL program of the two spec documents (tests/python/spec_programs/) parses,
prints, and parses back to a structurally equal IR; printing is then a fixed point.

Each file of spec_programs/ is an importable module holding one ``@pl.program`` class (the
decorator turns it into an IR Program) and a ``SOURCE`` string naming its spec section. The
files are also valid ``pl.parse_program`` input as they stand.
"""

import importlib
import pathlib

import pytest

import pypto.language as pl
from pypto import ir as pir
from pypto._core import ir

SPEC_DIR = pathlib.Path(__file__).parent / "spec_programs"
MODULES = sorted(p.stem for p in SPEC_DIR.glob("*.py"))


def program_of(name):
    mod = importlib.import_module(f"spec_programs.{name}")
    progs = [v for v in vars(mod).values() if isinstance(v, ir.Program)]
    assert len(progs) == 1, f"{name}: expected one @pl.program class"
    assert mod.SOURCE
    return progs[0]


@pytest.mark.parametrize("name", MODULES)
def test_spec_program_parses_prints_and_reparses(name):
    prog = program_of(name)
    assert isinstance(prog, ir.Program)
    assert prog.functions, name
    text = pir.python_print(prog)
    again = pl.parse_program(text, f"{name}.printed.py")
    eq, why = ir.structural_equal_explain(prog, again)
    assert eq, f"{name}: {why}\n{text}"
    assert pir.python_print(again) == text


@pytest.mark.parametrize("name", MODULES)
def test_spec_program_file_parses_as_text(name):
    path = SPEC_DIR / f"{name}.py"
    from_text = pl.parse_program(path.read_text(), str(path))
    eq, why = ir.structural_equal_explain(program_of(name), from_text)
    assert eq, why


def test_all_spec_programs_present():
    assert len(MODULES) >= 20


def test_spec_programs_cover_the_dependency_surface():
    """The spec programs together use every dependency construct of the manual-deps document."""
    texts = "".join(pir.python_print(program_of(m)) for m in MODULES)
    for construct in ("pl.manual_scope()", "manual_dep=True", "pl.no_dep(", "no_dep_args=", "pl.submit(",
                      "pl.spmd_submit(", "deps=[", "allow_early_resolve=True", "timing_slot=3", "predicate=(",
                      "with pl.at(level=pl.Level.CORE_GROUP", ") as ", "with pl.spmd(", "in pl.spmd(",
                      "pl.system.task_dummy(deps=", "pl.system.task_invalid()", "pl.array.create(4, pl.TASK_ID)",
                      "pl.array.update_element(", "pl.parallel(", "pl.cluster()", "sync_start=True"):
        assert construct in texts, construct
