"""Differential fuzz of the trace summary's three readers (pypto/trace_summary.py).

`pypto trace summary` reads a trace with libpto2's native reader when the file is laid out
exactly as libpto2 writes it, else with a Python line reader, else as one JSON document. The
readers must agree: the native and line readers only accept what the document reader reads the
same way. This module mutates traces in libpto2's layout (numbers at their extremes, lines
deleted, repeated, swapped or cut, characters and escapes inserted, dependencies that form
cycles or name unknown tasks, CRLF line ends, bytes that are not UTF-8) and checks, per mutant:

    - summarize(path) gives what the document reader gives: the same summary, or a
      TraceFormatError with the same message (never another exception);
    - the native reader either declines (None) or gives that same summary.

    verdict = check(seed)   # "native same" | "same" | "both refuse"; raises Mismatch on a disagreement
    write_libpto2_trace(path)      # the unmutated trace (also test_trace_summary.py's fixture)

Used by tests/python/test_trace_summary_fuzz.py (a seeded smoke) and
scripts/fuzz_trace_summary.py (`make fuzz`).
"""

from __future__ import annotations

import os
import random
import re
import tempfile

import pypto.trace_summary as ts
from pypto.trace_summary import TraceFormatError


def libpto2_trace_events(tasks: int = 300, workers: int = 4) -> list:
    """The event lines of a trace in libpto2's layout (trace.cpp): thread names, task blocks (some
    tasks in two blocks, names and sources that need escapes, two kernels with equal total time),
    submit and scope spans, a skipped task, flows with from/to, a timing slot."""
    ev = ['{"name":"process_name","ph":"M","pid":0,"tid":0,"args":{"name":"pto2"}}']
    ev += ['{"name":"thread_name","ph":"M","pid":0,"tid":%d,"args":{"name":"AIV%d"}}' % (w, w) for w in range(workers)]
    ev.append('{"name":"thread_name","ph":"M","pid":0,"tid":%d,"args":{"name":"orchestrator"}}' % workers)
    names = ["add", "mul", 'q\\"uote', "tie_a", "tie_b"]
    for i in range(1, tasks + 1):
        k = names[i % len(names)]
        dur = 2.0 if k.startswith("tie") else 1.0 + (i * 37 % 11) * 0.125
        src = ',"source":"caf\\u00e9.py:%d"' % (10 + i % 7) if i % 3 else ""
        ev.append('{"name":"%s","cat":"task","ph":"X","pid":0,"tid":%d,"ts":%.3f,"dur":%.3f,'
                  '"args":{"task_id":%d,"kernel_id":%d,"block_idx":0%s}}' % (k, i % workers, i * 1.5, dur, i, i % 5, src))
        if i % 10 == 0:   # a second block of the task on another worker
            ev.append('{"name":"%s","cat":"task","ph":"X","pid":0,"tid":%d,"ts":%.3f,"dur":%.3f,'
                      '"args":{"task_id":%d,"kernel_id":%d,"block_idx":1%s}}' % (k, (i + 1) % workers, i * 1.5 + 0.25, dur, i, i % 5, src))
    ev.append('{"name":"add","cat":"skip","ph":"i","s":"t","pid":0,"tid":0,"ts":3.000,"args":{"task_id":%d,'
              '"kernel_id":0,"element":0,"op":">","target":0,"predicate":"element 0 > 0 is false"}}' % (tasks + 1))
    for i in range(1, tasks + 1):
        ev.append('{"name":"submit %s","cat":"submit","ph":"X","pid":0,"tid":%d,"ts":%.3f,"dur":0.100,'
                  '"args":{"task_id":%d}}' % (names[i % 5], workers, i * 0.5, i))
    ev.append('{"name":"PTO2_SCOPE AUTO","cat":"scope","ph":"X","pid":0,"tid":%d,"ts":0.000,"dur":9.000,'
              '"args":{"mode":"AUTO"}}' % workers)
    flow = 0
    for i in range(2, tasks + 1):
        for p in {i - 1, max(1, i - 7)}:
            flow += 1
            ev.append('{"name":"dep","cat":"dep","ph":"s","id":%d,"pid":0,"tid":0,"ts":1.000,"args":{"from":%d,"to":%d}}'
                      % (flow, p, i))
            ev.append('{"name":"dep","cat":"dep","ph":"f","bp":"e","id":%d,"pid":0,"tid":1,"ts":2.000}' % flow)
    ev.append('{"name":"timing_slot_0","cat":"timing_slot","ph":"X","pid":0,"tid":%d,"ts":0.000,"dur":5.000,'
              '"args":{"slot":0,"tasks":3}}' % (workers + 1))
    return ev


def trace_text(events: list) -> str:
    """`events` (lines) laid out as libpto2 writes a trace."""
    return '{"traceEvents": [\n' + ",\n".join(events) + "\n]}\n"


def write_libpto2_trace(path, tasks: int = 300, workers: int = 4) -> None:
    """Writes libpto2_trace_events(tasks, workers) to `path` in libpto2's layout."""
    with open(path, "w") as f:
        f.write(trace_text(libpto2_trace_events(tasks, workers)))


def as_document(summary) -> tuple:
    """What a summary shows, comparable with ==: its full text and every task's fields."""
    return (summary.format(top=10 ** 6), [(t.task_id, t.kernel, t.start_us, t.end_us, t.blocks, t.source)
                                          for t in summary.tasks])


# ---- mutations: each takes (rng, text) and returns the mutated text (str, or bytes when it
# writes bytes that are not UTF-8)

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_EXTREMES = ["0", "-0", "-1", "1.5", "0.000", "-0.001", "1e3", "1E-3", "2.5e+2", "007", "1.", ".5",
             "9007199254740993", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
             "-9223372036854775809", "18446744073709551616", "1" * 40, "1" * 400 + ".5", "1e308", "1e309",
             "-1e309", "4.9e-324", "NaN", "Infinity", "-Infinity", "0x10", "+1", "1.000000000000000000001"]
_STRINGS = ['\\u0000', '\\ud800', '\\udc00x', '\\ud83d\\ude00', '\\u00e9', '\\u00E9', '\\"', '\\\\', '\\/',
            '\\b\\f\\n\\r\\t', '\\x41', '\\u12', 'caf\u00e9', '\u0001', '', 'a' * 300, ' ', '\u2028']
_CHARS = ['{', '}', '[', ']', ',', ':', '"', '\\', ' ', '\t', '\n', '\r', 'x', '0', '-', '.', 'e',
          '\u00e9', '\x00', '\x7f']


def _replace_number(rng, text):
    spans = [m.span() for m in _NUMBER.finditer(text)]
    if not spans:
        return text
    a, b = rng.choice(spans)
    return text[:a] + rng.choice(_EXTREMES) + text[b:]


def _replace_string(rng, text):
    spans = [m.span(1) for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', text)]
    if not spans:
        return text
    a, b = rng.choice(spans)
    return text[:a] + rng.choice(_STRINGS) + text[b:]


def _lines(text):
    return text.split("\n")


def _delete_line(rng, text):
    ls = _lines(text)
    del ls[rng.randrange(len(ls))]
    return "\n".join(ls)


def _repeat_line(rng, text):
    ls = _lines(text)
    i = rng.randrange(len(ls))
    ls.insert(rng.randrange(len(ls) + 1), ls[i])
    return "\n".join(ls)


def _swap_lines(rng, text):
    ls = _lines(text)
    i, j = rng.randrange(len(ls)), rng.randrange(len(ls))
    ls[i], ls[j] = ls[j], ls[i]
    return "\n".join(ls)


def _truncate(rng, text):
    return text[:rng.randrange(len(text) + 1)]


def _insert_char(rng, text):
    i = rng.randrange(len(text) + 1)
    return text[:i] + rng.choice(_CHARS) + text[i:]


def _delete_chars(rng, text):
    i = rng.randrange(len(text) + 1)
    return text[:i] + text[i + rng.randint(1, 8):]


def _add_dependency(rng, text):
    # Cycles, self edges, unknown and huge task ids: the critical path must still end.
    ids = [int(m) for m in re.findall(r'"task_id":(-?\d+)', text)] or [1]
    pick = lambda: rng.choice(ids + [0, -1, 10 ** 6, 2 ** 63 - 1])
    line = ('{"name":"dep","cat":"dep","ph":"s","id":%d,"pid":0,"tid":0,"ts":1.000,"args":{"from":%d,"to":%d}},'
            % (rng.randrange(10 ** 6), pick(), pick()))
    ls = _lines(text)
    ls.insert(rng.randint(1, max(1, len(ls) - 2)), line)
    return "\n".join(ls)


def _crlf(rng, text):
    return text.replace("\n", "\r\n")


def _not_utf8(rng, text):
    raw = text.encode()
    i = rng.randrange(len(raw) + 1)
    return raw[:i] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"]) + raw[i:]


_MUTATIONS = [(_replace_number, 6), (_replace_string, 3), (_delete_line, 2), (_repeat_line, 2), (_swap_lines, 2),
              (_truncate, 1), (_insert_char, 3), (_delete_chars, 2), (_add_dependency, 3), (_crlf, 1), (_not_utf8, 1)]


# Examples whose traces have dependencies, a mixed (AIC + AIV) task and a task of several blocks.
_EXAMPLES = ("online_softmax", "group_mixed", "spmd_block_idx")


def real_traces(directory: str) -> list:
    """The texts of traces libpto2 wrote for a run of each of _EXAMPLES (compiled once each: the
    build cache keeps them), written under `directory`. Only these reach the native reader, which
    accepts exactly what libpto2 writes."""
    import importlib
    import sys
    examples = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
    sys.path.insert(0, examples)
    try:
        texts = []
        for name in _EXAMPLES:
            path = os.path.join(directory, name + ".json")
            importlib.import_module(name).run(trace=path)
            with open(path) as f:
                texts.append(f.read())
        return texts
    finally:
        sys.path.remove(examples)


def mutant(seed: int, real: list = ()):
    """The mutated trace of `seed` (str, or bytes when it is not UTF-8): one of the `real` traces
    (real_traces) or a small synthetic one in libpto2's layout, with one to three mutations."""
    rng = random.Random(seed)
    if real and rng.random() < 0.5:
        text = rng.choice(real)
    else:
        text = trace_text(libpto2_trace_events(tasks=rng.randint(1, 24), workers=rng.randint(1, 4)))
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        if isinstance(text, bytes):
            break
        fn = rng.choices([m for m, _ in _MUTATIONS], weights=[w for _, w in _MUTATIONS])[0]
        text = fn(rng, text)
    return text


class Mismatch(AssertionError):
    """The readers disagree on a mutant (the message says how; the mutant's seed is in it)."""


def _outcome(read, path):
    """("summary", repr of its document) or ("refused", message) of read(path); any other
    exception escapes. (repr: a NaN time compares equal to itself.)"""
    try:
        return "summary", repr(as_document(read(path)))
    except TraceFormatError as e:
        return "refused", str(e)


def check_text(text, path: str, label: str = "") -> str:
    """Writes `text` to `path` and compares the readers on it (module doc): "native same" when the
    native reader read it and all agree, "same" when the Python readers agree on a summary (the
    native one declined), "both refuse" when summarize and the document reader refuse it alike.
    Raises Mismatch otherwise."""
    with open(path, "wb") as f:
        f.write(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    try:
        whole = _outcome(ts._summarize_document, path)
    except UnicodeDecodeError:
        whole = None   # not UTF-8: summarize must refuse it by name (below)
    except Exception as e:   # noqa: BLE001 - the reference must refuse by TraceFormatError too
        raise Mismatch("%s: the document reader raised %s: %s" % (label, type(e).__name__, e)) from e
    try:
        got = _outcome(ts.summarize, path)
    except Exception as e:   # noqa: BLE001 - any other exception is the finding
        raise Mismatch("%s: summarize raised %s: %s" % (label, type(e).__name__, e)) from e
    if whole is None:
        if got[0] != "refused" or "is not UTF-8 text" not in got[1]:
            raise Mismatch("%s: a trace that is not UTF-8 was not refused as such: %.300s" % (label, got))
        return "both refuse"
    if got != whole:
        raise Mismatch("%s: summarize and the document reader differ:\n  summarize: %.300s\n  document:  %.300s"
                       % (label, got, whole))
    native = ts._native_summary(path)
    if native is not None and ("summary", repr(as_document(native))) != whole:
        raise Mismatch("%s: the native reader accepted it with another summary:\n  native:   %.300s\n  document: %.300s"
                       % (label, as_document(native), whole))
    if native is not None:
        return "native same"
    return "same" if whole[0] == "summary" else "both refuse"


def check(seed: int, real: list = (), directory: str = None) -> str:
    """check_text of mutant(seed, real) in `directory` (a temporary one by default)."""
    with tempfile.TemporaryDirectory(dir=directory) as d:
        return check_text(mutant(seed, real), os.path.join(d, "trace.json"), "seed %d" % seed)


def native_accepts(text) -> bool:
    """Whether libpto2's reader accepts `text` (a probe for tests: the fuzz must reach it)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        with open(path, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())
        return ts._native_summary(path) is not None

