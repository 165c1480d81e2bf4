"""The worker counts of a call that names none, and the check of the counts a call names.

A program whose kernels all run on one core type gets ``cores - 1`` workers of that type (at
least one) and none of the other; with the orchestrating thread, which submits the tasks and
then runs ready ones itself while it waits for the run to end, that is one runnable thread per
core. More threads than cores only take turns on them: on 2 cores, the tiled-GEMM program
(examples/tiled_matmul.py, 4 AIC tasks) ran with 2 AIC + 1 AIV workers and the orchestrator
up to 3 tasks at once on 2 cores (benchmarks/gemm_program_ab.py; docs/running.md, "Workers").
A program with kernels of both types (or none) keeps 1 AIC + 2 AIV workers.

    aic, aiv = default_workers(kernels)          # kernels: KernelEntry list of a CompiledProgram
    check_worker_counts(kernels, aic, aiv)       # a count of 0 for a type some kernel runs on fails
    oversubscription(4096, 0)                    # why 4096 worker threads are too many here ('' if not)
"""

from __future__ import annotations

import os
from typing import Sequence, Tuple

from pypto.runtime.args import ArgumentValueError

MIXED_DEFAULT = (1, 2)   # AIC, AIV workers of a program using both core types (or no kernel)
# RuntimeOptions' bound on the workers of a core type (runtime/src/engine.cpp): above it the
# runtime's constructor refused the count only after the compile and build.
MAX_WORKERS = 4096
# Worker threads per CPU above which a run is warned about (WorkerCountWarning): they only take
# turns on the CPUs, and each is an OS thread to start. Idle ones cost next to nothing (the
# runtime lets one worker per CPU spin; the others stay parked): on 2 CPUs, 20 runs of
# vector_add took 0.66 s with 256 AIV workers and 1.7 s with 4096, most of it starting them.
OVERSUBSCRIBED_PER_CPU = 8


class WorkerCountWarning(RuntimeWarning):
    """More worker threads than OVERSUBSCRIBED_PER_CPU per CPU: legitimate (the workers model a
    chip's cores), but they only take turns on the CPUs, and each is a thread to start."""


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask, e.g. under taskset), else os.cpu_count()."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _types(kernels: Sequence) -> set:
    return {k.core_type.name for k in kernels}   # 'AIC' / 'AIV' (the stamped Function.core_type)


def default_workers(kernels: Sequence, cpus: int = 0) -> Tuple[int, int]:
    """(AIC, AIV) workers for a call that names no count: cores - 1 (at least 1) of the one core
    type the kernels use and 0 of the other; MIXED_DEFAULT when they use both or there are none."""
    types = _types(kernels)
    if types not in ({"AIC"}, {"AIV"}):
        return MIXED_DEFAULT
    n = max(1, (cpus or usable_cpus()) - 1)
    return (n, 0) if types == {"AIC"} else (0, n)


def check_worker_counts(kernels: Sequence, aic: int, aiv: int) -> None:
    """A core type some kernel runs on needs at least one worker (ArgumentValueError naming the
    kernel); 0 workers of a type no kernel uses is allowed."""
    for name, count, core in (("aic_workers", aic, "AIC"), ("aiv_workers", aiv, "AIV")):
        users = [k.name for k in kernels if k.core_type.name == core]
        if count == 0 and users:
            raise ArgumentValueError("%s must be a positive integer for this program (kernel '%s' runs on %s "
                                     "workers), got 0" % (name, users[0], core))
    if aic == 0 and aiv == 0:
        raise ArgumentValueError("aic_workers must be a positive integer when aiv_workers is 0 (no worker would "
                                 "run a task), got 0")


def oversubscription(aic: int, aiv: int, chips: int = 1, cpus: int = 0,
                     names=("aic_workers", "aiv_workers")) -> str:
    """Why ``aic`` + ``aiv`` worker threads (of each of ``chips`` in-process chips) are too many
    for this machine's CPUs ('' when they are not): more than OVERSUBSCRIBED_PER_CPU per CPU.
    ``names``: how the caller spells the two counts (keywords, or the CLI's flags)."""
    cpus = cpus or usable_cpus()
    threads = (aic + aiv) * chips
    if threads <= OVERSUBSCRIBED_PER_CPU * cpus:
        return ""
    given = ", ".join("%s %d" % (n, c) for n, c in zip(names, (aic, aiv)) if c)
    each = " on each of %d chips" % chips if chips > 1 else ""
    return ("%s%s: %d worker threads on %d CPU%s (more than %d per CPU); they only take turns on the CPUs, so "
            "the run is no more parallel, and each is a thread to start (a wide sync_start gang does not "
            "need them: it is multiplexed). Use at most %d workers in all unless the oversubscription is "
            "what you mean to test"
            % (given, each, threads, cpus, "" if cpus == 1 else "s", OVERSUBSCRIBED_PER_CPU,
               OVERSUBSCRIBED_PER_CPU * cpus))


def warn_oversubscription(aic: int, aiv: int, chips: int = 1) -> None:
    """A WorkerCountWarning when ``oversubscription`` finds a problem (Python's warning filter
    shows it once per call site and counts), located at the user's call (the first frame
    outside pypto)."""
    problem = oversubscription(aic, aiv, chips)
    if problem:
        import warnings
        from pypto.errors import user_stacklevel
        warnings.warn(WorkerCountWarning(problem), stacklevel=user_stacklevel())


# The runtime's bounds (runtime/src/engine.cpp, `checked`; RuntimeOptions::memory_limit is a
# uint64): a value past them was refused only by the runtime, with a bound the check above did not
# name (task_ring_size), or by nanobind's signature check (memory_limit >= 2**64).
MAX_TASK_RING_SIZE = 1 << 24
MAX_MEMORY_LIMIT = (1 << 64) - 1


def check_runtime_options(aic_workers=None, aiv_workers=None, clusters=None, task_ring_size=None,
                          memory_limit=None) -> None:
    """Worker counts and resource bounds of a call are non-negative integers (never truncated); a
    worker count of 0 is checked against the program's kernels (check_worker_counts).

        check_runtime_options(aic_workers=2, aiv_workers=-1)   # ArgumentValueError (aiv_workers)
    """
    for name, val in (("aic_workers", aic_workers), ("aiv_workers", aiv_workers), ("clusters", clusters),
                      ("task_ring_size", task_ring_size), ("memory_limit", memory_limit)):
        if val is None:
            continue
        if not isinstance(val, int) or isinstance(val, bool) or val < 0:
            raise ArgumentValueError("%s must be a non-negative integer, got %r" % (name, val))
        if name == "memory_limit" and val > MAX_MEMORY_LIMIT:   # was nanobind's signature dump (a RunError)
            raise ArgumentValueError("memory_limit must be at most %d (2**64 - 1: it is a 64-bit byte count), got %d"
                                     % (MAX_MEMORY_LIMIT, val), help="give a byte count, e.g. memory_limit=1 << 30")
        if name == "task_ring_size" and val > MAX_TASK_RING_SIZE:   # the runtime's own bound (not the uint32's)
            raise ArgumentValueError("task_ring_size must be at most %d (the runtime's bound on tasks in flight), got %d"
                                     % (MAX_TASK_RING_SIZE, val))
        if val > 0xFFFFFFFF and name not in ("memory_limit", "aic_workers", "aiv_workers"):  # never truncated
            raise ArgumentValueError("%s must be at most 4294967295 (it is a 32-bit count), got %d" % (name, val))
        if name in ("aic_workers", "aiv_workers") and val > MAX_WORKERS:
            raise ArgumentValueError("%s must be at most %d (the runtime's bound on the workers of a core type), "
                                     "got %d" % (name, MAX_WORKERS, val))


def clusters_problem(clusters: int, aic: int, aiv: int, names=("clusters", "aic_workers", "aiv_workers"),
                     more_workers: str = "more workers") -> str:
    """Why ``clusters`` cannot run on ``aic`` AIC + ``aiv`` AIV workers ('' when it can): a
    cluster pairs one AIC and one AIV worker, so at most min(aic, aiv); 0 means that minimum.
    The runtime used to cap a larger count silently (4 clusters on 1 AIC + 2 AIV workers ran 1).
    ``names``, ``more_workers``: how the caller spells the three and the remedy (keywords, or the CLI's flags)."""
    pairs = min(aic, aiv)
    if not clusters or clusters <= pairs:
        return ""
    return ("%s %d is more than min(%s %d, %s %d) = %d (a cluster pairs one AIC and one AIV worker); give at "
            "most %d (0 = min(aic, aiv)) or %s" % (names[0], clusters, names[1], aic, names[2], aiv, pairs, pairs,
                                                   more_workers))
