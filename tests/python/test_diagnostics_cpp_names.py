"""DSL names that the C++ side reserves (keywords, macros, library names, the program table's
own symbols, names too long for a file) compile and compute the right result (issue 15)."""

import numpy as np

import pypto
import pypto.language as pl

T = "pl.Tensor[[16, 16], pl.FP32]"
HOSTILE = ["thread_local", "constexpr", "decltype", "noexcept", "export", "mutable", "NULL", "errno",
           "INT64_MIN", "INFINITY", "static_assert", "EOF", "stdout"]
LONG = "k" * 300


def _kernel(name: str, local: str) -> str:
    return f'''
    @pl.function(type=pl.FunctionType.InCore)
    def {name}(self, a: {T}, b: {T}, c: pl.Out[{T}]) -> {T}:
        {local} = pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16]))
        c = pl.store({local}, [0, 0], c)
        return c
'''


def _program() -> str:
    kernels = ["count", "table", "desc", LONG]
    src = "import pypto.language as pl\n\n@pl.program\nclass Names:"
    for k, name in enumerate(kernels):
        src += _kernel(name, HOSTILE[k % len(HOSTILE)])
    body = []
    prev = "a"
    for k, name in enumerate(HOSTILE):       # every hostile name as an orchestration local
        body.append(f"{name} = pl.tensor.slice({prev}, [16, 16], [0, 0])")
        prev = name
    body.append(f"d = self.count({prev}, b, d)")
    for kernel in kernels[1:]:
        body.append(f"d = self.{kernel}(d, b, d)")
    body.append("for NULL_ in pl.range(1):\n            d = self.count(d, b, d)")
    src += f"""
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, b: {T}, d: pl.InOut[{T}]) -> {T}:
        """ + "\n        ".join(body) + "\n        return d\n"
    return src


def test_reserved_and_colliding_names_build_and_run():
    compiled = pypto.compile(pl.parse_program(_program(), "names.py"))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 16)).astype(np.float32)
    b = rng.standard_normal((16, 16)).astype(np.float32)
    d = np.zeros((16, 16), np.float32)
    compiled(a, b, d)
    np.testing.assert_allclose(d, a + 5 * b, rtol=1e-5, atol=1e-5)
    assert all(len(p.rsplit("/", 1)[-1]) < 255 for p in compiled.files)


# The runtime's helpers and types the generated orchestration calls by name after a local's
# declaration (pto2_slice_u32 for a run-time slice offset, rt_submit_aiv_task for the submit, ...).
RUNTIME_NAMES = ["pto2_float_floordiv", "pto2_slice_u32", "rt_submit_aiv_task", "PTO2_SCOPE", "ChipStorageTaskArgs", "pto2_range_count",
                 "make_tensor_external", "pto2_check_arg_extent"]


def test_runtime_helper_names_as_locals_build_and_run():
    body, prev = [], "a"
    for name in RUNTIME_NAMES:
        # a float `//` after each local: pto2_float_floordiv's call (a local of that name hid it)
        body.append(f"    {name} = pl.tensor.slice({prev}, [16, 16], [pl.cast(pl.cast(i, pl.FP32) // 2.0, pl.INDEX) * 16, 0])")
        prev = name
    body.append(f"    d = self.add({prev}, b, d)")
    src = ("import pypto.language as pl\n\n@pl.program\nclass Helpers:" + _kernel("add", "s") + f"""
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, b: {T}, d: pl.InOut[{T}]) -> {T}:
        for i in pl.range(1):
        """ + "\n        ".join(body) + "\n        return d\n")
    compiled = pypto.compile(pl.parse_program(src, "helpers.py"))
    a, b, d = np.ones((16, 16), np.float32), np.full((16, 16), 2.0, np.float32), np.zeros((16, 16), np.float32)
    compiled(a, b, d)
    np.testing.assert_array_equal(d, a + b)


# Names C++ reserves for the implementation by their form (two leading underscores, or an
# underscore and a capital): macros (__LINE__), keywords (__thread, _Pragma), predefined names
# (__func__). `éLINE__` is one too once its non-ASCII letter is spelled as underscores.
IMPLEMENTATION_NAMES = ["__LINE__", "_Pragma", "__func__", "__thread", "éLINE__"]


def test_implementation_reserved_names_as_locals_build_and_run():
    """fuzz28: a `__LINE__` orchestration local or loop variable was declared as spelled, and
    the generated C++ did not compile (BuildError); kernels already prefixed such names."""
    body, prev = [], "a"
    for name in IMPLEMENTATION_NAMES:
        body.append(f"    {name} = pl.tensor.slice({prev}, [16, 16], [__cplusplus * 16, 0])")
        prev = name
    body.append(f"    d = self.add({prev}, b, d)")
    src = ("import pypto.language as pl\n\n@pl.program\nclass Reserved:" + _kernel("add", "__COUNTER__") + f"""
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, b: {T}, d: pl.InOut[{T}]) -> {T}:
        for __cplusplus in pl.range(1):
        """ + "\n        ".join(body) + "\n        return d\n")
    compiled = pypto.compile(pl.parse_program(src, "reserved.py"))
    a, b, d = np.ones((16, 16), np.float32), np.full((16, 16), 2.0, np.float32), np.zeros((16, 16), np.float32)
    compiled(a, b, d)
    np.testing.assert_array_equal(d, a + b)


def test_implementation_reserved_names_in_host_code_build_and_run():
    """The HOST generator declares its TaskHandles and loop variables the same way."""
    from pypto import host
    src = f'''import pypto.language as pl

@pl.program
class HostReserved:''' + _kernel("add", "t") + f'''
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_add(self, a: {T}, b: {T}, c: pl.Out[{T}]) -> {T}:
        c = self.add(a, b, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: {T}, y: {T}, z: pl.Out[{T}]) -> {T}:
        for __LINE__ in pl.range(1):
            z, __thread = pl.submit(self.chip_add, x, y, z)
            z, _Pragma = pl.submit(self.chip_add, z, y, z, deps=[__thread])
        return z
'''
    prog = host.compile_host(pl.parse_program(src, "host_reserved.py"), "host_main", chips=2)
    x, y, z = np.ones((16, 16), np.float32), np.full((16, 16), 2.0, np.float32), np.zeros((16, 16), np.float32)
    prog(x, y, z)
    np.testing.assert_array_equal(z, x + 2 * y)
