# Pipe buffers (spec anchor_features.md §8): pl.reserve_buffer / pl.import_peer_buffer are
# accepted in kernels and kept in the IR; on the CPU no memory is reserved and the value is the
# buffer's base address (0 for pl.AUTO; an import takes its peer's). The orchestration never
# sees them. The kernels add the value to their data so the numbers show the binding.
import pypto.language as pl


@pl.program
class PipeBuffers:
    @pl.function(type=pl.FunctionType.AIV)
    def consumer(self, x: pl.Tensor[[16, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ring = pl.reserve_buffer(name="ring", size=4096, base=256)
        spare = pl.system.reserve_buffer(name="spare", size=512, base=pl.AUTO)
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), pl.cast(ring + spare, pl.FP32)), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.AIC)
    def producer(self, x: pl.Tensor[[16, 16], pl.FP32],
                 z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        peer = pl.import_peer_buffer(name="ring", peer_func="consumer")
        z = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), pl.cast(peer, pl.FP32)), [0, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32],
                                                              pl.Tensor[[16, 16], pl.FP32]]:
        y = self.consumer(x, y)
        z = self.producer(x, z)
        return y, z
