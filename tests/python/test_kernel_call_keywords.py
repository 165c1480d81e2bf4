"""Calls of program functions take arguments by parameter name, as Python binds them:
`self.k(ca, c=cc, b=cb)` and `pl.submit(self.k, ca, b=cb, c=cc, deps=[...])`. Before, every keyword
argument of a plain call was "keyword argument 'c' is not supported", and of pl.submit
"pl.submit has no keyword 'c'". The printed IR passes them positionally."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError

SRC = '''
import pypto.language as pl
N = 64
C = 16


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[C], pl.FP32], b: pl.Tensor[[C], pl.FP32],
          c: pl.Out[pl.Tensor[[C], pl.FP32]]) -> pl.Tensor[[C], pl.FP32]:
        c = pl.store(pl.sub(pl.load(a, [0], [C]), pl.load(b, [0], [C])), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N], pl.FP32], b: pl.Tensor[[N], pl.FP32],
             c: pl.Out[pl.Tensor[[N], pl.FP32]]) -> pl.Tensor[[N], pl.FP32]:
        for i in pl.range(N // C):
            ca = pl.tensor.slice(a, [C], [i * C])
            cb = pl.tensor.slice(b, [C], [i * C])
            cc = pl.tensor.slice(c, [C], [i * C])
            CALL
        return c
'''
CALL_LINE = 22


def _program(call: str):
    return pl.parse_program(SRC.replace("CALL", call), "calls.py")


@pytest.mark.parametrize("call", [
    "cc = self.k(ca, c=cc, b=cb)",
    "cc = self.k(c=cc, a=ca, b=cb)",
    "cc, tid = pl.submit(self.k, ca, b=cb, c=cc)",
    "cc, tid = pl.submit(self.k, b=cb, c=cc, deps=[], a=ca)",
])
def test_arguments_by_name_bind_to_their_parameters(call):
    # a - b is not symmetric: an argument bound to the wrong parameter changes the result
    a = np.arange(64, dtype=np.float32) * 3
    b = np.arange(64, dtype=np.float32) + 1
    c = np.zeros(64, np.float32)
    pypto.compile(_program(call))(a, b, c)
    np.testing.assert_array_equal(c, a - b)


def test_printed_call_is_positional_and_round_trips():
    prog = _program("cc = self.k(c=cc, a=ca, b=cb)")
    text = ir.python_print(prog)
    assert "self.k(ca, cb, cc)" in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]


def test_submit_leaves_out_a_trailing_out_when_the_others_are_named():
    prog = _program("r, tid = pl.submit(self.k, b=cb, a=ca)\n            cc = pl.assemble(cc, r, [0])")
    a = np.arange(64, dtype=np.float32) * 3
    b = np.arange(64, dtype=np.float32) + 1
    c = np.zeros(64, np.float32)
    pypto.compile(prog)(a, b, c)
    np.testing.assert_array_equal(c, a - b)


@pytest.mark.parametrize("call,message,help", [
    ("cc = self.k(ca, c=cc)", "missing argument 'b' of 'k'", "by position or by name"),
    ("cc = self.k(ca, cb, cc, a=ca)", "'k' got parameter 'a' twice", "once"),
    ("cc = self.k(ca, cb, cd=cc)", "'k' has no parameter 'cd'", "did you mean 'c'"),
    ("cc = self.k(ca, cb, **{'c': cc})", "**kwargs are not supported", None),
    ("cc, tid = pl.submit(self.k, ca, cb, e=cc)", "pl.submit has no keyword 'e'", "a, b, c"),
    ("cc, tid = pl.submit(self.k, ca, c=cc)", "missing argument 'b' of 'k'", None),
    ("cc = self.k(ca, cb, cc, deps=[])", "deps= is not accepted on a plain call to 'k'", "pl.submit"),
])
def test_misuse_is_located(call, message, help):
    with pytest.raises(PyptoError) as ei:
        _program(call)
    assert message in ei.value.message, ei.value.message
    assert (ei.value.file, ei.value.line) == ("calls.py", CALL_LINE)
    if help:
        assert help.lower() in (ei.value.help or "").lower(), ei.value.help
