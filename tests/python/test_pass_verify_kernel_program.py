"""VerifyKernelProgram (a kernel verify pass): every kernel is checked against what the CPU
kernel code generator can express before it prints. A valid program comes back unchanged
(DSL Before / Expected); an invalid one is refused with a located UserError, the same one
``kernel_cpu.generate`` reports (it runs the same check first)."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto._core import kernel_cpu
from pypto.errors import PyptoError
from pypto.ir import passes

from pass_test_util import assert_pass


def test_valid_kernels_pass_unchanged():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(x, [0, 0], [16, 16])
            for i, (acc,) in pl.range(0, n, 1, init_values=(t,)):
                acc_out = pl.yield_(pl.add(acc, t))
            y2 = pl.store(acc_out, [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = self.k(x, n, y)
            return y

    after = assert_pass(passes.VerifyKernelProgram(), Before, Before)
    assert passes.verify_property(passes.IRProperty.KernelProgramVerified, after) == []


def test_branches_and_scalars_pass_unchanged():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(x, [0, 0], [16, 16])
            if s > 0.0:
                r = pl.mul(t, s)
                out = pl.yield_(r)
            else:
                out = pl.yield_(t)
            y2 = pl.store(out, [0, 0], y)
            return y

    assert_pass(passes.VerifyKernelProgram(), Before, Before)


def test_group_kernels_and_dynamic_dims_pass_unchanged():
    M = pl.dynamic("M")

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.AIC)
        def mm(self, x: pl.Tensor[[M, 16], pl.FP32], c: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
            n = pl.tensor.dim(x, 0)
            c2 = pl.store(pl.load(x, [n - 16, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.AIV)
        def act(self, c: pl.Tensor[[M, 16], pl.FP32], out: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
            o2 = pl.store(pl.exp(pl.load(c, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def grp(self, x: pl.Tensor[[M, 16], pl.FP32], c: pl.InOut[pl.Tensor[[M, 16], pl.FP32]],
                out: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
            c1 = self.mm(x, c)
            o1 = self.act(c1, out)
            return out

    assert_pass(passes.VerifyKernelProgram(), Before, Before)


KERNEL = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], {extra}y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
{body}
        return y
'''
STORE = "        y2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)"


@pytest.mark.parametrize("extra, body, message, help, line, col", [
    ("a: pl.Array[4, pl.INT32], ", STORE, "kernel parameter 'a' must be a tensor or a scalar",
     "pass tiles between kernels through tensors", 7, 50),
    ("", "        z = pl.tensor.create([16, 16], pl.FP32)\n" + STORE,
     "op 'tensor.create' cannot be used inside a kernel on the CPU backend",
     "kernels write tensors with pl.store(tile, offsets, tensor) or pl.tensor.write(t, indices, v)", 8, 13),
    ("", "        arr = pl.array.create(4, pl.INT32)\n" + STORE, "unsupported value of type array in a kernel",
     "kernels compute tiles and scalars", 8, 9),
    ("z: pl.Tensor[[16, 16], pl.FP32], ",
     "        for i, (t,) in pl.range(0, 2, 1, init_values=(x,)):\n            o = pl.yield_(z)\n"
     "        y2 = pl.store(pl.load(o, [0, 0], [16, 16]), [0, 0], y)",
     "a loop-carried / branch tensor must stay the same tensor parameter in a kernel",
     "carry one tensor parameter, or carry a tile (pl.load the tensor first)", 9, 13),
], ids=["array-param", "tensor-op", "array-value", "carried-tensor-changes"])
def test_invalid_kernels_are_refused_where_codegen_refused_them(extra, body, message, help, line, col):
    prog = pl.parse_program(KERNEL.format(extra=extra, body=body), "k.py")
    for run in (lambda: passes.VerifyKernelProgram()(prog), lambda: kernel_cpu.generate(prog, "k")):
        with pytest.raises(PyptoError) as ei:
            run()
        e = ei.value
        assert e.message == message and e.help == help
        assert (e.file, e.line, e.col) == ("k.py", line, col)
    assert passes.verify_property(passes.IRProperty.KernelProgramVerified, prog) == ["function 'k': " + message]


def test_group_is_not_a_kernel_and_unknown_kernel_are_user_errors():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def act(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def grp(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o1 = self.act(x, out)
            return out

    with pytest.raises(PyptoError) as ei:
        kernel_cpu.generate(P, "grp")
    assert "function 'grp' is Group, not a kernel (InCore, AIC or AIV)" in ei.value.message
    assert "its AIC and AIV callees are the kernels" in ei.value.help
    with pytest.raises(PyptoError, match="no function 'nope'"):
        kernel_cpu.generate(P, "nope")
