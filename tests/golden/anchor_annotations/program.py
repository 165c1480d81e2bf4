# Annotation strictness (anchor_features.md §14): INDEX <-> INT64 binds a cast; an Acc tile annotated
# without a memory space stays Acc; an explicit memory space retargets a pl.load; pl.TileView /
# pl.MemRef items are checked and are a no-op on the CPU.
import pypto.language as pl

N = pl.dynamic("N")


@pl.program
class AnchorAnnotations:
    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
           c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ta: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat, pl.TileView(valid_shape=[16, 16]), pl.MemRef(0, 1024)] = pl.load(a, [0, 0], [16, 16])
        tl = pl.move(ta, target_memory=pl.MemorySpace.Left)
        tr = pl.move(pl.load(b, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Right)
        acc: pl.Tile[[16, 16], pl.FP32] = pl.matmul(tl, tr)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def row(self, x: pl.Tensor[[N, 16], pl.FP32], r: pl.Scalar[pl.INT64],
            y: pl.InOut[pl.Tensor[[N, 16], pl.FP32]]) -> pl.Tensor[[N, 16], pl.FP32]:
        i: pl.Scalar[pl.INDEX] = r
        y = pl.store(pl.relu(pl.load(x, [i, 0], [1, 16])), [i, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], x: pl.Tensor[[N, 16], pl.FP32],
             y: pl.InOut[pl.Tensor[[N, 16], pl.FP32]]) -> pl.Tensor[[N, 16], pl.FP32]:
        c = self.mm(a, b, c)
        rows: pl.Scalar[pl.INT64] = pl.tensor.dim(x, 0)
        for r in pl.range(rows):
            y = self.row(x, r, y)
        return y
