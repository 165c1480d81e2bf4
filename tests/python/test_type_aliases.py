"""Type aliases at module level (`Row = pl.Tensor[[M, 8], pl.FP32]`, then `x: Row`), as in Python's
typing: they read as the annotation they stand for, in parameters, `pl.Out[...]`, returns (also
`tuple[Row, Row]`), and annotated locals. Before, each was "malformed type annotation 'Row'"."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError

ALIASES = '''
import pypto.language as pl
M = pl.dynamic("M")
Row = pl.Tensor[[M, 8], pl.FP32]
OutRow = pl.Out[Row]
Pair = tuple[Row, Row]
Vec = pl.Tile[[4, 8], pl.FP32, pl.MemorySpace.Vec, pl.TileView(valid_shape=[4, 8])]
Cols = pl.Tensor[(8, 4), pl.FP32, pl.Layout.DN]
Idx = pl.Scalar[pl.INDEX]
'''

BODY = '''

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: {Row}, n: {Idx}, y: {OutRow}, z: {OutRow}) -> {Pair}:
        t: {Vec} = pl.load(x, [0, 0], [4, 8])
        y = pl.store(pl.adds(t, n), [0, 0], y)
        z = pl.store(pl.mul(t, t), [0, 0], z)
        return y, z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {Row}, c: {Cols}, y: {OutRow}, z: {OutRow}) -> {Pair}:
        n: {Idx} = 3
        y, z = self.k(x, n, y, z)
        return y, z
'''

SPELLED = dict(Row="pl.Tensor[[M, 8], pl.FP32]", OutRow="pl.Out[pl.Tensor[[M, 8], pl.FP32]]",
               Pair="tuple[pl.Tensor[[M, 8], pl.FP32], pl.Tensor[[M, 8], pl.FP32]]",
               Vec="pl.Tile[[4, 8], pl.FP32, pl.MemorySpace.Vec, pl.TileView(valid_shape=[4, 8])]",
               Cols="pl.Tensor[[8, 4], pl.FP32, pl.Layout.DN]", Idx="pl.Scalar[pl.INDEX]")


def test_an_aliased_program_is_the_program_written_out():
    aliased = pl.parse_program(ALIASES + BODY.format(**{k: k for k in SPELLED}))
    spelled = pl.parse_program(ALIASES + BODY.format(**SPELLED))
    assert ir.python_print(aliased) == ir.python_print(spelled)
    assert "pl.Layout.DN" in ir.python_print(aliased)


def test_an_aliased_program_runs():
    prog = pypto.compile(pl.parse_program(ALIASES + BODY.format(**{k: k for k in SPELLED})))
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    c = np.zeros((8, 4), np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    prog(x, c, y, z)
    np.testing.assert_array_equal(y, x + 3)
    np.testing.assert_array_equal(z, x * x)


def _error(alias: str, use: str) -> PyptoError:
    text = ALIASES + alias + "\n" + BODY.format(**{**SPELLED, **use})
    with pytest.raises(PyptoError) as e:
        pl.parse_program(text)
    return e.value


def test_a_malformed_alias_is_an_error_at_its_use_quoting_the_alias_as_spelt():
    err = _error("Bad = pl.Tile[[4, 8]]", {"Vec": "Bad"})
    assert "malformed type annotation 'pl.Tile[[4, 8]]'" in str(err)
    assert err.source_line.strip().startswith("t: Bad =")


def test_an_alias_with_a_bad_dtype_is_located_at_its_use():
    err = _error("Bad = pl.Tensor[[M, 8], 3]", {"Row": "Bad"})
    assert "expected a dtype such as pl.FP32, got '3'" in str(err)
    assert "def k(self, x: Bad" in err.source_line


def test_an_alias_of_a_direction_is_refused_on_a_local():
    err = _error("", {"Vec": "OutRow"})
    assert "pl.Out[...] is only allowed on function parameters" in str(err)
    assert err.source_line.strip().startswith("t: OutRow =")


def test_a_name_that_is_not_a_type_is_still_malformed():
    err = _error("N = 4", {"Idx": "N"})
    assert "malformed type annotation 'N'" in str(err)


def test_a_local_value_is_not_read_as_an_alias():
    text = ALIASES + BODY.format(**SPELLED).replace("t: pl.Tile[[4, 8], pl.FP32, pl.MemorySpace.Vec, "
                                                    "pl.TileView(valid_shape=[4, 8])] =", "t: n =")
    with pytest.raises(PyptoError, match="malformed type annotation 'n'"):
        pl.parse_program(text)


@pytest.mark.parametrize("alias,message", [
    ("pl.Tensor[[-1, 8], pl.FP32]", "shape entry -1 is negative"),
    ("pl.Tensor[[True, 8], pl.FP32]", "shape entries must be integers or pl.dynamic symbols, got 'True'"),
    ("pl.Tensor[[2**70, 8], pl.FP32]", "is too large: an extent must be below 2^63"),
    ("pl.Tensor[[1.5, 8], pl.FP32]", "got '1.5'"),
    ("pl.Tensor[[4, 8], pl.FP32, pl.MemorySpace.Vec]", "expected a layout (pl.Layout.X), got 'pl.MemorySpace.Vec'"),
    ("pl.Tensor['x', pl.FP32]", "the shape must be a list such as [16, 16]"),
])
def test_a_bad_alias_value_is_a_located_error_at_its_use(alias, message):
    err = _error("Bad = " + alias, {"Row": "Bad"})
    assert message in str(err)
    assert "def k(self, x: Bad" in err.source_line
