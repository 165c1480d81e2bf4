# pl.create_tensor(..., init_value=) (spec anchor_features.md §2): after the TensorCreateInfo
# line, `set_initial_value(0)` for zero of any dtype, else the value typed as the element
# (`static_cast<float>(0.25)`, `static_cast<int32_t>(-7)`); alloc_tensors fills the buffer
# before any task touches it.
import pypto.language as pl


@pl.program
class InitValue:
    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, x: pl.Tensor[[16, 16], pl.FP32],
            y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), pl.load(y, [0, 0], [16, 16])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def acc_i(self, x: pl.Tensor[[16, 16], pl.INT32],
              y: pl.InOut[pl.Tensor[[16, 16], pl.INT32]]) -> pl.Tensor[[16, 16], pl.INT32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), pl.load(y, [0, 0], [16, 16])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], xi: pl.Tensor[[16, 16], pl.INT32],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
             out_i: pl.InOut[pl.Tensor[[16, 16], pl.INT32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32],
                                                                       pl.Tensor[[16, 16], pl.INT32]]:
        a = pl.create_tensor([16, 16], dtype=pl.FP32, init_value=0.25)
        b = pl.create_tensor([16, 16], dtype=pl.INT32, init_value=-7)
        z = pl.create_tensor([16, 16], dtype=pl.FP16, init_value=0)
        m = pl.create_tensor([16, 16], dtype=pl.FP32, init_value=0.0)
        s = pl.create_tensor([16, 16], dtype=pl.FP32, manual_dep=True, init_value=1)
        a = self.acc(x, a)
        b = self.acc_i(xi, b)
        m = self.acc(a, m)
        out = self.acc(m, out)
        out_i = self.acc_i(b, out_i)
        return out, out_i
