"""``pypto compile prog.py -o out/``: write the generated orchestration (or HOST) C++ and CPU kernels."""

from __future__ import annotations

import sys
from typing import Dict

from pypto.cli.common import (CliError, kernel_files, load_programs, reject_empty_paths, require_orchestration,
                              select_program, write_files)
from pypto.runtime.trace_path import probe_directory

__all__ = ["add_compile_parser", "cmd_compile"]


def add_compile_parser(sub) -> None:
    p = sub.add_parser("compile", help="generate orchestration C++ for a DSL program",
                       description="Parse PROG.py, run the pass pipeline and write the generated files.")
    p.add_argument("file", help="Python file defining a @pl.program class")
    p.add_argument("-o", "--output", default="out", help="output directory (default: out)")
    p.add_argument("--program", help="program to compile when the file defines several")
    p.add_argument("--func", help="Orchestration function to generate (default: all)")
    p.add_argument("--dump-ir", metavar="DIR", help="write the printed IR after each pass to DIR")
    p.add_argument("--analyze-auto-scopes-for-deps", action="store_true",
                   help="derive task dependencies of AUTO regions at compile time (docs/auto_dependencies.md)")


def cmd_compile(args) -> int:
    from pypto import codegen

    reject_empty_paths(args, [("the program file", "file"), ("-o", "output"), ("--dump-ir", "dump_ir")])
    problem = probe_directory(args.dump_ir) if args.dump_ir else None
    if problem:         # found now, not by the first pass that dumps
        raise CliError("--dump-ir: cannot write the IR dumps to %s: %s" % (args.dump_ir, problem))
    programs = load_programs(args.file)
    _, program = select_program(programs, args.program, args.file)
    if args.func is not None:   # known from the parsed program: no compile for a misspelt name
        require_orchestration(program, args.func, "--func")
    prepared = codegen.run_pipeline(program, dump_dir=args.dump_ir,
                                    analyze_auto_scopes_for_deps=args.analyze_auto_scopes_for_deps)
    funcs = [args.func] if args.func is not None else codegen.orchestration_functions(prepared)   # --func "" is a name
    if not funcs:   # located at the class, as `pypto run` says it (pypto.compile's _choose_entry)
        from pypto.errors import PyptoError, located_at
        raise PyptoError("program '%s' has no Orchestration function to compile" % program.name,
                         help="mark the entry with @pl.function(type=pl.FunctionType.Orchestration)",
                         **located_at(program))
    from pypto import host
    host_level = set(host.host_functions(prepared))
    if args.analyze_auto_scopes_for_deps:   # what the analysis made of each function, or why it fell back
        for fn in funcs:
            verdict = prepared.get(fn).attrs.get("auto_deps") if prepared.get(fn) is not None else None
            if verdict:
                print("pypto: %s: derived dependencies: %s" % (fn, verdict), file=sys.stderr)
    files: Dict[str, str] = {}
    for fn in funcs:
        # (the generators list their files by codegen::SourceStem, as the builds name them: a
        # function name of any length gives a file name the file system takes)
        if fn in host_level:  # a distributed HOST-level orchestration: C++ against pto_l3_api.h
            files.update(host.generate_host_orchestration(prepared, fn, run_passes=False).files)
            continue
        result = codegen.generate_orchestration(prepared, fn, run_passes=False)
        files.update(result.files)   # the orchestration and kernel_config.py
        files.update(kernel_files(prepared, result.kernel_ids))   # CPU kernels (e2e)
    from pypto.runtime.build import OutputPathError, check_output_dir
    try:   # every file before the first is written: one of them may be the program file itself
        check_output_dir(args.output, sorted(files), [args.file])
    except OutputPathError as e:
        raise CliError("-o: %s; %s" % (e.message, e.help) if e.help else "-o: %s" % e.message)
    for path in write_files(files, args.output):
        print(path)
    return 0
