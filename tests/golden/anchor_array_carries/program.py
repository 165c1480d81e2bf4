# pl.Array loop carries and if-results (spec anchor_features.md §13). Arrays are updated in
# place: a loop carry is its init's C array (no copy), `w[k] = v` writes one slot, an if-result
# whose branches both yield the pre-if array is that array (no code), otherwise a phi array
# `int32_t z[2];` filled slot by slot in each branch; a yield of another array copies its slots.
import pypto.language as pl


@pl.program
class AnchorArrayCarries:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.mul(pl.load(a, [0, 0], [16, 16]), s), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        w = pl.array.create(4, pl.FP32)
        for k in pl.range(4):
            w[k] = 0.5                       # in place: the carry is w's C array
        for i in pl.range(n):
            cur = w[i % 4]
            w[i % 4] = cur + 1.0
        if n > 2:
            w[0] = 10.0                      # both branches yield w's storage: no phi
        u = pl.array.create(2, pl.INT32)
        v = pl.array.create(2, pl.INT32)
        v[1] = pl.cast(n, pl.INT32)
        z = u
        if n > 3:
            z = v                            # different arrays: phi array z
        hits = pl.array.create(2, pl.INT32)
        for j in pl.range(2):
            hits = z                         # a yield of another array: slot copy into hits
        a0 = w[0]
        a1 = w[1]
        h1 = hits[1]
        out = self.scale(x, a0 + a1 + pl.cast(h1, pl.FP32), out)
        return out
