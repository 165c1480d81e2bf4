# Tensor-level element access and transposition of kernel-local values (spec anchor_features
# §9): inside a pl.at body `t` is computed by a tensor op, so it is a tile after
# ConvertTensorToTileOps; pl.tensor.read / pl.tensor.write / pl.tensor.transpose of it become
# tile.read / tile.write / tile.transpose. The orchestration sees one ordinary kernel.
import pypto.language as pl


@pl.program
class LocalTileAccess:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="local_access"):
            t = pl.add(x, 1.0)
            v = pl.tensor.read(t, [1, 2])
            t = pl.tensor.write(t, [0, 0], v * 2.0)
            y = pl.assemble(y, pl.tensor.transpose(t, 0, 1), [0, 0])
        return y
