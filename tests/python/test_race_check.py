"""The race checker from Python: ``prog(..., race_check=True / "warn")``, ``PYPTO_RACE_CHECK``, ``pypto run
--race-check``. Every example, spec program and golden program runs clean under it (no false positive); a
manual-scope program with a missing ``deps=`` is reported with both DSL source lines.

The exhaustive missing-edge generator (600 seeded programs, more under ``make fuzz-race``) drives the runtime
directly from C++: runtime/tests/test_race_checker.cpp.
"""
import os
import warnings

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.runtime.loader import RaceError, RaceWarning, race_check_mode

from codegen_test_util import GOLDEN_DIR, load_single_program


@pl.program
class Racy:
    @pl.function(type=pl.FunctionType.InCore)
    def produce(self, x: pl.Tensor[[16, 16], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def consume(self, y: pl.Tensor[[16, 16], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = pl.store(pl.add(pl.load(y, [0, 0], [16, 16]), pl.load(y, [0, 0], [16, 16])), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.manual_scope():
            y, t0 = pl.submit(self.produce, x, y)
            out, t1 = pl.submit(self.consume, y, out)  # missing: deps=[t0]
        return out


@pl.program
class Ordered:
    @pl.function(type=pl.FunctionType.InCore)
    def produce(self, x: pl.Tensor[[16, 16], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def consume(self, y: pl.Tensor[[16, 16], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = pl.store(pl.add(pl.load(y, [0, 0], [16, 16]), pl.load(y, [0, 0], [16, 16])), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.manual_scope():
            y, t0 = pl.submit(self.produce, x, y)
            out, t1 = pl.submit(self.consume, y, out, deps=[t0])
        return out


def _args():
    x = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
    return x, np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)


def _line_of(text):
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def test_missing_dep_is_an_error_naming_both_dsl_lines():
    compiled = pypto.compile(Racy)
    with pytest.raises(RaceError) as info:
        compiled(*_args(), race_check=True)
    msg = str(info.value)
    assert "read after write" in msg and "on tensor 'y'" in msg
    assert "'produce'" in msg and "'consume'" in msg
    here = os.path.basename(__file__)
    assert "%s:%d" % (here, _line_of("y, t0 = pl.submit(self.produce, x, y)")) in msg, msg
    assert "%s:%d" % (here, _line_of("# missing: deps=[t0]")) in msg, msg
    assert "help: order them" in msg and "deps=[...]" in msg
    # The runtime cannot tell a pl.submit from a plain call: the help no longer calls the site
    # "the pl.submit" and says how a plain call gets a TaskId.
    assert "the pl.submit at" not in msg and "a plain kernel call gives no TaskId" in msg, msg


def test_warn_mode_completes_with_a_warning_and_the_report():
    compiled = pypto.compile(Racy)
    with pytest.warns(RaceWarning, match="read after write") as caught:
        stats = compiled(*_args(), race_check="warn")
    assert stats.races == 1 and "consume" in stats.race_report
    assert caught[0].filename == __file__   # the user's call, not a pypto frame


def test_environment_variable_turns_it_on(monkeypatch):
    compiled = pypto.compile(Racy)
    compiled(*_args())  # off by default
    monkeypatch.setenv("PYPTO_RACE_CHECK", "1")
    with pytest.raises(RaceError):
        compiled(*_args())
    assert compiled(*_args(), race_check=False).races == 0  # an explicit argument wins


def test_ordered_program_is_clean():
    x, y, out = _args()
    stats = pypto.compile(Ordered)(x, y, out, race_check=True)
    assert stats.races == 0
    np.testing.assert_allclose(out, 2 * np.exp(x), rtol=1e-5)


def test_race_check_values():
    assert race_check_mode(True) == 2 and race_check_mode("error") == 2 and race_check_mode("warn") == 1
    assert race_check_mode(False) == 0 and race_check_mode("off") == 0
    with pytest.raises(pypto.PyptoError, match="race_check must be"):
        race_check_mode("sometimes")


def test_cli_race_check(tmp_path, capsys, monkeypatch):
    from pypto import cli
    src = tmp_path / "racy.py"
    with open(__file__) as f:
        text = f.read()
    start = text.index("@pl.program\nclass Racy")
    src.write_text("import pypto.language as pl\n\n\n" + text[start:text.index("@pl.program\nclass Ordered")])
    monkeypatch.delenv("PYPTO_RACE_CHECK", raising=False)
    assert cli.main(["run", str(src)]) == 0
    capsys.readouterr()
    assert cli.main(["run", str(src), "--race-check"]) != 0
    err = capsys.readouterr().err
    assert "race check:" in err and "racy.py:" in err, err
    with pytest.warns(RaceWarning, match="read after write"):
        assert cli.main(["run", str(src), "--race-check", "warn"]) == 0


# ---- no false positives: every example, spec program and golden program runs clean


def test_examples_run_clean(monkeypatch):
    from test_examples import EXAMPLES, load_example
    monkeypatch.setenv("PYPTO_RACE_CHECK", "error")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RaceWarning)
        for name in EXAMPLES:
            load_example(name).run(aic_workers=2, aiv_workers=2)


def test_spec_programs_run_clean(monkeypatch):
    import test_e2e_spec_programs as spec
    monkeypatch.setenv("PYPTO_RACE_CHECK", "error")
    for name in sorted(spec.CASES):
        mod, program = spec.load(name)
        spec.CASES[name](pypto.compile(program), mod)


GOLDEN_CASES = sorted(d for d in os.listdir(GOLDEN_DIR) if os.path.isfile(os.path.join(GOLDEN_DIR, d, "program.py"))
                      and not d.startswith("host_"))


# A true positive: tensor_create's `b` is manual_dep=True, written by the fill at line 21 and read by
# the fill at line 25 (twice: a loop) with no deps= between them. (The golden case tests code
# generation; the checker finds the missing edge.)
GOLDEN_RACES = {"tensor_create": (2, ["program.py:21", "program.py:25"])}


def _golden_inputs(compiled):
    dims = {d: 32 for p in compiled.params if p.kind == "tensor" for d in p.shape if isinstance(d, str)}
    inputs = compiled.random_inputs(seed=1, dims=dims)
    for a in inputs:  # integer tensors hold indices and sizes: keep them small and valid
        if isinstance(a, np.ndarray) and a.dtype.kind in "iu":
            a[...] = 1
    return inputs


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_golden_programs_run_clean(case):
    compiled = pypto.compile(load_single_program(os.path.join(GOLDEN_DIR, case, "program.py")))
    expected, sites = GOLDEN_RACES.get(case, (0, []))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RaceWarning)
        stats = compiled(*_golden_inputs(compiled), aic_workers=4, aiv_workers=4, race_check="warn")
    assert stats.races == expected, stats.race_report
    for site in sites:
        assert site in stats.race_report


# ---- the submission site also names a failed kernel's task (run-time errors point at the DSL)


@pl.program
class Shifted:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, x: pl.Tensor[[16, 16], pl.FP32], row: pl.Scalar[pl.INDEX],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.load(x, [row, 0], [16, 16]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], row: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = self.shift(x, row, y)  # the failing submission
        return y


def test_failed_kernel_names_the_dsl_line():
    from pypto.runtime.loader import RunError
    x, y = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    compiled = pypto.compile(Shifted)
    site = "submitted at %s:%d" % (os.path.basename(__file__), _line_of("# the failing submission"))
    for _ in range(2):  # deferred, then (a measured tiny kernel) possibly undeferred: same message
        with pytest.raises(RunError, match="out of bounds") as info:
            compiled(x, 4, y)
        assert site in str(info.value), str(info.value)


def test_bad_race_check_variable_is_named(monkeypatch):
    # said "race_check must be True, False, ..., got 'bogus'": a keyword the caller never passed
    from pypto.runtime.loader import RunError, race_check_mode
    monkeypatch.setenv("PYPTO_RACE_CHECK", "bogus")
    with pytest.raises(RunError, match="PYPTO_RACE_CHECK='bogus' is not a race-check mode"):
        race_check_mode(None)
    assert race_check_mode("warn") == 1                    # an explicit value wins over the variable
    with pytest.raises(RunError, match="race_check must be True, False"):
        race_check_mode("sometimes")
    monkeypatch.setenv("PYPTO_RACE_CHECK", "Warn")
    assert race_check_mode(None) == 1
