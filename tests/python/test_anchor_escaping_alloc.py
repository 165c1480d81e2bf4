"""anchor_features.md §17: tensors allocated inside an AUTO-scoped body and used after it.

Frontend: a name first bound in a for body and read after the loop becomes an implicit carry
seeded before the loop (tensor.create of the same type / 0 / False / invalid TaskId).
MaterializeRuntimeScopes: a tensor.create whose value escapes its for / if body is placed before
the body's AUTO scope (with the pure scalar statements its shape needs). Golden C++:
tests/golden/anchor_escaping_alloc/."""
import os

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen, ir
from pypto.errors import PyptoError
from pypto.ir import passes

from codegen_test_util import GOLDEN_DIR, load_single_program
from pass_test_util import assert_pass
from test_diagnostics import KERNELS, T, body_check, check, program


def golden():
    return load_single_program(os.path.join(GOLDEN_DIR, "anchor_escaping_alloc", "program.py"))


@pytest.mark.parametrize("n", [1, 3])
def test_golden_e2e_numpy_race_checked(n):
    compiled = pypto.compile(golden())
    x = np.random.default_rng(n).standard_normal((16, 16)).astype(np.float32)
    out = np.full_like(x, np.nan)
    compiled(x, out, n, race_check=True)
    t = 2 * x
    v = t + x
    u = t + x if n > 2 else 2 * x
    np.testing.assert_allclose(out, u + (n - 1) * v, rtol=1e-5, atol=1e-5)


def test_frontend_seeds_the_implicit_carries_before_the_loop():
    text = ir.python_print(golden())
    assert ("t: pl.Tensor[[16, 16], pl.FP32] = pl.create_tensor([16, 16], dtype=pl.FP32)\n"
            "        last = 0\n"
            "        for i, (t_1, last_1) in pl.range(0, n, 1, init_values=(t, last)):") in text
    assert "t_4, last_3 = pl.yield_(t_3, last_2)" in text
    assert pl.parse_program(text) is not None   # the printed form re-parses


def test_pipeline_lifts_escaping_creates_before_the_body_scope():
    text = ir.python_print(codegen.run_pipeline(golden()))
    # loop: the allocation precedes the iteration's scope
    assert ("for i, (t_1, last_1) in pl.range(0, n, 1, init_values=(t, last), carries=(pl.rebind, pl.rebind)):\n"
            "                t_2: pl.Tensor[[16, 16], pl.FP32] = pl.create_tensor([16, 16], dtype=pl.FP32)\n"
            "                with pl.scope():\n") in text
    # the pure shape statement moves with it
    assert ("                rows = 16 * 2\n"
            "                w: pl.Tensor[[rows, 16], pl.FP32] = pl.create_tensor([rows, 16], dtype=pl.FP32)\n"
            "                with pl.scope():\n") in text
    # both if branches
    assert text.count("                with pl.scope():\n                    u") == 2


def test_escaping_alloc_cpp_allocates_outside_the_iteration_scope():
    cpp = pypto.compile(golden()).files["orchestration/main.cpp"]
    loop = cpp[cpp.index("for (int64_t i = 0"):]
    assert loop.index("alloc_tensors(t_2_ci)") < loop.index("PTO2_SCOPE()")


def test_pass_lifts_create_out_of_loop_and_if_bodies():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], d: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                 n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (acc,) in pl.range(n, init_values=(d,)):
                t = pl.create_tensor([16, 16], dtype=pl.FP32)
                keep = pl.create_tensor([16, 16], dtype=pl.FP32)   # does not escape: stays in the scope
                keep2 = self.k(a, keep)
                t2 = self.k(keep2, t)
                acc2 = pl.yield_(t2)
            return acc2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], d: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                 n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                for i, (acc,) in pl.range(n, init_values=(d,)):
                    t = pl.create_tensor([16, 16], dtype=pl.FP32)
                    with pl.scope():
                        keep = pl.create_tensor([16, 16], dtype=pl.FP32)
                        keep2 = self.k(a, keep)
                        t2 = self.k(keep2, t)
                        acc2 = pl.yield_(t2)
            return acc2

    assert_pass(passes.MaterializeRuntimeScopes(), Before, Expected)


NESTED = f'''
import pypto.language as pl


@pl.program
class Nested:{KERNELS}
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, b: {T}, d: pl.Out[{T}]) -> {T}:
        for i in pl.range(2):
            for j in pl.range(3):
                t = pl.create_tensor([16, 16], dtype=pl.FP32)
                t = self.kernel_add(a, b, t)
        d = self.kernel_add(t, a, d)
        return d
'''


def test_allocation_escaping_two_loops_lives_in_the_enclosing_scope():
    p = pl.parse_program(NESTED, "nested.py")
    text = ir.python_print(codegen.run_pipeline(p))
    # inner body: lifted before its scope; the outer body gets no scope (the buffer escapes it too)
    assert ("            for i, (t_1,) in pl.range(0, 2, 1, init_values=(t,), carries=(pl.rebind,), trip_count=2):\n"
            "                t_2: pl.Tensor[[16, 16], pl.FP32] = pl.create_tensor([16, 16], dtype=pl.FP32)\n"
            "                for j") in text
    assert text.count("with pl.scope():") == 2   # the function body and the inner loop body
    compiled = pypto.compile(p)
    a = np.random.default_rng(1).standard_normal((16, 16)).astype(np.float32)
    b = np.random.default_rng(2).standard_normal((16, 16)).astype(np.float32)
    d = np.zeros_like(a)
    compiled(a, b, d, race_check=True)
    np.testing.assert_allclose(d, 2 * a + b, rtol=1e-6, atol=1e-6)


def test_task_id_first_bound_in_loop_is_seeded_invalid():
    src = program("for i in pl.range(n):\n"
                  "    d, prev = pl.submit(self.kernel_add, a, b, d)\n"
                  "d, t2 = pl.submit(self.kernel_add, d, b, d, deps=[prev])\n"
                  "return d")
    p = pl.parse_program(src, "t.py")
    text = ir.python_print(p)
    assert "prev = pl.system.task_invalid()" in text and "init_values=(d, prev)" in text
    compiled = pypto.compile(p)
    a = np.ones((16, 16), np.float32)
    for n, want in ((0, 2.0), (2, 5.0)):   # n = 0: 0 + 2a (no edge); else (a + 2a) + 2a after prev
        d = np.zeros_like(a)
        compiled(a, 2 * a, d, np.zeros((16, 16), np.int32), n, race_check=True)
        np.testing.assert_allclose(d, want * a)


def test_bool_and_scalar_seeds_for_zero_trips():
    src = program("for i in pl.range(n):\n"
                  "    flag = i > 1\n"
                  "    k = i * 2\n"
                  "if flag:\n"
                  "    d = self.scale(a, pl.cast(k, pl.FP32), d)\n"
                  "else:\n"
                  "    d = self.scale(a, -1.0, d)\n"
                  "return d")
    p = pl.parse_program(src, "t.py")
    text = ir.python_print(p)
    assert "flag = False" in text and "k = 0" in text
    compiled = pypto.compile(p)
    a = np.ones((16, 16), np.float32)
    for n, want in ((0, -1.0), (2, -1.0), (4, 6.0)):
        d = np.zeros_like(a)
        compiled(a, a, d, np.zeros((16, 16), np.int32), n)
        np.testing.assert_allclose(d, want * a)


def test_name_rebound_after_the_loop_is_not_carried():
    src = program("for i in pl.range(n):\n"
                  "    t = self.kernel_add(a, b, d)\n"
                  "t = self.kernel_add(a, a, d)\n"
                  "d = self.kernel_add(t, b, d)\n"
                  "return d")
    text = ir.python_print(pl.parse_program(src, "t.py"))
    assert "init_values" not in text and "create_tensor" not in text


# -- misuse ---------------------------------------------------------------------------------
def test_shape_computed_in_the_loop_body_is_refused_by_the_frontend():
    body_check("for i in pl.range(n):  #!\n"
               "    m = pl.tensor.dim(a, 0) + i\n"
               "    t = pl.create_tensor([m, 16], dtype=pl.FP32)\n"
               "d = self.kernel_add(a, b, d)\n"
               "q = pl.tensor.dim(t, 0)\n"
               "return d",
               "'t' is used after this loop (line 28), but its shape depends on 'm', which is computed inside the "
               "loop body", "pl.range(n)", help="compute the shape before the loop")


def test_shape_from_a_task_result_cannot_be_lifted():
    src = program("for i, (acc,) in pl.range(2, init_values=(d,)):\n"
                  "    m = pl.cast(pl.tensor.read(rc, [0, 0]), pl.INDEX)\n"
                  "    w = pl.create_tensor([m, 16], dtype=pl.FP32)  #!\n"
                  "    v = pl.slice(w, [16, 16], [0, 0])\n"
                  "    v = self.kernel_add(a, acc, v)\n"
                  "    acc2 = pl.yield_(v)\n"
                  "return acc2")
    p = pl.parse_program(src, "t.py")
    with pytest.raises(PyptoError) as ei:
        codegen.run_pipeline(p)
    e = ei.value
    assert "'w' is allocated in a loop body and used after it" in e.message
    # the read is bound to a name of its own before the cast (docs/dsl.md, "Element reads as operands")
    assert "its shape depends on 'rc_elem' (line" in e.message and "task result" in e.message
    assert "compute the shape before the loop" in e.help
    lines = src.splitlines()
    assert (e.file, e.line) == ("t.py", next(i + 1 for i, s in enumerate(lines) if "#!" in s))
