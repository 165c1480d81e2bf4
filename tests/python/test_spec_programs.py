"""Every complete DSL program of the two spec documents (tests/python/spec_programs/) parses,
prints, and parses back to a structurally equal IR; printing is then a fixed point."""

import importlib

import pytest

import pypto.language as pl
from pypto import ir as pir
from pypto._core import ir

import spec_programs


@pytest.mark.parametrize("name", spec_programs.MODULES)
def test_spec_program_parses_prints_and_reparses(name):
    mod = importlib.import_module(f"spec_programs.{name}")
    prog = mod.PROGRAM
    assert isinstance(prog, ir.Program)
    assert prog.functions, name
    text = pir.python_print(prog)
    again = pl.parse_program(text, f"{name}.printed.py")
    eq, why = ir.structural_equal_explain(prog, again)
    assert eq, f"{name}: {why}\n{text}"
    assert pir.python_print(again) == text


def test_every_spec_program_module_is_listed():
    import pathlib
    here = pathlib.Path(spec_programs.__file__).parent
    on_disk = sorted(p.stem for p in here.glob("*.py") if not p.stem.startswith("_"))
    assert on_disk == sorted(spec_programs.MODULES)


def test_spec_programs_cover_the_dependency_surface():
    """The spec programs together use every dependency construct of the manual-deps document."""
    texts = "".join(pir.python_print(importlib.import_module(f"spec_programs.{m}").PROGRAM)
                    for m in spec_programs.MODULES)
    for construct in ("pl.manual_scope()", "manual_dep=True", "pl.no_dep(", "no_dep_args=", "pl.submit(",
                      "pl.spmd_submit(", "deps=[", "allow_early_resolve=True", "timing_slot=3", "predicate=(",
                      "with pl.at(level=pl.Level.CORE_GROUP", ") as ", "with pl.spmd(", "in pl.spmd(",
                      "pl.system.task_dummy(deps=", "pl.system.task_invalid()", "pl.array.create(4, pl.TASK_ID)",
                      "pl.array.update_element(", "pl.parallel(", "pl.cluster()", "sync_start=True"):
        assert construct in texts, construct
