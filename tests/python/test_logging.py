"""The ``pypto`` logger: build cache hits and misses (INFO), compiler commands (DEBUG), runtime
creation with its worker counts (INFO); silent unless the user configures logging."""
import logging

import numpy as np

import pypto
import pypto.language as pl
from pypto.log import logger
from pypto.runtime import build
from pypto.runtime.worker_defaults import usable_cpus


def test_logger_is_pypto_with_a_null_handler():
    assert logger is logging.getLogger("pypto")
    assert any(isinstance(h, logging.NullHandler) for h in logger.handlers)


def _records(caplog, level):
    return [r.getMessage() for r in caplog.records if r.name == "pypto" and r.levelno == level]


def test_build_cache_miss_commands_then_hit(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    files = {"answer.cpp": "extern \"C\" int pypto_log_test_answer() { return 42; }\n"}
    with caplog.at_level(logging.DEBUG, logger="pypto"):
        first = build.build_sources(files, label="answer")
    assert not first.cached
    info = _records(caplog, logging.INFO)
    assert len(info) == 1 and info[0].startswith("build cache miss: answer (compiling 1 of 1 translation units")
    commands = _records(caplog, logging.DEBUG)
    assert any(" -c answer.cpp " in c for c in commands)                   # the compile command
    assert any(" -shared " in c and "libpto2" in c for c in commands)       # the link command
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="pypto"):
        second = build.build_sources(files, label="answer")
    assert second.cached
    assert _records(caplog, logging.INFO) == ["build cache hit: answer (%s)" % second.library]
    assert _records(caplog, logging.DEBUG) == []                             # no compiler ran


def test_info_level_hides_commands(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    with caplog.at_level(logging.INFO, logger="pypto"):
        build.build_sources({"one.cpp": "int pypto_log_test_one() { return 1; }\n"}, label="one")
    assert _records(caplog, logging.DEBUG) == [] and len(_records(caplog, logging.INFO)) == 1


@pl.program
class Exp16:
    @pl.function(type=pl.FunctionType.InCore)
    def work(self, x: pl.Tensor[[16], pl.FP32], out: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        out = pl.store(pl.exp(pl.load(x, [0], [16])), [0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16], pl.FP32], out: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        out, _ = pl.submit(self.work, x, out)
        return out


def test_runtime_creation_logs_worker_counts(caplog):
    compiled = pypto.compile(Exp16)
    x, out = np.zeros(16, np.float32), np.zeros(16, np.float32)
    with caplog.at_level(logging.INFO, logger="pypto"):
        compiled(x, out)
        compiled(x, out)                       # same configuration: the runtime is reused
        compiled(x, out, aic_workers=2, aiv_workers=3)
    created = [m for m in _records(caplog, logging.INFO) if m.startswith("runtime created")]
    assert len(created) == 2
    # An AIV-only program: CPUs - 1 AIV workers by default (docs/running.md, "Workers")
    n = max(1, usable_cpus() - 1)
    assert compiled.default_workers == (0, n)
    assert created[0].startswith("runtime created: 0 AIC + %d AIV workers" % n)
    assert created[1].startswith("runtime created: 2 AIC + 3 AIV workers")
    assert np.allclose(out, 1.0)
