"""HOST golden input: a pl.parallel TaskId carry coming out of an `if` (issue 13, §13).

    phase r (r < n):  chip_twice x4 (rows 0..3, pl.parallel fence, each waits on every slot
                      of the previous phase that ran, through one barrier per phase)
    consumer:         chip_twice (rows 0) waits on every slot of the last phase that ran

The branch that runs the loop yields its 4-slot fence, the other yields the carried value, so
the if-result is a phi array `TaskHandle prev_1[4];` filled slot by slot (before: declared as one
TaskHandle and refused). The enclosing pl.range carries that array to the consumer.
The same program runs end to end in tests/python/test_host_taskid_slots_if.py."""
import pypto.language as pl


@pl.program
class HostTaskIdSlotsIf:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_twice(self, row: pl.Scalar[pl.INDEX],
                     out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        t = pl.load(out, [row * 16, 0], [16, 16])
        out = pl.store(pl.add(t, t), [row * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_twice(self, row: pl.Scalar[pl.INDEX],
                   out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        out = self.kernel_twice(row, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]],
                  n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 16], pl.FP32]:
        prev = None
        for r in pl.range(3):
            if r < n:
                for b in pl.parallel(4):
                    out, prev = pl.submit(self.chip_twice, b, out, deps=[prev])
        out, last = pl.submit(self.chip_twice, 0, out, deps=[prev])
        return out
