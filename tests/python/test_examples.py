"""Every example of examples/ runs end to end and matches NumPy, across worker (or chip) counts.

Each example's ``run(aic_workers, aiv_workers)`` compiles its program (cached after the
first time), runs it on the CPU runtime and asserts against a NumPy reference with the
tolerances it states (FP32 elementwise rtol = atol = 1e-5; FP32 matmul / softmax rtol 1e-4;
FP16 inputs with FP32 accumulation rtol = atol = 1e-3; long FP32 sums rtol 1e-4).
"""
import importlib.util
import os
import sys

import pytest

EXAMPLES_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
EXAMPLES = ["vector_add", "tiled_matmul", "row_softmax", "online_softmax", "dynamic_shape", "spmd_block_idx",
            "group_mixed", "long_loop", "scoped_stages"]


def load_example(name):
    path = os.path.join(EXAMPLES_DIR, name + ".py")
    spec = importlib.util.spec_from_file_location("example_" + name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("workers", [1, 2, 4])
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_matches_numpy(name, workers):
    mod = load_example(name)
    stats = mod.run(aic_workers=workers, aiv_workers=workers)
    assert stats.tasks > 0
    assert stats.wall_seconds >= 0


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_matches_numpy_with_derived_dependencies(name, monkeypatch):
    # The same examples compiled with analyze_auto_scopes_for_deps=True (docs/auto_dependencies.md),
    # race-checked: the compiler's edges order everything the runtime's tracking would have.
    import functools
    import pypto
    from pypto import codegen
    monkeypatch.setattr(pypto, "compile", functools.partial(pypto.compile, analyze_auto_scopes_for_deps=True))
    monkeypatch.setenv("PYPTO_RACE_CHECK", "error")
    mod = load_example(name)
    programs = [v for v in vars(mod).values() if hasattr(v, "functions") and hasattr(v, "dynamic_dims")]
    verdicts = [f.attrs["auto_deps"] for p in programs
                for f in codegen.run_pipeline(p, analyze_auto_scopes_for_deps=True).functions if "auto_deps" in f.attrs]
    assert verdicts and not any(v.startswith("fallback") for v in verdicts), verdicts
    assert mod.run(aic_workers=1, aiv_workers=2).tasks > 0


@pytest.mark.parametrize("chips", [1, 2, 4])
def test_host_example_matches_numpy(chips):
    # A distributed HOST program (L3 runtime): the example checks values and task order itself.
    stats = load_example("two_chips").run(chips=chips)
    assert stats["tasks_executed"] == 5
    assert stats["wait_edges"] == 5  # the barrier on 4 task ids, chip_combine on the barrier


def test_examples_open_with_a_task_graph_drawing():
    for name in EXAMPLES + ["two_chips", "demo"]:
        with open(os.path.join(EXAMPLES_DIR, name + ".py")) as f:
            text = f.read()
        doc = text.split('"""')[1]
        assert any(ch in doc for ch in "─►│┌"), "%s: the docstring should draw the task graph" % name


def test_example_trace_is_written(tmp_path):
    import json
    mod = load_example("online_softmax")
    path = tmp_path / "trace.json"
    stats = mod.run(trace=str(path))
    assert stats.trace_path == str(path)
    events = json.loads(path.read_text())["traceEvents"]
    names = {e.get("name") for e in events}
    assert {"init_state", "attn_step", "finalize"} <= names
