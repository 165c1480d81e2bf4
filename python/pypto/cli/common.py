"""Pieces every ``pypto`` subcommand shares: the usage error, loading a program file, writing files.
Imports nothing else of ``pypto.cli``, so the command modules never import each other."""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Dict, List, Optional, Tuple

__all__ = ["CliError", "load_programs", "select_program", "write_files", "kernel_files"]


class CliError(Exception):
    """A usage problem reported as `pypto: error: ...` with exit status 2."""


def load_programs(path: str) -> Dict[str, object]:
    """Executes the Python file ``path`` and returns its @pl.program objects by variable name."""
    from pypto._core import ir

    if not os.path.isfile(path):
        raise CliError("no such file: %s" % path)
    name = "_pypto_cli_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    return {k: v for k, v in vars(module).items() if isinstance(v, ir.Program)}


def select_program(programs: Dict[str, object], wanted: Optional[str], path: str) -> Tuple[str, object]:
    """The program named ``wanted`` (variable or program name), or the only one."""
    if not programs:
        raise CliError("%s defines no @pl.program" % path)
    if wanted is not None:
        for var, prog in programs.items():
            if wanted in (var, prog.name):
                return var, prog
        raise CliError("%s has no program named %r (found: %s)" % (path, wanted, ", ".join(sorted(programs))))
    if len(programs) > 1:
        raise CliError("%s defines several programs (%s); choose one with --program NAME"
                       % (path, ", ".join(sorted(programs))))
    return next(iter(programs.items()))


def write_files(files: Dict[str, str], out_dir: str) -> List[str]:
    """Writes ``{relative path: text}`` under ``out_dir``; returns the written paths."""
    written = []
    for rel, text in sorted(files.items()):
        dest = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
        with open(dest, "w") as f:
            f.write(text)
        written.append(dest)
    return written


def kernel_files(prepared, kernel_ids) -> Dict[str, str]:
    """``{"kernels/<name>.cpp": source}`` for the kernels an orchestration uses."""
    from pypto._core import kernel_cpu
    from pypto.runtime.build import source_stem
    return {"kernels/%s.cpp" % source_stem(name): kernel_cpu.generate(prepared, name) for name in sorted(kernel_ids)}
