"""`pypto run` and the kernel files of `pypto compile`."""
import os
import re

import numpy as np
import pytest

from pypto import cli
from pypto.cli.run import checksum, parse_dims

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def test_run_prints_tasks_time_and_checksums(tmp_path, capsys):
    trace = tmp_path / "t.json"
    assert cli.main(["run", os.path.join(EXAMPLES, "dynamic_shape.py"), "--dim", "M=64", "--trace", str(trace),
                     "--aiv-workers", "3", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "ran 4 tasks in" in out and "0 AIC + 3 AIV workers" in out   # AIV-only: no AIC worker by default
    m = re.search(r"Out\s+y\s+64x64 FP32\s+sum=(\S+) sha256=([0-9a-f]{16})", out)
    assert m, out
    assert trace.is_file()
    # The checksum is that of the example's computation on the seeded inputs (recomputed here).
    import pypto
    import importlib.util
    spec = importlib.util.spec_from_file_location("dyn_cli", os.path.join(EXAMPLES, "dynamic_shape.py"))
    mod = importlib.util.module_from_spec(spec)
    import sys
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    x, y, alpha = pypto.compile(mod.DynamicRows).random_inputs(seed=5, dims={"M": 64})
    expect = np.maximum(x, 0) * np.float32(alpha) + x
    assert abs(float(m.group(1)) - float(expect.sum(dtype=np.float64))) <= 1e-3 * max(1.0, abs(expect.sum()))


def test_run_same_seed_same_checksum(capsys):
    prog = os.path.join(EXAMPLES, "row_softmax.py")
    assert cli.main(["run", prog, "--seed", "1"]) == 0
    first = re.findall(r"sha256=\w+", capsys.readouterr().out)
    assert cli.main(["run", prog, "--seed", "1", "--aiv-workers", "4"]) == 0
    assert re.findall(r"sha256=\w+", capsys.readouterr().out) == first


def test_run_with_derived_dependencies_prints_the_verdict_and_the_same_checksum(capsys):
    prog = os.path.join(EXAMPLES, "dynamic_shape.py")
    assert cli.main(["run", prog, "--dim", "M=64", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "derived dependencies" not in out
    assert cli.main(["run", prog, "--dim", "M=64", "--seed", "3", "--analyze-auto-scopes-for-deps",
                     "--race-check"]) == 0
    derived = capsys.readouterr().out
    assert "derived dependencies: manual: 1 tasks, 0 edges" in derived, derived
    assert re.findall(r"sha256=\w+", derived) == re.findall(r"sha256=\w+", out)


def test_run_host_entry_on_the_l3_runtime(capsys):
    # A distributed HOST-level entry: next-level tasks on --chips chips, same checksums for any
    # chip count (the example's barrier orders the combine after every block).
    prog = os.path.join(EXAMPLES, "two_chips.py")
    assert cli.main(["run", prog, "--seed", "2", "--chips", "1"]) == 0
    out = capsys.readouterr().out
    assert "TwoChips.host_main (HOST, 2 next-level targets)" in out
    assert "ran 5 next-level tasks and 1 barrier in" in out and "on 1 chip (1 AIC + 2 AIV workers each)\n" in out
    m = re.search(r"Out\s+y\s+16x16 FP32\s+sum=(\S+) sha256=([0-9a-f]{16})", out)
    assert m, out
    # y is the sum of the four normalized blocks of x (random inputs: x in [-1, 1), scalars 0.5).
    x = np.random.default_rng(2).uniform(-1.0, 1.0, size=(64, 16)).astype(np.float32)
    expect = ((x - np.float32(0.5)) * np.float32(0.5)).reshape(4, 16, 16).sum(axis=0)
    assert abs(float(m.group(1)) - float(expect.sum(dtype=np.float64))) <= 1e-3 * max(1.0, abs(expect.sum()))
    assert cli.main(["run", prog, "--seed", "2", "--chips", "4"]) == 0
    assert re.findall(r"sha256=\w+", capsys.readouterr().out) == re.findall(r"sha256=\w+", out)


def test_run_host_entry_traces_and_rejects_bad_chips(tmp_path, capsys):
    prog = os.path.join(EXAMPLES, "two_chips.py")
    # A HOST entry's trace: next-level tasks as spans, one track group per chip (docs/distributed.md).
    assert cli.main(["run", prog, "--trace", str(tmp_path / "t.json")]) == 0
    assert "trace: %s" % (tmp_path / "t.json") in capsys.readouterr().out
    assert '"name": "chip_combine"' in (tmp_path / "t.json").read_text()
    assert cli.main(["run", prog, "--chips", "0"]) == 2
    assert "--chips must be at least 1" in capsys.readouterr().err


def test_run_host_entry_takes_chip_worker_counts_and_repeats(capsys):
    # --aic-workers / --aiv-workers are each in-process chip's workers (they were ignored for a
    # HOST entry); --repeat runs it again from the same inputs, as for a chip-level entry.
    prog = os.path.join(EXAMPLES, "two_chips.py")
    assert cli.main(["run", prog, "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "on 2 chips (1 AIC + 2 AIV workers each)" in out
    assert cli.main(["run", prog, "--seed", "2", "--aiv-workers", "3", "--aic-workers", "0", "--repeat", "3"]) == 0
    out3 = capsys.readouterr().out
    assert "(0 AIC + 3 AIV workers each)" in out3 and "3 runs: min" in out3
    assert re.findall(r"sha256=\w+", out3) == re.findall(r"sha256=\w+", out)   # InOut-safe: same inputs each run
    # A count above the runtime's bound (which the chips' runtimes refused, failing the run after
    # the build) is a usage error before compiling.
    assert cli.main(["run", prog, "--aiv-workers", "5000"]) == 2
    assert "--aiv-workers must be at most 4096 (the runtime's bound" in capsys.readouterr().err
    # 0 workers of a type the kernels run on is a usage error before building, naming a kernel.
    assert cli.main(["run", prog, "--aiv-workers", "0"]) == 2
    assert "kernel 'normalize_block' runs on AIV workers" in capsys.readouterr().err


def test_run_host_entry_refuses_chip_level_only_flags(capsys):
    prog = os.path.join(EXAMPLES, "two_chips.py")
    for flags, name in ((["--race-check"], "--race-check"), (["--clusters", "2"], "--clusters"),
                        (["--repeat", "0"], "--repeat"), (["--mpi", "--aiv-workers", "2"], "--aiv-workers")):
        assert cli.main(["run", prog] + flags) == 2, flags
        assert name in capsys.readouterr().err


def test_run_needs_dynamic_dims(capsys, monkeypatch):
    # a usage error found before compiling (it was the call's error, status 1 after the build)
    import pypto
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite a missing --dim"))
    assert cli.main(["run", os.path.join(EXAMPLES, "dynamic_shape.py")]) == 2
    assert "pypto: error: dynamic dimension M of parameter 'x' needs a value: give it with --dim M=<extent>" \
        in capsys.readouterr().err


def test_run_bad_dim_syntax(capsys):
    assert cli.main(["run", os.path.join(EXAMPLES, "dynamic_shape.py"), "--dim", "M"]) == 2
    assert "--dim expects NAME=INTEGER" in capsys.readouterr().err


def test_compile_writes_kernels(tmp_path):
    assert cli.main(["compile", os.path.join(EXAMPLES, "tiled_matmul.py"), "-o", str(tmp_path)]) == 0
    assert (tmp_path / "orchestration" / "main.cpp").is_file()
    text = (tmp_path / "kernels" / "mm_block.cpp").read_text()
    assert 'extern "C" void pypto_kernel_mm_block(PTO2KernelContext* ctx)' in text


def test_helpers():
    assert parse_dims(["M=128", "N = 4"]) == {"M": 128, "N": 4}
    assert checksum(np.ones(4, np.float32)).startswith("sum=4 sha256=")


def test_run_uses_the_programs_default_workers(capsys):
    # No --aic/--aiv-workers: the call's default (an AIC-only program: CPUs - 1 AIC workers, no AIV),
    # and the line says what ran.
    from pypto.runtime.worker_defaults import usable_cpus
    assert cli.main(["run", os.path.join(EXAMPLES, "tiled_matmul.py"), "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "(%d AIC + 0 AIV workers)" % max(1, usable_cpus() - 1) in out, out


def test_host_program_worker_counts_of_the_wrong_kind_are_refused():
    # HostProgram(..., aic_workers=, aiv_workers=): checked before running, as a chip-level call's.
    import importlib.util
    import sys
    import pytest
    from pypto import host
    from pypto.runtime.args import ArgumentValueError
    spec = importlib.util.spec_from_file_location("two_chips_kw", os.path.join(EXAMPLES, "two_chips.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    prog = host.compile_host(mod.TwoChips)
    inputs = prog.random_inputs(seed=2)
    for bad in (-1, True, 2.0, "2", 1 << 40):
        with pytest.raises(ArgumentValueError, match="aiv_workers must be (a non-negative integer|at most 4096)"):
            prog(*inputs, aiv_workers=bad)
    assert prog(*inputs, aic_workers=0, aiv_workers=1).tasks_executed == 5   # AIV-only kernels: 0 AIC is fine
    # prog.chips (public; pypto run --chips sets it): 0 ran 'on 0 chips', -1 and 2.5 were nanobind TypeErrors
    for bad in (0, -1, True, 2.5, 1 << 40):
        prog.chips = bad
        with pytest.raises(ArgumentValueError, match="HostProgram.chips must be a positive integer, got"):
            prog(*inputs)
    # More in-process chips than threads the process may start: threads were started until one
    # failed ('error: Resource temporarily unavailable'; 2^32 - 1 chips ran the machine short).
    prog.chips = 4097
    with pytest.raises(ArgumentValueError, match=r"HostProgram.chips 4097 is more than the in-process transport's "
                                                 r"4096 \(each chip is a thread of this process\)"):
        prog(*inputs)
    prog.chips = 3
    assert prog(*inputs).chips == 3


def test_run_negative_dim_is_refused_before_compiling(capsys, monkeypatch):
    # was refused by the call's argument check, after the compile
    import pypto
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite --dim M=-1"))
    for cmd in (["run"], ["graph", "--static"]):
        assert cli.main(cmd[:1] + [os.path.join(EXAMPLES, "dynamic_shape.py"), "--dim", "M=-1"] + cmd[1:]) == 2
        assert "--dim M: an extent must be a non-negative integer, got -1" in capsys.readouterr().err
