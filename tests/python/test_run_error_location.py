"""A failed run's RunError is located at the DSL line its message names, as a compile error is
(pypto.runtime.dsl_terms.failure_location): err.file / err.line / err.col, and str(err) ends with
the source line and a caret under the call. The most specific line wins: the kernel's failing
load or store, the orchestration statement whose check failed, else the submitting statement."""
import textwrap

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import host
from pypto.runtime.dsl_terms import failure_location
from pypto.runtime.loader import RunError

SRC = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, a: pl.Tensor[[64], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]],
              k: pl.Scalar[pl.INDEX], j: pl.Scalar[pl.INDEX], row: pl.Scalar[pl.INT8]) -> pl.Tensor[[16], pl.FP32]:
        t = pl.load(a, [k], [16])
        u = pl.load(a, [j], [8])
        w = pl.load(a, [j + 8], [8])
        c = pl.store(t, [0], c)
        c = pl.store(pl.add(u, w), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]],
             k: pl.Scalar[pl.INDEX], j: pl.Scalar[pl.INDEX], r: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16], pl.FP32]:
        c = self.shift(a, c, k, j, r)
        return c
'''

CALL = "c = self.shift(a, c, k, j, r)"


def _line(src, text):
    return next(i + 1 for i, l in enumerate(src.splitlines()) if text in l)


def _col(src, text, expr):
    """1-based column of ``expr`` on the line holding ``text``."""
    return src.splitlines()[_line(src, text) - 1].index(expr) + 1


@pytest.fixture(scope="module")
def prog():
    p = pypto.compile(pl.parse_program(SRC, "t.py"))
    yield p
    p.close()


def _fail(prog, k, j, r):
    with pytest.raises(RunError) as err:
        prog(np.arange(64, dtype=np.float32), np.zeros(16, np.float32), k, j, r)
    return err.value


def test_a_kernel_access_failure_is_located_at_the_access(prog):
    err = _fail(prog, 60, 0, 1)
    line = _line(SRC, "t = pl.load(a, [k], [16])")
    assert (err.file, err.line) == ("t.py", line)
    assert err.col == _col(SRC, "t = pl.load(a, [k], [16])", "pl.load")
    assert err.source_line == SRC.splitlines()[line - 1]
    # rendered as a compile error: the message, the site, the line and a caret under the load
    text = str(err).splitlines()
    assert text[0].startswith("error: the run failed: ") and text[0].endswith(" --> t.py:%d:%d" % (line, err.col))
    assert text[2] == "%d | %s" % (line, err.source_line)
    assert text[3].endswith(" " * (err.col - 1) + "^" * len("pl.load(a, [k], [16])"))
    assert "load of tensor 'a' out of bounds" in err.message


def test_an_ambiguous_access_is_located_at_the_submission(prog):
    # two loads of 'a' with a box of 8: the message names both lines, so neither is chosen
    err = _fail(prog, 0, 60, 1)
    assert "t.py:%d or t.py:%d: load of tensor 'a'" % (_line(SRC, "u = pl.load"), _line(SRC, "w = pl.load")) in err.message
    assert (err.file, err.line, err.col) == ("t.py", _line(SRC, CALL), _col(SRC, CALL, "self.shift"))


def test_an_orchestration_check_is_located_at_its_statement(prog):
    err = _fail(prog, 0, 0, 300)   # 300 does not fit the kernel's pl.INT8 parameter
    assert "argument 'row' of 'shift' = 300 does not fit pl.INT8" in err.message
    assert (err.file, err.line) == ("t.py", _line(SRC, CALL))
    assert err.source_line.strip() == CALL


def test_a_program_from_a_file_names_its_path(tmp_path):
    path = tmp_path / "prog_on_disk.py"
    path.write_text(SRC)
    prog = pypto.compile(pl.parse_program(SRC, str(path)))
    err = _fail(prog, 60, 0, 1)
    prog.close()
    assert err.file == str(path) and err.line == _line(SRC, "t = pl.load(a, [k], [16])")
    assert "prog_on_disk.py:%d: load of tensor 'a'" % err.line in err.message   # the message keeps the basename


def test_a_file_name_with_spaces_is_found_whole():
    prog = pypto.compile(pl.parse_program(SRC, "my prog (v2).py"))
    err = _fail(prog, 60, 0, 1)
    prog.close()
    assert (err.file, err.line) == ("my prog (v2).py", _line(SRC, "t = pl.load(a, [k], [16])")), err


def test_messages_without_a_dsl_site_are_not_located(prog):
    assert failure_location("deadlock: 2 tasks never became ready", prog.program) == {}
    # a site in another file than the program's: the name and line only, no source line
    assert failure_location("task #1 submitted at other.py:7 block 0/1 failed", prog.program) == \
        {"file": "other.py", "line": 7}
    # the innermost single site wins over the submission
    loc = failure_location("task #1 submitted at t.py:%d block 0/1 failed: t.py:%d: load of tensor 'a'"
                           % (_line(SRC, CALL), _line(SRC, "c = pl.store(t, [0], c)")), prog.program)
    assert loc["line"] == _line(SRC, "c = pl.store(t, [0], c)") and loc["col"] == _col(SRC, "c = pl.store(t", "pl.store")
    err = RunError("the run failed: deadlock", **failure_location("deadlock", prog.program))
    assert str(err) == "error: the run failed: deadlock" and err.line == 0


def test_a_host_program_failure_is_located():
    src = SRC.replace("class P:", "class P:" + textwrap.indent(textwrap.dedent('''
        @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
        def host_main(self, a: pl.Tensor[[64], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]],
                      k: pl.Scalar[pl.INDEX], j: pl.Scalar[pl.INDEX], r: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16], pl.FP32]:
            c, t = pl.submit(self.main, a, c, k, j, r)
            return c
    '''), "    "))
    hp = host.compile_host(pl.parse_program(src, "t.py"), "host_main", chips=1)
    with pytest.raises(RunError) as err:
        hp(np.zeros(64, np.float32), np.zeros(16, np.float32), 60, 0, 1)
    assert (err.value.file, err.value.line) == ("t.py", _line(src, "t = pl.load(a, [k], [16])")), err.value
