# Rule 5 of spec anchor_features.md §9: a kernel (or an outlined pl.at body) that returns a value
# computed with tensor ops gets a trailing pl.Out parameter `ret<k>_out` and an exit store; each
# caller creates that tensor (tensor.create) just before the call and passes it. So a tensor
# computed inside a pl.at and used after it is legal, and kernels may loop-carry such values.
import pypto.language as pl


@pl.program
class TensorReturns:
    @pl.function(type=pl.FunctionType.InCore)
    def scaled_sum(self, a: pl.Tensor[[16, 16], pl.FP32],
                   b: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        acc = pl.add(a, b)
        for i in pl.range(3):              # a loop-carried tensor-op value: a tile carry
            acc = pl.mul(acc, 2.0)
        return acc

    @pl.function(type=pl.FunctionType.InCore)
    def pick(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        if n > 1:
            r = pl.exp(a)
        else:
            r = a                          # the other branch's tensor is loaded whole
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
             n: pl.Scalar[pl.INDEX],
             d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        s = self.scaled_sum(a, b)                    # ret0_out created before the call
        p, tid = pl.submit(self.pick, s, n)          # and before a submit
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="halve"):
            h = pl.mul(p, 0.5)                       # computed here, used after the scope
        with pl.at(level=pl.Level.CORE_GROUP):
            d = pl.assemble(d, pl.sub(h, a), [0, 0])
        return d
