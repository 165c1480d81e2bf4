"""Distributed HOST orchestration code generation (the L3 runtime, ``pto_l3_api.h``).

A HOST-level orchestration (``@pl.function(type=pl.FunctionType.Orchestration,
level=pl.Level.HOST)``) submits chip-level orchestration functions as next-level tasks::

    from pypto import host
    r = host.generate_host_orchestration(program, "host_main")
    r.code                 # C++ of host/host_main.cpp (entry: host_orchestration_entry)
    r.target_ids           # {"chip_add": 0}: register each L2 entry under its id

    prog = host.compile_host(program, "host_main")   # build for the CPU L3 runtime (cached)
    prog(x, y, z, w)                                 # NumPy arrays; Out / InOut written in place

See docs/manual_dependencies.md, section "Distributed HOST orchestration".
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

from pypto._core import host as _host
from pypto.errors import not_picklable, user_errors_at_the_call
from pypto.runtime.loader import RunStats

__all__ = ["generate_host_orchestration", "host_functions", "target_ids", "compile_host", "HostProgram",
           "HostRunStats", "HostTaskRecord", "write_host_trace", "mpi_world"]


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


# ---------------------------------------------------------------------------------------------
# Building and running a HOST program on the CPU L3 runtime.

@dataclass
class HostRunStats(RunStats):
    """Statistics of one HOST run: a ``pypto.runtime.loader.RunStats`` (what an L2 run
    returns; ``tasks`` counts next-level tasks submitted, ``tasks_dummy`` the barriers) plus
    the L3 figures. ``records`` has one ``HostTaskRecord`` per executed next-level task, in
    submission order. For older callers ``stats["tasks_executed"]`` still works, and
    ``stats["tasks"]`` returns the records as dicts."""
    tasks_submitted: int = 0
    barriers: int = 0
    wait_edges: int = 0
    chain_edges: int = 0
    peak_live_tasks: int = 0
    chips: int = 0
    transport: str = "inprocess"
    records: List["HostTaskRecord"] = field(default_factory=list)
    barrier_deps: Dict[int, Tuple[int, ...]] = field(default_factory=dict)  # barrier index -> what it waited on
    # Tensor bytes the MPI transport moved (0 in-process, where memory is shared): rank 0 -> chips,
    # chips -> the caller's arrays at the end of the run, and chip -> chip directly.
    bytes_to_chips: int = 0
    bytes_from_chips: int = 0
    bytes_between_chips: int = 0

    def __getitem__(self, key: str):
        if key == "tasks":
            return [dict(index=r.index, target=r.target, chip=r.chip, rank=r.rank, start_us=r.start_us,
                         end_us=r.end_us, deps=list(r.deps)) for r in self.records]
        return getattr(self, key)

    def __str__(self) -> str:
        return "%d next-level tasks and %d barriers in %.3f ms on %d chips (%s)" % (
            self.tasks_executed, self.barriers, self.wall_seconds * 1e3, self.chips, self.transport)


@dataclass
class HostTaskRecord:
    """One executed next-level task: ``index`` (1-based; barriers take indices too),
    ``target`` (the chip-level function), ``chip`` (under MPI ``rank = chip + 1``; in-process
    ``rank`` is 0), ``start_us``/``end_us`` from the start of the run as seen by the host, and
    ``deps``: the indices it waited on."""
    index: int
    target: str
    chip: int
    rank: int
    start_us: float
    end_us: float
    deps: Tuple[int, ...] = ()


class HostProgram:
    """A built HOST program: call it with NumPy arrays and Python scalars, in parameter order.

    Out / InOut arrays are written in place; the call returns a ``HostRunStats``. ``library``
    is the built .so, ``output_dir`` where the sources are, ``cached`` True if no compiler
    ran, ``transport`` ``"inprocess"`` or ``"mpi"`` (see docs/distributed.md)."""

    def __init__(self, library: str, signature, files: Dict[str, str], target_ids: Dict[str, int], chips: int,
                 output_dir: str = "", cached: bool = False, entry: str = "", transport: str = "inprocess",
                 mpi: Optional["_Mpi"] = None, kernels: Optional[list] = None):
        self.entry = entry  # the HOST function's name
        self.program = None  # the prepared program (compile_host sets it)
        self.library = library
        self.signature = list(signature)
        self.files = files
        self.target_ids = target_ids
        self.chips = chips
        self._mpi_chips = chips   # an MPI program's chips: every chip rank of the job (compile_host)
        self.output_dir = output_dir
        self.cached = cached
        self.transport = transport
        # KernelEntry of every chip-level kernel (a worker count of 0 is checked against them).
        self.kernels = list(kernels or [])
        self._mpi = mpi
        self._transport_handle = None
        from pypto._core import program_abi
        from pypto.runtime import library_path
        # The glue's entry points through the binding (pto2_c_api.h declares them).
        self._lib = program_abi.HostLibrary(library_path(), os.path.abspath(library))
        if mpi is not None:
            self._transport_handle = mpi.load(library, self._lib)

    def __reduce__(self):
        raise not_picklable("HostProgram", "pypto.host.compile_host(Program, ...)")

    def task_graph(self, *args, path: Optional[str] = None, static: bool = True,
                   dims: Optional[Dict[str, int]] = None, **scalars) -> str:
        """The static next-level task graph of the HOST entry as Graphviz DOT (``pypto.static_graph``):
        one node per submission of a chip-level orchestration (core type CHIP), barriers,
        explicit ``deps=`` edges and the L3 runtime's chain edges (``kind="chain"``: the tasks of
        one target run in submission order). Also written to ``path`` when given. The executed
        graph of a HOST run is its trace (``trace=``, ``pypto run --trace``).

            dot = host.compile_host(Prog).task_graph(static=True)
        """
        from pypto.static_graph import StaticGraphError, static_task_graph
        if not static or args:
            raise StaticGraphError("a HOST program's executed next-level graph is its trace (call it with trace=path, "
                                   "or pypto run --trace); task_graph draws the static one and runs nothing, so it "
                                   "takes no arguments" + (": %d positional value(s) given" % len(args) if args else ""),
                                   help="task_graph(static=True, n=4): scalar parameters by keyword, dynamic "
                                        "dimensions as dims={...}")
        text = static_task_graph(self.program, self.entry, dims=dims,
                                 scalars=scalars)
        if path is not None:
            with open(path, "w") as f:
                f.write(text)
        return text

    def random_inputs(self, seed: int = 0, dims: Optional[Dict[str, int]] = None) -> List:
        """Seeded random arguments in parameter order, as ``CompiledProgram.random_inputs``
        (used by ``pypto run``): ``prog(*prog.random_inputs(seed=1))``."""
        from pypto.runtime.args import random_inputs
        return random_inputs(self.signature, seed, dims)

    last_stats = None  # HostRunStats of the latest call

    # Each in-process chip's workers when a call names none: the runtime's own default.
    DEFAULT_CHIP_WORKERS = (1, 2)
    # In-process chips are threads (L3Options' bound, runtime/src/options_check.h).
    MAX_INPROCESS_CHIPS = 4096
    # What `pypto run --mpi` launches at most: each chip is an MPI rank, a process of its own
    # (Python with pypto, libmpi and the program: 30 MB and more each) that rank 0's progress
    # thread queues tasks to and polls. 4096 ranks is already a cluster's worth (over 120 GB);
    # a typo such as --chips 100000 started mpirun on 100,001 local processes.
    MAX_MPI_CHIPS = 4096

    @user_errors_at_the_call
    def __call__(self, *args, trace: Optional[str] = None, aic_workers: Optional[int] = None,
                 aiv_workers: Optional[int] = None, **kwargs):
        """Runs the HOST entry: arguments as for ``CompiledProgram`` (positional or by name, the
        same checks, omitted pl.Out parameters allocated and returned, else a ``HostRunStats``).
        ``trace="host.json"`` writes the HOST-level trace (``write_host_trace``).
        ``aic_workers`` / ``aiv_workers``: the workers of each chip's runtime (in-process;
        default ``DEFAULT_CHIP_WORKERS``, 1 AIC + 2 AIV; 0 only for a core type no kernel runs on).
        MPI chip ranks run their runtime's defaults: naming a count there is an error.

            stats = prog(x, out, aiv_workers=4)   # every chip runs 1 AIC + 4 AIV workers
        """
        from pypto.runtime.args import ArgumentValueError, bind_and_check, param_specs
        from pypto.runtime.worker_defaults import check_runtime_options, check_worker_counts, warn_oversubscription

        check_runtime_options(aic_workers, aiv_workers)
        names = {p.name for p in param_specs(self.signature)}
        chip_options = [k for k in ("clusters", "task_ring_size", "memory_limit", "graph", "race_check")
                        if k in kwargs and k not in names]
        if chip_options:   # the options of a chip-level call; here they read as misspelt parameters
            raise ArgumentValueError("%s= applies to chip-level entries (pypto.compile's CompiledProgram); %s is a "
                                     "HOST orchestration, whose chips run their runtimes' defaults"
                                     % (chip_options[0], self.entry or "host"),
                                     help="leave it out; a HOST call takes trace=, aic_workers= and aiv_workers= "
                                          "(docs/distributed.md)")
        chips = self.chips   # a public attribute (pypto run sets it): 0 ran 'on 0 chips', -1 / 2.5 were TypeErrors
        if not isinstance(chips, int) or isinstance(chips, bool) or not 1 <= chips <= 0xFFFFFFFF:
            raise ArgumentValueError("HostProgram.chips must be a positive integer, got %r" % (chips,),
                                     help="e.g. prog.chips = 2 (or host.compile_host(..., chips=2))")
        if self.transport != "mpi" and chips > self.MAX_INPROCESS_CHIPS:   # threads were started until one failed
            raise ArgumentValueError("HostProgram.chips %d is more than the in-process transport's %d (each chip is a "
                                     "thread of this process)" % (chips, self.MAX_INPROCESS_CHIPS),
                                     help="use fewer chips, or distributed='mpi' to run them as MPI ranks")
        if self.transport == "mpi" and chips != self._mpi_chips:
            raise ArgumentValueError("HostProgram.chips is %d, but an MPI program runs on every chip rank of the job: %d"
                                     % (chips, self._mpi_chips),
                                     help="launch mpirun -np <chips + 1> for another count")
        if self.transport == "mpi" and (aic_workers is not None or aiv_workers is not None):
            raise ArgumentValueError("aic_workers / aiv_workers apply to in-process chips; the MPI chip ranks run "
                                     "their runtime's default workers (1 AIC + 2 AIV)",
                                     help="leave the counts out of an MPI run")
        aic = aic_workers if aic_workers is not None else self.DEFAULT_CHIP_WORKERS[0]
        aiv = aiv_workers if aiv_workers is not None else self.DEFAULT_CHIP_WORKERS[1]
        check_worker_counts(self.kernels, aic, aiv)
        if self.transport != "mpi":   # every in-process chip runs aic + aiv worker threads of this process
            warn_oversubscription(aic, aiv, chips)

        if trace is not None:   # the one trace-path check of L2 runs: a missing directory fails before running
            from pypto.runtime.trace_path import resolve_trace_path
            trace = resolve_trace_path(trace)
        call = bind_and_check(param_specs(self.signature), self.entry or "host", args, kwargs)

        tensors = []
        for i, ta in enumerate(call.tensors):
            if ta.strides is not None:
                row_major, step = [], 1
                for d in reversed(ta.shape):
                    row_major.insert(0, step)
                    step *= int(d)
                if tuple(int(x) for x in ta.strides) != tuple(row_major):
                    raise ArgumentValueError("tensor argument %d of the HOST entry '%s' is not C-contiguous: HOST "
                                             "runs take row-major arrays" % (i, self.entry),
                                             help="pass np.ascontiguousarray(x) (and copy Out arrays back)")
            tensors.append((ta.data, ta.dtype, [int(d) for d in ta.shape], None))
        scalars = [int(v) & 0xFFFFFFFFFFFFFFFF for v in call.scalars]
        from pypto.runtime.progress import RunIndicator
        with RunIndicator("running %s on %d chips" % (self.entry or "host", self.chips)):  # a long run ticks
            try:
                ok, message, stats, wall, records, bwords = self._lib.run(tensors, scalars, self.chips, aic, aiv,
                                                                          int(self._transport_handle or 0))
            finally:
                call.write_back()   # strided or misaligned written arrays ran on copies
        if not ok:
            from pypto.runtime.dsl_terms import explain_and_locate
            from pypto.runtime.loader import RunError
            message, where = explain_and_locate(message, self.program)
            raise RunError(message, **where)
        names = {tid: name for name, tid in self.target_ids.items()}
        recs = [HostTaskRecord(int(index), names.get(int(target), "?"), int(chip),
                               int(chip) + 1 if self.transport == "mpi" else 0, start, end, tuple(int(x) for x in deps))
                for index, target, chip, start, end, deps in records]
        nbw = len(bwords)
        barrier_deps, i = {}, 0
        while i + 1 < nbw:
            cnt = int(bwords[i + 1])
            barrier_deps[int(bwords[i])] = tuple(int(x) for x in bwords[i + 2:i + 2 + cnt])
            i += 2 + cnt
        result = HostRunStats(tasks=int(stats[0]), tasks_executed=int(stats[1]), tasks_skipped=0,
                              tasks_dummy=int(stats[4]), auto_edges=0, explicit_edges=int(stats[2] + stats[3]),
                              wall_seconds=wall, peak_bytes=0, pool_bytes=0,
                              tasks_submitted=int(stats[0]), barriers=int(stats[4]), wait_edges=int(stats[2]),
                              chain_edges=int(stats[3]), peak_live_tasks=int(stats[6]), chips=self.chips,
                              transport=self.transport, records=recs, barrier_deps=barrier_deps)
        if self._mpi is not None:
            moved = self._mpi.last_bytes(self._transport_handle)
            result.bytes_to_chips, result.bytes_from_chips, result.bytes_between_chips = moved
        result.task_records = [dict(index=r.index, target=r.target, chip=r.chip, rank=r.rank, start_us=r.start_us,
                                    end_us=r.end_us, deps=list(r.deps)) for r in recs]   # RunStats' spelling
        self.last_stats = result
        value = (call.outputs[0] if len(call.outputs) == 1 else tuple(call.outputs)) if call.outputs else result
        if trace is not None:
            try:
                write_host_trace(trace, result)
            except OSError as e:   # a full disk, a path that vanished: was an OSError traceback, the results lost
                from pypto.runtime.loader import RunError
                err = RunError("could not write the trace to %s: %s" % (trace, e.strerror or e),
                               help="the run itself completed: its results are in the arrays passed and in the "
                                    "error's .result; free space or choose another trace path")
                err.stats, err.result = result, value
                raise err from None
            result.trace_path = trace
        return value


def write_host_trace(path: str, stats: "HostRunStats") -> None:
    """Writes a Chrome/Perfetto trace (JSON) of a HOST run: one track group (process) per
    rank or chip, each next-level task a span named after its target, each dependency a flow
    arrow from producer to consumer (barriers run nothing and have no span: an edge through a
    barrier is drawn from each task the barrier waited on, flow name "dep via barrier N").

        stats = prog(x, y, trace="host.json")     # or write_host_trace("host.json", stats)
    """
    import json
    events = []
    mpi = stats.transport == "mpi"
    groups = sorted({r.chip for r in stats.records})
    events.append({"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "rank 0 (HOST entry)" if mpi
                                                                          else "host (in-process L3)"}})
    for c in groups:
        label = "rank %d (chip %d)" % (c + 1, c) if mpi else "chip %d" % c
        events.append({"ph": "M", "name": "process_name", "pid": c + 1, "args": {"name": label}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": c + 1, "args": {"sort_index": c + 1}})
    by_index = {r.index: r for r in stats.records}

    def producers(dep, via=None, seen=None):
        # The executed tasks behind `dep` (through barriers, which may wait on barriers).
        if dep in by_index:
            return [(dep, via)]
        seen = seen if seen is not None else set()
        if dep in seen or dep not in stats.barrier_deps:
            return []
        seen.add(dep)
        out = []
        for d in stats.barrier_deps[dep]:
            out += producers(d, via if via is not None else dep, seen)
        return out

    for r in stats.records:
        events.append({"ph": "X", "name": r.target, "cat": "next-level", "pid": r.chip + 1, "tid": 0,
                       "ts": r.start_us, "dur": max(0.001, r.end_us - r.start_us),
                       "args": {"task": r.index, "deps": list(r.deps), "chip": r.chip, "rank": r.rank}})
        edges = []
        for dep in r.deps:
            edges += producers(dep)
        for dep, via in dict.fromkeys(edges):
            p = by_index[dep]
            fid = "%d-%d" % (dep, r.index)
            name = "dep" if via is None else "dep via barrier %d" % via
            events.append({"ph": "s", "id": fid, "name": name, "cat": "dep", "pid": p.chip + 1, "tid": 0,
                           "ts": p.end_us - 0.001})
            events.append({"ph": "f", "bp": "e", "id": fid, "name": name, "cat": "dep", "pid": r.chip + 1,
                           "tid": 0, "ts": r.start_us + 0.001})
    with open(path, "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ms",
                   "otherData": {"transport": stats.transport, "chips": stats.chips}}, f)


# ---------------------------------------------------------------------------------------------
# The MPI transport (libpto2_mpi): rank 0 runs the HOST entry, the other ranks serve.

def mpi_world() -> Optional[Tuple[int, int]]:
    """``(rank, size)`` from Open MPI's environment when this process was started by mpirun,
    else None (no MPI call is made)."""
    r, n = os.environ.get("OMPI_COMM_WORLD_RANK"), os.environ.get("OMPI_COMM_WORLD_SIZE")
    if r is None or n is None:
        r, n = os.environ.get("PMI_RANK"), os.environ.get("PMI_SIZE")
    return (int(r), int(n)) if r is not None and n is not None else None


def l3_task_timeout() -> float:
    """Seconds rank 0 of an MPI run waits for a next-level task's completion before failing it:
    ``$PYPTO_L3_TASK_TIMEOUT_S`` (unset or empty: 120), a positive finite number of seconds.
    Anything else is a PyptoError naming the variable: text was a ValueError traceback on every
    rank, and 0 or a negative value failed every task 'within 0 s (the rank died, hangs, or the
    message was lost)', blaming a healthy rank."""
    import math

    from pypto.errors import PyptoError
    text = os.environ.get("PYPTO_L3_TASK_TIMEOUT_S", "")
    if not text.strip():
        return 120.0
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise PyptoError("PYPTO_L3_TASK_TIMEOUT_S=%r is not a timeout: it must be a positive number of seconds"
                         % text, help="e.g. PYPTO_L3_TASK_TIMEOUT_S=300, or unset it for the default (120)")
    return value


class _Mpi:
    """libpto2_mpi, loaded and initialised once per process (through ``pypto._core.program_abi``,
    typed by pto_l3_mpi.h: no ctypes mirror of its entry points)."""
    _instance: Optional["_Mpi"] = None

    def __init__(self):
        import atexit

        from pypto._core import program_abi
        from pypto.errors import PyptoError
        from pypto.runtime import library_path
        self.timeout = l3_task_timeout()   # before MPI starts: a bad value fails every rank alike
        path = os.path.join(os.path.dirname(library_path()), "libpto2_mpi.so")
        if not os.path.isfile(path):
            raise PyptoError("distributed='mpi' needs libpto2_mpi.so, which this build of pypto lacks (%s): install "
                             "Open MPI (apt-get install openmpi-bin libopenmpi-dev) and reinstall pypto" % path)
        self.lib = program_abi.MpiLibrary(path)
        ok, self.rank, self.size, message = self.lib.init()
        if not ok:
            raise PyptoError("MPI initialisation failed: " + message)
        self.programs: List = []
        self.transports: List[int] = []
        self.closed = False
        atexit.register(self.close)

    @classmethod
    def get(cls) -> "_Mpi":
        if cls._instance is None:
            cls._instance = _Mpi()
        return cls._instance

    def load(self, library: str, lib) -> int:
        """Rank 0: every serving rank loads the built program ``library`` (the path must be
        readable there: one machine, or a shared file system); returns the transport."""
        program = len(self.programs)
        self.lib.load(program, library)
        self.programs.append(lib)
        transport = self.lib.transport(self.timeout, program)
        if not transport:
            from pypto.errors import PyptoError
            raise PyptoError("the MPI transport cannot be made: " + self.lib.transport_error())
        self.transports.append(transport)
        return transport

    def last_bytes(self, transport: int) -> Tuple[int, int, int]:
        """Rank 0: tensor bytes ``transport`` moved in its last run (to chips, from chips,
        between chips)."""
        return tuple(int(b) for b in self.lib.last_bytes(transport))

    def serve_forever(self) -> None:
        """A chip rank: serves the next-level tasks of every program rank 0 compiles until rank 0
        closes, then exits the process (the user's script after ``pypto.compile`` runs on rank 0
        only)."""
        import sys
        ok, message = self.lib.serve()
        if not ok:
            sys.stderr.write("pypto: MPI rank %d stopped serving: %s\n" % (self.rank, message))
        self.closed = True
        self.lib.close(not ok)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0 if ok else 1)

    def close(self, abort: bool = False) -> None:
        if self.closed:
            return
        self.closed = True
        for lib in self.programs:
            lib.release()
        for t in self.transports:
            self.lib.transport_free(t)
        self.lib.close(abort)


def compile_host(program, func: Union[str, object, None] = None, output_dir: str = None, chips: Optional[int] = None,
                 distributed: Optional[str] = None, _before_build=None) -> HostProgram:
    """Generates and builds a HOST program for the L3 runtime and loads it.

        prog = host.compile_host(MyProgram, "host_main", chips=2)
        stats = prog(x, acc, tmp, out, 0.5, 4)        # NumPy arrays, then scalars, in order

    ``distributed``: None / ``"inprocess"`` (default: ``chips`` chip runtimes on threads of
    this process, default 2) or ``"mpi"`` (under ``mpirun -np N``: rank 0 returns the
    program, every other rank serves next-level tasks inside this call and exits when rank 0
    does; ``chips`` is N - 1: another count is refused). See docs/distributed.md.

    Built: ``host/<func>.cpp``; one ``orchestration/<target>.cpp`` per chip-level target (its
    entry renamed to ``l2_entry_<target>`` with -D, so several link together); the kernels;
    and ``host_runner.cpp`` (registers each target with its own kernel table). Compiled with
    the system C++ compiler by ``pypto.runtime.build.build_sources``, the builder of
    ``pypto.compile``: cached by content hash (a second compile of the same program runs no
    compiler), sources and library copied to ``output_dir`` when given. ``_before_build``: as
    ``pypto.compile``'s (called with the kernel entries and ``HostProgram.DEFAULT_CHIP_WORKERS``)."""
    from pypto import codegen
    from pypto._core import kernel_cpu
    from pypto.errors import PyptoError
    from pypto.runtime.build import build_sources, source_stem

    if distributed not in (None, "inprocess", "mpi"):
        raise PyptoError("distributed=%r: expected None, 'inprocess' or 'mpi'" % (distributed,))
    if chips is not None and (not isinstance(chips, int) or isinstance(chips, bool)):
        raise PyptoError("chips must be a positive integer, got %r" % (chips,))
    if chips is not None and chips < 1:
        raise PyptoError("chips must be at least 1, got %d" % chips)
    mpi = None
    if distributed == "mpi":
        world = mpi_world()
        if world is None:
            raise PyptoError("distributed='mpi': this process was not started by mpirun; run "
                             "`mpirun -np <chips + 1> python prog.py` or `pypto run prog.py --chips N --mpi`")
        if world[1] < 2:
            raise PyptoError("distributed='mpi' needs at least 2 ranks (rank 0 runs the HOST entry, the others are "
                             "chips); this job has 1: mpirun -np <chips + 1>")
        # The MPI transport runs next-level tasks on every chip rank of the job: another count is
        # refused (on every rank, before anything runs), not ignored.
        if chips is not None and chips > world[1] - 1:
            raise PyptoError("%d chips requested but the MPI job has %d ranks (%d chips: rank 0 is the host); launch "
                             "with mpirun -np %d" % (chips, world[1], world[1] - 1, chips + 1))
        if chips is not None and chips < world[1] - 1:
            raise PyptoError("%d chips requested but an MPI program runs on every chip rank of the job: %d (mpirun -np "
                             "%d; rank 0 is the host); launch with mpirun -np %d, or leave chips= out"
                             % (chips, world[1] - 1, world[1], chips + 1))
        chips = world[1] - 1
        mpi = _Mpi.get()
        if mpi.rank != 0:
            mpi.serve_forever()  # never returns: serves what rank 0 builds and loads
    elif chips is None:
        chips = 2
    if func is None:
        names = host_functions(program)
        if len(names) != 1:
            raise PyptoError("pass the HOST function to compile: the program has %d (%s)"
                             % (len(names), ", ".join(names) or "none"))
        func = names[0]
    name = func if isinstance(func, str) else func.name
    prepared = codegen.run_pipeline(program)
    h = _host.generate_host_orchestration(prepared, name)
    # (file names by source_stem: a name of any length is a file name, seed 8812 mutant 51)
    files: Dict[str, str] = {"host/%s.cpp" % source_stem(name): h.code}
    defines: Dict[str, List[str]] = {}
    glue_targets = []
    for target, tid in sorted(h.target_ids.items(), key=lambda kv: kv[1]):
        l2 = codegen.generate_orchestration(prepared, target, run_passes=False)
        rel = "orchestration/%s.cpp" % source_stem(target)
        files[rel] = l2.code
        defines[rel] = ["-Daicpu_orchestration_entry=l2_entry_%s" % target,
                        "-Daicpu_orchestration_config=l2_config_%s" % target]
        kernels = []
        for kname, kid in sorted(l2.kernel_ids.items(), key=lambda kv: kv[1]):
            # The core type is a pass result stamped on the kernel (InferKernelCoreTypes), as
            # in compiler.py; no second source, no guess.
            core = kernel_cpu.core_type(prepared, kname)
            if "kernels/%s.cpp" % source_stem(kname) not in files:
                files["kernels/%s.cpp" % source_stem(kname)] = kernel_cpu.generate(prepared, kname)
            kernels.append((kname, int(kid), core))
        glue_targets.append((target, int(tid), kernels))
    # The glue file (registration + the C entry points called here) comes from the C++ code
    # generator (codegen::GenerateHostEntryGlue).
    files["host_runner.cpp"] = _host.generate_host_entry_glue(glue_targets)
    from pypto.runtime.build import KernelEntry
    kernel_entries = {k[0]: KernelEntry(*k) for _, _, ks in glue_targets for k in ks}
    if _before_build is not None:
        _before_build(list(kernel_entries.values()), HostProgram.DEFAULT_CHIP_WORKERS)

    build_result = build_sources(files, output_dir=output_dir, file_flags=defines, label=name)
    prog = HostProgram(build_result.library, h.signature, files, dict(h.target_ids), chips, entry=name,
                       output_dir=build_result.output_dir, cached=build_result.cached,
                       transport="mpi" if mpi is not None else "inprocess", mpi=mpi,
                       kernels=list(kernel_entries.values()))
    prog.program = prepared   # for task_graph(static=True)
    return prog
