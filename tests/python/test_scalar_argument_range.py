"""A scalar argument whose value the parameter's integer dtype cannot hold (an INT64 passed to a
pl.Scalar[pl.INT32] parameter, a negative to an unsigned one; a float that is NaN, +-inf or out
of range once truncated toward zero) fails the run where it is passed, naming the DSL line, the
argument, the value and the range, in a chip-level orchestration (to a kernel) and a HOST
orchestration (to a chip): an integer was passed as its low bits, so the callee computed with
another number (2**40 + 7 arrived as 7), and a float was converted with the undefined C++ cast
(NaN, inf and 1e20 arrived as 0)."""

import textwrap

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import host
from pypto.runtime.loader import RunError

KERNEL = '''
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_addk(self, c: pl.InOut[pl.Tensor[[16], pl.INT32]], k: pl.Scalar[pl.{kdt}]) -> pl.Tensor[[16], pl.INT32]:
        c = pl.store(pl.add(pl.load(c, [0], [16]), k), [0], c)
        return c
'''


def _chip(kdt="INT32", ndt="INT64", kernel=KERNEL):
    src = "import pypto.language as pl\n\n\n@pl.program\nclass P:" + kernel.format(kdt=kdt) + textwrap.dedent('''
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, e: pl.InOut[pl.Tensor[[16], pl.INT32]], n: pl.Scalar[pl.{ndt}]) -> pl.Tensor[[16], pl.INT32]:
        e = self.kernel_addk(e, n)
        return e
''').replace("\n", "\n    ").format(ndt=ndt)
    return pypto.compile(pl.parse_program(src, "t.py")), src


def _line_of(src, text):
    return next(i + 1 for i, l in enumerate(src.splitlines()) if text in l)


@pytest.mark.parametrize("kdt, ndt, n, fits", [
    ("INT32", "INT64", 2 ** 40 + 7, False),
    ("INT32", "INT64", 2 ** 31, False),
    ("INT32", "INT64", -2 ** 31 - 1, False),
    ("INT32", "INT64", -2 ** 31, True),
    ("INT32", "INT64", 2 ** 31 - 1, True),
    ("UINT32", "INT64", -1, False),
    ("INT32", "UINT64", 2 ** 31, False),
    ("INT64", "INT64", 2 ** 40, True),      # no narrowing: no check
])
def test_chip_level_argument_out_of_the_parameters_range(kdt, ndt, n, fits):
    prog, src = _chip(kdt, ndt)
    e = np.zeros(16, np.int32)
    if fits:
        prog(e, n)
        if kdt == "INT32":
            assert int(e[0]) == n
        return
    with pytest.raises(RunError) as err:
        prog(e, n)
    line = _line_of(src, "e = self.kernel_addk(e, n)")
    assert ("t.py:%d: argument 'k' of 'kernel_addk' = %d does not fit pl.%s" % (line, n, kdt)) in str(err.value), err.value
    assert not e.any()   # the kernel did not run with another number


def test_host_argument_out_of_the_chips_range():
    src = "import pypto.language as pl\n\n\n@pl.program\nclass P:" + KERNEL.format(kdt="INT32") + textwrap.dedent('''
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_addk(self, c: pl.InOut[pl.Tensor[[16], pl.INT32]], k: pl.Scalar[pl.INT32]) -> pl.Tensor[[16], pl.INT32]:
        c = self.kernel_addk(c, k)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def main(self, e: pl.InOut[pl.Tensor[[16], pl.INT32]], n: pl.Scalar[pl.INT64]) -> pl.Tensor[[16], pl.INT32]:
        e, t = pl.submit(self.chip_addk, e, n)
        return e
''').replace("\n", "\n    ")
    prog = host.compile_host(pl.parse_program(src, "t.py"), "main", chips=2)
    e = np.zeros(16, np.int32)
    prog(e, 5)
    assert int(e[0]) == 5
    e[:] = 0
    with pytest.raises(Exception) as err:
        prog(e, 2 ** 40 + 7)
    line = _line_of(src, "e, t = pl.submit(self.chip_addk, e, n)")
    assert ("t.py:%d: argument 'k' of 'chip_addk' = %d does not fit pl.INT32" % (line, 2 ** 40 + 7)) in str(err.value), \
        err.value
    assert not e.any()


@pytest.mark.parametrize("kdt, x, fits", [
    ("INT32", 3.7, 3),                  # toward zero, as Python's int()
    ("INT32", -3.7, -3),
    ("INT32", -0.0, 0),
    ("UINT32", -0.5, 0),
    ("INT32", 2.0 ** 31, None),          # exact as FP32, one past INT32's maximum
    ("INT32", -2.0 ** 31, -2 ** 31),
    ("UINT32", -1.0, None),
    ("INT32", 1e20, None),
    ("INT32", float("nan"), None),
    ("INT32", float("inf"), None),
    ("INT64", float("-inf"), None),
    ("INT64", 2.0 ** 63, None),
])
def test_float_argument_to_an_integer_parameter(kdt, x, fits):
    """A float (here an FP32 orchestration parameter) passed to an integer kernel parameter is
    truncated toward zero and must fit; NaN and +-inf fail the run naming the line and value
    (they were converted with a C++ cast, undefined behaviour: NaN, inf and 1e20 arrived as 0)."""
    prog, src = _chip(kdt, "FP32")
    e = np.zeros(16, np.int32)
    if fits is not None:
        prog(e, x)
        assert int(e[0]) == fits
        return
    with pytest.raises(RunError) as err:
        prog(e, x)
    line = _line_of(src, "e = self.kernel_addk(e, n)")
    shown = {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(str(x), None)
    want = "t.py:%d: argument 'k' of 'kernel_addk' = %s does not fit pl.%s" % (
        line, shown if shown else repr(float(np.float32(x))), kdt)
    assert want in str(err.value), err.value
    assert not e.any()


def test_host_float_argument_to_a_chips_integer_parameter():
    src = "import pypto.language as pl\n\n\n@pl.program\nclass P:" + KERNEL.format(kdt="INT32") + textwrap.dedent('''
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_addk(self, c: pl.InOut[pl.Tensor[[16], pl.INT32]], k: pl.Scalar[pl.INT32]) -> pl.Tensor[[16], pl.INT32]:
        c = self.kernel_addk(c, k)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def main(self, e: pl.InOut[pl.Tensor[[16], pl.INT32]], x: pl.Scalar[pl.FP32]) -> pl.Tensor[[16], pl.INT32]:
        e, t = pl.submit(self.chip_addk, e, x)
        return e
''').replace("\n", "\n    ")
    prog = host.compile_host(pl.parse_program(src, "t.py"), "main", chips=2)
    e = np.zeros(16, np.int32)
    prog(e, -5.5)
    assert int(e[0]) == -5
    e[:] = 0
    with pytest.raises(Exception) as err:
        prog(e, float("nan"))
    line = _line_of(src, "e, t = pl.submit(self.chip_addk, e, x)")
    assert ("t.py:%d: argument 'k' of 'chip_addk' = nan does not fit pl.INT32" % line) in str(err.value), err.value
    assert not e.any()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 3.0, np.float64(2.0)])
def test_program_input_float_for_an_integer_parameter_is_refused(value):
    """CompiledProgram.__call__ refuses a float for an integer parameter before the run, NaN included."""
    prog, _ = _chip("INT32", "INT64")
    with pytest.raises(Exception, match="argument 'n' of main\\(e, n\\) expects an integer") as err:
        prog(np.zeros(16, np.int32), value)
    # A whole float's help names the int() that passes it; NaN and inf get the general hint.
    whole = float(value) == float(value) and abs(float(value)) != float("inf")
    assert ("pass int(x) (%d)" % int(value) in err.value.help) if whole else ("pass an integer" in err.value.help)


_BOOL_PARAM = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_addb(self, c: pl.InOut[pl.Tensor[[16], pl.INT32]], b: pl.Scalar[pl.BOOL]) -> pl.Tensor[[16], pl.INT32]:
        c = pl.store(pl.add(pl.load(c, [0], [16]), pl.cast(b, pl.INT32)), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, e: pl.InOut[pl.Tensor[[16], pl.INT32]], x: pl.Scalar[pl.FP32]) -> pl.Tensor[[16], pl.INT32]:
        e = self.kernel_addb(e, x)
        return e
'''


@pytest.mark.parametrize("x, truth", [(0.5, 1), (-0.25, 1), (float("nan"), 1), (float("inf"), 1), (0.0, 0),
                                      (-0.0, 0), (2.0, 1)])
def test_float_argument_to_a_bool_parameter_is_its_truth(x, truth):
    """As Python's bool() (and pl.cast(x, pl.BOOL)): 0.5 arrived as False (truncated to 0 first),
    NaN through an undefined conversion to int64_t."""
    prog = pypto.compile(pl.parse_program(_BOOL_PARAM, "t.py"))
    e = np.zeros(16, np.int32)
    prog(e, x)
    assert int(e[0]) == truth


@pytest.mark.parametrize("kdt, ndt, n, shown", [
    ("INDEX", "FP32", float("nan"), "nan"),
    ("INDEX", "UINT64", 2 ** 63, str(2 ** 63)),
    ("INT64", "UINT64", 2 ** 63, str(2 ** 63)),   # a real INT64 parameter keeps its name
])
def test_argument_range_error_names_the_dsl_dtype_written(kdt, ndt, n, shown):
    """The runtime has no INDEX dtype (INT64 there, the same range): an argument to a
    pl.Scalar[pl.INDEX] parameter that does not fit said 'does not fit pl.INT64'."""
    prog, src = _chip(kdt, ndt, KERNEL.replace("pl.add(pl.load(c, [0], [16]), k)",
                                               "pl.add(pl.load(c, [0], [16]), pl.cast(k, pl.INT32))"))
    e = np.zeros(16, np.int32)
    with pytest.raises(RunError) as err:
        prog(e, n)
    line = _line_of(src, "e = self.kernel_addk(e, n)")
    want = "t.py:%d: argument 'k' of 'kernel_addk' = %s does not fit pl.%s (range -9223372036854775808.." % (
        line, shown, kdt)
    assert want in str(err.value), err.value
    assert not e.any()


def test_host_argument_range_error_names_pl_index():
    src = "import pypto.language as pl\n\n\n@pl.program\nclass P:" + KERNEL.format(kdt="INT32") + textwrap.dedent('''
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_addk(self, c: pl.InOut[pl.Tensor[[16], pl.INT32]], k: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16], pl.INT32]:
        c = self.kernel_addk(c, pl.cast(k, pl.INT32))
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def main(self, e: pl.InOut[pl.Tensor[[16], pl.INT32]], x: pl.Scalar[pl.FP32]) -> pl.Tensor[[16], pl.INT32]:
        e, t = pl.submit(self.chip_addk, e, x)
        return e
''').replace("\n", "\n    ")
    prog = host.compile_host(pl.parse_program(src, "t.py"), "main", chips=2)
    e = np.zeros(16, np.int32)
    with pytest.raises(Exception) as err:
        prog(e, float("inf"))
    line = _line_of(src, "e, t = pl.submit(self.chip_addk, e, x)")
    assert ("t.py:%d: argument 'k' of 'chip_addk' = inf does not fit pl.INDEX" % line) in str(err.value), err.value
    assert not e.any()


def test_name_index_params_rewrites_only_the_index_parameters():
    from pypto.runtime.dsl_terms import name_index_params
    msg = ("a.py:3: argument 'k' of 'f' = nan does not fit pl.INT64 (range ..)\n"
           "a.py:4: argument 'j' of 'f' = inf does not fit pl.INT64 (range ..)")
    assert name_index_params(msg, frozenset({("f", "k")})) == msg.replace("fit pl.INT64", "fit pl.INDEX", 1)
    assert name_index_params(msg, frozenset()) == msg
