"""`a[k] = None` and `a[k] = b[j]` (a slot copied from another array) in an orchestration: both
were refused with "'system.task_invalid' / 'array.get_element' cannot be used inside an
expression", while `w[k] = v[j] + 0` compiled (session 54 tester G #3). The value is now named
first, as an element read used as an operand is."""
import numpy as np

import pypto
import pypto.language as pl

SRC = '''
import pypto.language as pl


@pl.program
class Copies:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, s: pl.Scalar[pl.INT32], x: pl.Tensor[[16], pl.FP32],
          y: pl.InOut[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        y = pl.store(pl.adds(pl.load(y, [0], [16]), pl.cast(s, pl.FP32)), [0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16], pl.FP32], y: pl.InOut[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        with pl.manual_scope():
            a = pl.array.create(2, pl.TASK_ID)
            b = pl.array.create(2, pl.TASK_ID)
            v = pl.array.create(2, pl.INT32)
            w = pl.array.create(2, pl.INT32)
            v[1] = 5
            y, t = pl.submit(self.k, 1, x, y)
            b[1] = t
            a[0] = b[1]
            a[1] = None
            w[0] = v[1]
            y, t2 = pl.submit(self.k, w[0], x, y, deps=[a])
        return y
'''


def test_slot_copies_and_none_seeds_compile_and_carry_their_values():
    prog = pypto.compile(pl.parse_program(SRC, "copies.py"))
    y = np.zeros(16, np.float32)
    stats = prog(np.zeros(16, np.float32), y, race_check=True)   # the edge comes only through a[0] = b[1]
    assert stats.races == 0
    np.testing.assert_array_equal(y, np.full(16, 6.0, np.float32))   # 1, then w[0] = v[1] = 5
