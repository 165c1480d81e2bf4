# pl.reshape (spec anchor_features.md §3): on a Tensor in an orchestration it is
# pl.tensor.reshape, a zero-copy row-major view `Tensor r = src.reshape(r_shapes, 2);` that
# automatic tracking sees overlapping its source (add1 reads y after scale2 wrote it through
# the view yr); on a Tile in a kernel it is pl.tile.reshape.
import pypto.language as pl


@pl.program
class Reshape:
    @pl.function(type=pl.FunctionType.InCore)
    def scale2(self, a: pl.Tensor[[8, 32], pl.FP32],
               c: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        t = pl.load(a, [0, 0], [8, 32])
        sq = pl.reshape(t, [16, 16])
        c = pl.store(pl.reshape(pl.mul(sq, 2.0), [8, 32]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def add1(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
             z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        xr = pl.reshape(x, [8, 32])
        yr = pl.tensor.reshape(y, [8, 32])
        yr = self.scale2(xr, yr)
        z = self.add1(y, z)
        return z
