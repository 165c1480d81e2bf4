# Pipe buffers (spec anchor_features.md §8): pl.reserve_buffer / pl.import_peer_buffer are
# accepted in kernels and kept in the IR; on the CPU no memory is reserved and the value is the
# buffer's base address (0 for pl.AUTO; an import takes its peer's). The orchestration never
# sees them. The kernels add the value to their data so the numbers show the binding.
# `buf.base` is the literal base at parse time (an import's is its peer's), and
# pl.aic/aiv_initialize_pipe are accepted as no-ops.
import pypto.language as pl


@pl.program
class PipeBuffers:
    @pl.function(type=pl.FunctionType.AIV)
    def consumer(self, x: pl.Tensor[[16, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ring = pl.reserve_buffer(name="ring", size=4096, base=256)
        spare = pl.system.reserve_buffer(name="spare", size=512, base=pl.AUTO)
        pl.aiv_initialize_pipe(dir_mask=1, slot_size=512, c2v_consumer_buf=ring)
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), pl.cast(ring + spare, pl.FP32)), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.AIC)
    def producer(self, x: pl.Tensor[[16, 16], pl.FP32],
                 z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        peer = pl.import_peer_buffer(name="ring", peer_func="consumer")
        pl.system.aic_initialize_pipe(1, 512, peer, 0)
        mirror = pl.reserve_buffer(name="mirror", size=64, base=peer.base)   # base=256
        z = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), pl.cast(mirror + peer.base - peer, pl.FP32)), [0, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32],
                                                              pl.Tensor[[16, 16], pl.FP32]]:
        y = self.consumer(x, y)
        z = self.producer(x, z)
        return y, z
