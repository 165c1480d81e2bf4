"""The generated C++ keeps the user's spelling of a name: `x_2` stays `x_2` (the upstream
`__ssa_v` rule of GetSSABaseName, which turned it into `x`, is gone)."""

import pytest

import pypto.language as pl
from pypto import codegen


@pl.program
class UserNames:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16], pl.FP32], s: pl.Scalar[pl.INDEX],
          c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        c = pl.store(pl.load(a, [0], [16]), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16], pl.FP32], n: pl.Scalar[pl.INDEX],
             c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        x = n + 1
        x_2 = x * 3
        c = self.k(a, x_2, c)
        return c


def test_user_name_x_2_survives():
    code = codegen.generate_orchestration(UserNames, "main").code
    assert "int64_t x_2 = x * 3;" in code
    assert "params_t0.add_scalar((uint64_t)x_2);" in code
    assert "int64_t x = n + 1;" in code


@pl.program
class HostReservedName:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add(self, a: pl.Tensor[[64], pl.FP32], b: pl.Tensor[[64], pl.FP32],
                   c: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0], [64]), pl.load(b, [0], [64])), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_add(self, a: pl.Tensor[[64], pl.FP32], b: pl.Tensor[[64], pl.FP32],
                 c: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        c = self.kernel_add(a, b, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: pl.Tensor[[64], pl.FP32], y: pl.Tensor[[64], pl.FP32],
                  z: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        z, new = pl.submit(self.chip_add, x, y, z)
        z, x_2 = pl.submit(self.chip_add, z, y, z, deps=[new])
        return z


def test_host_names_use_the_one_reserved_table():
    """HOST code takes the L2 table: a user's `new` (a C++ keyword) is declared `new_1`; `x_2`
    keeps its spelling."""
    from pypto import host
    code = host.generate_host_orchestration(HostReservedName, "host_main")
    code = code.code if hasattr(code, "code") else code
    assert "TaskHandle new_1 = " in code and "add_dep_wait(new_1)" in code
    assert "TaskHandle new =" not in code
    assert "TaskHandle x_2 = " in code


_CHECK_NAMES = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_addk(self, c: pl.InOut[pl.Tensor[[16], pl.INT32]], k: pl.Scalar[pl.INT64]) -> pl.Tensor[[16], pl.INT32]:
        c = pl.store(pl.add(pl.load(c, [0], [16]), pl.cast(k, pl.INT32)), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, e: pl.InOut[pl.Tensor[[16], pl.INT32]], n: pl.Scalar[pl.INT64],
             d: pl.Scalar[pl.INT64]) -> pl.Tensor[[16], pl.INT32]:
        NAME: pl.Scalar[pl.INT64] = n // d
        m: pl.Scalar[pl.INT64] = NAME % d
        e = self.kernel_addk(e, m + NAME // d)
        return e
'''


@pytest.mark.parametrize("name", ["pto2_floordiv", "pto2_mod", "pto2_divisor"])
def test_a_local_named_like_a_run_time_check_is_renamed(name):
    """A local `pto2_floordiv` hid the function the `//` after it calls: the generated C++ did
    not compile (BuildError)."""
    import numpy as np

    import pypto
    prog = pypto.compile(pl.parse_program(_CHECK_NAMES.replace("NAME", name), "t.py"))
    e = np.zeros(16, np.int32)
    prog(e, -7, 2)
    assert int(e[0]) == (-7 // 2) % 2 + (-7 // 2) // 2


@pl.program
class HostApiNames:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add(self, a: pl.Tensor[[64], pl.FP32], b: pl.Tensor[[64], pl.FP32],
                   c: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0], [64]), pl.load(b, [0], [64])), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_add(self, a: pl.Tensor[[64], pl.FP32], b: pl.Tensor[[64], pl.FP32],
                 c: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        c = self.kernel_add(a, b, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: pl.Tensor[[64], pl.FP32], y: pl.Tensor[[64], pl.FP32],
                  z: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        z, TaskHandle = pl.submit(self.chip_add, x, y, z)
        z, submit_next_level = pl.submit(self.chip_add, z, y, z, deps=[TaskHandle])
        return z


def test_host_names_of_the_l3_api_are_renamed():
    """A tid named TaskHandle was declared `TaskHandle TaskHandle = ...`: the type was hidden from
    the next declaration (and submit_next_level from the next call)."""
    from pypto import host
    code = host.generate_host_orchestration(HostApiNames, "host_main")
    code = code.code if hasattr(code, "code") else code
    assert "TaskHandle TaskHandle_1 = submit_next_level(" in code, code
    assert "TaskHandle submit_next_level_1 = submit_next_level(" in code, code


RESERVED_FORMS = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16], pl.FP32], __s: pl.Scalar[pl.INDEX],
          c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        café_ = pl.load(a, [0], [16])
        int_ = pl.adds(café_, 1.0)
        c = pl.store(int_, [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16], pl.FP32], n: pl.Scalar[pl.INDEX],
             c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        for __x in pl.range(n):
            for café in pl.range(2):
                x__y = __x + café
                c = self.k(a, x__y, c)
        return c
'''


def test_generated_names_contain_no_double_underscore():
    # C++ reserves every identifier containing `__`: `__x` became `v__x`, and `café` became
    # `caf__` (each byte of the non-ASCII character replaced) — clang -Wreserved-identifier
    # refused both. A run of underscores is now one, and no base ends in one (the `_1` suffix).
    import re

    import numpy as np
    import pypto
    from pypto._core import kernel_cpu
    prog = pl.parse_program(RESERVED_FORMS, "r.py")
    orch = codegen.generate_orchestration(prog, "main").code
    kernel = kernel_cpu.generate(codegen.run_pipeline(prog), "k")
    implementation = {"__attribute__", "__restrict__"}   # GCC's own words, not names the generator declares
    for code in (orch, kernel):
        body = re.sub(r'"[^"]*"', "", code[code.index("{"):])   # past the includes, without strings
        names = set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*\b", body))
        assert not sorted(n for n in names if "__" in n and n not in implementation)
    assert "for (int64_t _x = 0;" in orch and "int64_t x_y = " in orch
    c = np.zeros(16, np.float32)
    pypto.compile(prog)(np.ones(16, np.float32), 2, c)
    np.testing.assert_array_equal(c, 2.0)
