"""Load a built program library and run it on the CPU runtime.

    lib = ProgramLibrary("/path/libprogram.so")
    rt = lib.create_runtime(aic_workers=1, aiv_workers=2)
    stats = rt.run([TensorArg(ptr, DT_FLOAT32, (16, 16))], scalars=[])
    rt.write_trace("trace.json")     # when created with trace=True

Everything crosses the C ABI of ``pto2_c_api.h`` through the nanobind binding
``pypto._core.program_abi`` (no ctypes: no mirror of a C struct or function). libpto2 is loaded
first with RTLD_GLOBAL so that the program library binds to the one copy of the runtime. A run
releases the GIL.
"""

from __future__ import annotations

import atexit
import os
import threading
import warnings
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

from pypto.errors import PyptoError, user_stacklevel
from pypto.runtime import library_path
from pypto.runtime.env import getenv

__all__ = ["ProgramLibrary", "Runtime", "TensorArg", "RunStats", "RunError", "RaceError",
           "RaceWarning", "DTYPE_CODES", "RACE_CHECK_MODES", "race_check_mode"]

from pypto.runtime.args import DTYPE_CODES, TensorArg  # noqa: E402,F401 - the one dtype table

# Runs in progress, over all runtimes. A daemon thread may still be inside one when the interpreter
# exits; the objects that run holds then made nanobind print ~50 lines of "leaked instance ... a
# reference counting issue in the binding code" (tester F #17). Such an exit turns the report off.
_runs_in_progress = 0
_runs_lock = threading.Lock()


class _InProgress:
    def __enter__(self):
        global _runs_in_progress
        with _runs_lock:
            _runs_in_progress += 1

    def __exit__(self, *exc):
        global _runs_in_progress
        with _runs_lock:
            _runs_in_progress -= 1


def _quiet_leak_report_if_a_run_is_in_progress():
    if _runs_in_progress:
        from pypto import _core
        _core._set_leak_warnings(False)


atexit.register(_quiet_leak_report_if_a_run_is_in_progress)


class RunError(PyptoError):
    """The runtime reported a failure (a kernel error, a deadlock, a bad argument...)."""


class RaceError(RunError):
    """The race checker found tasks that access the same data with no dependency between them."""


class RaceWarning(UserWarning):
    """race_check="warn": the race checker's report of a run that completed."""


# race_check= / PYPTO_RACE_CHECK / --race-check values -> pto2::RaceCheck codes.
RACE_CHECK_MODES = {"off": 0, "0": 0, "false": 0, "": 0, "warn": 1, "error": 2, "1": 2, "true": 2, "on": 2}


def race_check_mode(value) -> int:
    """The pto2::RaceCheck code of a ``race_check=`` value: None = ``$PYPTO_RACE_CHECK`` (unset = off),
    True / "error" / "1" = 2 (the run fails), "warn" = 1 (a RaceWarning), False / "off" / "0" = 0.

        race_check_mode("warn")  # -> 1
    """
    from_env = value is None
    if from_env:
        value = getenv("PYPTO_RACE_CHECK")
        if not value:  # the common case, per call: unset
            return 0
    if isinstance(value, bool):
        return 2 if value else 0
    key = str(value).strip().lower()
    if key not in RACE_CHECK_MODES and from_env:   # named as the variable it came from, not the keyword
        raise RunError("PYPTO_RACE_CHECK=%r is not a race-check mode" % (value,),
                       help="set it to 1 / error, warn or 0 / off (or unset it)")
    if key not in RACE_CHECK_MODES:
        raise RunError("race_check must be True, False, \"warn\" or \"error\", got %r" % (value,),
                       help="e.g. prog(x, out, race_check=\"warn\") or PYPTO_RACE_CHECK=1")
    return RACE_CHECK_MODES[key]


@dataclass
class RunStats:
    """Statistics of one run (from pto2::RunResult), L2 or HOST (every field but ``tasks`` and
    ``tasks_executed`` defaults to 0 for the kind of run that does not report it).

    ``tasks`` is the number of submitted tasks (dummy tasks included); ``wall_seconds`` the
    runtime's wall time of the run; ``peak_bytes`` the peak of live runtime-allocated tensor
    bytes (bounded for programs whose intermediates are reclaimed); ``tasks_undeferred`` how
    many of the executed tasks ran on the orchestrator thread at submission (see
    docs/runtime.md, "Undeferred execution").
    """
    tasks: int
    tasks_executed: int
    tasks_skipped: int = 0
    tasks_dummy: int = 0
    auto_edges: int = 0
    explicit_edges: int = 0
    wall_seconds: float = 0.0
    peak_bytes: int = 0
    pool_bytes: int = 0
    tasks_undeferred: int = 0
    trace_path: Optional[str] = None
    races: int = 0         # race checker: unordered conflicting task pairs (race_check="warn")
    race_report: str = ""
    # HOST (L3) runs: edges of the next-level task graph and one record per executed task.
    barriers: int = 0
    wait_edges: int = 0
    chain_edges: int = 0
    task_records: List[dict] = field(default_factory=list)

    def __getitem__(self, name: str):
        """Fields read by name too (``stats["tasks_executed"]``), as the HOST dict result was."""
        if name in self.__dataclass_fields__:
            return getattr(self, name)
        raise KeyError(name)

    def __str__(self) -> str:
        return "%d tasks in %.3f ms (peak %d bytes of intermediates)" % (self.tasks, self.wall_seconds * 1e3,
                                                                          self.peak_bytes)


def _abi():
    from pypto._core import program_abi
    return program_abi


def _tensor_tuples(tensors: Sequence[TensorArg]) -> list:
    return [(t.data, t.dtype, list(t.shape), list(t.strides) if t.strides is not None else None) for t in tensors]


def _run_stats(t: tuple) -> RunStats:
    """RunStats of the binding's stats tuple (``program_abi.RUN_STATS_FIELDS``: its first ten are
    RunStats' first ten fields, in order; the last is ``races``)."""
    stats = RunStats(*t[:10])
    stats.races = t[10]
    return stats


_sigint_lock = threading.Lock()
_sigint_installed = False


def _cancel_runs_on_sigint() -> None:
    """Once per process, on the main thread: Ctrl-C cancels the runs in progress (libpto2's
    SIGINT hook), then Python's own handler raises KeyboardInterrupt when the run returns."""
    global _sigint_installed
    if _sigint_installed or threading.current_thread() is not threading.main_thread():
        return
    with _sigint_lock:
        if not _sigint_installed:
            _abi().cancel_runs_on_sigint(library_path(), True)
            _sigint_installed = True


def _load_error(path: str, e: Exception) -> RunError:
    """The binding's "cannot load P: " and dlerror's "P: " name the library again: said once."""
    why = str(e)
    for prefix in ("cannot load %s: " % os.path.abspath(path), "%s: " % os.path.abspath(path)):
        if why.startswith(prefix):
            why = why[len(prefix):]
    return RunError("cannot load %s: %s" % (path, why), help="rebuild it (delete the pypto cache directory)")


class ProgramLibrary:
    """A loaded program library (see module doc)."""

    def __init__(self, path: str):
        self.path = path
        try:
            self._lib = _abi().ProgramLibrary(library_path(), os.path.abspath(path))
        except RuntimeError as e:
            raise _load_error(path, e) from None
        _cancel_runs_on_sigint()

    def kernel_count(self) -> int:
        return self._lib.kernel_count()

    def entry_name(self) -> str:
        return self._lib.entry_name()

    def create_runtime(self, aic_workers: int = 1, aiv_workers: int = 2, clusters: int = 0,
                       trace: bool = False, task_ring_size: int = 0, memory_limit: int = 0) -> "Runtime":
        """A runtime with these worker counts (ring size / memory limit 0 = runtime defaults)."""
        config = (aic_workers, aiv_workers, clusters, trace, task_ring_size, memory_limit)
        try:
            handle = self._lib.create_runtime(aic_workers, aiv_workers, clusters, bool(trace), task_ring_size,
                                              memory_limit)
        except (RuntimeError, TypeError, OverflowError) as e:
            raise RunError(str(e)) from None
        return Runtime(self, handle, config)


class Runtime:
    """A pto2::Runtime (worker threads parked while idle) with the program's kernels registered."""

    def __init__(self, lib: ProgramLibrary, handle, config: tuple):
        self._libobj = lib  # keeps the library loaded
        self._h = handle
        self.config = config
        self._race_check: Optional[int] = None  # the mode last set (the first run sets it): set again only on change

    def run(self, tensors: Sequence[TensorArg], scalars: Sequence[int], race_check: int = 0,
            tensor_names: Optional[Sequence[str]] = None, report_races: bool = True,
            explain: Optional[Callable[[str], str]] = None) -> RunStats:
        """Runs the program; ``race_check`` is a race_check_mode() code (0 off, 1 warn, 2 error);
        ``tensor_names`` (the tensor parameters, by slot) name the tensors in race reports;
        ``report_races=False`` records (for the task graph) without warning; ``explain`` rewrites
        a failed run's message in the DSL's terms and locates it: ``(message, PyptoError location
        keywords)`` (pypto.runtime.dsl_terms.explain_and_locate)."""
        if race_check != self._race_check:
            self.set_race_check(race_check)
        with _InProgress():
            result = self._h.run(_tensor_tuples(tensors), [int(s) & 0xFFFFFFFFFFFFFFFF for s in scalars])
        return self._finish(result, tensor_names, report_races, explain)

    def run_marshalled(self, call, race_check: int = 0, tensor_names: Optional[Sequence[str]] = None,
                       report_races: bool = True,
                       explain: Optional[Callable[[str], str]] = None) -> RunStats:
        """``run`` on a call the fast path checked and marshalled (``program_abi.MarshalledCall``,
        from ``pypto.runtime.fast_args``; ``CompiledProgram.__call__``). A RaceWarning points at
        the first frame outside pypto (``pypto.errors.user_stacklevel``)."""
        if race_check != self._race_check:
            self.set_race_check(race_check)
        with _InProgress():
            result = self._h.run_call(call)
        return self._finish(result, tensor_names, report_races, explain)

    def _finish(self, result: tuple, tensor_names, report_races: bool, explain) -> RunStats:
        """RunStats of the binding's (ok, message, stats), or the run's error raised."""
        ok, message, stats = result
        if message:
            for i, name in enumerate(tensor_names or ()):
                message = message.replace("external tensor %d (orch_args.tensor(%d))" % (i, i), "tensor '%s'" % name)
        if not ok:
            where = {}
            if explain is not None:
                message, where = explain(message)
            if message.startswith("race check:"):
                raise RaceError(message, help="see docs/manual_dependencies.md, \"The race checker\"")
            if "memory limit" in message or "out of memory:" in message:
                where.setdefault("help", "memory_limit= bounds the bytes of live runtime tensors (pl.create_tensor and "
                                         "runtime-allocated outputs, held until their scope ends and their tasks "
                                         "finish): raise it, or let tensors die sooner (a pl.scope() around their uses)")
            raise RunError("the run failed: " + message, **where)
        result = _run_stats(stats)
        if result.races:
            result.race_report = message
            if report_races:
                warnings.warn(RaceWarning(message), stacklevel=user_stacklevel())
        return result

    def write_trace(self, path: str) -> None:
        """Writes the last run's trace (a runtime created with trace=True) as Chrome JSON; a
        RunError names the path and the OS's reason ('... /x/t.json: No such file or directory')."""
        error = self._h.write_trace(os.fsdecode(path))
        if error:
            raise RunError(error)

    def set_race_check(self, mode: int) -> None:
        """Race checker mode of the following runs: 0 off, 1 warn, 2 error."""
        self._h.set_race_check(int(mode))
        self._race_check = int(mode)

    def write_graph(self, path: str) -> None:
        """Writes the last run's task graph as Graphviz DOT (recorded when the run had a race
        checker mode other than 0)."""
        error = self._h.write_graph(os.fsdecode(path))
        if error:   # the path and the OS's reason, or that nothing was recorded
            raise RunError(error, help="record it with CompiledProgram.task_graph" if error.startswith("no task graph")
                           else "")

    def progress(self) -> Tuple[int, int]:
        """``(submitted, completed)`` tasks of the run in progress (or the last run); safe to
        call from another thread while ``run`` executes (the progress ticker does)."""
        h = self._h
        return tuple(h.progress()) if h is not None else (0, 0)

    def close(self) -> None:
        if self._h is not None:
            self._h.close()
            self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
