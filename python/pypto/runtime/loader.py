"""Load a built program library with ctypes and run it on the CPU runtime.

    lib = ProgramLibrary("/path/libprogram.so")
    rt = lib.create_runtime(aic_workers=1, aiv_workers=2)
    stats = rt.run([TensorArg(ptr, DT_FLOAT32, (16, 16))], scalars=[])
    rt.write_trace("trace.json")     # when created with trace=True

libpto2 is loaded first with RTLD_GLOBAL so that the program library (and anything else built
against it) binds to the one copy of the runtime. A run releases the GIL (ctypes does).
"""

from __future__ import annotations

import ctypes
import os
import threading
import warnings
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from pypto.errors import PyptoError
from pypto.runtime import library_path

__all__ = ["ProgramLibrary", "Runtime", "TensorArg", "RunStats", "RunError", "RaceError", "RaceWarning",
           "DTYPE_CODES", "RACE_CHECK_MODES", "race_check_mode"]

# pto2::DataType values (runtime/include/pto2/types.h; stable, passed as int32).
DTYPE_CODES = {"FP32": 0, "FP16": 1, "BF16": 2, "INT8": 3, "INT16": 4, "INT32": 5, "INT64": 6,
               "UINT8": 7, "UINT16": 8, "UINT32": 9, "UINT64": 10, "BOOL": 11}


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
    if value is None:
        value = os.environ.get("PYPTO_RACE_CHECK", "")
    if isinstance(value, bool):
        return 2 if value else 0
    key = str(value).strip().lower()
    if key not in RACE_CHECK_MODES:
        raise RunError("race_check must be True, False, \"warn\" or \"error\", got %r" % (value,),
                       help="e.g. prog(x, out, race_check=\"warn\") or PYPTO_RACE_CHECK=1")
    return RACE_CHECK_MODES[key]


class _TensorArgC(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("ndims", ctypes.c_uint32),
                ("shapes", ctypes.POINTER(ctypes.c_uint32)), ("strides", ctypes.POINTER(ctypes.c_int64))]


class _RunStatsC(ctypes.Structure):
    _fields_ = [("tasks_submitted", ctypes.c_uint64), ("tasks_executed", ctypes.c_uint64),
                ("tasks_skipped", ctypes.c_uint64), ("tasks_dummy", ctypes.c_uint64),
                ("auto_edges", ctypes.c_uint64), ("explicit_edges", ctypes.c_uint64),
                ("wall_seconds", ctypes.c_double), ("peak_bytes", ctypes.c_uint64),
                ("pool_bytes", ctypes.c_uint64), ("tasks_undeferred", ctypes.c_uint64),
                ("races", ctypes.c_uint64)]


@dataclass
class TensorArg:
    """One tensor slot: data pointer, dtype code, shape and (element) strides."""
    data: int
    dtype: int
    shape: Tuple[int, ...]
    strides: Optional[Tuple[int, ...]] = None


@dataclass
class RunStats:
    """Statistics of one run (from pto2::RunResult).

    ``tasks`` is the number of submitted tasks (dummy tasks included); ``wall_seconds`` the
    runtime's wall time of the run; ``peak_bytes`` the peak of live runtime-allocated tensor
    bytes (bounded for programs whose intermediates are reclaimed); ``tasks_undeferred`` how
    many of the executed tasks ran on the orchestrator thread at submission (see
    docs/runtime.md, "Undeferred execution").
    """
    tasks: int
    tasks_executed: int
    tasks_skipped: int
    tasks_dummy: int
    auto_edges: int
    explicit_edges: int
    wall_seconds: float
    peak_bytes: int
    pool_bytes: int
    tasks_undeferred: int = 0
    trace_path: Optional[str] = None
    races: int = 0         # race checker: unordered conflicting task pairs (race_check="warn")
    race_report: str = ""

    def __str__(self) -> str:
        return "%d tasks in %.3f ms (peak %d bytes of intermediates)" % (self.tasks, self.wall_seconds * 1e3,
                                                                          self.peak_bytes)


_loaded_runtime: Dict[str, ctypes.CDLL] = {}
_load_lock = threading.Lock()


def _load_libpto2() -> ctypes.CDLL:
    path = library_path()
    with _load_lock:
        if path not in _loaded_runtime:
            _loaded_runtime[path] = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        return _loaded_runtime[path]


class ProgramLibrary:
    """A loaded program library (see module doc)."""

    def __init__(self, path: str):
        _load_libpto2()
        self.path = path
        self._lib = ctypes.CDLL(os.path.abspath(path))
        lib = self._lib
        lib.pypto_rt_create.restype = ctypes.c_void_p
        lib.pypto_rt_create.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_int,
                                        ctypes.c_uint32, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_size_t]
        lib.pypto_rt_destroy.restype = None
        lib.pypto_rt_destroy.argtypes = [ctypes.c_void_p]
        lib.pypto_rt_run.restype = ctypes.c_int
        lib.pypto_rt_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(_TensorArgC), ctypes.c_uint32,
                                     ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint32, ctypes.POINTER(_RunStatsC),
                                     ctypes.c_char_p, ctypes.c_size_t]
        lib.pypto_rt_set_race_check.restype = None
        lib.pypto_rt_set_race_check.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.pypto_rt_write_trace.restype = ctypes.c_int
        lib.pypto_rt_write_trace.argtypes = [ctypes.c_void_p, ctypes.c_char_p]

    def kernel_count(self) -> int:
        return ctypes.c_uint32.in_dll(self._lib, "pypto_kernel_count").value

    def entry_name(self) -> str:
        return ctypes.string_at(ctypes.addressof(ctypes.c_char.in_dll(self._lib, "pypto_entry_name"))).decode()

    def create_runtime(self, aic_workers: int = 1, aiv_workers: int = 2, clusters: int = 0,
                       trace: bool = False, task_ring_size: int = 0, memory_limit: int = 0) -> "Runtime":
        """A runtime with these worker counts (ring size / memory limit 0 = runtime defaults)."""
        err = ctypes.create_string_buffer(4096)
        h = self._lib.pypto_rt_create(aic_workers, aiv_workers, clusters, 1 if trace else 0, task_ring_size,
                                      memory_limit, err, len(err))
        if not h:
            raise RunError("cannot create the runtime: " + err.value.decode(errors="replace"))
        return Runtime(self, h, (aic_workers, aiv_workers, clusters, trace, task_ring_size, memory_limit))


class Runtime:
    """A pto2::Runtime (worker threads parked while idle) with the program's kernels registered."""

    def __init__(self, lib: ProgramLibrary, handle: int, config: tuple):
        self._libobj = lib  # keeps the library loaded
        self._lib = lib._lib
        self._h = handle
        self.config = config

    def run(self, tensors: Sequence[TensorArg], scalars: Sequence[int], race_check: int = 0,
            tensor_names: Optional[Sequence[str]] = None) -> RunStats:
        """Runs the program; ``race_check`` is a race_check_mode() code (0 off, 1 warn, 2 error);
        ``tensor_names`` (the tensor parameters, by slot) name the tensors in race reports."""
        self._lib.pypto_rt_set_race_check(self._h, int(race_check))
        n = len(tensors)
        arr = (_TensorArgC * max(1, n))()
        keep: List[object] = []
        for i, t in enumerate(tensors):
            shp = (ctypes.c_uint32 * max(1, len(t.shape)))(*t.shape)
            keep.append(shp)
            arr[i].data = t.data
            arr[i].dtype = t.dtype
            arr[i].ndims = len(t.shape)
            arr[i].shapes = shp
            if t.strides is not None:
                st = (ctypes.c_int64 * max(1, len(t.strides)))(*t.strides)
                keep.append(st)
                arr[i].strides = st
        sc = (ctypes.c_uint64 * max(1, len(scalars)))(*[int(s) & 0xFFFFFFFFFFFFFFFF for s in scalars])
        stats = _RunStatsC()
        err = ctypes.create_string_buffer(65536)
        ok = self._lib.pypto_rt_run(self._h, arr, n, sc, len(scalars), ctypes.byref(stats), err, len(err))
        result = RunStats(tasks=stats.tasks_submitted, tasks_executed=stats.tasks_executed,
                          tasks_skipped=stats.tasks_skipped, tasks_dummy=stats.tasks_dummy,
                          auto_edges=stats.auto_edges, explicit_edges=stats.explicit_edges,
                          wall_seconds=stats.wall_seconds, peak_bytes=stats.peak_bytes, pool_bytes=stats.pool_bytes,
                          tasks_undeferred=stats.tasks_undeferred)
        message = err.value.decode(errors="replace")
        for i, name in enumerate(tensor_names or ()):
            message = message.replace("external tensor %d (orch_args.tensor(%d))" % (i, i), "tensor '%s'" % name)
        if not ok:
            if message.startswith("race check:"):
                raise RaceError(message, help="see docs/manual_dependencies.md, \"The race checker\"")
            raise RunError("the run failed: " + message)
        if stats.races:
            result.races = stats.races
            result.race_report = message
            warnings.warn(RaceWarning(message), stacklevel=3)
        return result

    def write_trace(self, path: str) -> None:
        if not self._lib.pypto_rt_write_trace(self._h, os.fsencode(path)):
            raise RunError("could not write the trace to %s" % path,
                           help="check that the directory exists and is writable")

    def close(self) -> None:
        if self._h:
            self._lib.pypto_rt_destroy(self._h)
            self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
