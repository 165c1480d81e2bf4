# The reference DSL's tensor-only op names (spec reference_ops.md §1.1) inside a kernel and a
# CORE_GROUP pl.at body: pl.sin, pl.cos, pl.gather, pl.scatter, pl.scatter_update (dim-first
# form), pl.gather_row and pl.arange on tensors are tensor.* ops with the tile op's parameters and
# semantics (reference_ops.md §5, §10, §12). ConvertTensorToTileOps lowers each to its tile op:
# a tensor operand is loaded whole, except gather_row's src, which the tile op reads from the
# tensor itself (bounds-checked at run time). A scatter into a loaded parameter updates the
# kernel's copy: the result is stored with pl.assemble. Out-of-range run-time indices fail the run.
import pypto.language as pl


@pl.program
class TensorReferenceOps:
    @pl.function(type=pl.FunctionType.InCore)
    def index_ops(self, a: pl.Tensor[[4, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32],
                  rows: pl.Tensor[[1, 2], pl.INT32], upd: pl.Tensor[[2, 8], pl.FP32],
                  g: pl.Out[pl.Tensor[[4, 8], pl.FP32]], s: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
                  u: pl.Out[pl.Tensor[[4, 8], pl.FP32]], r: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
                  ar: pl.Out[pl.Tensor[[1, 8], pl.INT32]]
                  ) -> tuple[pl.Tensor[[4, 8], pl.FP32], pl.Tensor[[4, 8], pl.FP32], pl.Tensor[[4, 8], pl.FP32],
                             pl.Tensor[[4, 8], pl.FP32], pl.Tensor[[1, 8], pl.INT32]]:
        g = pl.assemble(g, pl.gather(a, idx), [0, 0])
        s = pl.assemble(s, pl.scatter(pl.create_tensor([4, 8], dtype=pl.FP32), a, idx), [0, 0])
        u = pl.assemble(u, pl.scatter_update(a, -2, rows, upd), [0, 0])
        block = pl.create_tensor([4, 8], dtype=pl.FP32, init_value=-1.0)
        r = pl.assemble(r, pl.gather_row(block, a, [1, 2], [0, 1], [2, 4]), [0, 0])
        ar = pl.assemble(ar, pl.arange(3, [1, 8], dtype=pl.INT32), [0, 0])
        return g, s, u, r, ar

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32],
             rows: pl.Tensor[[1, 2], pl.INT32], upd: pl.Tensor[[2, 8], pl.FP32],
             g: pl.Out[pl.Tensor[[4, 8], pl.FP32]], s: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
             u: pl.Out[pl.Tensor[[4, 8], pl.FP32]], r: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
             ar: pl.Out[pl.Tensor[[1, 8], pl.INT32]], t: pl.Out[pl.Tensor[[4, 8], pl.FP32]]
             ) -> tuple[pl.Tensor[[4, 8], pl.FP32], pl.Tensor[[4, 8], pl.FP32], pl.Tensor[[4, 8], pl.FP32],
                        pl.Tensor[[4, 8], pl.FP32], pl.Tensor[[1, 8], pl.INT32], pl.Tensor[[4, 8], pl.FP32]]:
        g, s, u, r, ar = self.index_ops(a, idx, rows, upd, g, s, u, r, ar)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="trig"):
            # sin^2 + cos^2 of the gathered values, then scattered back to their source slots
            x = pl.gather(a, idx)
            one = pl.add(pl.mul(pl.sin(x), pl.sin(x)), pl.tensor.mul(pl.tensor.cos(x), pl.cos(x)))
            t = pl.assemble(t, pl.scatter(pl.tensor.full([4, 8], 0.0, dtype=pl.FP32), pl.mul(one, x), idx), [0, 0])
        return g, s, u, r, ar, t
