# For loops with carries (spec "ForStmt"): an in-place tensor carry needs no variable
# (carry pl.alias), a carry that changes tensor is a `Tensor` variable re-assigned by
# the yield, a scalar carry is a C++ scalar; loop variables feed scalar args and expressions.
import pypto.language as pl


@pl.program
class ForLoops:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                   c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def step(self, x: pl.Tensor[[16, 16], pl.FP32], off: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], acc: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
             x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        for i in pl.range(0, 4):
            acc = self.kernel_add(a, acc, acc)        # in place: no carry variable
        buf = pl.create_tensor([16, 16], dtype=pl.FP32)
        cur = x
        off = 0
        for i in pl.range(0, 8, 2):
            buf = self.step(cur, off + i, buf)
            cur = buf                                 # the carry now names another tensor
            off = off + 16                            # scalar carry
        out = self.step(cur, off, out)
        return out
