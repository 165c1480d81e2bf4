"""``pypto run`` (registered in pypto/cli/__init__.py).

    pypto run prog.py                         # compile, run the entry on seeded random inputs
    pypto run prog.py --entry main --dim M=128 --trace t.json --aiv-workers 4
    pypto run two_chips.py --chips 4          # a distributed HOST-level entry (L3 runtime)
    pypto run two_chips.py --chips 4 --mpi    # ... its chips as MPI ranks (launches mpirun)

Prints the task count, the wall time and a checksum of each output (Out / InOut tensor):
the sum of its elements (as float64) and the first 16 hex digits of the SHA-256 of its bytes.
Inputs come from ``CompiledProgram.random_inputs(seed)``: floats uniform in [-1, 1),
integers in [-8, 8), Out tensors zeroed, float scalars 0.5 and integer scalars 1.
"""

from __future__ import annotations

import hashlib
import sys
from typing import Dict, List

import numpy as np

__all__ = ["add_run_parser", "cmd_run", "parse_dims", "checksum"]

from pypto.cli.arrays import check_outputs, check_paths, entry_inputs, save_outputs
from pypto.cli.common import (CliError, check_dims, entry_dynamic_dims, load_programs, parse_dims, reject_empty_paths,
                              reject_overwriting_program, require_dim_values, require_orchestration, select_program)
from pypto.runtime.trace_path import probe_directory
from pypto.runtime.worker_defaults import MAX_WORKERS, WorkerCountWarning, clusters_problem, oversubscription


def checksum(arr: np.ndarray) -> str:
    """``sum=<float64 sum> sha256=<16 hex digits>`` of an array (BF16 bits summed as values)."""
    a = np.ascontiguousarray(arr)
    vals = a
    if a.dtype == np.uint16 or a.dtype.name == "bfloat16":
        vals = (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):   # inf + -inf is a nan sum, not a warning on stderr
        total = float(np.sum(vals, dtype=np.float64))
    return "sum=%.6g sha256=%s" % (total, hashlib.sha256(a.tobytes()).hexdigest()[:16])


def add_run_parser(sub) -> None:
    p = sub.add_parser("run", help="compile a DSL program and run it on the CPU runtime",
                       description="Compile PROG.py and run its entry orchestration on seeded random inputs of "
                                   "the declared shapes and dtypes; print the task count, wall time and a "
                                   "checksum of each output.")
    p.add_argument("file", help="Python file defining a @pl.program class")
    p.add_argument("--program", help="program to run when the file defines several")
    p.add_argument("--entry", help="Orchestration function to run (default: the only one)")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=N",
                   help="extent of a pl.dynamic dimension (repeatable), e.g. --dim M=128; one not given is "
                   "read from the --inputs arrays")
    p.add_argument("--trace", metavar="FILE", help="write a Chrome/Perfetto trace of the run")
    p.add_argument("--aic-workers", type=int, default=None,
                   help="AIC (cube) worker threads (default: the program's, CompiledProgram.default_workers; "
                        "of each chip for a HOST entry: 1 AIC + 2 AIV)")
    p.add_argument("--aiv-workers", type=int, default=None,
                   help="AIV (vector) worker threads (default: the program's, CompiledProgram.default_workers; "
                        "of each chip for a HOST entry: 1 AIC + 2 AIV)")
    p.add_argument("--clusters", type=int, default=0,
                   help="cluster count, at most min(aic, aiv) (default 0 = min(aic, aiv))")
    p.add_argument("--chips", type=int, default=None,   # None: not given (2); refused for a chip-level entry
                   help="chips of the L3 runtime, for a distributed HOST-level entry (default 2)")
    p.add_argument("--mpi", action="store_true",
                   help="run a HOST-level entry's chips as MPI ranks: launches mpirun -np CHIPS+1 (see "
                        "docs/distributed.md)")
    p.add_argument("--mpi-args", default="", metavar="ARGS",
                   help="extra mpirun arguments with --mpi, e.g. --mpi-args='--mca btl tcp,self'")
    p.add_argument("--seed", type=int, default=0, help="random seed of the inputs (default 0)")
    p.add_argument("--race-check", nargs="?", const="error", default=None, choices=["error", "warn", "off"],
                   help="report tasks that access the same data unordered: fail the run (error, the default "
                        "when given) or warn; default: $PYPTO_RACE_CHECK")
    p.add_argument("-o", "--output", help="also write the generated sources and library here")
    p.add_argument("--analyze-auto-scopes-for-deps", action="store_true",
                   help="derive task dependencies of AUTO regions at compile time (docs/auto_dependencies.md)")
    p.add_argument("--inputs", metavar="FILE.npz", help="named input arrays (np.savez(path, x=...)); "
                   "parameters not in the file get seeded random values")
    p.add_argument("--save", metavar="FILE.npz", help="write the Out / InOut tensors to FILE.npz by parameter name")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="run N times on the same inputs and print min / median wall time (1..1000000, default 1)")
    p.add_argument("--check", metavar="REF.npz", help="compare the outputs with reference arrays (per-dtype "
                   "tolerances: FP32 rtol 1e-5 atol 1e-6, FP16 1e-3/1e-4, BF16 1e-2/1e-3, integers exact); "
                   "exit status 1 on a mismatch")


# --repeat's bound: 10**20 was accepted and ran until Ctrl-C. A million runs of the smallest
# program (~0.1 ms each with the inputs restored) is minutes; the wall times kept are 8 MB.
MAX_REPEAT = 10 ** 6


def cmd_run(args) -> int:
    import pypto

    reject_empty_paths(args, [("the program file", "file"), ("-o", "output"), ("--trace", "trace"),
                              ("--save", "save"), ("--inputs", "inputs"), ("--check", "check")])
    reject_overwriting_program(args, [("--save", "save"), ("--trace", "trace")])
    check_paths(args)   # before compiling or running: nothing runs whose results cannot be written
    problem = probe_directory(args.output) if args.output else None
    if problem:         # found now, not after the build whose sources and library it would hold
        raise CliError("-o: cannot write the generated sources to %s: %s" % (args.output, problem))
    if not 1 <= args.repeat <= MAX_REPEAT:    # a usage error, found before the (possibly long) compile
        raise CliError("--repeat must be in 1..%d, got %d%s" % (
            MAX_REPEAT, args.repeat, "" if args.repeat < 1 else
            ": it runs the program that many times, one after the other (each run's wall time is kept for the "
            "median); for a longer measurement run pypto again or loop over CompiledProgram calls"))
    _check_count_flags(args)
    programs = load_programs(args.file)
    _, program = select_program(programs, args.program, args.file)
    try:
        dims = parse_dims(args.dim)
    except ValueError as e:
        raise CliError(str(e))
    # Known once the file is parsed: an unknown name (or any, for a program without dynamic
    # dimensions) was refused only after the C++ build. The entry's own are checked after it.
    check_dims(dims, [v.name for v in program.dynamic_dims], "program %s" % program.name)
    from pypto.host import HostProgram, host_functions, mpi_world
    hosts = host_functions(program)
    # Every rank of an MPI job parses the same flags: refused before any rank compiles or serves.
    if getattr(args, "mpi", False) and (args.aic_workers is not None or args.aiv_workers is not None):
        raise CliError("--aic-workers / --aiv-workers apply to in-process chips; the MPI chip ranks run their "
                       "runtime's default workers (1 AIC + 2 AIV): leave them out with --mpi")
    if getattr(args, "mpi", False):   # checked before mpirun starts ranks that would each compile and fail
        if args.entry is not None and args.entry not in hosts or args.entry is None and len(hosts) != 1:
            what = ("'%s' is not a HOST-level orchestration of program %s" % (args.entry, program.name)
                    if args.entry is not None else "program %s has %s HOST-level orchestration%s"
                    % (program.name, len(hosts) or "no", "s (name one with --entry)" if hosts else ""))
            raise CliError("--mpi runs a HOST-level entry's chips as MPI ranks, but %s; run a chip-level entry "
                           "without --mpi" % what)
    entry = _run_entry(program, args.entry, hosts)
    if entry is not None and args.inputs is None:   # was the call's error, after the compile
        require_dim_values(entry_dynamic_dims(program, entry), dims, inputs_given=False)
    chip_level = args.entry not in hosts if args.entry is not None else not hosts
    if args.chips is not None and chip_level:   # was ignored: a chip-level entry runs on one chip
        raise CliError("--chips sets the chips of a HOST-level entry's L3 runtime; %s is a chip-level "
                       "orchestration (it runs on one chip): leave --chips out"
                       % ("%s.%s" % (program.name, args.entry) if args.entry else "the entry of program %s" % program.name))
    if args.chips is None:
        args.chips = 2
    _warn_oversubscription(args, chip_level)
    if getattr(args, "mpi", False) and mpi_world() is None:
        return _launch_mpi(args)
    from pypto.runtime.build import OutputPathError
    try:   # -o's files are checked before the build: one of them the program file, an --inputs file...
        compiled = pypto.compile(program, output_dir=args.output, entry=args.entry,
                                 distributed="mpi" if getattr(args, "mpi", False) else None,
                                 analyze_auto_scopes_for_deps=getattr(args, "analyze_auto_scopes_for_deps", False),
                                 _before_build=lambda kernels, defaults: _check_zero_workers(args, kernels, defaults,
                                                                                             chip_level),
                                 _protected=[(f, role) for f, role in ((args.file, "the program file"),
                                                                       (args.inputs, "the --inputs file"),
                                                                       (args.check, "the --check file")) if f])
    except OutputPathError as e:
        raise CliError("-o: %s; %s" % (e.message, e.help) if e.help else "-o: %s" % e.message)
    if isinstance(compiled, HostProgram):
        return _run_host(args, program, compiled, dims)
    print("compiled %s.%s (%d kernel%s) -> %s" % (program.name, compiled.entry, len(compiled.kernels),
                                                  "" if len(compiled.kernels) == 1 else "s", compiled.output_dir))
    if getattr(args, "analyze_auto_scopes_for_deps", False):   # what the analysis made of the entry
        fn = compiled.program.get(compiled.entry)
        if fn is not None and fn.attrs.get("auto_deps"):
            print("derived dependencies: %s" % fn.attrs["auto_deps"])
    inputs = entry_inputs(compiled.params, lambda d: compiled.random_inputs(seed=args.seed, dims=d), args.inputs, dims,
                          "entry %s of program %s" % (compiled.entry, program.name))
    # A count not given is the program's default for its type (a call's own rule).
    aic = args.aic_workers if args.aic_workers is not None else compiled.default_workers[0]
    aiv = args.aiv_workers if args.aiv_workers is not None else compiled.default_workers[1]
    stats, walls, trace_error = _repeated_runs(args, inputs, lambda trace: compiled(
        *inputs, aic_workers=aic, aiv_workers=aiv, clusters=args.clusters, trace=trace, race_check=args.race_check))
    print("ran %d tasks in %.3f ms (%d AIC + %d AIV workers)" % (stats.tasks, stats.wall_seconds * 1e3,
                                                                 aic, aiv))
    _print_repeats(args, walls)
    _print_outputs(compiled.params, inputs)
    return _trace_and_save(args, compiled.params, inputs, trace_error)


def _run_entry(program, wanted, hosts):
    """The entry pypto.compile will run, found before compiling: ``--entry`` must name an
    Orchestration function; without it the program's only HOST-level one, else its only one.
    None when it has none (pypto.compile reports that, located at the class)."""
    from pypto import codegen
    if wanted is not None:
        require_orchestration(program, wanted, "--entry")
        return wanted
    if len(hosts) == 1:
        return hosts[0]
    orch = codegen.orchestration_functions(program)
    if len(orch) > 1:
        raise CliError("program %s has %d Orchestration functions (%s): choose the entry with --entry NAME"
                       % (program.name, len(orch), ", ".join(orch)))
    return orch[0] if orch else None


def _trace_and_save(args, params, inputs, trace_error) -> int:
    """The end of a run: the trace line, --save / --check, then the error writing the trace if
    there was one (after the results are safe)."""
    if args.trace and trace_error is None:
        print("trace: %s" % args.trace)
    status = _save_and_check(args, params, inputs)
    if trace_error is not None:
        raise trace_error
    return status


# The counts' own rules, checked before the program is even loaded: the run could not use them.
_COUNT_FLAGS = (("--aic-workers", "aic_workers"), ("--aiv-workers", "aiv_workers"), ("--clusters", "clusters"),
                ("--seed", "seed"))


def _check_count_flags(args) -> None:
    for flag, attr in _COUNT_FLAGS:
        value = getattr(args, attr, None)
        if value is not None and value < 0:
            raise CliError("%s must be a non-negative integer, got %d" % (flag, value))
        if value is not None and attr.endswith("_workers") and value > MAX_WORKERS:   # was refused after the build
            raise CliError("%s must be at most %d (the runtime's bound on the workers of a core type), got %d"
                           % (flag, MAX_WORKERS, value))
        if value is not None and attr != "seed" and value > 0xFFFFFFFF:   # the runtime's uint32 (never truncated)
            raise CliError("%s must be at most %d, got %d" % (flag, 0xFFFFFFFF, value))
    if args.aic_workers == 0 and args.aiv_workers == 0:
        raise CliError("--aic-workers 0 --aiv-workers 0: no worker would run a task; give at least one worker")
    if args.chips is not None and args.chips < 1:
        raise CliError("--chips must be at least 1, got %d" % args.chips)
    if args.chips is not None and args.chips > 4096 and not getattr(args, "mpi", False):
        # HostProgram.MAX_INPROCESS_CHIPS: a thread each; more were started until one failed
        raise CliError("--chips must be at most 4096 for in-process chips (each is a thread), got %d; with --mpi "
                       "they are MPI ranks" % args.chips)
    if args.chips is not None and getattr(args, "mpi", False):
        from pypto.host import HostProgram
        if args.chips > HostProgram.MAX_MPI_CHIPS:   # refused before mpirun starts CHIPS + 1 processes
            raise CliError("--chips must be at most %d with --mpi (each chip is an MPI rank: a process of its own, 30 "
                           "MB and more), got %d: mpirun would start %d processes"
                           % (HostProgram.MAX_MPI_CHIPS, args.chips, args.chips + 1))
    if args.mpi_args and not getattr(args, "mpi", False):   # was ignored
        raise CliError("--mpi-args passes arguments to mpirun, which only --mpi launches; add --mpi (for a "
                       "HOST-level entry) or leave --mpi-args out")


def _warn_oversubscription(args, chip_level) -> None:
    """Once, before compiling: a warning on stderr when the worker flags (times --chips of an
    in-process HOST entry) start more threads than OVERSUBSCRIBED_PER_CPU per CPU. The calls'
    own WorkerCountWarning is then silenced (_repeated_runs): it would say it again."""
    from pypto.host import HostProgram
    if getattr(args, "mpi", False):   # the chips are MPI ranks (processes), not threads of this one
        return
    if chip_level:   # a count not given is the program's default, at most the CPUs (not known yet: 0)
        defaults = (0, 0)
    else:   # --chips multiplies each chip's workers (of the defaults too)
        defaults = HostProgram.DEFAULT_CHIP_WORKERS
    names = tuple(flag if given is not None else core + " workers"
                  for flag, given, core in (("--aic-workers", args.aic_workers, "AIC"),
                                            ("--aiv-workers", args.aiv_workers, "AIV")))
    aic = args.aic_workers if args.aic_workers is not None else defaults[0]
    aiv = args.aiv_workers if args.aiv_workers is not None else defaults[1]
    problem = oversubscription(aic, aiv, 1 if chip_level else args.chips, names=names) if aic + aiv else ""
    if problem:
        print("pypto: warning: %s" % problem, file=sys.stderr)


def _check_zero_workers(args, kernels, defaults, chip_level=False) -> None:
    """A worker flag of 0 for a core type some kernel runs on, and (chip-level) --clusters above
    the AIC+AIV worker pairs (called by pypto.compile after the passes, before the C++ build: the
    kernels' core types, hence the default counts, are known then)."""
    for flag, given, core in (("--aic-workers", args.aic_workers, "AIC"), ("--aiv-workers", args.aiv_workers, "AIV")):
        users = [k.name for k in kernels if k.core_type.name == core]
        if given == 0 and users:
            raise CliError("%s 0: kernel '%s' runs on %s workers; give at least 1 (or leave the flag out: the "
                           "default is %d AIC + %d AIV)" % (flag, users[0], core, defaults[0], defaults[1]))
    if chip_level and args.clusters:
        aic = args.aic_workers if args.aic_workers is not None else defaults[0]
        aiv = args.aiv_workers if args.aiv_workers is not None else defaults[1]
        problem = clusters_problem(args.clusters, aic, aiv, ("--clusters", "AIC workers", "AIV workers"),
                                   "more workers (--aic-workers / --aiv-workers)")
        if problem:
            raise CliError(problem)


def _save_and_check(args, params, inputs) -> int:
    if args.save:
        save_outputs(args.save, params, inputs)
        print("saved: %s" % args.save)
    if args.check:
        lines = check_outputs(args.check, params, inputs)
        print("check against %s:" % args.check)
        print("\n".join(lines))
        if any("MISMATCH" in line for line in lines):
            return 1
    return 0


def _repeated_runs(args, inputs, run_once):
    """Runs run_once(trace) --repeat times, each from the same inputs (InOut tensors are updated
    in place), the trace written by the last; (the last run's stats, every run's wall seconds,
    the error writing the trace or None). A run that completed but whose trace could not be
    written (a full disk) still counts: the caller prints and saves its results, then raises the
    error (they were lost with it)."""
    import warnings

    from pypto.runtime.loader import RunError
    pristine = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in inputs]
    walls = []
    with warnings.catch_warnings():   # said once by _warn_oversubscription, with the flags' names
        warnings.simplefilter("ignore", WorkerCountWarning)
        for r in range(args.repeat):
            if r:
                for a, b in zip(inputs, pristine):
                    if isinstance(a, np.ndarray):
                        np.copyto(a, b)
            try:
                stats = run_once(args.trace if r == args.repeat - 1 else None)
            except RunError as e:
                if getattr(e, "stats", None) is None:   # the run itself failed
                    raise
                walls.append(e.stats.wall_seconds)
                return e.stats, walls, e
            walls.append(stats.wall_seconds)
    return stats, walls, None


def _print_repeats(args, walls) -> None:
    if args.repeat > 1:
        print("%d runs: min %.3f ms, median %.3f ms" % (args.repeat, min(walls) * 1e3,
                                                        float(np.median(walls)) * 1e3))


def _print_outputs(params, inputs) -> None:
    for p, arr in zip(params, inputs):
        if p.kind == "tensor" and p.direction in ("Out", "InOut"):
            print("  %-6s %-10s %-14s %s" % (p.direction, p.name, "x".join(str(s) for s in arr.shape) + " " + p.dtype,
                                           checksum(arr)))


# A distributed HOST-level entry: its pl.submit calls are next-level tasks on the L3 runtime
# (pypto.host), each running a chip-level orchestration on one of --chips chips.
def _run_host(args, program, compiled, dims) -> int:
    import time

    # What only a chip-level run has: refused rather than ignored.
    for flag, given in (("--clusters", args.clusters != 0), ("--race-check", args.race_check is not None)):
        if given:
            raise CliError("%s applies to chip-level entries; %s.%s is a HOST orchestration (its chips run with "
                           "the runtime's defaults)" % (flag, program.name, compiled.entry))
    if compiled.transport != "mpi":
        compiled.chips = args.chips
    elif args.chips > compiled.chips:
        raise CliError("--chips %d but the MPI job has %d chip ranks (launch with mpirun -np %d)"
                       % (args.chips, compiled.chips, args.chips + 1))
    print("compiled %s.%s (HOST, %d next-level target%s) -> %s"
          % (program.name, compiled.entry, len(compiled.target_ids), "" if len(compiled.target_ids) == 1 else "s",
             compiled.output_dir))
    inputs = entry_inputs(compiled.signature, lambda d: compiled.random_inputs(seed=args.seed, dims=d), args.inputs,
                          dims, "entry %s of program %s" % (compiled.entry, program.name))
    aic = args.aic_workers if args.aic_workers is not None else compiled.DEFAULT_CHIP_WORKERS[0]
    aiv = args.aiv_workers if args.aiv_workers is not None else compiled.DEFAULT_CHIP_WORKERS[1]
    counts = {} if compiled.transport == "mpi" else dict(aic_workers=aic, aiv_workers=aiv)

    def run_once(trace):
        t0 = time.perf_counter()
        stats = compiled(*inputs, trace=trace, **counts)
        stats.wall_seconds = time.perf_counter() - t0   # the call as the user waits for it
        return stats

    stats, walls, trace_error = _repeated_runs(args, inputs, run_once)
    n, b = stats.tasks_executed, stats.barriers
    print("ran %d next-level task%s and %d barrier%s in %.3f ms on %d chip%s%s"
          % (n, "" if n == 1 else "s", b, "" if b == 1 else "s", stats.wall_seconds * 1e3, compiled.chips,
             "" if compiled.chips == 1 else "s", " (MPI ranks)" if compiled.transport == "mpi"
             else " (%d AIC + %d AIV workers each)" % (aic, aiv)))
    _print_repeats(args, walls)
    _print_outputs(compiled.signature, inputs)
    return _trace_and_save(args, compiled.signature, inputs, trace_error)


def _launch_mpi(args) -> int:
    """``pypto run ... --mpi`` outside mpirun: re-runs the same command under
    ``mpirun -np CHIPS+1`` (oversubscribed, allowed as root) and returns its exit code."""
    import os
    import shlex
    import shutil
    import subprocess
    import sys

    from pypto.errors import PyptoError
    from pypto.host import l3_task_timeout
    from pypto._core import program_abi
    try:   # refused once here, not by each of CHIPS+1 ranks
        l3_task_timeout()
    except PyptoError as e:
        raise CliError("%s (%s)" % (e.message, e.help))
    try:   # the PTO2_L3_MPI_* knobs, by the ranks' own rules (l3_mpi_env.h)
        program_abi.check_mpi_env()
    except ValueError as e:
        raise CliError(str(e))
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    if mpirun is None:
        raise CliError("--mpi needs mpirun (Open MPI: apt-get install openmpi-bin libopenmpi-dev)")
    try:
        extra = shlex.split(args.mpi_args)
    except ValueError as e:   # an unbalanced quote: was a ValueError traceback
        raise CliError("--mpi-args %r: %s (the arguments are split as a shell would); balance the quotes"
                       % (args.mpi_args, str(e).lower()))
    cmd = [mpirun, "-np", str(args.chips + 1), "--oversubscribe"] + extra
    env = dict(os.environ)
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # Open MPI refuses root without these
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    # Not `-m pypto.cli`: that would load the CLI module twice (__main__ and pypto.cli).
    run = [sys.executable, "-c", "import sys; from pypto.cli import main; sys.exit(main(sys.argv[1:]))",
           "run", args.file, "--mpi", "--chips", str(args.chips),
           "--seed", str(args.seed)]
    for flag, value in (("--program", args.program), ("--entry", args.entry), ("--trace", args.trace),
                        ("-o", args.output), ("--inputs", args.inputs), ("--save", args.save),
                        ("--check", args.check)):
        if value:
            run += [flag, value]
    for d in args.dim:
        run += ["--dim", d]
    return subprocess.call(cmd + run, env=env)
