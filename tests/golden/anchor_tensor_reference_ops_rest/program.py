# The reference DSL's last dispatching / tensor-only names on tensors (spec reference_ops.md §1.1):
# pl.batch_matmul and pl.matmul_acc with operands of rank > 2 (§11) inside a kernel, and pl.full,
# pl.create_tile and a tile source of pl.assemble inside a CORE_GROUP pl.at body.
#   - batch_matmul(a[2, 4, 8], b[2, 8, 6]) -> one [4, 8] @ [8, 6] product per batch index; b1's batch
#     of 1 broadcasts. ConvertTensorToTileOps loads each batch matrix of a rank-3 operand on its own
#     (kernel loads are 1-D / 2-D), assembles them into a [B*M, K] tile, reshapes it to the operand's
#     shape and calls tile.batch_matmul; matmul_acc of rank 3 becomes tile.batch_matmul_acc.
#   - pl.full(shape, dtype, value) is the tensor fill (tensor.full); pl.tile.full is the tile fill.
#   - pl.create_tile next to tensors is the same zero-filled local value as pl.create_tensor.
#   - pl.assemble(tensor, tile, offsets) stores the tile (anchor_features §9 rule 4).
import pypto.language as pl


@pl.program
class TensorReferenceOpsRest:
    @pl.function(type=pl.FunctionType.InCore)
    def batched(self, a: pl.Tensor[[2, 4, 8], pl.FP32], b: pl.Tensor[[2, 8, 6], pl.FP32],
                b1: pl.Tensor[[1, 8, 6], pl.FP32], c: pl.Tensor[[2, 4, 6], pl.FP32],
                p: pl.Out[pl.Tensor[[2, 4, 6], pl.FP32]], q: pl.Out[pl.Tensor[[2, 4, 6], pl.FP32]],
                r: pl.Out[pl.Tensor[[2, 4, 6], pl.FP32]]
                ) -> tuple[pl.Tensor[[2, 4, 6], pl.FP32], pl.Tensor[[2, 4, 6], pl.FP32],
                           pl.Tensor[[2, 4, 6], pl.FP32]]:
        p = pl.assemble(p, pl.batch_matmul(a, b), [0, 0, 0])
        q = pl.assemble(q, pl.batch_matmul(a, b1), [0, 0, 0])
        r = pl.assemble(r, pl.matmul_acc(c, a, b), [0, 0, 0])
        return p, q, r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2, 4, 8], pl.FP32], b: pl.Tensor[[2, 8, 6], pl.FP32],
             b1: pl.Tensor[[1, 8, 6], pl.FP32], c: pl.Tensor[[2, 4, 6], pl.FP32], x: pl.Tensor[[4, 8], pl.FP32],
             p: pl.Out[pl.Tensor[[2, 4, 6], pl.FP32]], q: pl.Out[pl.Tensor[[2, 4, 6], pl.FP32]],
             r: pl.Out[pl.Tensor[[2, 4, 6], pl.FP32]], f: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
             z: pl.Out[pl.Tensor[[4, 8], pl.FP32]], s: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]
             ) -> tuple[pl.Tensor[[2, 4, 6], pl.FP32], pl.Tensor[[2, 4, 6], pl.FP32], pl.Tensor[[2, 4, 6], pl.FP32],
                        pl.Tensor[[4, 8], pl.FP32], pl.Tensor[[4, 8], pl.FP32], pl.Tensor[[4, 8], pl.FP32]]:
        p, q, r = self.batched(a, b, b1, c, p, q, r)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="fills"):
            f = pl.assemble(f, pl.sub(pl.full([4, 8], pl.FP32, 1.0), x), [0, 0])
            z = pl.assemble(z, pl.maximum(x, pl.create_tile([4, 8], pl.FP32)), [0, 0])
            s = pl.assemble(s, pl.muls(pl.load(x, [0, 0], [2, 8]), 2.0), [2, 0])
        return p, q, r, f, z, s
