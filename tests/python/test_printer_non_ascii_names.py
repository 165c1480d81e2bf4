"""The IR printer keeps non-ASCII identifiers (Python allows them): `class Prög` and a tile named
`données` printed as `Pr_g` / `donn_es`, so the printed text parsed back to a program with other
names, not structurally equal to the original; continuation lines of a signature under a
non-ASCII function name were shifted by its extra bytes."""
import pypto.language as pl
from pypto import ir

SRC = '''import pypto.language as pl


@pl.program
class Prög:
    @pl.function(type=pl.FunctionType.InCore)
    def kérn(self, x: pl.Tensor[[4], pl.FP32], y: pl.Out[pl.Tensor[[4], pl.FP32]], z: pl.Tensor[[4], pl.FP32],
             w: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        données = pl.load(x, [0], [4])
        y = pl.store(données, [0], y)
        return y
'''


def test_non_ascii_names_print_as_written_and_round_trip():
    prog = pl.parse_program(SRC, "u.py")
    text = ir.python_print(prog)
    assert "class Prög:" in text and "données" in text and "def kérn(" in text, text
    again = pl.parse_program(text, "u2.py")
    assert ir.structural_equal(prog, again)


def test_signature_continuation_lines_align_with_the_parenthesis_in_characters():
    lines = ir.python_print(pl.parse_program(SRC, "u.py")).splitlines()
    head = next(i for i, line in enumerate(lines) if "def kérn(" in line)
    after_parenthesis = lines[head].index("(") + 1          # in characters
    continued = lines[head + 1]
    assert len(continued) - len(continued.lstrip()) == after_parenthesis, lines[head:head + 2]
