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
