# Mixed-dtype tile add/sub/mul/div (spec reference_ops.md §1.3): the result dtype is promoted
# (a float beats an integer, the wider wins, at equal width signed beats unsigned, otherwise the
# left operand's dtype), so an INT32 tile plus an FP16 tile is FP16 with no explicit pl.cast.
import pypto.language as pl


@pl.program
class TileMixedDtype:
    @pl.function(type=pl.FunctionType.InCore)
    def mixed(self, a: pl.Tensor[[16, 16], pl.INT32], b: pl.Tensor[[16, 16], pl.FP16],
              w: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP16]],
              d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP16],
                                                                pl.Tensor[[16, 16], pl.FP32]]:
        ta = pl.load(a, [0, 0], [16, 16])
        tb = pl.load(b, [0, 0], [16, 16])
        tw = pl.load(w, [0, 0], [16, 16])
        s = pl.add(ta, tb)                   # INT32 + FP16 -> FP16
        c = pl.store(s, [0, 0], c)
        q = pl.div(pl.mul(tb, tw), ta)       # FP16 * FP32 -> FP32; FP32 / INT32 -> FP32
        d = pl.store(pl.sub(q, tb), [0, 0], d)
        return c, d

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.INT32], b: pl.Tensor[[16, 16], pl.FP16],
             w: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP16]],
             d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP16],
                                                               pl.Tensor[[16, 16], pl.FP32]]:
        c, d = self.mixed(a, b, w, c, d)
        return c, d
