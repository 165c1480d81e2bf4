"""`pypto trace summary` and pypto.trace_summary: critical path, time per kernel, utilisation."""
import json
import re
import os
import sys

import numpy as np
import pytest

from pypto import cli
from pypto.trace_summary import TraceFormatError, summarize

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

def _libpto2_trace(path, tasks=300, workers=4):
    """A trace in libpto2's layout (trace.cpp): thread names, task blocks (some tasks in two
    blocks, names and sources that need escapes, two kernels with equal total time), submit and
    scope spans, a skipped task, flows with from/to, a timing slot."""
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
    with open(path, "w") as f:
        f.write('{"traceEvents": [\n' + ",\n".join(ev) + "\n]}\n")
    json.load(open(path))   # valid JSON


# What `summarize(...).format(top=8)` printed for _libpto2_trace(path) before the line reader.
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


def _as_document(summary):
    return (summary.format(top=10 ** 6), [(t.task_id, t.kernel, t.start_us, t.end_us, t.blocks, t.source)
                                          for t in summary.tasks])


def test_libpto2_layout_is_read_line_by_line_with_the_same_summary(tmp_path, monkeypatch):
    import pypto.trace_summary as ts
    path = str(tmp_path / "t.json")
    _libpto2_trace(path)
    assert summarize(path).format(top=8) == _GOLDEN
    whole = _as_document(ts._summarize_document(path))
    # The line reader alone (the whole-document read would fail) gives the same summary.
    monkeypatch.setattr(ts, "_events_of_document", lambda p: pytest.fail("read %s whole" % p))
    assert _as_document(summarize(path)) == whole


def test_a_real_trace_is_read_line_by_line_with_the_same_summary(tmp_path, monkeypatch):
    import pypto.trace_summary as ts
    compiled, a = _vector_add()
    path = str(tmp_path / "t.json")
    compiled(a, a, np.zeros_like(a), trace=path)
    whole = _as_document(ts._summarize_document(path))
    monkeypatch.setattr(ts, "_events_of_document", lambda p: pytest.fail("read %s whole" % p))
    assert _as_document(summarize(path)) == whole and "16 tasks" in whole[0]


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
    _libpto2_trace(str(path))
    path.write_text(edit(path.read_text()))
    if error is None:
        assert _as_document(summarize(str(path))) == _as_document(ts._summarize_document(str(path)))
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
