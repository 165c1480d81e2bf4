"""BOOL tiles through the ops whose C++ helpers did not build for `bool` (session 54 tester E #3):
std::vector<bool> has no data() (transpose, sel, sels, addc, subc, prelu, part_add, an operand
aliasing its destination), std::make_unsigned<bool> does not exist (div, divs, row / col
expand_div), and pymod's sign test is -Wbool-compare (rem, rems). Each is built under -Werror and
computes what the integers do with 0 and 1 (a nonzero result is True)."""
import numpy as np

import pypto
import pypto.language as pl

OPS = [  # (expression of tb, expected: "x" for the input itself, "0" for all False)
    ("pl.tile.transpose(pl.tile.transpose(tb, 0, 1), 0, 1)", "x"),
    ("pl.sel(pl.cmp(tb, tb, cmp_type=0), tb, tb)", "x"),
    ("pl.sels(tb, tb, 1)", "x"),
    ("pl.addc(tb, tb, tb)", "x"),
    ("pl.subc(tb, tb, tb)", "x"),
    ("pl.prelu(tb, tb)", "x"),
    ("pl.part_add(tb, tb)", "x"),
    ("pl.div(tb, tb)", "x"),
    ("pl.divs(tb, 1)", "x"),
    ("pl.row_expand_div(tb, pl.row_max(tb))", "x"),
    ("pl.col_expand_div(tb, pl.col_max(tb))", "x"),
    ("pl.rem(tb, tb)", "0"),
    ("pl.rems(tb, 1)", "0"),
]

N = len(OPS)
BODY = "\n".join("        y = pl.store(%s, [%d, 0], y)" % (e, 2 * i) for i, (e, _) in enumerate(OPS))
SRC = f'''
import pypto.language as pl

B = pl.Tensor[[2, 8], pl.BOOL]
Y = pl.Tensor[[{2 * N}, 8], pl.BOOL]


@pl.program
class BoolTiles:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: B, y: pl.Out[Y]) -> Y:
        tb = pl.load(x, [0, 0], [2, 8])
{BODY}
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: B, y: pl.Out[Y]) -> Y:
        y = self.k(x, y)
        return y
'''


def test_bool_tiles_build_and_compute_through_the_integer_helpers():
    prog = pypto.compile(pl.parse_program(SRC, "bool_tiles.py"))
    x = np.tile(np.array([True, False]), (2, 4))
    y = np.zeros((2 * N, 8), np.bool_)
    prog(x, y)
    for i, (expr, want) in enumerate(OPS):
        expected = x if want == "x" else np.zeros_like(x)
        np.testing.assert_array_equal(y[2 * i:2 * i + 2], expected, err_msg=expr)
