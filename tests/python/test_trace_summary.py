"""`pypto trace summary` and pypto.trace_summary: critical path, time per kernel, utilisation."""
import json
import re
import os
import sys

import numpy as np
import pytest

from pypto import cli
from pypto.trace_summary import TraceFormatError, summarize
from trace_fuzz import as_document, write_libpto2_trace

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _task(name, tid, task_id, ts, dur):
    return {"name": name, "cat": "task", "ph": "X", "pid": 0, "tid": tid, "ts": ts, "dur": dur,
            "args": {"task_id": task_id, "kernel_id": 0, "block_idx": 0}}


def _edge(a, b, n):
    return [{"name": "dep", "cat": "dep", "ph": "s", "id": n, "pid": 0, "tid": 0, "ts": 0, "args": {"from": a, "to": b}},
            {"name": "dep", "cat": "dep", "ph": "f", "bp": "e", "id": n, "pid": 0, "tid": 0, "ts": 0}]


def _write(tmp_path, events):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return str(path)


def test_critical_path_is_the_longest_weighted_chain(tmp_path):
    # 1 -> 2 -> 4 (10 + 10 + 10) versus 1 -> 3 -> 4 (10 + 50 + 10): the path goes through 3, even
    # though 2 has more tasks after it in id order.
    ev = [{"name": "thread_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "AIV0"}},
          {"name": "thread_name", "ph": "M", "pid": 0, "tid": 1, "args": {"name": "AIV1"}},
          _task("a", 0, 1, 0, 10), _task("b", 0, 2, 10, 10), _task("c", 1, 3, 10, 50), _task("a", 0, 4, 60, 10)]
    ev += _edge(1, 2, 1) + _edge(1, 3, 2) + _edge(2, 4, 3) + _edge(3, 4, 4)
    s = summarize(_write(tmp_path, ev))
    assert [t.task_id for t in s.critical_path] == [1, 3, 4]
    assert s.critical_path_us == pytest.approx(70.0)
    assert s.span_us == pytest.approx(70.0) and s.edges == 4
    by_kernel = {k.kernel: (k.tasks, k.total_us) for k in s.kernels}
    assert by_kernel == {"a": (2, 20.0), "b": (1, 10.0), "c": (1, 50.0)}
    assert s.kernels[0].kernel == "c"                      # sorted by total time
    use = {w.name: w.utilisation for w in s.workers}
    assert use["AIV0"] == pytest.approx(30.0 / 70.0) and use["AIV1"] == pytest.approx(50.0 / 70.0)
    text = s.format()
    assert "critical path: 3 tasks, 70.0 us" in text and "AIV1" in text


def test_blocks_of_one_task_merge_into_one_span(tmp_path):
    ev = [_task("k", 0, 5, 0, 10), _task("k", 1, 5, 5, 20)]
    s = summarize(_write(tmp_path, ev))
    assert len(s.tasks) == 1 and s.tasks[0].blocks == 2
    assert (s.tasks[0].start_us, s.tasks[0].end_us) == (0.0, 25.0)
    assert s.kernels[0].total_us == pytest.approx(30.0)    # busy time sums the blocks


def test_orchestrator_spans_and_skips_are_not_tasks(tmp_path):
    # submissions, scopes (X on the orchestrator track) and skipped tasks (instant events) carry
    # task ids too: they must not count as tasks, kernel time or worker busy time
    ev = [{"name": "thread_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "AIV0"}},
          {"name": "thread_name", "ph": "M", "pid": 0, "tid": 1, "args": {"name": "orchestrator"}},
          {"name": "PTO2_SCOPE AUTO", "cat": "scope", "ph": "X", "pid": 0, "tid": 1, "ts": 0, "dur": 40,
           "args": {"mode": "AUTO"}},
          {"name": "submit a", "cat": "submit", "ph": "X", "pid": 0, "tid": 1, "ts": 0, "dur": 5, "args": {"task_id": 1}},
          {"name": "submit b", "cat": "submit", "ph": "X", "pid": 0, "tid": 1, "ts": 5, "dur": 5, "args": {"task_id": 2}},
          _task("a", 0, 1, 10, 10),
          {"name": "b", "cat": "skip", "ph": "i", "s": "t", "pid": 0, "tid": 0, "ts": 20,
           "args": {"task_id": 2, "kernel_id": 1, "element": 0, "op": ">", "target": 0}}]
    ev += _edge(1, 2, 1)
    s = summarize(_write(tmp_path, ev))
    assert [t.task_id for t in s.tasks] == [1] and s.span_us == pytest.approx(10.0)
    assert [t.task_id for t in s.critical_path] == [1]
    assert [(k.kernel, k.tasks) for k in s.kernels] == [("a", 1)]
    assert [w.name for w in s.workers] == ["AIV0"]

def test_not_a_trace(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{not json")
    with pytest.raises(TraceFormatError):
        summarize(str(p))
    p.write_text('{"x": 1}')
    with pytest.raises(TraceFormatError):
        summarize(str(p))


def test_summary_of_a_real_run_follows_the_dependency_chain(tmp_path, capsys):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import online_softmax as ex
    finally:
        sys.path.pop(0)
    import pypto
    rng = np.random.default_rng(0)
    q = rng.standard_normal((ex.SQ, ex.D)).astype(np.float32)
    kt = rng.standard_normal((ex.D, ex.SK)).astype(np.float32)
    v = rng.standard_normal((ex.SK, ex.D)).astype(np.float32)
    out = np.zeros((ex.SQ, ex.D), np.float32)
    trace = str(tmp_path / "trace.json")
    pypto.compile(ex.OnlineSoftmax)(q, kt, v, float(1.0 / np.sqrt(ex.D)), out, trace=trace)
    s = summarize(trace)
    assert len(s.tasks) == 20
    # each query block is one chain init -> step x 8 -> finalize: the critical path is one of them
    names = [t.kernel for t in s.critical_path]
    assert len(names) == 10 and names[0] == "init_state" and names[-1] == "finalize"
    assert names[1:-1] == ["attn_step"] * 8
    # the runtime's trace names each task's DSL line: the critical path shows where it was submitted
    assert all(t.source and t.source.startswith("online_softmax.py:") for t in s.critical_path)
    assert cli.main(["trace", "summary", trace]) == 0
    text = capsys.readouterr().out
    assert "critical path: 10 tasks" in text and "online_softmax.py:" in text


def test_cli_errors(tmp_path, capsys):
    assert cli.main(["trace", "summary", str(tmp_path / "missing.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    assert cli.main(["trace", "summary", str(bad)]) == 2
    assert "is not a pypto trace" in capsys.readouterr().err
    assert cli.main(["trace", "summary", str(bad), "--top", "-1"]) == 2
    assert "--top must be 0 or more, got -1" in capsys.readouterr().err


def _vector_add():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import vector_add as ex
    finally:
        sys.path.pop(0)
    import pypto
    a = np.ones(ex.N, np.float32)
    return pypto.compile(ex.VectorAdd), a


def test_pypto_trace_env_turns_tracing_on(tmp_path, monkeypatch):
    compiled, a = _vector_add()
    path = tmp_path / "env_trace.json"
    monkeypatch.setenv("PYPTO_TRACE", str(path))
    stats = compiled(a, a, np.zeros_like(a))
    assert stats.trace_path == str(path)
    assert len(summarize(str(path)).tasks) == 16


def test_trace_directory_missing_fails_before_running(tmp_path):
    from pypto.runtime.trace_path import TracePathError
    compiled, a = _vector_add()
    c = np.zeros_like(a)
    with pytest.raises(TracePathError, match="does not exist"):
        compiled(a, a, c, trace=str(tmp_path / "no" / "such" / "dir" / "t.json"))
    assert not c.any()          # nothing ran
    assert isinstance(TracePathError("x"), ValueError)


def test_summary_of_a_host_run(tmp_path, capsys):
    # `pypto run two_chips.py --trace t.json && pypto trace summary t.json` (docs/running.md) printed
    # "0 tasks": a HOST trace's tasks are `next-level` spans on chip processes, its edges flow ids "a-b"
    trace = str(tmp_path / "host.json")
    assert cli.main(["run", os.path.join(ROOT, "examples", "two_chips.py"), "--trace", trace]) == 0
    capsys.readouterr()
    s = summarize(trace)
    doc = json.load(open(trace))
    spans = [e for e in doc["traceEvents"] if e.get("cat") == "next-level"]
    assert len(s.tasks) == len(spans) == 5
    assert {k.kernel for k in s.kernels} == {"chip_normalize", "chip_combine"}
    assert s.edges == sum(1 for e in doc["traceEvents"] if e.get("ph") == "s" and e.get("cat") == "dep") > 0
    assert s.critical_path and s.critical_path[-1].kernel == "chip_combine"   # after the barrier
    assert s.workers and all(w.name.startswith("chip ") for w in s.workers)
    assert cli.main(["trace", "summary", trace]) == 0
    assert "5 tasks" in capsys.readouterr().out


def test_trace_without_a_subcommand_names_the_choices(capsys):
    # said "the following arguments are required: trace_command" (argparse's internal dest)
    from pypto import cli
    with pytest.raises(SystemExit) as e:
        cli.main(["trace"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "the following arguments are required: {summary}" in err and "trace_command" not in err


@pytest.mark.parametrize("event, reason", [
    ({"ph": "X", "cat": "task", "name": "k", "dur": 1}, "missing field 'ts'"),
    ({"ph": "X", "cat": "task", "name": "k", "ts": 1, "args": 5}, "'int' object has no attribute 'get'"),
    ({"ph": "X", "cat": "task", "name": "k", "ts": "soon"}, "could not convert string to float"),
])
def test_malformed_task_event_is_located(tmp_path, capsys, event, reason):
    # were a bare KeyError message ("'ts'") and an AttributeError traceback (args that are no object)
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": [{"ph": "M", "name": "thread_name", "tid": 1}, event]}))
    with pytest.raises(TraceFormatError, match="event 1 \\(ph 'X', cat 'task'\\) is malformed: " + re.escape(reason)):
        summarize(str(path))
    assert cli.main(["trace", "summary", str(path)]) == 2
    assert "is malformed" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# Traces in libpto2's layout are read line by line (a 100,000-task trace took ~22 s and ~440 MB
# with json.load; benchmarks/trace_summary_bench.py): the summary must be exactly the one the
# whole-document read gives, and any departure from that layout must fall back to it.

# What `summarize(...).format(top=8)` printed for write_libpto2_trace(path) before the line reader.
_GOLDEN = """\
300 tasks, 597 dependency edges, 449.9 us from first start to last end
critical path: 300 tasks, 539.0 us of task time (120% of the span)
  task 1      mul                            1.5 us  at       1.5 us  caf\u00e9.py:11
  task 2      q"uote                         2.0 us  at       3.0 us  caf\u00e9.py:12
  task 3      tie_a                          2.0 us  at       4.5 us
  task 4      tie_b                          2.0 us  at       6.0 us  caf\u00e9.py:14
  task 5      add                            2.1 us  at       7.5 us  caf\u00e9.py:15
  task 6      mul                            1.2 us  at       9.0 us
  task 7      q"uote                         1.8 us  at      10.5 us  caf\u00e9.py:10
  task 8      tie_a                          2.0 us  at      12.0 us  caf\u00e9.py:11
  ... 292 more
time per kernel:
  add                          60 tasks       146.6 us total      2.44 us mean
  tie_a                        60 tasks       120.0 us total      2.00 us mean
  tie_b                        60 tasks       120.0 us total      2.00 us mean
  mul                          60 tasks        97.1 us total      1.62 us mean
  q"uote                       60 tasks        96.9 us total      1.61 us mean
worker utilisation:
  AIV0            29.7%  (75 blocks, 133.5 us busy)
  AIV1            35.0%  (90 blocks, 157.2 us busy)
  AIV2            29.5%  (75 blocks, 132.6 us busy)
  AIV3            35.0%  (90 blocks, 157.2 us busy)"""


def test_libpto2_layout_is_read_line_by_line_with_the_same_summary(tmp_path, monkeypatch):
    import pypto.trace_summary as ts
    path = str(tmp_path / "t.json")
    write_libpto2_trace(path)
    assert summarize(path).format(top=8) == _GOLDEN
    whole = as_document(ts._summarize_document(path))
    # The line reader alone (the whole-document read would fail) gives the same summary.
    monkeypatch.setattr(ts, "_events_of_document", lambda p: pytest.fail("read %s whole" % p))
    assert as_document(summarize(path)) == whole


def test_a_real_trace_is_read_line_by_line_with_the_same_summary(tmp_path, monkeypatch):
    import pypto.trace_summary as ts
    compiled, a = _vector_add()
    path = str(tmp_path / "t.json")
    compiled(a, a, np.zeros_like(a), trace=path)
    whole = as_document(ts._summarize_document(path))
    monkeypatch.setattr(ts, "_events_of_document", lambda p: pytest.fail("read %s whole" % p))
    assert as_document(summarize(path)) == whole and "16 tasks" in whole[0]


@pytest.mark.parametrize("edit, error", [
    (lambda t: t.replace("}\n]}", "},\n]}"), "is not JSON"),                   # a trailing comma
    (lambda t: t.replace("},\n", "}\n", 1), "is not JSON"),                      # a missing comma
    (lambda t: t[:len(t) // 2], "is not JSON"),                                 # truncated
    (lambda t: t + "x", "is not JSON"),                                         # trailing garbage
    (lambda t: t.replace('"ts":3.000,', '"ts":3.000,"extra":[1,\n2],', 1), None),  # an event over two lines
    (lambda t: t.replace('"cat":"task","ph":"X"', '"cat": "task", "ph": "X"', 5), None),  # other spacing
    (lambda t: t.replace('"args":{"task_id":7,', '"args":{"task_id":"seven",', 1), "is malformed"),
    (lambda t: t.replace('"args":{"from":5,', '"args":{"from":"x",', 1), "is malformed"),
], ids=["trailing-comma", "missing-comma", "truncated", "garbage", "multi-line", "spacing", "bad-task", "bad-dep"])
def test_other_layouts_fall_back_to_the_whole_document(tmp_path, edit, error):
    import pypto.trace_summary as ts
    path = tmp_path / "t.json"
    write_libpto2_trace(str(path))
    path.write_text(edit(path.read_text()))
    if error is None:
        assert as_document(summarize(str(path))) == as_document(ts._summarize_document(str(path)))
        return
    with pytest.raises(TraceFormatError, match=error) as line_reader:
        summarize(str(path))
    with pytest.raises(TraceFormatError) as whole:
        ts._summarize_document(str(path))
    assert str(line_reader.value) == str(whole.value)


def test_trace_write_failure_after_the_run_carries_the_result():
    # A full disk at the end of a completed run: the RunError carries what the call returns
    # (it was lost with the error) and the outputs are written.
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    from pypto.runtime.loader import RunError
    compiled, a = _vector_add()
    c = np.zeros_like(a)
    with pytest.raises(RunError, match="could not write the trace to /dev/full: No space left on device$") as e:
        compiled(a, a, c, trace="/dev/full")
    assert e.value.result is e.value.stats and e.value.stats.tasks == 16
    assert compiled.last_stats is e.value.stats
    np.testing.assert_array_equal(c, a + a)


def test_trace_write_failure_gives_the_path_and_the_os_reason(tmp_path):
    # It said 'could not write the trace to X' with 'check that the directory exists and is
    # writable' whatever the cause; the runtime now passes on the OS's reason.
    from pypto.runtime.loader import RunError
    compiled, a = _vector_add()
    compiled(a, a, np.zeros_like(a), trace=str(tmp_path / "t.json"))
    missing = str(tmp_path / "gone" / "t.json")   # a directory removed after the call's own check
    with pytest.raises(RunError, match="could not write the trace to %s: No such file or directory$"
                       % re.escape(missing)) as e:
        compiled._runtime.write_trace(missing)
    assert "check that the directory exists" not in str(e.value)


# ---------------------------------------------------------------------------------------------
# libpto2 reads traces in its own layout (pto2_trace_summary.h: 100,000 tasks in ~0.3 s, where the
# Python line reader took ~3.4 s; benchmarks/trace_summary_bench.py). Its summary must be the
# Python readers' to the last field, and anything it does not read exactly as they do it leaves
# to them.

def _python_only(monkeypatch):
    import pypto.trace_summary as ts
    monkeypatch.setattr(ts, "_native_summary", lambda path: None)


def _native_only(monkeypatch):
    import pypto.trace_summary as ts
    monkeypatch.setattr(ts, "_read_libpto2_layout", lambda path, acc: pytest.fail("Python line reader"))
    monkeypatch.setattr(ts, "_events_of_document", lambda path: pytest.fail("Python document reader"))


def _lines_trace(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"traceEvents": [\n' + ",\n".join(lines) + "\n]}\n")


def _task_line(name, tid, task_id, ts, dur, source=None, block=0):
    src = ',"source":"%s"' % source if source is not None else ""
    return ('{"name":"%s","cat":"task","ph":"X","pid":0,"tid":%d,"ts":%.3f,"dur":%.3f,'
            '"args":{"task_id":%d,"kernel_id":0,"block_idx":%d%s}}' % (name, tid, ts, dur, task_id, block, src))


def _dep_lines(a, b, flow):
    return ['{"name":"dep","cat":"dep","ph":"s","id":%d,"pid":0,"tid":0,"ts":1.000,"args":{"from":%d,"to":%d}}'
            % (flow, a, b),
            '{"name":"dep","cat":"dep","ph":"f","bp":"e","id":%d,"pid":0,"tid":1,"ts":2.000}' % flow]


def _thread_line(tid, name):
    return '{"name":"thread_name","ph":"M","pid":0,"tid":%d,"args":{"name":"%s"}}' % (tid, name)


@pytest.mark.parametrize("reader", ["libpto2", "python"])
def test_known_summary_field_by_field(tmp_path, monkeypatch, reader):
    # Diamond 1 -> {2, 3} -> 4 -> 5 where 2 and 3 tie (the first producer in file order wins), 5 in
    # two blocks on two workers; 6 alone as long as the chain (tie at the top: the lower id ends
    # the path); 7 of a kernel whose total ties add's; a self edge and an edge from a task absent
    # from the trace (counted, not followed); an unnamed worker.
    (_native_only if reader == "libpto2" else _python_only)(monkeypatch)
    lines = [_thread_line(0, "AIV0"), _thread_line(1, "AIV1"), _thread_line(2, "AIV2"),
             _task_line("load", 0, 1, 0, 10, "p.py:1"), _task_line("mul", 1, 2, 10, 20, "p.py:2"),
             _task_line("add", 2, 3, 10, 20), _task_line("add", 0, 4, 30, 5, "p.py:4"),
             _task_line("mul", 1, 5, 35, 10, "p.py:5"), _task_line("store", 3, 6, 0, 48),
             _task_line("mul", 2, 5, 36, 12, "p.py:5", block=1), _task_line("zz", 1, 7, 50, 25)]
    for n, (a, b) in enumerate([(1, 2), (1, 3), (2, 4), (3, 4), (4, 5), (4, 4), (99, 5)]):
        lines += _dep_lines(a, b, n + 1)
    path = str(tmp_path / "t.json")
    _lines_trace(path, lines)
    s = summarize(path)
    assert s.span_us == 75.0 and s.edges == 7
    assert [(t.task_id, t.kernel, t.start_us, t.end_us, t.blocks, t.source) for t in s.tasks] == [
        (1, "load", 0.0, 10.0, 1, "p.py:1"), (6, "store", 0.0, 48.0, 1, None), (2, "mul", 10.0, 30.0, 1, "p.py:2"),
        (3, "add", 10.0, 30.0, 1, None), (4, "add", 30.0, 35.0, 1, "p.py:4"), (5, "mul", 35.0, 48.0, 2, "p.py:5"),
        (7, "zz", 50.0, 75.0, 1, None)]
    assert [t.task_id for t in s.critical_path] == [1, 2, 4, 5] and s.critical_path_us == 48.0
    assert all(any(t is u for u in s.tasks) for t in s.critical_path)   # the same objects
    assert [(k.kernel, k.tasks, k.total_us) for k in s.kernels] == [
        ("store", 1, 48.0), ("mul", 2, 42.0), ("add", 2, 25.0), ("zz", 1, 25.0), ("load", 1, 10.0)]
    assert [(w.name, w.busy_us, w.blocks, w.utilisation) for w in s.workers] == [
        ("AIV0", 15.0, 2, 15.0 / 75), ("AIV1", 55.0, 3, 55.0 / 75), ("AIV2", 32.0, 2, 32.0 / 75),
        ("tid 3", 48.0, 1, 48.0 / 75)]
    assert "critical path: 4 tasks, 48.0 us of task time (64% of the span)" in s.format()


def test_known_summary_of_a_host_trace(tmp_path):
    # A HOST run's layout (next-level spans on chip processes, flow ids "a-b"): the Python
    # document reader's, libpto2 leaves it to it.
    import pypto.trace_summary as ts
    ev = [{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "chip 0"}},
          {"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "chip 1"}}]
    for task, pid, ts_, dur in [(0, 1, 0, 5), (1, 2, 0, 7), (2, 1, 7, 3)]:
        ev.append({"name": "t%d" % (task % 2), "cat": "next-level", "ph": "X", "pid": pid, "tid": 0, "ts": ts_,
                   "dur": dur, "args": {"task": task}})
    ev += [{"name": "dep", "cat": "dep", "ph": "s", "id": "0-2", "pid": 1, "tid": 0, "ts": 5},
           {"name": "dep", "cat": "dep", "ph": "s", "id": "1-2", "pid": 2, "tid": 0, "ts": 7}]
    path = _write(tmp_path, ev)
    assert ts._native_summary(path) is None
    s = summarize(path)
    assert [t.task_id for t in s.critical_path] == [1, 2] and s.critical_path_us == 10.0 and s.edges == 2
    assert [(w.name, w.busy_us, w.blocks) for w in s.workers] == [("chip 0", 8.0, 2), ("chip 1", 7.0, 1)]
    assert [(k.kernel, k.tasks, k.total_us) for k in s.kernels] == [("t0", 2, 8.0), ("t1", 1, 7.0)]


def _full(summary):
    return (summary.span_us, summary.edges, summary.format(top=10 ** 6),
            [(t.task_id, t.kernel, t.start_us, t.end_us, t.blocks, t.source) for t in summary.tasks],
            [t.task_id for t in summary.critical_path], [vars(k) for k in summary.kernels],
            [vars(w) for w in summary.workers])


def _random_trace(rng, path):
    """A libpto2-layout trace of random tasks (escaped and non-ASCII names, several blocks,
    negative and zero durations, repeated times, sparse, negative and large ids), edges (to
    absent tasks, self edges, backwards in time), and the events the summary ignores."""
    kernels = ["add", 'q\\"t', "back\\\\slash", "ctl\\u0001x", "caf\u00e9", "\u4e2d", ""]
    n = int(rng.integers(0, 30))
    ids = rng.choice([1, 2, 3, 7, 10, 2 ** 31, 2 ** 40, -5, 0, 64, 65, 99999] + list(range(100, 130)), size=n,
                     replace=False).tolist()
    workers = int(rng.integers(1, 5))
    lines = [_thread_line(w, "AIV%d" % w) for w in range(workers) if rng.random() < 0.8]
    lines.append('{"name":"process_name","ph":"M","pid":0,"tid":0,"args":{"name":"pto2"}}')
    body = []
    for i, t in enumerate(ids):
        for b in range(int(rng.integers(1, 3))):
            ts = float(rng.choice([0.0, 1.5, i * 2.0, float(rng.integers(0, 50)) + 0.125]))
            dur = float(rng.choice([0.0, -1.0, 2.5, float(rng.integers(1, 20)) * 0.375]))
            name = kernels[int(rng.integers(0, len(kernels)))] if b == 0 or rng.random() < 0.3 else None
            body.append((t, b, name, ts, dur))
    rng.shuffle(body)
    names = {}
    for t, b, name, ts, dur in body:
        names.setdefault(t, name or "add")
        src = rng.choice([None, "p.py:%d" % int(rng.integers(1, 9)), "caf\u00e9.py:3"])
        lines.append(_task_line(name or names[t], int(rng.integers(0, workers)), t, ts, dur, src, b))
    flow = 0
    for _ in range(int(rng.integers(0, 3 * n + 1))):
        a = rng.choice(ids + [12345]) if ids else 1
        b = rng.choice(ids) if ids else 2
        flow += 1
        lines += _dep_lines(int(a), int(b), flow)
    lines.append('{"name":"submit add","cat":"submit","ph":"X","pid":0,"tid":%d,"ts":0.500,"dur":0.100,'
                 '"args":{"task_id":1,"source":"p.py:1"}}' % workers)
    lines.append('{"name":"PTO2_SCOPE AUTO","cat":"scope","ph":"X","pid":0,"tid":%d,"ts":0.000,"dur":9.000,'
                 '"args":{"mode":"AUTO"}}' % workers)
    lines.append('{"name":"add","cat":"skip","ph":"i","s":"t","pid":0,"tid":0,"ts":3.000,"args":{"task_id":9,'
                 '"kernel_id":0,"element":0,"op":">","target":0,"predicate":"element 0 > 0 is false"}}')
    lines.append('{"name":"timing_slot_0","cat":"timing_slot","ph":"X","pid":0,"tid":%d,"ts":0.000,"dur":5.000,'
                 '"args":{"slot":0,"tasks":3}}' % (workers + 1))
    order = rng.permutation(len(lines))
    _lines_trace(path, [lines[i] for i in order])


def test_libpto2_reader_agrees_with_the_python_readers_on_random_traces(tmp_path):
    import pypto.trace_summary as ts
    rng = np.random.default_rng(27)
    path = str(tmp_path / "t.json")
    for case in range(300):
        _random_trace(rng, path)
        native = ts._native_summary(path)
        assert native is not None, case
        acc = ts._Accumulator(path)
        try:
            ts._read_libpto2_layout(path, acc)
            lines = _full(acc.summary())
        except ts._NotLibpto2Layout:    # the list's last line is a task: the line reader leaves it
            lines = _full(ts._summarize_document(path))
        assert _full(native) == lines == _full(ts._summarize_document(path)), case


def _longest_path(tasks, edges):
    """The critical path's length by brute force: every chain, from every task."""
    succ = {t: [b for a, b in edges if a == t and b in tasks and a != b] for t in tasks}
    memo = {}

    def longest_from(t):
        if t not in memo:
            memo[t] = tasks[t] + max([longest_from(b) for b in succ[t]], default=0.0)
        return memo[t]
    return max([longest_from(t) for t in tasks], default=0.0)


def test_critical_path_is_the_longest_chain_on_random_schedules(tmp_path):
    # Schedules as a run makes them (a consumer starts after its producers end): both readers'
    # critical path is as long as the longest chain found by brute force.
    import pypto.trace_summary as ts
    rng = np.random.default_rng(5)
    path = str(tmp_path / "t.json")
    for case in range(100):
        n = int(rng.integers(1, 25))
        edges = [(a, b) for b in range(1, n + 1) for a in range(1, b) if rng.random() < 0.2]
        start, dur = {}, {}
        for t in range(1, n + 1):
            start[t] = max([start[a] + dur[a] for a, b in edges if b == t], default=0.0) + float(rng.integers(0, 3))
            dur[t] = float(rng.integers(1, 6)) * 0.5
        lines = [_task_line("k", t % 3, t, start[t], dur[t]) for t in rng.permutation(range(1, n + 1)).tolist()]
        for i, (a, b) in enumerate(edges):
            lines += _dep_lines(a, b, i + 1)
        _lines_trace(path, lines)
        want = _longest_path(dur, edges)
        native = ts._native_summary(path)
        assert native.critical_path_us == want and ts._summarize_document(path).critical_path_us == want, case
        chain = [t.task_id for t in native.critical_path]
        assert all((a, b) in edges for a, b in zip(chain, chain[1:])), case


def _native_trace(path):
    """_libpto2_trace as trace.cpp writes it (non-ASCII raw, not as \\u escapes): libpto2 reads it."""
    import pypto.trace_summary as ts
    write_libpto2_trace(str(path))
    text = path.read_text(encoding="utf-8").replace("\\u00e9", "\u00e9")
    path.write_text(text, encoding="utf-8")
    assert ts._native_summary(str(path)) is not None
    return text


@pytest.mark.parametrize("edit", [
    lambda t: t.replace('"tid":1,"ts":', '"tid":1, "ts":', 1),                 # other spacing
    lambda t: t.replace("\n", "\r\n"),                                          # CR LF
    lambda t: t.replace('"dur":2.000', '"dur":2e0', 1),                          # an exponent
    lambda t: t.replace('"ts":3.000', '"ts":12345678901234567890.5', 1),         # beyond 2^53
    lambda t: t.replace('"args":{"task_id":7,', '"args":{"task_id":%d,' % 2 ** 70, 1),  # beyond int64
    lambda t: t.replace('"name":"add"', '"name":"\\u0061dd"', 1),                # an escape libpto2 does not write
    lambda t: t.replace('"name":"add"', '"name":"a\\/dd"', 1),
    lambda t: t.replace('"name":"add","cat":"task"', '"name":"add","cat":"task","extra":1', 1),
    lambda t: t.replace('"tid":1,"ts":1.500,', '"tid":1,', 1),                  # a missing field
    lambda t: t.replace('"ts":1.500,"dur":', '"ts":1.500,"dur":-', 1),          # negative: read by both
    lambda t: t.replace('"tid":1,"ts":1.500', '"tid":"1","ts":1.500', 1),        # a wrong type
], ids=["spacing", "crlf", "exponent", "huge-number", "huge-id", "u-escape", "slash-escape", "extra-field",
        "missing-ts", "negative-dur", "string-tid"])
def test_what_libpto2_does_not_read_exactly_the_python_readers_do(tmp_path, edit):
    import pypto.trace_summary as ts
    path = tmp_path / "t.json"
    base = _native_trace(path)
    text = edit(base)
    assert text != base
    path.write_text(text, encoding="utf-8", newline="")
    native = ts._native_summary(str(path))
    try:
        want = _full(ts._summarize_document(str(path)))
    except TraceFormatError as e:
        assert native is None
        with pytest.raises(TraceFormatError) as got:
            summarize(str(path))
        assert str(got.value) == str(e)
        return
    assert native is None or _full(native) == want
    assert _full(summarize(str(path))) == want


@pytest.mark.parametrize("bad", [b"\xff", b"\xc0\x80", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82"],
                         ids=["ff", "overlong2", "overlong3", "surrogate", "above-10ffff", "cut"])
def test_invalid_utf8_is_left_to_the_python_readers(tmp_path, bad):
    import pypto.trace_summary as ts
    path = tmp_path / "t.json"
    _native_trace(path)
    path.write_bytes(path.read_bytes().replace(b'"name":"add"', b'"name":"a' + bad + b'dd"', 1))
    assert ts._native_summary(str(path)) is None
    # A TraceFormatError, as summarize's doc says (it raised UnicodeDecodeError; the CLI named it).
    with pytest.raises(TraceFormatError, match=r"is not UTF-8 text \(byte 0x%02x at offset \d+\)" % bad[0]):
        summarize(str(path))


def test_libpto2_reader_prints_the_golden_summary(tmp_path, monkeypatch):
    path = tmp_path / "t.json"
    _native_trace(path)
    _native_only(monkeypatch)
    assert summarize(str(path)).format(top=8) == _GOLDEN


def test_a_pipe_is_read_by_the_python_readers(tmp_path):
    # `pypto trace summary <(zcat t.json.gz)`: libpto2 leaves a file that is not a regular one
    # unopened, and the pipe's contents are read once, by Python.
    import threading
    import pypto.trace_summary as ts
    path = tmp_path / "t.json"
    text = _native_trace(path)
    r, w = os.pipe()

    def feed():
        with os.fdopen(w, "w", encoding="utf-8") as f:
            f.write(text)
    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        assert ts._native_summary("/dev/fd/%d" % r) is None
        assert _full(summarize("/dev/fd/%d" % r)) == _full(summarize(str(path)))
    finally:
        feeder.join()
        os.close(r)


def test_a_path_with_a_nul_byte_is_refused_as_open_refuses_it(tmp_path):
    # libpto2 would read the file named by the part before the NUL (C strings end there)
    path = tmp_path / "t.json"
    _native_trace(path)
    with pytest.raises(ValueError, match="embedded null byte"):
        summarize(str(path) + "\0.bak")
