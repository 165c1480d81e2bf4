"""CompiledProgram.task_graph / graph= / `pypto graph`: the executed task graph as Graphviz DOT."""
import os
import re
import shutil
import sys

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = os.path.join(ROOT, "tests", "python", "spec_programs")

_NODE = re.compile(r'^\s*(\w+) \[label="((?:[^"\\]|\\.)*)", kind="(\w+)"(.*)\];$', re.M)
_EDGE = re.compile(r'^\s*(\w+) -> (\w+) \[kind="(\w+)"', re.M)


def parse_dot(text):
    """{node id: (label lines, kind, rest of attrs)}, [(from, to, kind)]; checks the frame."""
    assert text.startswith("digraph pypto_tasks {") and text.rstrip().endswith("}")
    nodes = {m.group(1): (m.group(2).split("\\n"), m.group(3), m.group(4)) for m in _NODE.finditer(text)}
    edges = [(m.group(1), m.group(2), m.group(3)) for m in _EDGE.finditer(text)]
    for a, b, _ in edges:
        assert a in nodes and b in nodes, (a, b)
    return nodes, edges


def _load(path, name):
    sys.path.insert(0, os.path.dirname(path))
    try:
        mod = __import__(os.path.splitext(os.path.basename(path))[0])
    finally:
        sys.path.pop(0)
    return getattr(mod, name)


def test_auto_edges_of_a_chain_program():
    ex = _load(os.path.join(ROOT, "examples", "online_softmax.py"), "OnlineSoftmax")
    compiled = pypto.compile(ex)
    nodes, edges = parse_dot(compiled.task_graph(*compiled.random_inputs(seed=0)))
    assert sum(1 for v in nodes.values() if v[1] == "task") == 20
    names = sorted(v[0][0] for v in nodes.values())
    assert names.count("attn_step") == 16 and names.count("init_state") == 2 and names.count("finalize") == 2
    # two chains init -> 8 steps -> finalize: at least the 18 chain edges, all automatic
    chain = {(a, b) for a, b, k in edges if k == "auto"}
    assert len(chain) >= 18
    assert all(k == "auto" for _, _, k in edges)
    for a, b in chain:
        assert int(a[1:]) < int(b[1:])      # producers come first
    assert all(v[0][1].startswith(("AIV", "AIC")) for v in nodes.values() if v[1] == "task")


def test_explicit_edges_and_barrier():
    prog = _load(os.path.join(SPEC, "task_dummy_barrier.py"), "DummyBarrier")
    compiled = pypto.compile(prog)
    nodes, edges = parse_dot(compiled.task_graph(*compiled.random_inputs(seed=0)))
    barriers = [n for n, v in nodes.items() if v[1] == "barrier"]
    assert len(barriers) == 1 and "shape=diamond" in nodes[barriers[0]][2]
    parts = [n for n, v in nodes.items() if v[0][0] == "part"]
    reduce_ = [n for n, v in nodes.items() if v[0][0] == "reduce"]
    assert len(parts) == 4 and len(reduce_) == 1
    explicit = {(a, b) for a, b, k in edges if k == "explicit"}
    assert {(p, barriers[0]) for p in parts} <= explicit             # deps=[tids, first]
    assert (barriers[0], reduce_[0]) in explicit and (parts[1], reduce_[0]) in explicit
    assert 'style=bold' in compiled.task_graph(*compiled.random_inputs(seed=0))


@pl.program
class AllSkipped:
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
        c = pl.create_tensor([4], dtype=pl.INT32)
        c, t = pl.submit(self.count, c)
        out, _ = pl.submit(self.work, x, out, deps=[t], predicate=(c[0] > 0))
        return out


def test_predicate_skipped_task_is_dashed(tmp_path):
    compiled = pypto.compile(AllSkipped)
    path = str(tmp_path / "g.dot")
    x, out = np.ones(16, np.float32), np.zeros(16, np.float32)
    stats = compiled(x, out, graph=path)
    assert stats.tasks_skipped == 1 and not out.any()
    nodes, edges = parse_dot(open(path).read())
    work = [v for v in nodes.values() if v[0][0] == "work"]
    assert len(work) == 1 and "(skipped: predicate false)" in work[0][0] and "dashed" in work[0][2]


def test_graph_is_only_recorded_when_asked(tmp_path):
    compiled = pypto.compile(AllSkipped)
    x, out = np.ones(16, np.float32), np.zeros(16, np.float32)
    compiled(x, out, graph=str(tmp_path / "a.dot"))
    compiled(x, out)                                  # recording off again
    from pypto.runtime.loader import RunError
    with pytest.raises(RunError, match="no task graph to write to .*b.dot: the last run did not record one") as e:
        compiled._runtime.write_graph(str(tmp_path / "b.dot"))
    assert "CompiledProgram.task_graph" in str(e.value)


def test_graph_write_failures_give_the_path_and_the_os_reason(tmp_path):
    # The runtime said only 'could not write the task graph to X' with the hint to check the
    # directory, whatever the cause; /dev/full was reported written (its flush was not checked).
    from pypto.runtime.loader import RunError
    compiled = pypto.compile(AllSkipped)
    x, out = np.ones(16, np.float32), np.zeros(16, np.float32)
    compiled(x, out, graph=str(tmp_path / "a.dot"))   # recorded
    missing = str(tmp_path / "gone" / "b.dot")        # a directory removed after the call's own check
    with pytest.raises(RunError, match="could not write the task graph to %s: No such file or directory$"
                       % re.escape(missing)):
        compiled._runtime.write_graph(missing)
    if os.path.exists("/dev/full"):
        with pytest.raises(RunError, match="could not write the task graph to /dev/full: No space left on device$"):
            compiled._runtime.write_graph("/dev/full")
        with pytest.raises(RunError, match="could not write the task graph to /dev/full: No space left on device$"):
            compiled(x, out, graph="/dev/full")


def test_graph_directory_must_exist(tmp_path):
    compiled = pypto.compile(AllSkipped)
    with pytest.raises(ValueError, match="directory does not exist"):
        compiled(np.ones(16, np.float32), np.zeros(16, np.float32), graph=str(tmp_path / "no" / "g.dot"))


@pytest.mark.parametrize("where, message", [("dir", "it is a directory"), ("/proc/x.dot", "cannot write the task graph")])
def test_graph_path_that_cannot_be_written_fails_before_running(tmp_path, where, message):
    # a directory or an unwritable path ran the program, then raised RunError 'could not write the
    # task graph' (the returned stats, or an omitted pl.Out's array, were lost)
    if where.startswith("/proc") and not os.path.isdir("/proc/self"):
        pytest.skip("needs Linux /proc")
    compiled = pypto.compile(AllSkipped)
    path = str(tmp_path) if where == "dir" else where
    calls = []
    real = compiled._get_runtime
    compiled._get_runtime = lambda *a: calls.append(a) or real(*a)
    with pytest.raises(pypto.compiler.ArgumentValueError, match=message):
        compiled(np.ones(16, np.float32), np.zeros(16, np.float32), graph=path)
    assert not calls   # refused before a runtime was made


def test_cli_graph(tmp_path, capsys):
    out = str(tmp_path / "va.dot")
    assert cli.main(["graph", os.path.join(ROOT, "examples", "vector_add.py"), "-o", out]) == 0
    assert "16 tasks" in capsys.readouterr().out
    nodes, edges = parse_dot(open(out).read())
    assert sum(1 for v in nodes.values() if v[0][0] == "add_chunk") == 16 and edges == []   # disjoint chunks
    if shutil.which("dot"):
        assert cli.main(["graph", os.path.join(ROOT, "examples", "vector_add.py"), "-o", out, "--svg"]) == 0
        assert open(str(tmp_path / "va.svg")).read().lstrip().startswith(("<?xml", "<svg"))
    else:
        assert cli.main(["graph", os.path.join(ROOT, "examples", "vector_add.py"), "-o", out, "--svg"]) == 2
        assert "needs Graphviz's dot" in capsys.readouterr().err
    assert cli.main(["graph", os.path.join(ROOT, "examples", "vector_add.py"), "-o", "/nonexistent/d/g.dot"]) == 2
