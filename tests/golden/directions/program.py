# Parameter directions -> add_input / add_output / add_inout / add_no_dep (spec "Parameter
# Direction"): In, Out (external and internal), InOut, and a per-call pl.no_dep override.
import pypto.language as pl


@pl.program
class Directions:
    @pl.function(type=pl.FunctionType.InCore)
    def update(
        self,
        x: pl.Tensor[[16, 16], pl.FP32],
        acc: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
        t = pl.add(pl.load(x, [0, 0], [16, 16]), pl.load(acc, [0, 0], [16, 16]))
        acc = pl.store(t, [0, 0], acc)
        y = pl.store(t, [0, 0], y)
        return acc, y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[16, 16], pl.FP32],
        acc: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        tmp = pl.create_tensor([16, 16], dtype=pl.FP32)
        acc, tmp = self.update(x, acc, tmp)          # In, InOut, Out (internal)
        acc, y = self.update(tmp, pl.no_dep(acc), y)  # In, NoDep override, Out (external)
        return y
