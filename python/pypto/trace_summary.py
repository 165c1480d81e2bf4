"""Summaries of a run's Chrome/Perfetto trace (``trace=`` / ``--trace`` / ``PYPTO_TRACE``).

``summarize(path)`` reads the JSON libpto2 writes and returns a ``TraceSummary``: the critical path
(the longest chain of dependent tasks, weighted by each task's duration), the time per kernel and
the utilisation of each worker (for a HOST run's trace: its next-level tasks, per target, and
each chip). ``pypto trace summary trace.json`` prints it.

    from pypto.trace_summary import summarize
    s = summarize("trace.json")
    print(s.critical_path_us, [t.kernel for t in s.critical_path])
    print(s.format())
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional

__all__ = ["TaskSpan", "KernelTime", "WorkerUse", "TraceSummary", "TraceFormatError", "summarize"]


class TraceFormatError(ValueError):
    """The file is not a trace libpto2 wrote (not JSON, or no ``traceEvents`` list)."""


@dataclass
class TaskSpan:
    """One task: from its first block's start to its last block's end (microseconds)."""
    task_id: int
    kernel: str
    start_us: float
    end_us: float
    blocks: int = 0
    source: Optional[str] = None   # "file:line" of the submission, when the trace carries it

    @property
    def duration_us(self) -> float:
        return self.end_us - self.start_us


@dataclass
class KernelTime:
    kernel: str
    tasks: int
    total_us: float        # summed over blocks (busy worker time)

    @property
    def mean_us(self) -> float:
        return self.total_us / self.tasks if self.tasks else 0.0


@dataclass
class WorkerUse:
    name: str
    busy_us: float
    blocks: int
    utilisation: float     # busy time / the run's span, 0..1


@dataclass
class TraceSummary:
    span_us: float                                  # first task start to last task end
    tasks: List[TaskSpan]
    edges: int
    critical_path: List[TaskSpan] = field(default_factory=list)
    kernels: List[KernelTime] = field(default_factory=list)
    workers: List[WorkerUse] = field(default_factory=list)

    @property
    def critical_path_us(self) -> float:
        return sum(t.duration_us for t in self.critical_path)

    def format(self, top: int = 20) -> str:
        """The human-readable report ``pypto trace summary`` prints."""
        lines = ["%d tasks, %d dependency edges, %.1f us from first start to last end"
                 % (len(self.tasks), self.edges, self.span_us)]
        cp = self.critical_path
        lines.append("critical path: %d task%s, %.1f us of task time (%.0f%% of the span)"
                     % (len(cp), "" if len(cp) == 1 else "s", self.critical_path_us,
                        100.0 * self.critical_path_us / self.span_us if self.span_us > 0 else 0.0))
        for t in cp[:top]:
            lines.append("  task %-6d %-24s %9.1f us  at %9.1f us%s"
                         % (t.task_id, t.kernel, t.duration_us, t.start_us, ("  " + t.source) if t.source else ""))
        if len(cp) > top:
            lines.append("  ... %d more" % (len(cp) - top))
        lines.append("time per kernel:")
        for k in self.kernels:
            lines.append("  %-24s %6d task%s %11.1f us total %9.2f us mean"
                         % (k.kernel, k.tasks, " " if k.tasks == 1 else "s", k.total_us, k.mean_us))
        lines.append("worker utilisation:")
        for w in self.workers:
            lines.append("  %-14s %5.1f%%  (%d block%s, %.1f us busy)"
                         % (w.name, 100.0 * w.utilisation, w.blocks, "" if w.blocks == 1 else "s", w.busy_us))
        return "\n".join(lines)


def summarize(path: str) -> TraceSummary:
    """Reads the trace at ``path``; see the module doc. Raises ``TraceFormatError`` for a file
    that is not such a trace and ``OSError`` when it cannot be read."""
    with open(path) as f:
        try:
            doc = json.load(f)
        except json.JSONDecodeError as e:
            raise TraceFormatError("%s is not JSON (%s)" % (path, e))
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise TraceFormatError("%s has no traceEvents list" % path)
    # A chip-level run's tasks are `task` spans on worker threads (dependencies: flow events with
    # args from / to); a HOST run's (pypto.host) are `next-level` spans on chip processes (flow
    # ids "a-b"). Workers are keyed (0, thread id) / (1, process id).
    names: Dict[tuple, str] = {}
    tasks: Dict[int, TaskSpan] = {}
    busy: Dict[tuple, List[float]] = {}
    per_kernel: Dict[str, List] = {}
    edges = []
    for i, e in enumerate(events):
        try:
            if not isinstance(e, dict):
                continue
            ph, tid = e.get("ph"), e.get("tid", 0)
            args = e.get("args") or {}
            if ph == "M" and e.get("name") == "thread_name":
                names[(0, tid)] = str(args.get("name", tid))
            elif ph == "M" and e.get("name") == "process_name":
                names[(1, e.get("pid", 0))] = str(args.get("name", e.get("pid", 0)))
            elif ph == "X" and e.get("cat") in ("task", "next-level"):
                host = e.get("cat") == "next-level"
                ts, dur = float(e["ts"]), float(e.get("dur", 0.0))
                tid_ = int(args.get("task" if host else "task_id", -1))
                t = tasks.get(tid_)
                if t is None:
                    t = tasks[tid_] = TaskSpan(tid_, str(e.get("name", "task")), ts, ts + dur,
                                               source=args.get("source"))
                t.start_us, t.end_us = min(t.start_us, ts), max(t.end_us, ts + dur)
                t.blocks += 1
                b = busy.setdefault((1, e.get("pid", 0)) if host else (0, tid), [0.0, 0])
                b[0] += dur
                b[1] += 1
                k = per_kernel.setdefault(str(e.get("name", "task")), [0.0, set()])
                k[0] += dur
                k[1].add(tid_)
            elif ph == "s" and e.get("cat") == "dep" and "from" in args and "to" in args:
                edges.append((int(args["from"]), int(args["to"])))
            elif ph == "s" and e.get("cat") == "dep" and str(e.get("id", "")).count("-") == 1:   # HOST: "a-b"
                a, b_ = str(e["id"]).split("-")
                if a.isdigit() and b_.isdigit():
                    edges.append((int(a), int(b_)))
        except (KeyError, TypeError, ValueError, AttributeError) as ex:
            # A malformed event of a kind the summary reads: a located TraceFormatError, not a
            # bare KeyError ('ts') or an AttributeError traceback (args that are no object).
            what = "missing field %s" % ex if isinstance(ex, KeyError) else str(ex)
            raise TraceFormatError("%s: event %d (ph %r, cat %r) is malformed: %s"
                                   % (path, i, e.get("ph"), e.get("cat"), what)) from None

    ordered = sorted(tasks.values(), key=lambda t: (t.start_us, t.task_id))
    span = (max(t.end_us for t in ordered) - min(t.start_us for t in ordered)) if ordered else 0.0
    summary = TraceSummary(span_us=span, tasks=ordered, edges=len(edges))
    summary.critical_path = _critical_path(tasks, edges)
    summary.kernels = sorted((KernelTime(k, len(v[1]), v[0]) for k, v in per_kernel.items()),
                             key=lambda k: -k.total_us)
    summary.workers = [WorkerUse(names.get(key, "%s %s" % ("pid" if key[0] else "tid", key[1])), b[0], int(b[1]),
                                 b[0] / span if span > 0 else 0.0)
                       for key, b in sorted(busy.items())]
    return summary


def _critical_path(tasks: Dict[int, TaskSpan], edges) -> List[TaskSpan]:
    """The longest path through the dependency DAG, weighted by task duration (a task's own time
    plus the longest chain of producers before it). Edges to tasks absent from the trace are ignored."""
    preds: Dict[int, List[int]] = {t: [] for t in tasks}
    for a, b in edges:
        if a in tasks and b in tasks and a != b:
            preds[b].append(a)
    best: Dict[int, float] = {}
    via: Dict[int, Optional[int]] = {}
    # Producers start before their consumers finish, so (end, id) order is a topological order
    # for the executed graph; a cycle (a broken trace) cannot loop because of this order.
    for t in sorted(tasks.values(), key=lambda t: (t.end_us, t.task_id)):
        choice, value = None, 0.0
        for p in preds[t.task_id]:
            if p in best and best[p] > value:
                choice, value = p, best[p]
        best[t.task_id] = value + t.duration_us
        via[t.task_id] = choice
    if not best:
        return []
    cur: Optional[int] = max(best, key=lambda k: (best[k], -k))
    path = []
    while cur is not None:
        path.append(tasks[cur])
        cur = via[cur]
    return path[::-1]
