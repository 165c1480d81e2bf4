"""pl.Array if results inside a runtime scope, read after the block (issue 13, anchor_features
§13). `z` is a phi array (its branches yield different arrays), declared in the MANUAL block
before the if; `w` is created in the AUTO block and updated in place by an if. Each leaves
through an exit slot declared before its block (`int32_t z_exit[2];`), copied slot by slot after
the if (and, for the nested block, on into the outer block's slot); after the block the array
and its later in-place versions live in the slot (`w_exit[0] = 2;`)."""
import pypto.language as pl


@pl.program
class ScopeArrayIfExit:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), s), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        u = pl.array.create(2, pl.INT32)
        v = pl.array.create(2, pl.INT32)
        u[1] = 7
        v[1] = pl.cast(n, pl.INT32)
        with pl.scope():
            with pl.manual_scope():
                if n > 3:
                    z = v
                else:
                    z = u
        with pl.scope():
            w = pl.array.create(2, pl.INT32)
            if n > 4:
                w[1] = 5
        w[0] = 2
        z1 = z[1]
        w0 = w[0]
        w1 = w[1]
        out = self.shift(x, pl.cast(z1 + w0 + w1, pl.FP32), out)
        return out
