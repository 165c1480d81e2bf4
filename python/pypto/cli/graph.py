"""``pypto graph prog.py -o g.dot [--svg] [--static]``: run a program once on seeded random
inputs (or ``--inputs``) and write its executed task graph as Graphviz DOT
(``CompiledProgram.task_graph``); with ``--static``, read the graph from the IR without
running anything (programs without data-dependent control flow; ``pypto.static_graph``).

    pypto graph examples/online_softmax.py -o attn.dot --svg    # also attn.svg, when dot is installed
    pypto graph examples/tiled_matmul.py --static -o mm.dot     # nothing is built or run
"""

from __future__ import annotations

import os
import shutil
import subprocess

from pypto.cli.arrays import entry_inputs, npz_members_problem, npz_problem
from pypto.runtime.trace_path import probe_writable
from pypto.cli.common import (CliError, not_a_file, check_dims, load_programs, parse_dims, parse_scalars,
                              reject_empty_paths, reject_overwriting_program, require_orchestration, select_program)

__all__ = ["add_graph_parser", "cmd_graph"]


def add_graph_parser(sub) -> None:
    p = sub.add_parser("graph", help="write a program's executed task graph as Graphviz DOT",
                       description="Compile PROG.py, run its entry once on seeded random inputs and write the "
                                   "task graph that ran: tasks labelled with kernel, core type and source line; "
                                   "automatic edges solid, explicit deps= bold blue, get_tensor_data waits "
                                   "dotted; barriers as diamonds, predicate-skipped tasks dashed.")
    p.add_argument("file", help="Python file defining a @pl.program class")
    p.add_argument("-o", "--output", default="graph.dot", help="DOT file to write (default graph.dot)")
    p.add_argument("--svg", action="store_true", help="also render OUTPUT with Graphviz's dot to an .svg next to it")
    p.add_argument("--program", help="program to use when the file defines several")
    p.add_argument("--entry", help="Orchestration function to run (default: the only one)")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=N",
                   help="extent of a pl.dynamic dimension (repeatable)")
    p.add_argument("--inputs", metavar="FILE.npz", help="named input arrays (see pypto run --inputs)")
    p.add_argument("--seed", type=int, default=None, help="random seed of the inputs (default 0)")
    p.add_argument("--static", action="store_true",
                   help="read the graph from the IR without running (loops unrolled, conditions evaluated: only "
                        "for programs without data-dependent control flow; scalar parameters as --scalar)")
    p.add_argument("--analyze-auto-scopes-for-deps", action="store_true",
                   help="compile with the compiler's derived task dependencies (drawn as explicit edges)")
    p.add_argument("--scalar", action="append", default=[], metavar="NAME=V",
                   help="with --static: value of a scalar parameter (repeatable)")


def cmd_graph(args) -> int:
    import pypto

    reject_empty_paths(args, [("the program file", "file"), ("-o", "output"), ("--inputs", "inputs")])
    reject_overwriting_program(args, [("-o", "output")])
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if os.path.isdir(args.output):   # found now, not after the run that draws the graph
        raise CliError("-o: %s is a directory; give a file path" % args.output)
    if not os.path.isdir(out_dir):
        raise CliError("-o: directory %s does not exist" % out_dir)
    problem = probe_writable(args.output)
    if problem:    # e.g. a directory that takes no new files (/proc)
        raise CliError("-o: cannot write %s: %s" % (args.output, problem))
    if args.inputs and not os.path.isfile(args.inputs):
        raise CliError("--inputs: %s" % not_a_file(args.inputs))
    problem = npz_problem(args.inputs) if args.inputs else ""
    if problem:    # found now, not after the compile
        raise CliError("--inputs: %s is not a NumPy .npz file: %s" % (args.inputs, problem))
    problem = npz_members_problem(args.inputs) if args.inputs else ""
    if problem:    # an object array, a member that is no array: also before the compile
        raise CliError("--inputs: %s" % problem)
    if args.svg and os.path.splitext(args.output)[1].lower() == ".svg":   # dot would overwrite its own input
        raise CliError("--svg renders -o %s to %s, the same file; give the DOT file a .dot name"
                       % (args.output, args.output))
    dot = shutil.which("dot") if args.svg else None
    if args.svg and dot is None:
        raise CliError("--svg needs Graphviz's dot (apt-get install graphviz); the .dot file can be rendered "
                       "elsewhere")
    if args.seed is not None and args.seed < 0:   # as pypto run: before compiling, naming the flag
        raise CliError("--seed must be a non-negative integer, got %d" % args.seed)
    programs = load_programs(args.file)
    _, program = select_program(programs, args.program, args.file)
    try:
        dims = parse_dims(args.dim)
    except ValueError as e:
        raise CliError(str(e))
    # The names are known once the file is parsed: an unknown one costs no compile (the entry's
    # own names are checked again by entry_inputs, after it).
    check_dims(dims, [v.name for v in program.dynamic_dims], "program %s" % program.name)
    if args.entry is not None:
        require_orchestration(program, args.entry, "--entry")
    if args.scalar and not args.static:
        raise CliError("--scalar sets a scalar parameter for --static; a run takes its inputs from --inputs "
                       "(or seeded random values)")
    for flag, given in (("--inputs", args.inputs), ("--seed", args.seed is not None)):
        if args.static and given:   # was ignored: nothing runs
            raise CliError("%s gives a run its inputs; --static reads the graph from the IR without running: give "
                           "scalar parameters with --scalar NAME=V, or leave --static out" % flag)
    if args.static:  # from the IR: nothing is built or run
        from pypto.runtime.args import ArgumentTypeError, ArgumentValueError
        from pypto.static_graph import StaticGraphError, program_task_graph
        try:
            scalars = parse_scalars(args.scalar)
        except ValueError as e:
            raise CliError(str(e))
        try:
            entry, text = program_task_graph(program, args.entry, dims=dims, scalars=scalars,
                                             analyze_auto_scopes_for_deps=args.analyze_auto_scopes_for_deps)
        except (ArgumentTypeError, ArgumentValueError) as e:   # a --scalar value a run would refuse, its text
            raise CliError("--scalar: %s%s" % (e.message, "; " + e.help if e.help else ""))
        except StaticGraphError as e:
            # The located diagnostic without its own "error: " (CliError prints "pypto: error: "; it
            # read "pypto: error: error: no static task graph ...").
            text = str(e)[len("error: "):] if str(e).startswith("error: ") else str(e)
            if getattr(e, "message", "").startswith("scalar "):   # a --scalar the entry has no parameter for
                raise CliError("--" + e.message)
            raise CliError(text if "no static task graph" in text else "no static task graph: %s" % text)
        try:
            with open(args.output, "w") as f:
                f.write(text)
        except OSError as e:   # opens, but a write fails (/dev/full)
            raise CliError("-o: cannot write %s: %s" % (args.output, e.strerror or e))
    else:
        from pypto.compiler import _host_entry   # the choice pypto.compile makes, known before compiling
        host_entry = _host_entry(program, args.entry)
        if host_entry is not None:
            raise CliError("'%s' is a distributed HOST-level entry: its next-level task graph is in the HOST trace "
                           "(pypto run --trace), its static one in pypto graph --static; choose a chip-level "
                           "orchestration with --entry" % host_entry)
        compiled = pypto.compile(program, entry=args.entry,
                                 analyze_auto_scopes_for_deps=args.analyze_auto_scopes_for_deps)
        entry = compiled.entry
        seed = 0 if args.seed is None else args.seed
        inputs = entry_inputs(compiled.params, lambda d: compiled.random_inputs(seed=seed, dims=d), args.inputs, dims,
                              "entry %s of program %s" % (entry, program.name))
        text = compiled.task_graph(*inputs, path=args.output)
    tasks = text.count('kind="task"')
    print("%stask graph of %s.%s: %d task%s -> %s" % ("static " if args.static else "", program.name,
                                                      entry, tasks, "" if tasks == 1 else "s", args.output))
    if dot is not None:
        svg = os.path.splitext(args.output)[0] + ".svg"
        cp = subprocess.run([dot, "-Tsvg", args.output, "-o", svg], capture_output=True, text=True)
        if cp.returncode != 0:
            raise CliError("dot failed: %s" % cp.stderr.strip())
        print("rendered: %s" % svg)
    return 0
