"""manual_dependencies.zh.txt, 机制 A per-argument: pl.no_dep(arg) on a call and on a submit."""
import pypto.language as pl

SOURCE = "manual_dependencies.zh.txt: 机制 A — pl.no_dep(arg)"


@pl.program
class NoDep:
    @pl.function(type=pl.FunctionType.InCore)
    def write_rows(self, x: pl.Tensor[[32, 16], pl.FP32], off: pl.Scalar[pl.INDEX],
                   cache: pl.InOut[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        cache = pl.store(pl.load(x, [off, 0], [16, 16]), [off, 0], cache)
        return cache

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32],
             cache: pl.InOut[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        cache = self.write_rows(x, 0, pl.no_dep(cache))
        cache, t = pl.submit(self.write_rows, x, 16, pl.no_dep(cache), allow_early_resolve=True)
        return cache

