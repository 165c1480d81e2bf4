"""Distributed HOST orchestration code generation (the L3 runtime, ``pto_l3_api.h``).

A HOST-level orchestration (``@pl.function(type=pl.FunctionType.Orchestration,
level=pl.Level.HOST)``) submits chip-level orchestration functions as next-level tasks::

    from pypto import host
    r = host.generate_host_orchestration(program, "host_main")
    r.code                 # C++ of host/host_main.cpp (entry: host_orchestration_entry)
    r.target_ids           # {"chip_add": 0}: register each L2 entry under its id

See docs/manual_dependencies.md, section "Distributed HOST orchestration".
"""

from __future__ import annotations

from typing import Dict, List, Union

from pypto._core import host as _host

__all__ = ["generate_host_orchestration", "host_functions", "target_ids"]


def host_functions(program) -> List[str]:
    """Names of the program's HOST-level Orchestration functions, in definition order."""
    from pypto._core import ir
    return [f.name for f in program.functions
            if f.type == ir.FunctionType.Orchestration and f.level == ir.Level.HOST]


def target_ids(program) -> Dict[str, int]:
    """Next-level target ids: the program's chip-level Orchestration functions, in order."""
    return dict(_host.target_ids(program))


def generate_host_orchestration(program, func: Union[str, object], run_passes: bool = True):
    """Runs the default pipeline (unless ``run_passes=False``) and generates the HOST C++."""
    from pypto import codegen
    name = func if isinstance(func, str) else func.name
    prepared = codegen.run_pipeline(program) if run_passes else program
    return _host.generate_host_orchestration(prepared, name)
