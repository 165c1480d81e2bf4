# Loop-carried edges: a pl.range loop where iteration i reads tile i of `x` (written by the
# previous iteration's copy: (i + 1) * 16 vs i * 16, proved at distance 1 only) and accumulates
# into `out` (a chain). The TaskIds of the previous iteration ride on loop carries.
import pypto.language as pl


@pl.program
class LoopCarried:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.InOut[pl.Tensor[[80, 16], pl.FP32]],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        for i in pl.range(4):
            src = pl.tensor.slice(x, [16, 16], [i * 16, 0])
            dst = pl.tensor.slice(x, [16, 16], [i * 16 + 16, 0])
            dst = self.copy(src, dst)
            out = self.acc(src, out)
        return out
