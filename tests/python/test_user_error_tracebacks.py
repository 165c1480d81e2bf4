"""A DSL mistake shows the user's own call and the diagnostic, not the parser's frames: at
@pl.program, pl.parse_program and pypto.compile a located PyptoError is re-raised without
pypto's internal frames and without the exception it was raised while handling (`python
prog.py` printed ~20 frames of pypto/frontend first, for `pl.lod` two tracebacks joined by
"During handling of the above exception"). Bugs (an error caused by another exception, an
InternalCompilerError) keep their whole traceback."""
import subprocess
import sys
import traceback

import pytest

import pypto
import pypto.language as pl
from pypto.errors import InternalCompilerError, PyptoError, user_errors_at_the_call

KERNEL = '''
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64], pl.FP32], y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        t = LOAD
        y = pl.store(t, [0], y)
        return y
'''
PROGRAM = "import pypto\nimport pypto.language as pl\n\n\n@pl.program\nclass P:" + KERNEL

TRANSPOSE_3D = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 8], pl.FP32],
             y: pl.Out[pl.Tensor[[2, 8, 4], pl.FP32]]) -> pl.Tensor[[2, 8, 4], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.reshape(pl.add(x, 1.0), [2, 4, 8])
            y = pl.assemble(y, pl.tensor.transpose(t, 1, 2), [0, 0, 0])
        return y
'''


@pytest.mark.parametrize("load, message", [
    ("pl.load(xx, [0], [64])", "unknown name 'xx'"),
    ("pl.lod(x, [0], [64])", "unknown DSL function 'pl.lod'"),     # was chained to a PyEvalFailure
])
def test_python_prog_py_shows_the_diagnostic_without_parser_frames(tmp_path, load, message):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM.replace("LOAD", load))
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert message in r.stderr and f"{path}:9:" in r.stderr and "^" in r.stderr, r.stderr
    assert "pypto/frontend" not in r.stderr and "During handling" not in r.stderr, r.stderr
    assert f'File "{path}", line 5' in r.stderr, r.stderr       # the user's @pl.program line


def _frames(error) -> list:
    return [f.filename for f in traceback.extract_tb(error.__traceback__)]


def test_parse_program_and_compile_drop_internal_frames():
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(PROGRAM.replace("LOAD", "pl.lod(x, [0], [64])"), "t.py")
    assert ei.value.line == 9 and ei.value.__suppress_context__
    assert not any("pypto/frontend" in f for f in _frames(ei.value)), _frames(ei.value)
    prog = pl.parse_program(TRANSPOSE_3D, "t.py")
    with pytest.raises(PyptoError) as ei:
        pypto.compile(prog)
    assert "needs a 2-D value" in ei.value.message and ei.value.line == 11
    assert not any("pypto/compiler" in f for f in _frames(ei.value)), _frames(ei.value)


def test_bugs_keep_their_whole_traceback():
    def internal_parser_error():
        try:
            {}["missing"]
        except KeyError as e:
            raise PyptoError("internal parser error: KeyError", file="t.py", line=3, col=1) from e

    def broken_invariant():
        raise InternalCompilerError("internal error: a broken invariant")

    for bug, kind in ((internal_parser_error, PyptoError), (broken_invariant, InternalCompilerError)):
        with pytest.raises(kind) as ei:
            user_errors_at_the_call(bug)()
        assert any(f.name == bug.__name__ for f in traceback.extract_tb(ei.value.__traceback__))
    assert isinstance(ei.value, InternalCompilerError)


def test_the_decorated_program_still_sees_the_callers_locals():
    def make():
        n = 32
        src_n = n

        @pl.program
        class Local:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[src_n], pl.FP32], y: pl.Out[pl.Tensor[[src_n], pl.FP32]]) -> \
                    pl.Tensor[[src_n], pl.FP32]:
                y = pl.store(pl.load(x, [0], [src_n]), [0], y)
                return y
        return Local
    assert "pl.Tensor[[32], pl.FP32]" in pypto.ir.python_print(make())


def test_program_with_parentheses_drops_internal_frames_too():
    with pytest.raises(PyptoError) as ei:
        @pl.program()
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64], pl.FP32], y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
                y = pl.store(pl.load(xx, [0], [64]), [0], y)  # noqa: F821
                return y
    assert ei.value.message == "unknown name 'xx'"
    assert not any("pypto/frontend" in f for f in _frames(ei.value)), _frames(ei.value)


RUN_FAILS = '''
import numpy as np
import pypto
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4], pl.INT32], y: pl.Out[pl.Tensor[[4], pl.INT32]]) -> pl.Tensor[[4], pl.INT32]:
        assert x[0] > 0, "x[0] must be positive"
        return y


prog = pypto.compile(P)
prog(np.zeros(4, np.int32), np.zeros(4, np.int32))
'''


def test_a_failing_run_shows_the_call_and_the_diagnostic_without_runtime_frames(tmp_path):
    # A RunError located at the user's line left CompiledProgram.__call__ with the loader's frames.
    path = tmp_path / "prog.py"
    path.write_text(RUN_FAILS)
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    assert "x[0] must be positive" in r.stderr and f"{path}:11" in r.stderr, r.stderr
    assert f'File "{path}", line 16' in r.stderr, r.stderr            # the user's call
    assert "pypto/runtime" not in r.stderr and "pypto/compiler" not in r.stderr, r.stderr
