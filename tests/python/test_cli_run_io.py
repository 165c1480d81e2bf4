"""`pypto run --inputs / --save / --repeat / --check` (python/pypto/cli/run.py, cli/arrays.py)."""
import os

import numpy as np
import pytest

from pypto import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTOR_ADD = os.path.join(ROOT, "examples", "vector_add.py")


def _inputs(tmp_path):
    rng = np.random.default_rng(7)
    a = rng.standard_normal(4096).astype(np.float32)
    b = rng.standard_normal(4096).astype(np.float32)
    path = tmp_path / "in.npz"
    np.savez(path, a=a, b=b)
    return a, b, str(path)


def test_inputs_from_npz_and_save_outputs(tmp_path, capsys):
    a, b, path = _inputs(tmp_path)
    out = str(tmp_path / "out.npz")
    assert cli.main(["run", VECTOR_ADD, "--inputs", path, "--save", out]) == 0
    with np.load(out) as saved:
        assert sorted(saved.files) == ["c"]
        np.testing.assert_array_equal(saved["c"], a + b)
    assert "saved: %s" % out in capsys.readouterr().out


def test_check_passes_against_a_correct_reference(tmp_path, capsys):
    a, b, path = _inputs(tmp_path)
    ref = str(tmp_path / "ref.npz")
    np.savez(ref, c=a + b)
    assert cli.main(["run", VECTOR_ADD, "--inputs", path, "--check", ref]) == 0
    assert "c          OK" in capsys.readouterr().out


def test_check_fails_with_the_worst_element_named(tmp_path, capsys):
    a, b, path = _inputs(tmp_path)
    ref = a + b
    ref[100] += 1.0
    np.savez(tmp_path / "ref.npz", c=ref)
    assert cli.main(["run", VECTOR_ADD, "--inputs", path, "--check", str(tmp_path / "ref.npz")]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH 1 of 4096 elements; worst at (100,)" in out


def test_repeat_prints_min_and_median_and_keeps_results(tmp_path, capsys):
    a, b, path = _inputs(tmp_path)
    out = str(tmp_path / "out.npz")
    assert cli.main(["run", VECTOR_ADD, "--inputs", path, "--repeat", "3", "--save", out]) == 0
    assert "3 runs: min " in capsys.readouterr().out
    with np.load(out) as saved:
        np.testing.assert_array_equal(saved["c"], a + b)


@pytest.mark.parametrize("argv, message", [
    (["--repeat", "0"], "--repeat must be at least 1"),
    (["--inputs", "/nonexistent/in.npz"], "--inputs: no such file"),
    (["--save", "/nonexistent/dir/out.npz"], "--save: directory /nonexistent/dir does not exist"),
])
def test_usage_errors(argv, message, capsys):
    assert cli.main(["run", VECTOR_ADD] + argv) == 2
    assert message in capsys.readouterr().err


def test_inputs_with_unknown_name_or_wrong_shape(tmp_path, capsys):
    np.savez(tmp_path / "bad.npz", zz=np.zeros(3, np.float32))
    assert cli.main(["run", VECTOR_ADD, "--inputs", str(tmp_path / "bad.npz")]) == 2
    assert "has arrays for no parameter: zz" in capsys.readouterr().err
    np.savez(tmp_path / "bad2.npz", a=np.zeros(3, np.float32))
    assert cli.main(["run", VECTOR_ADD, "--inputs", str(tmp_path / "bad2.npz")]) == 2
    assert "'a' has shape (3,), the parameter needs (4096,)" in capsys.readouterr().err


def test_bad_output_paths_fail_before_compiling(tmp_path, capsys, monkeypatch):
    import pypto
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite a bad path"))
    assert cli.main(["run", VECTOR_ADD, "--trace", "/nonexistent/dir/t.json"]) == 2
    assert "--trace: directory /nonexistent/dir does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("repeat", ["0", "-1"])
def test_bad_repeat_is_refused_before_compiling(repeat, capsys, monkeypatch):
    # was checked after the compile (which printed "compiled ... -> <dir>" first)
    import pypto
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite --repeat %s" % repeat))
    assert cli.main(["run", VECTOR_ADD, "--repeat", repeat]) == 2
    assert "--repeat must be at least 1, got %s" % repeat in capsys.readouterr().err
