"""The user API: compile a DSL program for the CPU runtime and call it on NumPy arrays.

    import numpy as np
    import pypto
    import pypto.language as pl

    compiled = pypto.compile(VectorAdd)               # VectorAdd: a @pl.program
    a = np.random.rand(16, 16).astype(np.float32)
    b = np.ones((16, 16), np.float32)
    d = np.empty((16, 16), np.float32)
    stats = compiled(a, b, d)                         # Out / InOut arrays are written in place
    assert np.allclose(d, a + 2 * b)
    print(stats.tasks, stats.wall_seconds)
    compiled.files["kernels/kernel_add.cpp"]          # generated sources, by path

``pypto.compile`` runs the pass pipeline and the code generators (orchestration and CPU
kernels), builds the result against libpto2 with the system C++ compiler (cached by content
hash: a second compile of the same program runs no compiler) and loads it. Calling the
:class:`CompiledProgram` checks every argument against the entry's signature before anything
runs, then runs the entry orchestration on the runtime's worker threads. See docs/running.md.
"""

from __future__ import annotations

import functools
import os
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

from pypto.errors import PyptoError, located_at, not_picklable, user_errors_at_the_call
from pypto.log import logger
from pypto.runtime.args import (  # noqa: F401 - re-exported: the user API names them here
    ArgumentTypeError, ArgumentValueError, BoundCall, ParamSpec, TensorArg, bfloat16_dtype, bind_and_check,
    numpy_dtype, param_specs, random_array, random_inputs,
)
from pypto.runtime.build import BuildResult, KernelEntry, build_program, check_output_dir
from pypto.runtime.fast_args import fast_marshaller
from pypto.runtime.dsl_terms import explain_and_locate
from pypto.runtime.loader import ProgramLibrary, RunError, RunStats, race_check_mode
from pypto.runtime.progress import RunIndicator, progress_enabled
from pypto.runtime.trace_path import as_output_path, probe_writable, resolve_trace_path
from pypto.runtime.worker_defaults import (check_runtime_options, check_worker_counts, clusters_problem, default_workers,
                                           warn_oversubscription)

__all__ = ["compile", "CompiledProgram", "ParamSpec", "ArgumentTypeError", "ArgumentValueError", "RunError",
           "RunStats", "numpy_dtype", "bfloat16_dtype"]


# ---------------------------------------------------------------------------------------------
# The entry signature

class _Param:
    """A signature entry built from ``kernel_cpu.signature`` dicts (the attribute form of
    ``ParamSignature``, what ``param_specs`` reads)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _signature_from(result, program, entry) -> List[ParamSpec]:
    from pypto._core import kernel_cpu
    sig = getattr(result, "signature", None)
    specs: List[ParamSpec] = []
    if sig:
        specs = param_specs(sig)
    else:  # derive from the IR (tensor / scalar slots in parameter order)
        ti = si = 0
        for p in kernel_cpu.signature(program, entry):
            slot = ti if p["kind"] == "tensor" else si
            if p["kind"] == "tensor":
                ti += 1
            else:
                si += 1
            specs.append(param_specs([_Param(slot=slot, **p)])[0])
    try:
        fn = program.get(entry)
        for s, v in zip(specs, fn.params):
            s.span = v.span
    except Exception:  # spans are a nicety for messages
        pass
    return specs


# ---------------------------------------------------------------------------------------------
# Compiling

def _orchestration_functions(program) -> List[str]:
    from pypto._core import kernel_cpu
    return [name for name, ftype in kernel_cpu.functions(program) if ftype == "Orchestration"]


def _choose_entry(program, entry: Optional[str]) -> str:
    orch = _orchestration_functions(program)
    if entry is not None:
        if entry not in orch:
            raise PyptoError("entry '%s' is not an Orchestration function of program '%s'" % (entry, program.name),
                             help="Orchestration functions: %s" % (", ".join(orch) or "none"))
        return entry
    if len(orch) == 1:
        return orch[0]
    if not orch:
        raise PyptoError("program '%s' has no Orchestration function to run" % program.name,
                         help="mark the entry with @pl.function(type=pl.FunctionType.Orchestration)",
                         **located_at(program))
    raise PyptoError("program '%s' has %d Orchestration functions (%s); which one is the entry?"
                     % (program.name, len(orch), ", ".join(orch)),
                     help="pass entry=, e.g. pypto.compile(program, entry=%r)" % orch[0])


def _refuse_number_results(fn) -> None:
    """An entry orchestration that returns a number would lose it: the run's results are the
    arrays passed for its tensor parameters (the generated entry returns nothing), so the call
    could only drop it. Refused at the ``return``."""
    from pypto._core import ir
    if not any(isinstance(t, ir.ScalarType) for t in fn.return_types):
        return
    body = fn.body
    stmts = list(body.stmts) if isinstance(body, ir.SeqStmts) else [body]
    ret = next((st for st in reversed(stmts) if isinstance(st, ir.ReturnStmt)), None)
    raise PyptoError("the entry orchestration '%s' returns a number, which no caller receives: a run's results "
                     "are the arrays passed for its pl.Out / pl.InOut tensor parameters" % fn.name,
                     help="write the value into a tensor parameter (declare `out: pl.Out[pl.Tensor[[1], "
                          "pl.INT64]]` and `pl.tensor.write(out, [0], value)`) and read it from that array "
                          "after the call", **located_at(ret if ret is not None else fn))


def _host_entry(program, entry: Optional[str]) -> Optional[str]:
    """The HOST-level Orchestration function to run, if that is what `entry` selects.

    With no `entry`, a program with exactly one HOST-level orchestration runs that one (its
    chip-level orchestrations are the next-level targets)."""
    from pypto import host
    hosts = host.host_functions(program)
    if entry is not None:
        return entry if entry in hosts else None
    return hosts[0] if len(hosts) == 1 else None


def _as_program(program):
    """Accepts an IR Program (what @pl.program returns)."""
    if hasattr(program, "functions") and hasattr(program, "get"):
        return program
    raise PyptoError("pypto.compile expects a program (a class decorated with @pl.program), got %s"
                     % type(program).__name__, help="decorate the class with @pl.program", **located_at(program))


def generate(program, entry: Optional[str] = None, analyze_auto_scopes_for_deps: bool = False):
    """Runs the passes and both code generators without building.

    Returns ``(entry, orchestration_result, kernel_sources, kernel_entries)``.
    """
    from pypto import codegen
    from pypto._core import kernel_cpu

    program = _as_program(program)
    entry = _choose_entry(program, entry)
    _refuse_number_results(program.get(entry))
    prepared = codegen.run_pipeline(program, analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps)
    result = codegen.generate_orchestration(prepared, entry, run_passes=False)
    kernel_ids: Dict[str, int] = dict(result.kernel_ids)
    sources: Dict[str, str] = {}
    entries: List[KernelEntry] = []
    for name, kid in sorted(kernel_ids.items(), key=lambda kv: kv[1]):
        sources[name] = kernel_cpu.generate(prepared, name)
        # The core type is a pass result stamped on the kernel (InferKernelCoreTypes).
        entries.append(KernelEntry(name, int(kid), kernel_cpu.core_type(prepared, name)))
    return entry, prepared, result, sources, entries


@user_errors_at_the_call
def compile(program, output_dir: Optional[str] = None, entry: Optional[str] = None,
            distributed: Optional[str] = None, analyze_auto_scopes_for_deps: bool = False,
            _before_build=None, _protected: Sequence[str] = ()) -> "CompiledProgram":
    """Compiles ``program`` for the CPU runtime and loads it.

    ``entry`` names the Orchestration function to run (default: the only one, or the only
    HOST-level one — a HOST entry returns a ``pypto.host.HostProgram`` that runs on the L3
    runtime, its chip-level orchestrations being the next-level targets). ``output_dir``
    receives the generated sources and the built library (default: the cache directory,
    ``$PYPTO_CACHE_DIR`` or ``~/.cache/pypto/<hash>``). Raises ``PyptoError`` for a program
    the compiler rejects and ``pypto.runtime.build.BuildError`` if the C++ compiler fails.

        compiled = pypto.compile(MyProgram, output_dir="out")
        compiled(a, b, out)

    ``distributed="mpi"`` runs a HOST entry's next-level tasks on MPI ranks (under
    ``mpirun -np N``; see docs/distributed.md); it is an error for a chip-level entry.
    ``analyze_auto_scopes_for_deps=True`` lets the compiler derive the task dependencies of
    AUTO regions (AutoDeriveTaskDependencies; docs/auto_dependencies.md).

    ``_before_build(kernels, default_workers)`` (internal: ``pypto run``) is called with the
    kernel entries and the (AIC, AIV) workers a call naming none would use, after the passes and
    before the C++ build, so a usage error that depends on the kernels' core types (a worker
    flag of 0) costs no build.

    ``output_dir`` is checked before anything is built: an empty path, a file or directory in
    the way of a generated file, or a generated file that is the program's source file (or one of
    ``_protected``, internal: ``pypto run``'s --inputs / --check) is an ``OutputPathError``.
    ``output_dir`` naming the program's own cache entry writes nothing (the files are there).
    """
    program = _as_program(program)
    if output_dir is not None:   # an empty one was the current directory
        check_output_dir(output_dir, [])
    protected = [f for f in [*_protected, located_at(program).get("file")] if f]
    host_entry = _host_entry(program, entry)
    if host_entry is not None:
        # A distributed HOST-level entry runs on the L3 runtime (pypto.host): its pl.submit
        # calls become next-level tasks that each run a chip-level orchestration.
        from pypto import host
        return host.compile_host(program, host_entry, output_dir=output_dir, distributed=distributed,
                                 _before_build=_before_build)
    if distributed not in (None, "inprocess"):
        from pypto.errors import PyptoError
        raise PyptoError("distributed=%r applies to a HOST-level entry; this program's entry is chip-level"
                         % (distributed,))
    entry, prepared, result, sources, entries = generate(program, entry, analyze_auto_scopes_for_deps)
    if _before_build is not None:
        _before_build(entries, default_workers(entries))
    orch_code = result.code
    build = build_program(entry, orch_code, sources, entries, output_dir=output_dir, protected=protected)
    try:
        return CompiledProgram(prepared, entry, _signature_from(result, prepared, entry), build, entries)
    except RunError:
        if not build.cached:
            raise
        # The cache served a library that does not load (truncated or overwritten: it was a
        # RunError until the cache was deleted by hand): its entry is removed and built again,
        # once; a library that still does not load is reported as it is.
        import shutil
        logger.warning("cached library %s does not load; building it again", build.library)
        shutil.rmtree(os.path.dirname(build.library), ignore_errors=True)
        build = build_program(entry, orch_code, sources, entries, output_dir=output_dir, protected=protected)
        return CompiledProgram(prepared, entry, _signature_from(result, prepared, entry), build, entries)


# ---------------------------------------------------------------------------------------------
# Calling

class CompiledProgram:
    """A program built for the CPU runtime; call it to run its entry orchestration.

    Attributes: ``entry`` (function name), ``params`` (list of :class:`ParamSpec`), ``files``
    (relative path -> generated source), ``output_dir``, ``library`` (path of the .so),
    ``kernels`` (name, id and core type of each kernel), ``cached`` (True if no compiler ran).
    """

    def __init__(self, program, entry: str, params: List[ParamSpec], build: BuildResult,
                 kernels: Sequence[KernelEntry]):
        self.program = program
        self.entry = entry
        self.params = params
        self.files: Dict[str, str] = dict(build.files)
        self.output_dir = build.output_dir
        self.library = build.library
        self.cached = build.cached
        self.kernels = list(kernels)
        self._lib = ProgramLibrary(build.library)
        self._runtime = None
        self._lock = threading.Lock()
        self.last_stats: Optional[RunStats] = None  # RunStats of the latest call
        # Per-program, not per-call (issue 17): the tensor names of race reports (by slot), the
        # fast marshalling of the common call, the run indicator's label.
        self._tensor_names = [p.name for p in sorted((p for p in params if p.kind == "tensor"), key=lambda p: p.slot)]
        self._marshal = fast_marshaller(params)
        self._running_label = "running %s" % entry
        # A failed run's message in DSL terms (no reference to self: a cycle would keep the runtime's threads).
        self._explain = functools.partial(explain_and_locate, program=program)
        self.default_workers = default_workers(self.kernels)   # (AIC, AIV) when a call names none

    def __reduce__(self):
        raise not_picklable("CompiledProgram", "pypto.compile(Program)")

    def __repr__(self) -> str:
        return "<CompiledProgram %s(%s) at %s>" % (self.entry, ", ".join(p.name for p in self.params), self.output_dir)

    # -- argument checking ----------------------------------------------------------------------

    def bind(self, args: Sequence[Any], kwargs: Optional[Dict[str, Any]] = None) -> BoundCall:
        """Binds positional and keyword arguments to the entry's parameters, allocates omitted
        pl.Out tensors and checks everything before anything runs (``pypto.runtime.args``). A
        written array that is not C-contiguous and aligned is staged: ``call.tensors`` address a
        contiguous copy, which ``call.write_back()`` copies into it after a run (``__call__`` does).

            call = prog.bind((x,), {"out": out.T})   # a transposed output: staged
        """
        return bind_and_check(self.params, self.entry, args, kwargs)

    def check_args(self, args: Sequence[Any]) -> Tuple[List[TensorArg], List[int], List[Any], Dict[str, int]]:
        """Validates and marshals positional call arguments; raises before anything runs. Returns
        the tensor slots, the scalar slots, the arrays to keep alive, and the bound dynamic dims
        (no write-back of staged outputs: pass contiguous written arrays, or use ``bind``)."""
        call = self.bind(args)
        return call.tensors, call.scalars, call.keep, call.dims

    # -- running ----------------------------------------------------------------------------------

    def _get_runtime(self, config):
        if self._runtime is not None and self._runtime.config == config:
            return self._runtime
        if self._runtime is not None:
            self._runtime.close()
            self._runtime = None
        self._runtime = self._lib.create_runtime(*config)
        logger.info("runtime created: %d AIC + %d AIV workers, clusters %s, trace %s, task ring %s, memory limit %s",
                    config[0], config[1], config[2] or "min(aic, aiv)", "on" if config[3] else "off",
                    config[4] or "default", config[5] or "default")
        return self._runtime

    @user_errors_at_the_call
    def __call__(self, *args, aic_workers: Optional[int] = None, aiv_workers: Optional[int] = None,
                 clusters: Optional[int] = None, trace: Optional[str] = None,
                 task_ring_size: Optional[int] = None, memory_limit: Optional[int] = None,
                 graph: Optional[str] = None, race_check=None, **kwargs):
        """Runs the entry on ``args`` / ``kwargs`` (by parameter name): arrays for tensors (NumPy,
        CPU torch tensors, anything with ``__dlpack__`` or the buffer protocol), Python numbers
        for scalars. Worker counts default to ``default_workers``: for a program whose kernels all
        run on one core type, CPUs - 1 workers of that type (at least 1) and none of the other (the
        orchestrating thread runs tasks too while it waits); else 1 AIC and 2 AIV
        (``pypto.runtime.worker_defaults``). ``clusters`` 0 = min(aic, aiv); more is an
        ArgumentValueError, as is a count above 4096; more than 8 worker threads per CPU is a
        WorkerCountWarning, once per runtime.
        ``trace="trace.json"`` writes a Chrome/Perfetto trace of the run (default: ``$PYPTO_TRACE``
        when set; a path whose directory does not exist raises before running). ``graph="g.dot"``
        writes the run's task graph as Graphviz DOT (see ``task_graph``). ``race_check=True`` (or
        ``"error"``, or ``$PYPTO_RACE_CHECK=1``) records every tensor access and raises RaceError
        after the run if two tasks touch the same data with no dependency ordering them;
        ``"warn"`` issues a RaceWarning instead (docs/manual_dependencies.md). ``task_ring_size``
        (in-flight tasks) and ``memory_limit`` (bytes of live intermediate tensors) bound the
        runtime's resources; the orchestration waits (back-pressure) when they are reached.

        Returns RunStats when every argument was passed; when the pl.Out parameters are omitted
        (``prog(x)``), returns them instead (one array, or a tuple in declaration order; torch
        tensors when the inputs are torch) and keeps the RunStats in ``last_stats``. Raises
        ArgumentTypeError / ArgumentValueError before running, RunError if the run fails.

            out = compiled(x)                 # pl.Out allocated and returned
            stats = compiled(x=x, out=out)    # by name; out written in place
        """
        race_mode = race_check_mode(race_check)
        trace = resolve_trace_path(trace)   # trace= or $PYPTO_TRACE; a bad directory fails before running
        if graph is not None:   # as the trace path: a graph that cannot be written fails before the run, not after it
            graph = as_output_path(graph, "graph")
            problem = ("it is a directory" if os.path.isdir(graph) else "its directory does not exist"
                       if not os.path.isdir(os.path.dirname(os.path.abspath(graph))) else probe_writable(graph))
            if problem:
                raise ArgumentValueError("cannot write the task graph to %s: %s" % (graph, problem))
        # The common call (all arguments positional NumPy arrays and numbers that pass every check)
        # is marshalled by the per-program fast path; any other call, valid or not, by the full checker.
        fast = self._marshal(args) if not kwargs else None   # a MarshalledCall (holds the arrays), or None
        call = None
        if fast is not None:
            outputs = keep = None
        else:
            call = self.bind(args, kwargs)
            tensors, scalars, keep, outputs = call.tensors, call.scalars, call.keep, call.outputs
        if (aic_workers is not None or aiv_workers is not None or clusters is not None or task_ring_size is not None
                or memory_limit is not None):
            check_runtime_options(aic_workers, aiv_workers, clusters, task_ring_size, memory_limit)
        aic = aic_workers if aic_workers is not None else self.default_workers[0]
        aiv = aiv_workers if aiv_workers is not None else self.default_workers[1]
        if aic_workers == 0 or aiv_workers == 0:
            check_worker_counts(self.kernels, aic, aiv)
        if clusters:
            problem = clusters_problem(clusters, aic, aiv)
            if problem:
                raise ArgumentValueError(problem)
        config = (aic, aiv, clusters if clusters is not None else 0, trace is not None, task_ring_size or 0, memory_limit or 0)
        with self._lock:
            rt = self._runtime
            if rt is None or rt.config != config:
                warn_oversubscription(aic, aiv)   # once per new runtime, not per call
                rt = self._get_runtime(config)
            # The task graph is the race checker's record: a graph alone records quietly (warn mode, no warning).
            mode = max(race_mode, 1) if graph is not None else race_mode
            if fast is not None:
                run = functools.partial(rt.run_marshalled, fast)
            else:
                run = functools.partial(rt.run, tensors, scalars)
            try:
                if progress_enabled():   # a one-line ticker once a run takes 1 s (TTY only)
                    with RunIndicator(self._running_label, counts=getattr(rt, "progress", None)):
                        stats = run(race_check=mode, tensor_names=self._tensor_names,
                                    report_races=race_mode != 0, explain=self._explain)
                else:
                    stats = run(race_check=mode, tensor_names=self._tensor_names,
                                report_races=race_mode != 0, explain=self._explain)
            except RunError as e:
                if "deadlock" in e.message:   # stuck tasks keep their slots: the next call gets a fresh runtime
                    self._runtime = None
                    rt.close()
                raise
            finally:
                if call is not None:   # strided or misaligned written arrays ran on copies
                    call.write_back()
            self.last_stats = stats
            try:
                if trace is not None:
                    rt.write_trace(str(trace))
                    stats.trace_path = str(trace)
                if graph is not None:
                    rt.write_graph(str(graph))
            except RunError as e:
                # The run completed (a full disk, a path that vanished since it was checked): the
                # error carries what the call would have returned, so no result is lost.
                e.stats = stats
                e.result = (outputs[0] if len(outputs) == 1 else tuple(outputs)) if outputs else stats
                raise
        del keep, fast
        if outputs:
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        return stats

    run = __call__

    def task_graph(self, *args, path: Optional[str] = None, static: bool = False,
                   dims: Optional[Dict[str, int]] = None, **kwargs) -> str:
        """Runs the program once on ``args`` / ``kwargs`` (as a call) and returns its executed task
        graph as Graphviz DOT text, also written to ``path`` when given. Nodes are tasks labelled
        with kernel name, core type, task number and the DSL line that submitted them (barriers
        as diamonds, predicate-skipped tasks dashed); edges are automatic (solid), explicit
        ``deps=`` (bold blue) or through a ``get_tensor_data`` wait (dotted). Render it with
        ``dot -Tsvg g.dot -o g.svg`` or ``pypto graph prog.py --svg``.

            dot = compiled.task_graph(x, y, out)

        ``static=True`` reads the graph from the IR without running anything (no arguments
        needed; ``dims=`` gives dynamic dimensions, scalar parameters by keyword): only for
        programs without data-dependent control flow, else ``StaticGraphError`` says why
        (``pypto.static_graph``).

            dot = compiled.task_graph(static=True, path="g.dot")
        """
        import tempfile
        if static:
            from pypto.static_graph import StaticGraphError, static_task_graph
            if args:
                raise StaticGraphError("task_graph(static=True) runs nothing, so it takes no arguments: %d "
                                       "positional value(s) would be ignored" % len(args),
                                       help="give scalar parameters by keyword (task_graph(static=True, n=4)) and "
                                            "dynamic dimensions as dims={...}")
            text = static_task_graph(self.program, self.entry, dims=dims, scalars=kwargs)
            if path is not None:
                with open(path, "w") as f:
                    f.write(text)
            return text
        if path is not None:
            self(*args, graph=path, **kwargs)
            with open(path) as f:
                return f.read()
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "graph.dot")
            self(*args, graph=out, **kwargs)
            with open(out) as f:
                return f.read()

    def close(self) -> None:
        """Stops the runtime's worker threads (a later call starts new ones)."""
        with self._lock:
            if self._runtime is not None:
                self._runtime.close()
                self._runtime = None

    def __del__(self):
        try:
            if self._runtime is not None:
                self._runtime.close()
        except Exception:
            pass

    def random_inputs(self, seed: int = 0, dims: Optional[Dict[str, int]] = None) -> List[Any]:
        """Seeded random arguments of the declared shapes and dtypes (dynamic dims from ``dims``):
        floats uniform in [-1, 1), integers in [-8, 8) (unsigned [0, 16)), Out tensors zeroed,
        scalars 1 (floats 0.5). Used by ``pypto run``."""
        return random_inputs(self.params, seed, dims)
