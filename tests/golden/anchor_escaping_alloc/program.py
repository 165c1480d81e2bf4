# Tensors allocated inside an AUTO-scoped body and used after it (spec anchor_features.md §17).
# The frontend makes `t` and `last` (first bound in the loop body, read after the loop) implicit
# loop carries seeded before the loop (a tensor.create of the same type / 0); `u` is an if-result.
# MaterializeRuntimeScopes places each allocation that escapes its body before the body's
# PTO2_SCOPE, with the pure scalar statement its shape needs (`rows`), so the buffer lives in the
# enclosing scope and is not reclaimed while a later task still reads it.
import pypto.language as pl


@pl.program
class AnchorEscapingAlloc:
    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
            c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def axpy(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.mul(pl.load(b, [0, 0], [16, 16]), s)), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        for i in pl.range(n):
            t = pl.create_tensor([16, 16], dtype=pl.FP32)
            t = self.add(x, x, t)                        # t = 2x, allocated once per iteration
            last = i                                     # a scalar: seeded with 0
        v = pl.create_tensor([16, 16], dtype=pl.FP32, init_value=0.0)
        for j in pl.range(2):
            rows = pl.tensor.dim(x, 0) * 2               # pure: lifted with the allocation
            w = pl.create_tensor([rows, 16], dtype=pl.FP32)
            v = pl.slice(w, [16, 16], [16, 0])           # the loop carries a view of w
            v = self.add(t, x, v)                        # v = 3x
        if n > 2:
            u = pl.create_tensor([16, 16], dtype=pl.FP32)
            u = self.add(t, x, u)                        # u = 3x
        else:
            u = pl.create_tensor([16, 16], dtype=pl.FP32)
            u = self.add(x, x, u)                        # u = 2x
        out = self.axpy(u, v, pl.cast(last, pl.FP32), out)   # out = u + last * v
        return out
