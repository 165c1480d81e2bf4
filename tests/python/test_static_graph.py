"""The static task graph (pypto.static_graph, CompiledProgram.task_graph(static=True),
`pypto graph --static`): read from the IR without running, it must describe the graph that
runs: same tasks (labels: kernel, core type, number, source line) and the same ordering (equal
reachability) as the executed graph of the same program, as valid DOT. Programs with
data-dependent control flow get a located StaticGraphError. HOST programs: the L3 graph (next-level
tasks, add_dep_wait and chain edges) compared with the run's records."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.runtime.args import ArgumentTypeError, ArgumentValueError
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
    """(nodes {id: (label, attrs)}, edges [(a, b, attrs)]) of a DOT file; asserts the shape we
    write. The label line a predicate adds (executed: skipped, static: predicated) is dropped."""
    assert text.startswith("digraph pypto_tasks {") and text.rstrip().endswith("}"), text[:200]
    nodes, edges = {}, []
    for line in text.splitlines()[1:-1]:
        line = line.strip()
        m = re.fullmatch(r'([tw]\d+) -> ([tw]\d+) \[(.*)\];', line)
        if m:
            edges.append((m.group(1), m.group(2), m.group(3)))
            continue
        m = re.fullmatch(r'([tw]\d+) \[label="((?:[^"\\]|\\.)*)", (.*)\];', line)
        if m:
            label = "\\n".join(x for x in m.group(2).split("\\n") if not x.startswith(("(skipped", "(runs if")))
            nodes[m.group(1)] = (label, m.group(3))
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


def _edge_kinds(edges):
    return sorted((a, b, re.search(r'kind="(\w+)"', attrs).group(1)) for a, b, attrs in edges)


def _assert_same_graph(compiled, dims=None, index_bound=None):
    """The static graph of `compiled` has the executed graph's tasks (labels: kernel, core type,
    number, source line), barriers and waits, the same edges of the same kinds, hence the same
    ordering (reachability, compared too)."""
    dims = dict(dims or {})
    for p in compiled.params:
        for d in p.shape:
            if isinstance(d, str):
                dims.setdefault(d, 32)
    args = compiled.random_inputs(seed=0, dims=dims)
    if index_bound:   # index operands (gather / scatter) must be in range, or the run fails
        args = [abs(a) % index_bound if getattr(a, "dtype", None) is not None and a.dtype.kind == "i" else a
                for a in args]
    scalars = {p.name: a for p, a in zip(compiled.params, args) if p.kind == "scalar"}
    static = compiled.task_graph(static=True, dims=dims, **scalars)
    assert "graph [static=true];" in static
    executed = compiled.task_graph(*args)
    sn, se = _parse_dot(static)
    en, ee = _parse_dot(executed)
    assert {k: v[0] for k, v in sn.items()} == {k: v[0] for k, v in en.items()}   # same labelled nodes
    assert _edge_kinds(se) == _edge_kinds(ee)                                      # same edges, same kinds
    if len(sn) <= 200:   # implied by equal edges; the quadratic check only where it is cheap
        assert _reach(sn, se) == _reach(en, ee)                                    # same ordering
    return sn, se


def _golden_programs():
    from codegen_test_util import GOLDEN_DIR
    return sorted(d for d in os.listdir(GOLDEN_DIR) if os.path.isfile(os.path.join(GOLDEN_DIR, d, "program.py")))


# Golden programs whose control flow or shapes depend on data a task wrote (read by
# tensor.read while the orchestration runs): they have no static graph.
DATA_DEPENDENT = {"tensor_read", "tensor_create"}
# Golden programs whose integer inputs are indices: run with every index below this bound.
INDEX_BOUND = {"anchor_tensor_reference_ops": 4}
CHIP_EXAMPLES = ["dynamic_shape", "group_mixed", "long_loop", "online_softmax", "row_softmax", "spmd_block_idx",
                 "tiled_matmul", "vector_add"]


@pytest.mark.parametrize("example", CHIP_EXAMPLES)
def test_static_graph_of_every_example_is_the_graph_that_runs(example):
    _assert_same_graph(pypto.compile(_program(os.path.join(EXAMPLES, example + ".py"))))


@pytest.mark.parametrize("golden", [g for g in _golden_programs() if g not in DATA_DEPENDENT])
def test_static_graph_of_every_golden_program_is_the_graph_that_runs(golden):
    """MANUAL scopes with deps= (explicit edges), barriers, SPMD / cluster submissions,
    predicates, pl.parallel TaskId slots, assembled and transposed views, tensor.write waits."""
    from codegen_test_util import GOLDEN_DIR, load_single_program
    _assert_same_graph(pypto.compile(load_single_program(os.path.join(GOLDEN_DIR, golden, "program.py"))),
                       index_bound=INDEX_BOUND.get(golden))


@pytest.mark.parametrize("path", ["tests/golden/for_loops/program.py", "tests/golden/anchor_auto_scope/program.py",
                                  "examples/online_softmax.py"])
def test_static_graph_has_the_compiler_derived_edges(path):
    """analyze_auto_scopes_for_deps=True: the compiler's derived edges are explicit in both graphs."""
    from codegen_test_util import load_single_program
    compiled = pypto.compile(load_single_program(os.path.join(ROOT, path)), analyze_auto_scopes_for_deps=True)
    _, edges = _assert_same_graph(compiled)
    if "anchor_auto_scope" not in path:
        assert any('kind="explicit"' in attrs for _, _, attrs in edges)


def test_cli_static_graph_with_compiler_derived_edges(tmp_path):
    out = tmp_path / "s.dot"
    cp = subprocess.run([sys.executable, "-m", "pypto.cli", "graph", os.path.join(EXAMPLES, "online_softmax.py"),
                         "--static", "--analyze-auto-scopes-for-deps", "-o", str(out)], capture_output=True, text=True,
                        timeout=300)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    _, edges = _parse_dot(out.read_text())
    assert edges and all('kind="explicit"' in attrs for _, _, attrs in edges)


def test_spmd_and_barrier_nodes_are_drawn_like_the_executed_graph():
    from codegen_test_util import GOLDEN_DIR, load_single_program
    compiled = pypto.compile(load_single_program(os.path.join(GOLDEN_DIR, "manual_task_dummy_barrier", "program.py")))
    nodes, edges = _parse_dot(compiled.task_graph(static=True))
    barriers = [k for k, (label, attrs) in nodes.items() if 'kind="barrier"' in attrs]
    assert len(barriers) == 1 and nodes[barriers[0]][0].startswith("barrier #")
    assert any(b == barriers[0] and 'kind="explicit"' in attrs for _, b, attrs in edges)
    spmd = pypto.compile(_program(os.path.join(EXAMPLES, "spmd_block_idx.py")))
    nodes, _ = _parse_dot(spmd.task_graph(static=True))
    assert len(nodes) == 1   # one SPMD submission is one task, as in the executed graph


@pytest.mark.parametrize("golden,line", [("tensor_read", "if "), ("tensor_create", "create_tensor")])
def test_data_dependent_programs_are_refused_with_their_location(golden, line):
    from codegen_test_util import GOLDEN_DIR, load_single_program
    compiled = pypto.compile(load_single_program(os.path.join(GOLDEN_DIR, golden, "program.py")))
    with pytest.raises(StaticGraphError) as info:
        compiled.task_graph(static=True)
    e = info.value
    assert e.file.endswith("program.py") and e.line > 0 and e.col > 0 and line in e.source_line, str(e)
    assert "tensor.read" in e.message and "use the executed graph" in e.help, str(e)


def test_scalar_condition_needs_its_value():
    from codegen_test_util import GOLDEN_DIR, load_single_program
    compiled = pypto.compile(load_single_program(os.path.join(GOLDEN_DIR, "if_else", "program.py")))
    with pytest.raises(StaticGraphError, match=r"'condition' is known only when the program runs.*program\.py:\d+:\d+") as info:
        compiled.task_graph(static=True)
    assert "if " in info.value.source_line, str(info.value)   # the branch, not the parameter's declaration
    taken = compiled.task_graph(static=True, condition=1)
    with pytest.raises(StaticGraphError, match=r"scalar conditon=1: main has no scalar parameter conditon "
                                               r"\(its scalar parameters: condition\)"):
        compiled.task_graph(static=True, conditon=1)   # a misspelt name is not ignored
    other = compiled.task_graph(static=True, condition=-1)
    # NumPy numbers are values as in a call (np.int64 was dropped, then its value asked for), and
    # neither another kind of value, a misspelt name beside a right one nor a positional value
    # (nothing runs) is ignored.
    assert compiled.task_graph(static=True, condition=np.int64(1)) == taken
    with pytest.raises(ArgumentTypeError, match=r"argument 'condition' of main\(.*\) expects an integer "
                                                r"\(pl.Scalar\[pl.INT64\]\), got str"):
        compiled.task_graph(static=True, condition="1")
    with pytest.raises(StaticGraphError, match=r"main has no scalar parameter conditon"):
        compiled.task_graph(static=True, condition=1, conditon=np.int64(2))
    with pytest.raises(StaticGraphError, match=r"takes no arguments: 1 positional value\(s\) would be ignored"):
        compiled.task_graph(1, static=True, condition=1)
    assert "kernel_a" in taken and "kernel_b" not in taken
    assert "kernel_b" in other and "kernel_a" not in other
    nodes, edges = _parse_dot(taken)
    assert len(nodes) == 2 and [(a, b) for a, b, _ in edges] == [("t1", "t2")]   # shift reads c


def test_cli_static_graph_runs_nothing(tmp_path):
    _program(os.path.join(EXAMPLES, "tiled_matmul.py"))
    mm = sys.modules["sg_tiled_matmul"]   # the example's tile constants
    out = tmp_path / "mm.dot"
    cp = subprocess.run([sys.executable, "-m", "pypto.cli", "graph", os.path.join(EXAMPLES, "tiled_matmul.py"),
                         "--static", "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    tasks = (mm.M // mm.TM) * (mm.N // mm.TN)   # one per block of C
    assert tasks > 1 and "static task graph of TiledMatmul.main: %d tasks" % tasks in cp.stdout, cp.stdout
    nodes, edges = _parse_dot(out.read_text())
    assert len(nodes) == tasks and not edges
    bad = subprocess.run([sys.executable, "-m", "pypto.cli", "graph", os.path.join(EXAMPLES, "dynamic_shape.py"),
                          "--static", "-o", str(tmp_path / "d.dot")], capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "no static task graph" in bad.stderr and "'M'" in bad.stderr, bad.stderr
    ok = subprocess.run([sys.executable, "-m", "pypto.cli", "graph", os.path.join(EXAMPLES, "dynamic_shape.py"),
                         "--static", "--dim", "M=64", "-o", str(tmp_path / "d.dot")], capture_output=True, text=True,
                        timeout=300)
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_cli_static_graph_refusal_reads_pypto_error_once(tmp_path, capsys):
    # The located diagnostic was printed after CliError's prefix with its own "error: ":
    # "pypto: error: error: no static task graph: 'n' is known only when the program runs ...".
    from pypto import cli
    src = tmp_path / "loop_n.py"
    src.write_text(textwrap.dedent("""
        import pypto.language as pl

        @pl.program
        class LoopN:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[16], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
                c = pl.store(pl.load(a, [0], [16]), [0], c)
                return c

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[16], pl.FP32], n: pl.Scalar[pl.INT64],
                     c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
                for i in pl.range(n):
                    c = self.k(a, c)
                return c
        """))
    assert cli.main(["graph", str(src), "--static", "-o", str(tmp_path / "g.dot")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pypto: error: no static task graph: 'n' is known only when the program runs"), err
    assert "error: error:" not in err, err
    # ... and it pointed at n's declaration (line 12), not at the loop it is about.
    assert "loop_n.py:14:" in err and "for i in pl.range(n):" in err, err


STEPPED_LOOPS = """
import pypto.language as pl

@pl.program
class Stepped:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        c = pl.store(pl.load(a, [0], [16]), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16], pl.FP32], n: pl.Scalar[pl.INT64], s: pl.Scalar[pl.INT64],
             m: pl.Scalar[pl.INT64], c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        for i in pl.range(0, n, s):
            for j in pl.range(m):
                c = self.k(a, c)
        return c
"""


def _stepped(**scalars):
    from pypto.static_graph import program_task_graph
    return program_task_graph(pl.parse_program(STEPPED_LOOPS, "stepped.py"), scalars=scalars)[1]


def test_static_graph_bounds_the_loops_it_follows():
    # A loop count the user gives was followed iteration by iteration: --scalar n=100000000000
    # grew the process until the kernel killed it (Ctrl-C cannot stop the C++ loop).
    import time
    t0 = time.time()
    with pytest.raises(StaticGraphError, match=r"this loop runs 100000000000 times; the static task graph follows at "
                                               r"most 10000000 loop iterations in all \(0 before this loop\)") as info:
        _stepped(n=10 ** 11, s=1, m=1)
    assert info.value.line == 14 and "give smaller values" in info.value.help, str(info.value)
    # Nodes: 3 x 100,000 tasks are more than the graph draws; refused at the submission.
    with pytest.raises(StaticGraphError, match=r"the graph has more than 200000 nodes, more than it draws") as info:
        _stepped(n=3, s=1, m=100000)
    assert info.value.line == 16, str(info.value)
    assert time.time() - t0 < 120
    # A step that takes the loop variable past INT64_MAX: two trips (the loop ran forever, i wrapping).
    nodes, _ = _parse_dot(_stepped(n=2 ** 63 - 1, s=2 ** 62, m=1))
    assert len(nodes) == 2
    nodes, _ = _parse_dot(_stepped(n=-(2 ** 63), s=-(2 ** 62), m=3))   # 0, -2^62: two trips down
    assert len(nodes) == 6


def test_static_graph_values_beyond_int64_are_refused():
    # The binding's int64 maps: a larger value was a TypeError ("incompatible function arguments").
    from pypto.static_graph import program_task_graph
    with pytest.raises(ArgumentValueError, match=r"argument 'n' of main\(a, n, s, m, c\) = %d does not fit pl.INT64 "
                                                 r"\(range -9223372036854775808..9223372036854775807\)" % 2 ** 64):
        _stepped(n=2 ** 64, s=1, m=1)
    with pytest.raises(StaticGraphError, match=r"dim M=-1: an extent is an integer in 0..9223372036854775807"):
        program_task_graph(pl.parse_program(STEPPED_LOOPS, "stepped.py"), dims={"M": -1})
    with pytest.raises(StaticGraphError, match=r"dim M=%d: an extent" % 2 ** 63):
        program_task_graph(pl.parse_program(STEPPED_LOOPS, "stepped.py"), dims={"M": 2 ** 63})


@pytest.mark.parametrize("value, cls, text", [
    (1.5, ArgumentTypeError, r"expects an integer \(pl.Scalar\[pl.INT64\]\), got float"),
    (float("nan"), ArgumentTypeError, r"expects an integer \(pl.Scalar\[pl.INT64\]\), got float"),
    (float("inf"), ArgumentTypeError, r"expects an integer \(pl.Scalar\[pl.INT64\]\), got float"),
    (True, ArgumentTypeError, r"expects an integer \(pl.Scalar\[pl.INT64\]\), got bool"),
    (np.float64(4.0), ArgumentTypeError, r"expects an integer \(pl.Scalar\[pl.INT64\]\), got float"),
])
def test_static_graph_scalars_are_checked_as_a_call_checks_them(value, cls, text):
    # Every number went to the C++ side, which converted it for an INT64 parameter: 1.5 drew 1
    # trip, NaN / inf 0 (undefined), True 1 -- graphs no run can have (a call refuses each).
    with pytest.raises(cls, match=r"^error: argument 'n' of main\(a, n, s, m, c\) " + text):
        _stepped(n=value, s=1, m=1)
    assert len(_parse_dot(_stepped(n=np.int32(3), s=1, m=1))[0]) == 3   # an integer of any kind is its value


def test_cli_static_graph_scalar_refused_as_a_run_refuses_it(tmp_path, capsys):
    from pypto import cli
    src = tmp_path / "stepped.py"
    src.write_text(STEPPED_LOOPS)
    out = tmp_path / "g.dot"
    assert cli.main(["graph", str(src), "--static", "--scalar", "n=inf", "--scalar", "s=1", "--scalar", "m=1",
                     "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pypto: error: --scalar: argument 'n' of main(a, n, s, m, c) expects an integer "
                          "(pl.Scalar[pl.INT64]), got float"), err
    assert not out.exists()


def test_static_graph_dims_name_a_dynamic_dimension():
    # dims={"m": 64} for dimension M said "'M' is known only when the program runs" (the typo not
    # named); a second, unknown name beside the right one was ignored.
    from pypto.static_graph import program_task_graph
    program = _program(os.path.join(EXAMPLES, "dynamic_shape.py"))
    with pytest.raises(StaticGraphError, match=r"dim m=64: program \w+ has no dynamic dimension m \(its dynamic "
                                               r"dimensions: M\)"):
        program_task_graph(program, dims={"m": 64})
    with pytest.raises(StaticGraphError, match=r"dim N=3: program \w+ has no dynamic dimension N"):
        program_task_graph(program, dims={"M": 64, "N": 3})
    with pytest.raises(StaticGraphError, match=r"dim M=64: program Stepped has no dynamic dimension M \(it has none\)"):
        program_task_graph(pl.parse_program(STEPPED_LOOPS, "stepped.py"), dims={"M": 64}, scalars=dict(n=1, s=1, m=1))
    assert program_task_graph(program, dims={"M": 64})[1].startswith("digraph")


def _host_programs():
    from codegen_test_util import GOLDEN_DIR
    golden = sorted(os.path.join(GOLDEN_DIR, d, "host_program.py") for d in os.listdir(GOLDEN_DIR)
                    if os.path.isfile(os.path.join(GOLDEN_DIR, d, "host_program.py")))
    return golden + [os.path.join(EXAMPLES, "sharded_matmul.py"), os.path.join(EXAMPLES, "two_chips.py")]


@pytest.mark.parametrize("path", _host_programs(), ids=lambda p: os.path.basename(os.path.dirname(p)) + "/" +
                         os.path.basename(p))
def test_static_graph_of_a_host_program_is_the_l3_graph_that_runs(path):
    """HOST: the next-level tasks (target, index) and barriers of the run, each after exactly the
    tasks it waited on in the L3 runtime (add_dep_wait edges and the per-target chain)."""
    from pypto import host
    from pypto.cli.common import load_programs
    programs = load_programs(path)
    program = next(iter(programs.values())) if isinstance(programs, dict) else programs[0]
    compiled = host.compile_host(program)
    args = compiled.random_inputs(seed=0)
    fn = compiled.program.get(compiled.entry)
    scalars = {p.name: a for p, a in zip(fn.params, args) if not hasattr(p.type, "shape")}
    nodes, edges = _parse_dot(compiled.task_graph(static=True, **scalars))
    stats = compiled(*args)
    preds = {int(k[1:]): set() for k in nodes}
    for a, b, attrs in edges:
        preds[int(b[1:])].add(int(a[1:]))
        assert re.search(r'kind="(explicit|chain)"', attrs), attrs
    static_tasks = {i: (nodes["t%d" % i][0].split("\\n")[0], preds[i]) for i in preds
                    if 'kind="task"' in nodes["t%d" % i][1]}
    static_barriers = {i: preds[i] for i in preds if 'kind="barrier"' in nodes["t%d" % i][1]}
    assert static_tasks == {r.index: (r.target, set(r.deps)) for r in stats.records}
    assert static_barriers == {k: set(v) for k, v in stats.barrier_deps.items()}
    assert all("\\nCHIP  #" in label for label, attrs in nodes.values() if 'kind="task"' in attrs)


def test_cli_static_graph_of_a_host_program(tmp_path):
    out = tmp_path / "h.dot"
    cp = subprocess.run([sys.executable, "-m", "pypto.cli", "graph", os.path.join(EXAMPLES, "two_chips.py"),
                         "--static", "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    nodes, edges = _parse_dot(out.read_text())
    assert nodes and edges and "static task graph of" in cp.stdout


@pytest.mark.parametrize("flags, flag", [(["--seed", "0"], "--seed"), (["--seed", "5"], "--seed"),
                                         (["--inputs", "in.npz"], "--inputs")])
def test_cli_static_graph_refuses_run_inputs(tmp_path, capsys, monkeypatch, flags, flag):
    # were ignored: --static runs nothing (an --inputs file for another program was accepted too)
    from pypto import cli
    np.savez(tmp_path / "in.npz", unrelated=np.zeros(3))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["graph", os.path.join(EXAMPLES, "vector_add.py"), "--static", "-o", "g.dot"] + flags) == 2
    assert ("%s gives a run its inputs; --static reads the graph from the IR without running" % flag
            in capsys.readouterr().err)
    assert not (tmp_path / "g.dot").exists()


def test_cli_graph_negative_seed_is_refused_before_compiling(tmp_path, capsys, monkeypatch):
    # was refused after the compile, as the random_inputs(seed=) keyword with a 'pypto run --seed' hint
    from pypto import cli
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled"))
    assert cli.main(["graph", os.path.join(EXAMPLES, "vector_add.py"), "--seed", "-1", "-o", str(tmp_path / "g.dot")]) == 2
    assert "--seed must be a non-negative integer, got -1" in capsys.readouterr().err
