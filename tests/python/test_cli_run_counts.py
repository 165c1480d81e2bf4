"""`pypto run` count flags (--aic-workers, --aiv-workers, --clusters, --chips, --seed): a value the
run could not use is a usage error naming the flag, found before the program is compiled (a
negative count, or both worker counts 0) or, for a worker count of 0 that a kernel's core type
rules out, after the passes and before the C++ build. These were refused only after compiling
and building, as `aiv_workers must be ...` (the Python keyword, not the flag) with exit status 1."""
import os

import pytest

from pypto import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTOR_ADD = os.path.join(ROOT, "examples", "vector_add.py")     # one AIV kernel
TILED_MATMUL = os.path.join(ROOT, "examples", "tiled_matmul.py")  # AIC kernels only
TWO_CHIPS = os.path.join(ROOT, "examples", "two_chips.py")        # a HOST entry


def _err(capsys):
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return err


@pytest.mark.parametrize("flags, message", [
    (["--clusters", "-1"], "--clusters must be a non-negative integer, got -1"),
    (["--aic-workers", "-3"], "--aic-workers must be a non-negative integer, got -3"),
    (["--aiv-workers", "-1"], "--aiv-workers must be a non-negative integer, got -1"),
    (["--aiv-workers", str(2 ** 32)], "--aiv-workers must be at most 4096 (the runtime's bound on the workers of a "
                                      "core type), got 4294967296"),
    (["--aic-workers", "4097"], "--aic-workers must be at most 4096 (the runtime's bound on the workers of a core "
                                "type), got 4097"),   # was refused by the runtime after the build, exit status 1
    (["--clusters", str(2 ** 32)], "--clusters must be at most 4294967295, got 4294967296"),
    (["--aic-workers", "0", "--aiv-workers", "0"], "--aic-workers 0 --aiv-workers 0: no worker would run a task"),
    (["--chips", "0"], "--chips must be at least 1, got 0"),
    (["--chips", "4097"], "--chips must be at most 4096 for in-process chips (each is a thread), got 4097"),
    (["--seed", "-1"], "--seed must be a non-negative integer, got -1"),
])
def test_bad_count_is_refused_before_compiling(capsys, monkeypatch, flags, message):
    import pypto
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite %s" % flags))
    assert cli.main(["run", VECTOR_ADD] + flags) == 2
    assert message in _err(capsys)


def _no_build(monkeypatch):
    import pypto.compiler
    import pypto.runtime.build
    fail = lambda *a, **k: pytest.fail("built despite a worker count of 0")  # noqa: E731
    monkeypatch.setattr(pypto.compiler, "build_program", fail)
    monkeypatch.setattr(pypto.runtime.build, "build_sources", fail)


@pytest.mark.parametrize("path, flags, message", [
    (VECTOR_ADD, ["--aiv-workers", "0"], "--aiv-workers 0: kernel 'add_chunk' runs on AIV workers; give at least 1"),
    (TILED_MATMUL, ["--aic-workers", "0", "--aiv-workers", "2"], "--aic-workers 0: kernel '"),
    (TWO_CHIPS, ["--aiv-workers", "0"], "--aiv-workers 0: kernel '"),
])
def test_zero_workers_for_a_used_core_type_is_refused_before_building(capsys, monkeypatch, path, flags, message):
    _no_build(monkeypatch)
    assert cli.main(["run", path] + flags) == 2
    err = _err(capsys)
    assert message in err, err
    assert "(or leave the flag out: the default is" in err


def test_zero_workers_for_an_unused_core_type_runs(capsys):
    assert cli.main(["run", VECTOR_ADD, "--aic-workers", "0", "--aiv-workers", "1"]) == 0
    assert "(0 AIC + 1 AIV workers)" in capsys.readouterr().out


@pytest.mark.parametrize("flags, message", [
    ([], "--mpi runs a HOST-level entry's chips as MPI ranks, but program VectorAdd has no HOST-level orchestration"),
    (["--entry", "main"], "but 'main' is not a HOST-level orchestration of program VectorAdd"),
])
def test_mpi_for_a_chip_level_entry_is_refused_before_launching(capsys, monkeypatch, flags, message):
    # mpirun was launched: every rank compiled, then failed with distributed='mpi' applies to a HOST-level entry
    import pypto
    import subprocess
    monkeypatch.setattr(subprocess, "call", lambda *a, **k: pytest.fail("launched mpirun"))
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled"))
    assert cli.main(["run", VECTOR_ADD, "--mpi"] + flags) == 2
    assert message in _err(capsys)


def test_mpi_chips_are_bounded_before_launching(capsys, monkeypatch):
    # --chips 100000 --mpi launched mpirun -np 100001 (a process per rank) on this machine.
    import pypto
    import subprocess
    from pypto.host import HostProgram
    monkeypatch.setattr(subprocess, "call", lambda *a, **k: pytest.fail("launched mpirun"))
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled"))
    assert cli.main(["run", TWO_CHIPS, "--mpi", "--chips", "100000"]) == 2
    assert ("--chips must be at most %d with --mpi (each chip is an MPI rank: a process of its own, 30 MB and more), "
            "got 100000: mpirun would start 100001 processes" % HostProgram.MAX_MPI_CHIPS) in _err(capsys)


@pytest.mark.parametrize("flags, message", [
    (["--chips", "3"], "--chips sets the chips of a HOST-level entry's L3 runtime; the entry of program VectorAdd "
                       "is a chip-level orchestration (it runs on one chip): leave --chips out"),
    (["--chips", "2", "--entry", "main"], "VectorAdd.main is a chip-level orchestration"),
    (["--mpi-args=--mca btl tcp,self"], "--mpi-args passes arguments to mpirun, which only --mpi launches"),
])
def test_host_only_flags_for_a_chip_level_run_are_refused_before_compiling(capsys, monkeypatch, flags, message):
    # were ignored: the run went on, on one chip, without mpirun
    import pypto
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite %s" % flags))
    assert cli.main(["run", VECTOR_ADD] + flags) == 2
    assert message in _err(capsys)


def test_chips_of_a_host_entry_and_a_chip_target_of_it(capsys):
    assert cli.main(["run", TWO_CHIPS, "--chips", "3"]) == 0
    assert "on 3 chips" in capsys.readouterr().out
    assert cli.main(["run", TWO_CHIPS, "--entry", "chip_combine", "--chips", "3"]) == 2   # a chip-level entry
    assert "TwoChips.chip_combine is a chip-level orchestration" in _err(capsys)


@pytest.mark.parametrize("flags, message", [
    (["--aic-workers", "1", "--aiv-workers", "2", "--clusters", "4"],
     "--clusters 4 is more than min(AIC workers 1, AIV workers 2) = 1 (a cluster pairs one AIC and one AIV worker); "
     "give at most 1 (0 = min(aic, aiv)) or more workers (--aic-workers / --aiv-workers)"),
    (["--clusters", "1"], "--clusters 1 is more than min(AIC workers 0, AIV workers "),   # vector_add's defaults
])
def test_clusters_above_the_worker_pairs_are_refused_before_building(capsys, monkeypatch, flags, message):
    # Was capped silently: --clusters 4 on 1 AIC + 2 AIV workers ran with 1 cluster.
    _no_build(monkeypatch)
    assert cli.main(["run", VECTOR_ADD] + flags) == 2
    assert message in _err(capsys)


def test_clusters_up_to_the_worker_pairs_run(capsys):
    assert cli.main(["run", VECTOR_ADD, "--aic-workers", "2", "--aiv-workers", "3", "--clusters", "2"]) == 0
    assert "(2 AIC + 3 AIV workers)" in capsys.readouterr().out


def test_mpi_args_with_an_unbalanced_quote_is_a_usage_error(capsys, monkeypatch):
    # Was a ValueError traceback ('No closing quotation') from shlex.split.
    import shutil
    import subprocess
    for k in [k for k in os.environ if k.startswith(("OMPI_COMM_WORLD", "PMI_"))]:
        monkeypatch.delenv(k)   # the launching process, not a rank
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(subprocess, "call", lambda *a, **k: pytest.fail("mpirun started"))
    assert cli.main(["run", TWO_CHIPS, "--mpi", "--mpi-args='--mca btl"]) == 2
    assert "--mpi-args \"'--mca btl\": no closing quotation (the arguments are split as a shell would); balance " \
           "the quotes" in _err(capsys)


@pytest.mark.parametrize("path, flags, warning", [
    (VECTOR_ADD, ["--aiv-workers", "17"], "--aiv-workers 17: 17 worker threads on 2 CPUs (more than 8 per CPU)"),
    (TWO_CHIPS, ["--chips", "8"], "AIC workers 1, AIV workers 2 on each of 8 chips: 24 worker threads on 2 CPUs"),
    (VECTOR_ADD, ["--aiv-workers", "16"], None),
    (TWO_CHIPS, ["--chips", "5"], None),
])
def test_more_than_8_worker_threads_per_cpu_warn_once(capsys, monkeypatch, path, flags, warning):
    # 4096 AIV workers on 2 CPUs ran vector_add 20 times in 375 s at a load of ~1900, without a word.
    import pypto.runtime.worker_defaults as wd
    monkeypatch.setattr(wd, "usable_cpus", lambda: 2)
    assert cli.main(["run", path, "--repeat", "2"] + flags) == 0
    err = _err(capsys)
    if warning is None:
        assert "warning" not in err, err
        return
    assert err.count("warning") == 1, err   # the CLI's line only: the call's WorkerCountWarning is silenced
    assert err.startswith("pypto: warning: " + warning), err
    assert "Use at most 16 workers in all" in err


def test_mpi_chips_are_not_warned_about_as_threads(capsys, monkeypatch):
    # With --mpi the chips are ranks (processes): 'worker threads on each of 8 chips' would be wrong.
    import shutil
    import subprocess

    import pypto.runtime.worker_defaults as wd
    monkeypatch.setattr(wd, "usable_cpus", lambda: 2)
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(subprocess, "call", lambda *a, **k: 0)
    assert cli.main(["run", TWO_CHIPS, "--mpi", "--chips", "8"]) == 0
    assert "warning" not in _err(capsys)
