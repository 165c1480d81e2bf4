"""The kernel op table (issue 11): VerifyKernelProgram accepts exactly the ops the CPU kernel
backend prints, each with the same kind of value (tile / tensor / scalar). An op printed by the
backend but unknown to the verifier (or the reverse) fails here, naming it."""

import pypto.language as pl
from pypto._core import ir, kernel_cpu


def test_verifier_and_backend_know_the_same_kernel_ops():
    accepted, printed = dict(kernel_cpu.accepted_ops()), dict(kernel_cpu.printed_ops())
    only_printed = sorted(set(printed) - set(accepted))
    only_accepted = sorted(set(accepted) - set(printed))
    assert not only_printed, "printed by the backend but refused by VerifyKernelProgram: %s" % only_printed
    assert not only_accepted, "accepted by VerifyKernelProgram but no backend handler: %s" % only_accepted
    assert {op: k for op, k in printed.items() if accepted[op] != k} == {}
    assert accepted["tile.store"] == "Tensor" and accepted["tile.read"] == "Scalar" and accepted["tile.add"] == "Tile"


def test_every_registered_tile_op_is_a_kernel_op_or_accelerator_only():
    for name in ir.op_names():
        if name.startswith("tile."):
            assert name in kernel_cpu.accepted_ops() or "Accelerator-only" in ir.op_info(name).doc, name


def test_a_table_scalar_op_is_accepted_with_its_operands_checked_by_type():
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 16])
        v = pl.tile.read(t, [1, 2])
        n = pl.tensor.dim(x, 0)
        y2 = pl.store(pl.add(t, v + pl.cast(n, pl.FP32)), [0, 0], y)
        return y2
'''
    from pypto import codegen
    code = kernel_cpu.generate(codegen.run_pipeline(pl.parse_program(src)), "k")
    assert "pypto_kernel::tile_at(ctx, " in code and ".shapes[0]" in code
