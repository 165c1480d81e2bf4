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

import codecs
import json
import locale
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from pypto.errors import PyptoError

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
    that is not such a trace (not UTF-8, not JSON, an event of a kind it reads that is malformed)
    and ``OSError`` when it cannot be read.

        summarize("trace.json").format(top=5)   # the text `pypto trace summary` prints"""
    summary = _native_summary(path)
    if summary is not None:
        return summary
    acc = _Accumulator(path)
    try:
        try:
            _read_libpto2_layout(path, acc)
        except _NotLibpto2Layout:
            return _summarize_document(path)
    except UnicodeDecodeError as e:   # a ValueError, but not the TraceFormatError the doc promises
        raise TraceFormatError("%s is not UTF-8 text (byte 0x%02x at offset %d): a trace is JSON in UTF-8"
                               % (path, e.object[e.start], e.start)) from None
    return acc.summary()


def _native_summary(path) -> Optional[TraceSummary]:
    """libpto2's summary of a trace in the exact layout it writes (runtime/include/pto2_trace_summary.h:
    ~0.1 s for 100,000 tasks where the readers below take seconds), or None: another layout, an
    unreadable file, no libpto2. The readers below then give the same summary or name what is
    wrong: libpto2 accepts only lines they read the same way (tests/python/test_trace_summary.py
    checks the two agree)."""
    if not isinstance(path, (str, bytes, os.PathLike)) or not _file_encoding_is_utf8():
        return None
    name = os.fsencode(path)
    if b"\0" in name:     # open() refuses it; C would read the file named by its first part
        return None
    try:
        from pypto._core import trace_reader
        from pypto.runtime import library_path
        result, _why = trace_reader.read(library_path(), name, TaskSpan)
    except (ImportError, RuntimeError, PyptoError):   # no extension or no libpto2 (a source tree)
        return None
    if result is None:
        return None
    span, edges, tasks, critical, kernels, workers, _seconds = result
    summary = TraceSummary(span_us=span, tasks=tasks, edges=edges, critical_path=critical)
    summary.kernels = [KernelTime(name, n, total) for name, n, total in kernels]
    summary.workers = [WorkerUse("tid %s" % tid if name is None else name, busy, blocks,
                                 busy / span if span > 0 else 0.0) for tid, name, busy, blocks in workers]
    return summary


def _file_encoding_is_utf8() -> bool:
    """Whether open() decodes files as UTF-8 (libpto2's reader checks the trace is valid UTF-8)."""
    try:
        return codecs.lookup(locale.getpreferredencoding(False)).name == "utf-8"
    except LookupError:
        return False


def _summarize_document(path: str) -> TraceSummary:
    """The summary of the trace at ``path`` read as one JSON document (any layout)."""
    acc = _Accumulator(path)
    for i, e in enumerate(_events_of_document(path)):
        acc.event(i, e)
    return acc.summary()


class _NotLibpto2Layout(Exception):
    """The file is not laid out as libpto2 writes a trace: read it as one JSON document."""


# libpto2 (trace.cpp) writes `{"traceEvents": [`, then one event per line (each but the last
# followed by a comma), then `]}`. Such a file is read in chunks of lines, and the lines in the
# exact forms trace.cpp writes for tasks, dependencies and submissions (most of a trace) are
# matched whole by regular expressions, in C, instead of being parsed into dicts one by one:
# json.load of the whole document took ~440 MB and ~22 s for 100,000 tasks. Other lines are
# parsed as JSON. Anything unusual (another layout, a line that is not one event, a task or
# dependency in another form, whose order relative to the matched ones would be lost, a
# malformed event) makes the file be read whole, as before: same result, same errors.
_HEAD = re.compile(r'\s*\{\s*"traceEvents"\s*:\s*\[\s*$')
_INT = r'-?(?:0|[1-9][0-9]*)'
_NUM = r'-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?'
_BODY = r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*'   # a JSON string's body (also in skipped lines)
_TASK_LINE = re.compile(   # groups: name, tid, ts, dur, task id, (,"source":"..."), source
    r'\{"name":"(' + _BODY + r')","cat":"task","ph":"X","pid":' + _INT + r',"tid":(' + _INT + r'),"ts":(' + _NUM
    + r'),"dur":(' + _NUM + r'),"args":\{"task_id":(' + _INT + r'),"kernel_id":' + _INT + r',"block_idx":' + _INT
    + r'(,"source":"(' + _BODY + r')")?\}\},\n')
_DEP_LINE = re.compile(r'\{"name":"dep","cat":"dep","ph":"s","id":' + _INT + r',"pid":' + _INT + r',"tid":' + _INT
                       + r',"ts":' + _NUM + r',"args":\{"from":(' + _INT + r'),"to":(' + _INT + r')\}\},\n')
_SKIPPED_LINES = (   # events the summary does not read, in trace.cpp's forms
    re.compile(r'\{"name":"dep","cat":"dep","ph":"f","bp":"e","id":' + _INT + r',"pid":' + _INT + r',"tid":' + _INT
               + r',"ts":' + _NUM + r'\},\n'),
    re.compile(r'\{"name":"' + _BODY + r'","cat":"submit","ph":"X","pid":' + _INT + r',"tid":' + _INT + r',"ts":' + _NUM
               + r',"dur":' + _NUM + r',"args":\{"task_id":' + _INT + r'(?:,"source":"' + _BODY + r'")?\}\},\n'),
)


def _unescape(body: str) -> str:
    if "\\" not in body:
        return body
    try:
        return json.loads('"%s"' % body)
    except json.JSONDecodeError:   # a bad \u escape: let the whole-document read name it
        raise _NotLibpto2Layout() from None


def _json_float(token: str) -> float:
    """float() of a JSON number token as json.loads then float() give it: an integer token is an
    int first (`-0` is 0, not -0.0); one too large for a float is left to the whole-document read,
    which names the event."""
    if "." in token or "e" in token or "E" in token:
        return float(token)
    try:
        return float(int(token))
    except OverflowError:
        raise _NotLibpto2Layout() from None


def _read_libpto2_layout(path: str, acc: "_Accumulator") -> None:
    scan = json.JSONDecoder().scan_once
    task = acc.task
    last_line = ""         # the last non-blank line read so far (the list's last event at its end)
    uncommaed = []         # other-form lines with no comma after them: only the last event may be one
    with open(path) as f:
        if not _HEAD.match(f.readline()):
            raise _NotLibpto2Layout()
        while True:
            text = "".join(f.readlines(1 << 22))
            if not text:
                raise _NotLibpto2Layout()        # no closing `]`: truncated
            # The list ends at a line starting with `]` (none inside it: a string holds no newline).
            end = 0 if text.startswith("]") else text.find("\n]") + 1
            tail = None
            if end > 0 or text.startswith("]"):
                text, tail = text[:end], text[end + 1:] + f.read()
            if text and not text.endswith("\n"):
                raise _NotLibpto2Layout()
            body = text.rstrip()
            if body:
                last_line = body[body.rfind("\n") + 1:]
            for r in _SKIPPED_LINES:
                text = r.sub("", text)
            acc.edges += [(int(a), int(b)) for a, b in _DEP_LINE.findall(text)]
            text = _DEP_LINE.sub("", text)
            for name, tid, ts, dur, task_id, has_source, source in _TASK_LINE.findall(text):
                task(_unescape(name), (0, int(tid)), _json_float(ts), _json_float(dur), int(task_id),
                     _unescape(source) if has_source else None)
            text = _TASK_LINE.sub("", text)
            for line in text.split("\n"):
                line = line.strip()
                if not line:
                    continue
                if line.endswith(","):
                    line = line[:-1]
                else:
                    uncommaed.append(line)
                try:
                    e, stop = scan(line, 0)
                except (StopIteration, json.JSONDecodeError):
                    raise _NotLibpto2Layout() from None   # an event over several lines, or not JSON
                if stop != len(line) or acc.ordered(e):
                    raise _NotLibpto2Layout()
                try:
                    acc.event(-1, e)
                except TraceFormatError:
                    raise _NotLibpto2Layout() from None   # read whole, it names the event's index
            if tail is not None:
                break
    # Every event but the last is followed by a comma, and the list closes the object.
    if uncommaed != ([last_line.strip()] if last_line.strip() not in ("", "[") and not _HEAD.match(last_line) else []):
        raise _NotLibpto2Layout()
    try:
        rest = json.loads('{"traceEvents": []' + tail)
    except json.JSONDecodeError:
        raise _NotLibpto2Layout() from None
    if not isinstance(rest, dict):
        raise _NotLibpto2Layout()


def _events_of_document(path: str):
    with open(path) as f:
        try:
            doc = json.load(f)
        except json.JSONDecodeError as e:
            raise TraceFormatError("%s is not JSON (%s)" % (path, e))
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise TraceFormatError("%s has no traceEvents list" % path)
    return events


class _Accumulator:
    """What the summary keeps of a trace's events, in file order."""

    def __init__(self, path: str):
        self.path = path
        # A chip-level run's tasks are `task` spans on worker threads (dependencies: flow events
        # with args from / to); a HOST run's (pypto.host) are `next-level` spans on chip processes
        # (flow ids "a-b"). Workers are keyed (0, thread id) / (1, process id).
        self.names: Dict[tuple, str] = {}
        self.tasks: Dict[int, TaskSpan] = {}
        self.busy: Dict[tuple, List[float]] = {}
        self.per_kernel: Dict[str, List] = {}
        self.edges: List[tuple] = []

    def task(self, name: str, worker: tuple, ts: float, dur: float, task_id: int, source) -> None:
        """A block of task `task_id` (kernel `name`) on `worker` from `ts` for `dur` us."""
        end = ts + dur
        t = self.tasks.get(task_id)
        if t is None:
            t = self.tasks[task_id] = TaskSpan(task_id, name, ts, end, source=source)
        else:
            if ts < t.start_us:
                t.start_us = ts
            if end > t.end_us:
                t.end_us = end
        t.blocks += 1
        b = self.busy.get(worker)
        if b is None:
            b = self.busy[worker] = [0.0, 0]
        b[0] += dur
        b[1] += 1
        k = self.per_kernel.get(name)
        if k is None:
            k = self.per_kernel[name] = [0.0, set()]
        k[0] += dur
        k[1].add(task_id)

    @staticmethod
    def ordered(e) -> bool:
        """Whether event `e` is a task block or a dependency: what the summary depends on the
        order of (the first block names a task; ties between kernels keep their first-seen order)."""
        if not isinstance(e, dict):
            return False
        ph, cat = e.get("ph"), e.get("cat")
        return (ph == "X" and cat in ("task", "next-level")) or (ph == "s" and cat == "dep")

    def event(self, i: int, e) -> None:
        """Event `i` of the trace, parsed."""
        if not isinstance(e, dict):
            return
        try:
            ph, tid = e.get("ph"), e.get("tid", 0)
            args = e.get("args") or {}
            if ph == "M" and e.get("name") == "thread_name":
                self.names[(0, tid)] = str(args.get("name", tid))
            elif ph == "M" and e.get("name") == "process_name":
                self.names[(1, e.get("pid", 0))] = str(args.get("name", e.get("pid", 0)))
            elif ph == "X" and e.get("cat") in ("task", "next-level"):
                host = e.get("cat") == "next-level"
                self.task(str(e.get("name", "task")), (1, e.get("pid", 0)) if host else (0, tid), float(e["ts"]),
                          float(e.get("dur", 0.0)), int(args.get("task" if host else "task_id", -1)),
                          args.get("source"))
            elif ph == "s" and e.get("cat") == "dep" and "from" in args and "to" in args:
                self.edges.append((int(args["from"]), int(args["to"])))
            elif ph == "s" and e.get("cat") == "dep" and str(e.get("id", "")).count("-") == 1:   # HOST: "a-b"
                a, b_ = str(e["id"]).split("-")
                if a.isdigit() and b_.isdigit():
                    self.edges.append((int(a), int(b_)))
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as ex:
            # A malformed event of a kind the summary reads: a located TraceFormatError, not a
            # bare KeyError ('ts') or an AttributeError traceback (args that are no object).
            what = "missing field %s" % ex if isinstance(ex, KeyError) else str(ex)
            raise TraceFormatError("%s: event %d (ph %r, cat %r) is malformed: %s"
                                   % (self.path, i, e.get("ph"), e.get("cat"), what)) from None

    def summary(self) -> TraceSummary:
        tasks, span = self.tasks, 0.0
        ordered = sorted(tasks.values(), key=lambda t: (t.start_us, t.task_id))
        if ordered:
            span = max(t.end_us for t in ordered) - min(t.start_us for t in ordered)
        summary = TraceSummary(span_us=span, tasks=ordered, edges=len(self.edges))
        summary.critical_path = _critical_path(tasks, self.edges)
        summary.kernels = sorted((KernelTime(k, len(v[1]), v[0]) for k, v in self.per_kernel.items()),
                                 key=lambda k: -k.total_us)
        summary.workers = [WorkerUse(self.names.get(key, "%s %s" % ("pid" if key[0] else "tid", key[1])), b[0],
                                     int(b[1]), b[0] / span if span > 0 else 0.0)
                           for key, b in sorted(self.busy.items(), key=_worker_order)]
        return summary


def _worker_order(item):
    """Workers by (kind, id): numeric ids first, then string ids, then any other (a JSON null):
    a trace mixing `"tid": 1` and `"tid": "1"` raised TypeError comparing them."""
    (kind, wid), _ = item
    if isinstance(wid, (int, float)):
        return kind, 0, wid, ""
    return (kind, 1, 0, wid) if isinstance(wid, str) else (kind, 2, 0, repr(wid))


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
