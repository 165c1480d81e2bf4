"""Function names too long for a file name (a 300-character HOST function and chip-level target):
`host.compile_host` and `pypto compile` name their files by `source_stem` (a prefix and a hash),
as kernels already were. The HOST build wrote `host/<name>.cpp` and failed with OSError "File
name too long" (program fuzzer, seed 8812 mutant 51, `--source two_chips`)."""
import os

import numpy as np

from pypto import cli, host
from pypto.runtime.build import source_stem

from codegen_test_util import load_module

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
HOST_NAME, TARGET_NAME = "h" * 300, "n" * 300


def _long_named_two_chips(tmp_path):
    with open(os.path.join(ROOT, "examples", "two_chips.py")) as f:
        text = f.read().replace("host_main", HOST_NAME).replace("chip_normalize", TARGET_NAME)
    path = tmp_path / "two_chips_long.py"
    path.write_text(text)
    return path, load_module(path, "two_chips_long")


def test_long_host_and_target_names_build_and_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    _, mod = _long_named_two_chips(tmp_path)
    prog = host.compile_host(mod.TwoChips, HOST_NAME, chips=2)
    x = np.random.default_rng(0).standard_normal((mod.ROWS, mod.B)).astype(np.float32)
    z, y = np.zeros_like(x), np.zeros((mod.B, mod.B), np.float32)
    prog(x, z, y, 0.25, 2.0)
    z_ref = (x - np.float32(0.25)) * np.float32(2.0)
    np.testing.assert_allclose(z, z_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y, z_ref.reshape(mod.BLOCKS, mod.B, mod.B).sum(axis=0), rtol=1e-5, atol=1e-5)


def test_cli_compile_writes_long_named_files_by_their_stems(tmp_path, capsys):
    path, _ = _long_named_two_chips(tmp_path)
    out = tmp_path / "out"
    assert cli.main(["compile", str(path), "-o", str(out)]) == 0
    assert len(source_stem(HOST_NAME)) < 120
    assert "host_orchestration_entry" in (out / "host" / (source_stem(HOST_NAME) + ".cpp")).read_text()
    assert (out / "orchestration" / (source_stem(TARGET_NAME) + ".cpp")).is_file()
    assert (out / "orchestration" / "chip_combine.cpp").is_file()   # a short name stays itself
