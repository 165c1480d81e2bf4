# Fan-in from a pl.range of independent instances: each iteration writes its own tile (no
# iteration orders the next), and a task after the loop reads them. The last id is not enough,
# so PrepareCrossScopeTaskIdHoists keeps every iteration's id in an array of 3 slots carried
# through the loop (slot i = iteration i's id), and the consumer names the whole array.
import pypto.language as pl


@pl.program
class RangeFanIn:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def total(self, a: pl.Tensor[[48, 16], pl.FP32],
              c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        s = pl.add(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(a, [16, 0], [16, 16])), pl.load(a, [32, 0], [16, 16]))
        c = pl.store(pl.add(s, pl.load(c, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[48, 16], pl.FP32],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.create_tensor([48, 16], dtype=pl.FP32)
        for i in pl.range(3):
            xi = pl.tensor.slice(x, [16, 16], [i * 16, 0])
            ti = pl.tensor.slice(t, [16, 16], [i * 16, 0])
            ti = self.copy(xi, ti)
        out = self.total(t, out)
        return out
