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


# A kernel and an orchestration named beyond 100 bytes, one of them in multi-byte characters
# (a Python identifier may be): kernel_config.py and the generators' `files` name the files
# that are written, and every stem stays a file name (they disagreed before: the metadata
# listed the raw names).
KERNEL_NAME, ORCH_NAME = "核" * 120, "o" * 300   # 360 and 300 bytes


def _long_named_vector_add(tmp_path):
    with open(os.path.join(ROOT, "examples", "vector_add.py")) as f:
        text = f.read().replace("add_chunk", KERNEL_NAME).replace("def main(", "def %s(" % ORCH_NAME)
    path = tmp_path / "vector_add_long.py"
    path.write_text(text, encoding="utf-8")
    return path, load_module(path, "vector_add_long")


def test_source_stem_is_a_file_name_and_keeps_short_names():
    assert source_stem("kernel_add") == "kernel_add"
    for name in (KERNEL_NAME, ORCH_NAME, "é" * 51 + "x" * 200):
        stem = source_stem(name)
        assert len(stem.encode()) <= 117 and stem.encode().decode() == stem   # whole characters
        assert stem != source_stem(name + "x") and stem == source_stem(name)   # the hash is of the whole name


def test_kernel_config_names_the_files_compile_writes(tmp_path):
    path, _ = _long_named_vector_add(tmp_path)
    out = tmp_path / "out"
    assert cli.main(["compile", str(path), "-o", str(out)]) == 0
    config = {}
    exec((out / "kernel_config.py").read_text(encoding="utf-8"), config)
    assert (out / config["ORCHESTRATION"]["source"]).is_file()
    assert config["ORCHESTRATION"]["source"] == "orchestration/%s.cpp" % source_stem(ORCH_NAME)
    [kernel] = config["KERNELS"]
    assert kernel["name"] == KERNEL_NAME and kernel["source"] == "kernels/%s.cpp" % source_stem(KERNEL_NAME)
    assert (out / kernel["source"]).is_file()


def test_long_kernel_and_orchestration_names_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    _, mod = _long_named_vector_add(tmp_path)
    mod.run()
