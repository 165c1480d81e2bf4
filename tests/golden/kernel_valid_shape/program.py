# Valid shapes in kernels (spec anchor_features §10): the typical edge tile. x has M rows, M not a
# multiple of 32; each task handles rows [r, r + 32) with valid = [min(M - r, 32), 16], so the last
# task's tile is partly outside x. The load reads only the valid box (the rest of the tile is 0),
# the element-wise ops and the row reduction run over the valid rows / box, the stores write only
# the valid box: no task touches a row past M. `proj` multiplies over the first 12 columns only
# (valid [v, 12] with K = 16): matmul reads only the valid elements.
import pypto.language as pl

M = pl.dynamic("M")


@pl.program
class KernelValidShape:
    @pl.function(type=pl.FunctionType.InCore)
    def edge(self, x: pl.Tensor[[M, 16], pl.FP32], y: pl.Out[pl.Tensor[[M, 16], pl.FP32]],
             s: pl.Out[pl.Tensor[[M, 1], pl.FP32]], r: pl.Scalar[pl.INDEX]) -> tuple[pl.Tensor[[M, 16], pl.FP32],
                                                                                     pl.Tensor[[M, 1], pl.FP32]]:
        v = min(M - r, 32)
        t = pl.load(x, [r, 0], [32, 16], [v, 16])
        e = pl.mul(pl.add(t, 1.0), 2.0)
        y = pl.store(e, [r, 0], y)
        m = pl.row_max(pl.neg(t))          # every valid entry is < 0: a read of the zero padding would win
        s = pl.store(m, [r, 0], s)
        return y, s

    @pl.function(type=pl.FunctionType.InCore)
    def proj(self, x: pl.Tensor[[M, 16], pl.FP32], w: pl.Tensor[[16, 8], pl.FP32],
             z: pl.Out[pl.Tensor[[M, 8], pl.FP32]], r: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 8], pl.FP32]:
        v = min(M - r, 32)
        a = pl.load(x, [r, 0], [32, 16], [v, 12], target_memory=pl.MemorySpace.Mat)
        b = pl.load(w, [0, 0], [16, 8], target_memory=pl.MemorySpace.Mat)
        c = pl.matmul(pl.move(a, target_memory=pl.MemorySpace.Left), pl.move(b, target_memory=pl.MemorySpace.Right))
        z = pl.store(c, [r, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, 16], pl.FP32], w: pl.Tensor[[16, 8], pl.FP32],
             y: pl.Out[pl.Tensor[[M, 16], pl.FP32]], s: pl.Out[pl.Tensor[[M, 1], pl.FP32]],
             z: pl.Out[pl.Tensor[[M, 8], pl.FP32]]) -> tuple[pl.Tensor[[M, 16], pl.FP32], pl.Tensor[[M, 1], pl.FP32],
                                                              pl.Tensor[[M, 8], pl.FP32]]:
        for r in pl.range(0, M, 32):
            y, s = self.edge(x, y, s, r)
            z = self.proj(x, w, z, r)
        return y, s, z
