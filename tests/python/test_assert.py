"""Python's `assert cond, "message"` in kernels, orchestrations and HOST functions: a false
condition fails the run at the assert's line with the message (Python's AssertionError), a true
one does nothing. Before, `assert` was "unsupported Python statement (assert)"."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError
from pypto.runtime.loader import RunError

SRC = '''
import pypto.language as pl
M = pl.dynamic("M")


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[M, 16], pl.FP32], n: pl.Scalar[pl.INT64],
          y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        assert n < 100, "kernel: n must stay below 100"
        t = pl.load(x, [0, 0], [8, 16])
        assert pl.tensor.read(x, [0, 0]) >= 0.0
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, 16], pl.FP32], n: pl.Scalar[pl.INT64],
             y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        assert x.shape[0] % 8 == 0, "the rows must be a multiple of 8"
        assert n
        y = self.k(x, n, y)
        return y
'''


@pytest.fixture(scope="module")
def prog():
    return pypto.compile(pl.parse_program(SRC, "asserts.py"))


def _run(prog, rows=16, n=5, first=0.0):
    x = np.arange(rows * 16, dtype=np.float32).reshape(rows, 16)
    x[0, 0] = first
    y = np.full((8, 16), -7.0, np.float32)
    prog(x, n, y)
    return x, y


def test_true_assertions_do_nothing(prog):
    x, y = _run(prog)
    np.testing.assert_array_equal(y, x[:8])


@pytest.mark.parametrize("kwargs,where,message", [
    ({"rows": 12}, "asserts.py:20", "assertion failed: the rows must be a multiple of 8"),
    ({"n": 0}, "asserts.py:21", "assertion failed"),
    ({"n": 100}, "asserts.py:11", "assertion failed: kernel: n must stay below 100"),
    ({"first": -1.0}, "asserts.py:13", "assertion failed"),
])
def test_a_false_assertion_fails_the_run_at_its_line(prog, kwargs, where, message):
    with pytest.raises(RunError) as e:
        _run(prog, **kwargs)
    text = str(e.value)
    assert where + ": " + message in text, text


def test_an_orchestration_assert_stops_before_later_tasks(prog):
    """The kernel after a failed orchestration assert never runs: y keeps its contents."""
    x = np.arange(12 * 16, dtype=np.float32).reshape(12, 16)
    y = np.full((8, 16), -7.0, np.float32)
    with pytest.raises(RunError):
        prog(x, 5, y)
    assert (y == -7.0).all()


def test_printed_form_round_trips():
    p = pl.parse_program(SRC, "asserts.py")
    text = ir.python_print(p)
    assert 'assert x_dim0 % 8 == 0, "the rows must be a multiple of 8"' in text or \
        'assert M % 8 == 0, "the rows must be a multiple of 8"' in text, text
    assert "\n        assert n\n" in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), p)[0]


@pytest.mark.parametrize("stmt,message", [
    ('assert y, "x"', "assert needs a number or a bool as its condition, got a tensor"),
    ('assert n > 0, f"n = {n}"', "the message of an assert must be a string constant"),
    ("assert n > 0, n", "the message of an assert must be a string constant"),
])
def test_misuse_is_a_located_error(stmt, message):
    with pytest.raises(PyptoError) as e:
        pl.parse_program(SRC.replace("        assert n\n", "        " + stmt + "\n"), "bad_asserts.py")
    assert message in str(e.value) and "bad_asserts.py:21" in str(e.value), str(e.value)


def test_host_function_asserts(tmp_path):
    """A HOST orchestration (the two_chips example) with a true and a false assert."""
    import importlib.util
    import pathlib
    src = (pathlib.Path(__file__).parents[2] / "examples" / "two_chips.py").read_text()
    old = "        tids = pl.array.create(BLOCKS, pl.TASK_ID)\n"
    assert old in src
    for cond, fails in (("scale > 0.0", False), ("scale > 100.0", True)):
        path = tmp_path / f"two_chips_assert_{int(fails)}.py"
        path.write_text(src.replace(old, f'        assert {cond}, "the scale"\n' + old))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        if not fails:
            mod.run(chips=2)
            continue
        with pytest.raises(Exception) as e:
            mod.run(chips=2)
        assert "assertion failed: the scale" in str(e.value), str(e.value)


def test_a_message_with_quotes_tabs_and_backslashes_round_trips_and_reaches_the_error():
    msg = 'say "no"\\tto C:\\\\path\\x7f!'                 # Python text of: say "no"<TAB>to C:\path<DEL>!
    src = SRC.replace('assert n\n', "assert n, '" + msg.replace("'", "\\'") + "'\n")
    p = pl.parse_program(src, "asserts.py")
    text = ir.python_print(p)
    assert ir.structural_equal_explain(pl.parse_program(text), p)[0], text
    with pytest.raises(RunError) as e:
        _run(pypto.compile(p), n=0)
    assert 'assertion failed: say "no"' in str(e.value) and "C:\\path" in str(e.value), str(e.value)


def test_an_assert_in_a_single_call_spmd_block_is_a_located_error():
    """A pl.spmd block holding a kernel call and an assert is outlined into a kernel of its own,
    which would call the first: said "expected a tensor parameter of the kernel" (found by
    scripts/fuzz.py --family python_idioms); now it names the call and says what to do."""
    import pathlib
    src = (pathlib.Path(__file__).parent / "spec_programs" / "spmd_scoped.py").read_text()
    src = src.replace("            out = self.expert(x, out)", "            assert 2 > 1\n            out = self.expert(x, out)", 1)
    with pytest.raises(PyptoError) as e:
        pypto.compile(pl.parse_program(src, "spmd_assert.py"))
    assert "calls 'expert': a kernel cannot call another kernel" in e.value.message, str(e.value)
    assert "move the other statements before the block" in e.value.help and e.value.line == 29


def test_trigraph_sequences_in_messages_and_file_names_build_under_werror():
    """`"too big??!"` and a file `??=t.py` were printed into C++ string literals as trigraphs,
    which g++ reports (-Wtrigraphs): the -Werror build failed as "a pypto bug" (tester F #20)."""
    src = (SRC.replace('"kernel: n must stay below 100"', '"kernel: n too big??!"')
              .replace('"the rows must be a multiple of 8"', '"rows??=8??/"'))
    p = pypto.compile(pl.parse_program(src, "??=t.py"))
    with pytest.raises(RunError, match=r"assertion failed: kernel: n too big\?\?!") as ei:
        _run(p, n=100)
    assert "??=t.py:11" in str(ei.value)
    with pytest.raises(RunError, match=r"assertion failed: rows\?\?=8\?\?/"):
        _run(p, rows=12)
