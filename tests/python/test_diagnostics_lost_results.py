"""Results that would reach no one are refused, located at the return: a task's results are the
tensors it writes into its pl.Out / pl.InOut parameters, and so are an orchestration function's.

  a kernel returning a number           was an InternalCompilerError in the orchestration generator
  an entry returning a tensor it makes  ran, and the call returned run statistics instead
  an entry returning a number           ran, and the call dropped the number
(A non-entry orchestration function returning a number is left alone: the IR uses that to keep a
scalar live for the code generator, and its caller receives it.)
"""
import pytest

import pypto
import pypto.language as pl
from pypto.errors import InternalCompilerError, PyptoError

HEAD = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4], pl.FP32], y: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0], [4]), 1.0), [0], y)
        return y

'''

KERNEL_NUMBER = HEAD + '''    @pl.function(type=pl.FunctionType.InCore)
    def first(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Scalar[pl.FP32]:
        t = pl.load(x, [0], [4])
        v = t[0]
        return v

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4], pl.FP32], y: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        v = self.first(x)
        y = pl.tensor.write(y, [0], v)
        return y
'''

KERNEL_EXPR = HEAD + '''    @pl.function(type=pl.FunctionType.InCore)
    def plus(self, x: pl.Tensor[[4], pl.FP32], s: pl.Scalar[pl.FP32]) -> pl.Scalar[pl.FP32]:
        return s + 1.0

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4], pl.FP32], y: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        v = self.plus(x, 2.0)
        y = pl.tensor.write(y, [0], v)
        return y
'''

ENTRY_TENSOR = HEAD + '''    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        t = pl.create_tensor([4], dtype=pl.FP32)
        t = self.k(x, t)
        return t
'''

ENTRY_NUMBER = HEAD + '''    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4], pl.FP32], y: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Scalar[pl.FP32]:
        y = self.k(x, y)
        s = y[0] * 2.0
        return s
'''


def _refused(src, at):
    """The PyptoError of compiling `src`, located at the first line holding `at`."""
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(src, "r.py"))
    e = ei.value
    assert not isinstance(e, InternalCompilerError), str(e)
    line = next(i for i, text in enumerate(src.splitlines(), 1) if at in text)
    assert (e.file, e.line) == ("r.py", line), str(e)
    assert e.help, str(e)
    return e


@pytest.mark.parametrize("src, at, name", [(KERNEL_NUMBER, "return v", "first"), (KERNEL_EXPR, "s + 1.0", "plus")])
def test_a_kernel_returning_a_number_is_refused_at_its_return(src, at, name):
    e = _refused(src, at)
    assert e.message.startswith(f"'{name}' returns a number (result 0) that is none of its pl.Out / pl.InOut")
    assert "pl.Out tensor parameter" in e.help


def test_an_entry_returning_a_tensor_it_allocates_is_refused():
    e = _refused(ENTRY_TENSOR, "return t")
    assert e.message.startswith("orchestration function 'main' returns a tensor it allocates (result 0)")
    assert "pl.Out[pl.Tensor[...]]" in e.help


def test_an_entry_returning_a_number_is_refused_at_its_return():
    e = _refused(ENTRY_NUMBER, "return s")
    assert e.message.startswith("the entry orchestration 'main' returns a number, which no caller receives")
    assert "pl.tensor.write(out, [0], value)" in e.help


REBOUND_OUT = HEAD + '''    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4], pl.FP32], y: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.add(x, x)
        return y
'''


def test_a_rebound_out_parameter_names_the_rebinding_and_pl_assemble():
    """The help asked for a pl.Out parameter, which `y` was: the assignment rebinds the name to a
    new tensor. It now says so and gives the fix that works (session 54 tester G #4)."""
    with pytest.raises(PyptoError, match="returns a tensor it allocates") as ei:
        pypto.compile(pl.parse_program(REBOUND_OUT, "rebound.py"))
    assert "'y' is a parameter, but `y = ...` binds the name to a new tensor" in ei.value.help
    assert "y = pl.assemble(y, value, [0, ...])" in ei.value.help
    fixed = REBOUND_OUT.replace("y = pl.add(x, x)", "y = pl.assemble(y, pl.add(x, x), [0])")
    pypto.compile(pl.parse_program(fixed, "rebound_fixed.py"))
