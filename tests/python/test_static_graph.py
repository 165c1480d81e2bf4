"""The static task graph (pypto.static_graph, CompiledProgram.task_graph(static=True),
`pypto graph --static`): read from the IR without running, it must describe the graph that
runs: same tasks (labels: kernel, core type, number, source line) and the same ordering (equal
reachability) as the executed graph of the same program, as valid DOT. Programs with
data-dependent control flow get a located StaticGraphError."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import pypto
from pypto.static_graph import StaticGraphError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(ROOT, "examples")
sys.path.insert(0, HERE)


def _program(module_file):
    import importlib.util
    name = "sg_" + os.path.splitext(os.path.basename(module_file))[0]
    spec = importlib.util.spec_from_file_location(name, module_file)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return next(v for v in vars(mod).values() if type(v).__name__ == "Program")


def _parse_dot(text):
    """(nodes {id: attrs}, edges [(a, b, attrs)]) of a DOT file; asserts the shape we write."""
    assert text.startswith("digraph pypto_tasks {") and text.rstrip().endswith("}"), text[:200]
    nodes, edges = {}, []
    for line in text.splitlines()[1:-1]:
        line = line.strip()
        m = re.fullmatch(r'(t\d+) -> (t\d+) \[(.*)\];', line)
        if m:
            edges.append((m.group(1), m.group(2), m.group(3)))
            continue
        m = re.fullmatch(r'(t\d+) \[label="((?:[^"\\]|\\.)*)", (.*)\];', line)
        if m:
            nodes[m.group(1)] = (m.group(2), m.group(3))
            continue
        assert re.fullmatch(r'(graph|node|edge) \[.*\];|rankdir=TB;', line), "unexpected DOT line: " + line
    for a, b, _ in edges:
        assert a in nodes and b in nodes, (a, b)
    return nodes, edges


def _reach(nodes, edges):
    succ = {n: set() for n in nodes}
    for a, b, _ in edges:
        succ[a].add(b)
    out = set()
    for s in succ:
        stack, seen = list(succ[s]), set()
        while stack:
            x = stack.pop()
            if x not in seen:
                seen.add(x)
                stack += succ[x]
        out |= {(s, x) for x in seen}
    return out


@pytest.mark.parametrize("example,dims", [("tiled_matmul", {}), ("online_softmax", {}), ("group_mixed", {}),
                                          ("row_softmax", {}), ("dynamic_shape", {"M": 96})])
def test_static_graph_is_the_graph_that_runs(example, dims):
    compiled = pypto.compile(_program(os.path.join(EXAMPLES, example + ".py")))
    static = compiled.task_graph(static=True, dims=dims)
    assert "graph [static=true];" in static
    executed = compiled.task_graph(*compiled.random_inputs(seed=0, dims=dims))
    sn, se = _parse_dot(static)
    en, ee = _parse_dot(executed)
    assert sorted(v[0] for v in sn.values()) == sorted(v[0] for v in en.values())   # same labelled tasks
    assert set(sn) == set(en)
    assert _reach(sn, se) == _reach(en, ee)                                        # same ordering
    assert all('kind="auto"' in attrs for _, _, attrs in se)
    assert all('kind="task"' in attrs and "source=" in attrs for _, attrs in sn.values())


def test_scalar_condition_needs_its_value():
    from codegen_test_util import GOLDEN_DIR, load_single_program
    compiled = pypto.compile(load_single_program(os.path.join(GOLDEN_DIR, "if_else", "program.py")))
    with pytest.raises(StaticGraphError, match=r"program\.py:\d+:\d+: 'condition' is known only when the program runs"):
        compiled.task_graph(static=True)
    taken = compiled.task_graph(static=True, condition=1)
    other = compiled.task_graph(static=True, condition=-1)
    assert "kernel_a" in taken and "kernel_b" not in taken
    assert "kernel_b" in other and "kernel_a" not in other
    nodes, edges = _parse_dot(taken)
    assert len(nodes) == 2 and [(a, b) for a, b, _ in edges] == [("t1", "t2")]   # shift reads c


def test_spmd_submission_is_refused_with_its_location():
    compiled = pypto.compile(_program(os.path.join(EXAMPLES, "spmd_block_idx.py")))
    with pytest.raises(StaticGraphError, match=r"spmd_block_idx\.py:\d+:\d+: .*use the executed graph"):
        compiled.task_graph(static=True)


def test_cli_static_graph_runs_nothing(tmp_path):
    out = tmp_path / "mm.dot"
    cp = subprocess.run([sys.executable, "-m", "pypto.cli", "graph", os.path.join(EXAMPLES, "tiled_matmul.py"),
                         "--static", "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "static task graph of TiledMatmul.main: 8 tasks" in cp.stdout, cp.stdout
    nodes, edges = _parse_dot(out.read_text())
    assert len(nodes) == 8 and not edges
    bad = subprocess.run([sys.executable, "-m", "pypto.cli", "graph", os.path.join(EXAMPLES, "dynamic_shape.py"),
                          "--static", "-o", str(tmp_path / "d.dot")], capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "no static task graph" in bad.stderr and "'M'" in bad.stderr, bad.stderr
    ok = subprocess.run([sys.executable, "-m", "pypto.cli", "graph", os.path.join(EXAMPLES, "dynamic_shape.py"),
                         "--static", "--dim", "M=64", "-o", str(tmp_path / "d.dot")], capture_output=True, text=True,
                        timeout=300)
    assert ok.returncode == 0, ok.stdout + ok.stderr
