"""The trace of a compiled program's run: a task skipped by its predicate is an instant event naming
the predicate, every submission is a span on the orchestrator's track, every scope a span with its
mode; pypto.trace_summary still reads it."""
import json

import numpy as np

import pypto
import pypto.language as pl
from pypto.trace_summary import summarize


@pl.program
class SkipInScopes:
    @pl.function(type=pl.FunctionType.InCore)
    def count(self, c: pl.Out[pl.Tensor[[4], pl.INT32]]) -> pl.Tensor[[4], pl.INT32]:
        c = pl.store(pl.tile.full([4], pl.INT32, 0), [0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def work(self, x: pl.Tensor[[16], pl.FP32], out: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        out = pl.store(pl.exp(pl.load(x, [0], [16])), [0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16], pl.FP32], out: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        with pl.manual_scope():
            c = pl.create_tensor([4], dtype=pl.INT32)
            c, t = pl.submit(self.count, c)
            out, _ = pl.submit(self.work, x, out, deps=[t], predicate=(c[0] > 0))
        return out


def _events(path):
    doc = json.load(open(path))
    assert isinstance(doc, dict) and isinstance(doc["traceEvents"], list)
    return doc["traceEvents"]


def test_skip_submit_and_scope_events(tmp_path):
    compiled = pypto.compile(SkipInScopes)
    path = str(tmp_path / "t.json")
    x, out = np.ones(16, np.float32), np.zeros(16, np.float32)
    stats = compiled(x, out, trace=path)
    assert stats.tasks_skipped == 1 and not out.any()
    ev = _events(path)
    tracks = {e["tid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
    orch = [tid for tid, name in tracks.items() if name == "orchestrator"]
    assert len(orch) == 1

    skips = [e for e in ev if e.get("cat") == "skip"]
    assert len(skips) == 1
    s = skips[0]
    assert s["ph"] == "i" and s["name"] == "work" and s["tid"] in tracks
    assert (s["args"]["element"], s["args"]["op"], s["args"]["target"]) == (0, ">", 0)
    tasks = [e for e in ev if e.get("cat") == "task"]
    assert [t["name"] for t in tasks] == ["count"]                 # the skipped task never ran

    subs = [e for e in ev if e.get("cat") == "submit"]
    assert len(subs) == 2 and all(e["ph"] == "X" and e["tid"] == orch[0] and e["dur"] >= 0 for e in subs)
    ids = sorted(e["args"]["task_id"] for e in subs)
    assert ids == sorted([tasks[0]["args"]["task_id"], s["args"]["task_id"]])

    scopes = [e for e in ev if e.get("cat") == "scope"]
    # the orchestration's own scope (AUTO, generated around the body) and the manual_scope in it
    assert sorted(e["args"]["mode"] for e in scopes) == ["AUTO", "MANUAL"]
    assert all(e["ph"] == "X" and e["tid"] == orch[0] for e in scopes)
    sc = [e for e in scopes if e["args"]["mode"] == "MANUAL"][0]
    outer = [e for e in scopes if e["args"]["mode"] == "AUTO"][0]
    assert outer["ts"] <= sc["ts"] and sc["ts"] + sc["dur"] <= outer["ts"] + outer["dur"] + 1e-3
    for e in subs:                                                  # both submissions inside the scope
        assert sc["ts"] <= e["ts"] and e["ts"] + e["dur"] <= sc["ts"] + sc["dur"] + 1e-3

    summary = summarize(path)                                       # only task spans count as tasks
    assert [t.kernel for t in summary.tasks] == ["count"]

