"""The per-call path through pypto._core.program_abi (issue 17, the fixed cost of a call): the
binding reads an array's address itself, returns the run's statistics as a tuple in
RUN_STATS_FIELDS order, and reads the environment with getenv(3).
"""
import dataclasses
import os
import sys

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto._core import program_abi
from pypto.runtime.env import getenv
from pypto.runtime.loader import RunStats, _run_stats

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "runtime"))
from fixed_cost import LOOP_SRC  # noqa: E402  (one tiny program: acc += 1, n times)


@pytest.fixture(scope="module")
def loop():
    return pypto.compile(pl.parse_program(LOOP_SRC))


def test_stats_tuple_order_is_run_stats_field_order():
    names = [f.name for f in dataclasses.fields(RunStats)][:10]
    assert list(program_abi.RUN_STATS_FIELDS[:10]) == ["tasks_submitted"] + names[1:]
    assert program_abi.RUN_STATS_FIELDS[10] == "races"
    s = _run_stats(tuple(range(1, 12)))
    assert (s.tasks, s.tasks_executed, s.tasks_undeferred, s.races) == (1, 2, 10, 11)


def test_array_address_int_address_and_stats_agree(loop):
    acc = np.zeros((16, 16), np.float32)
    rt = loop._lib.create_runtime(0, 1)
    try:
        by_array = rt._h.run([(acc, 0, [16, 16], None)], [3])      # the address read from the buffer
        by_int = rt._h.run([(acc.ctypes.data, 0, [16, 16], None)], [2])
    finally:
        rt.close()
    assert by_array[0] and by_int[0], (by_array, by_int)
    assert np.all(acc == 5.0)   # both runs wrote the same memory: 3 + 2 increments
    stats = dict(zip(program_abi.RUN_STATS_FIELDS, by_array[2]))
    assert stats["tasks_submitted"] == 3 and stats["tasks_executed"] == 3 and stats["races"] == 0


def test_bad_data_is_a_python_error_not_a_crash(loop):
    rt = loop._lib.create_runtime(0, 1)
    try:
        with pytest.raises(TypeError, match="bytes-like"):
            rt._h.run([([0.0] * 256, 0, [16, 16], None)], [1])
        for address in (-1, 1 << 64):
            with pytest.raises(OverflowError):
                rt._h.run([(address, 0, [16, 16], None)], [1])
    finally:
        rt.close()


def test_getenv_sees_os_environ_writes(monkeypatch):
    monkeypatch.setenv("PYPTO_TEST_GETENV", "a\u00e9b")
    assert getenv("PYPTO_TEST_GETENV") == "a\u00e9b" == os.environ["PYPTO_TEST_GETENV"]
    monkeypatch.delenv("PYPTO_TEST_GETENV")
    assert getenv("PYPTO_TEST_GETENV") is None
    monkeypatch.setenv("PYPTO_TEST_GETENV", "")
    assert getenv("PYPTO_TEST_GETENV") == ""


def test_a_call_reads_pypto_trace_set_after_compiling(loop, monkeypatch, tmp_path):
    acc = np.zeros((16, 16), np.float32)
    loop(acc, 1)   # no trace: the variable is unset
    monkeypatch.setenv("PYPTO_TRACE", str(tmp_path / "t.json"))
    stats = loop(acc, 2)
    assert stats.trace_path == str(tmp_path / "t.json") and (tmp_path / "t.json").is_file()
    assert np.all(acc == 3.0)
