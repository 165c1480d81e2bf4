"""KernelParamSlots (the kernel pipeline): every kernel gets its typed ``Function.param_slots``,
the task tensor / scalar slot each parameter reads, printed as ``param_slots=[...]`` (DSL
Before / Expected): the Group's slots for a kernel a Group calls, else tensors and scalars
counted apart in parameter order. The CPU kernel backend binds parameters to these slots."""

import pytest

import pypto.language as pl
from pypto import codegen, ir
from pypto._core import kernel_cpu
from pypto.errors import InternalCompilerError, PyptoError
from pypto.ir import passes

from pass_test_util import assert_pass


def test_kernels_no_group_calls_count_tensors_and_scalars_apart():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INT32]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), s), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = self.k(x, 1.5, y, 3)
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore, param_slots=[0, 0, 1, 1])
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INT32]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), s), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)          # not a kernel: nothing stamped
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = self.k(x, 1.5, y, 3)
            return y

    after = assert_pass(passes.KernelParamSlots(), Before, Expected)
    assert list(after.get("k").param_slots) == [0, 0, 1, 1]
    assert passes.verify_property(passes.IRProperty.KernelParamSlotsResolved, Before) != []
    assert passes.verify_property(passes.IRProperty.KernelParamSlotsResolved, after) == []
    text = ir.python_print(after)
    assert "@pl.function(type=pl.FunctionType.InCore, param_slots=[0, 0, 1, 1])" in text
    assert ir.structural_equal(pl.parse_program(text), after)
    # The backend binds what is stamped, and refuses a kernel without the stamp.
    src = kernel_cpu.generate(after, "k")
    assert "ctx->scalars[1]" in src and "ctx->tensors[1]" in src
    with pytest.raises(InternalCompilerError, match="no param_slots: run the kernel pipeline"):
        kernel_cpu.generate(Before, "k")


def test_group_kernels_read_the_groups_slots():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.AIC)
        def mm(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.INT32],
               c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.AIV)
        def act(self, c: pl.Tensor[[16, 16], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.exp(pl.load(c, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def grp(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INT32],
                c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c1 = self.mm(x, n, c)
            o1 = self.act(c1, out)     # c1 is mm's result: the Group's param c (slot 1)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.AIC, param_slots=[0, 0, 1])
        def mm(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.INT32],
               c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.AIV, param_slots=[1, 2])
        def act(self, c: pl.Tensor[[16, 16], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.exp(pl.load(c, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def grp(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INT32],
                c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c1 = self.mm(x, n, c)
            o1 = self.act(c1, out)
            return out

    after = assert_pass(passes.KernelParamSlots(), Before, Expected)
    assert "ctx->tensors[2]" in kernel_cpu.generate(after, "act")   # out is the Group's third tensor


def test_stamped_program_is_a_fixed_point_and_parameterless_kernels_stay_empty():
    @pl.program
    class Stamped:
        @pl.function(type=pl.FunctionType.AIV, param_slots=[0, 1])
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.AIV)
        def noop(self):
            pl.system.bar_all()

    after = assert_pass(passes.KernelParamSlots(), Stamped, Stamped)
    assert list(after.get("noop").param_slots) == []


def test_a_wrong_written_param_slots_is_refused_before_printing():
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV, param_slots=[0])
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
        return y
'''
    with pytest.raises(PyptoError) as ei:
        kernel_cpu.generate(pl.parse_program(src, "k.py"), "k")
    assert "param_slots= of kernel 'k' has 1 entries for 2 parameters" in ei.value.message
    assert "KernelParamSlots' result" in ei.value.help


def test_group_passing_a_non_parameter_is_a_located_error():
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV)
    def act(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        o2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.AIC)
    def mm(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        o2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def grp(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.create_tensor([16, 16], pl.FP32)
        o1 = self.act(t, out)
        return out
'''
    prog = pl.parse_program(src, "g.py")
    for run in (lambda: passes.KernelParamSlots()(prog), lambda: codegen.run_pipeline(prog)):
        with pytest.raises(PyptoError) as ei:
            run()
        assert "argument 0 of 'act' in Group 'grp' must be a parameter of the Group" in ei.value.message
        assert (ei.value.file, ei.value.line) == ("g.py", 19)   # the call
        assert "passes its own parameters" in ei.value.help
