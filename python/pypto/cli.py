"""The ``pypto`` command line. One function per subcommand (``cmd_<name>``), registered in
``_SUBCOMMANDS``; add a subcommand by writing ``add_<name>_parser`` + ``cmd_<name>`` and listing
them there.

    pypto compile prog.py -o out/                  # writes out/orchestration/<func>.cpp, ...
    pypto compile prog.py -o out/ --program Name   # when prog.py defines several programs
    pypto compile prog.py -o out/ --func orch      # one Orchestration function only
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from typing import Callable, Dict, List, Optional, Tuple

from pypto.errors import PyptoError
from pypto.runtime.cli_run import add_run_parser, cmd_run, kernel_files

__all__ = ["main", "load_programs", "select_program", "cmd_compile"]


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


# ---- pypto compile ----

def add_compile_parser(sub) -> None:
    p = sub.add_parser("compile", help="generate orchestration C++ for a DSL program",
                       description="Parse PROG.py, run the pass pipeline and write the generated files.")
    p.add_argument("file", help="Python file defining a @pl.program class")
    p.add_argument("-o", "--output", default="out", help="output directory (default: out)")
    p.add_argument("--program", help="program to compile when the file defines several")
    p.add_argument("--func", help="Orchestration function to generate (default: all)")
    p.add_argument("--dump-ir", metavar="DIR", help="write the printed IR after each pass to DIR")


def cmd_compile(args) -> int:
    from pypto import codegen

    programs = load_programs(args.file)
    _, program = select_program(programs, args.program, args.file)
    prepared = codegen.run_pipeline(program, dump_dir=args.dump_ir)
    funcs = [args.func] if args.func else codegen.orchestration_functions(prepared)
    if not funcs:
        raise CliError("program %s has no Orchestration function" % program.name)
    from pypto import host
    host_level = set(host.host_functions(prepared))
    files: Dict[str, str] = {}
    for fn in funcs:
        if fn in host_level:  # a distributed HOST-level orchestration: C++ against pto_l3_api.h
            files["host/%s.cpp" % fn] = host.generate_host_orchestration(prepared, fn, run_passes=False).code
            continue
        result = codegen.generate_orchestration(prepared, fn, run_passes=False)
        files.update(result.files)
        files.update(kernel_files(prepared, result.kernel_ids))   # CPU kernels (e2e)
    for path in write_files(files, args.output):
        print(path)
    return 0


_SUBCOMMANDS: List[Tuple[str, Callable, Callable]] = [
    ("compile", add_compile_parser, cmd_compile),
    ("run", add_run_parser, cmd_run),                  # pypto/runtime/cli_run.py (e2e)
]


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of the ``pypto`` console script; returns the exit status."""
    parser = argparse.ArgumentParser(prog="pypto", description="pypto: Python DSL -> PTO2 orchestration C++")
    sub = parser.add_subparsers(dest="command", required=True)
    handlers = {}
    for name, add_parser, handler in _SUBCOMMANDS:
        add_parser(sub)
        handlers[name] = handler
    args = parser.parse_args(argv)
    try:
        return handlers[args.command](args)
    except CliError as e:
        print("pypto: error: %s" % e, file=sys.stderr)
        return 2
    except PyptoError as e:
        print(str(e), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
