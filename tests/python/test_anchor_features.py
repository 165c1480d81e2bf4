"""Reference DSL features of spec/anchor_features.md §1-9: end-to-end runs checked with NumPy,
the outlined / generated shape, and a located diagnostic for each misuse.

Golden C++ for each feature: tests/golden/anchor_*/ (test_golden.py compares and compiles it).
"""
import os
import sys

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.ir import passes
from pypto.errors import PyptoError

from codegen_test_util import GOLDEN_DIR, load_single_program
from test_diagnostics import body_check

sys.path.insert(0, os.path.dirname(__file__))


def golden_program(case):
    return load_single_program(os.path.join(GOLDEN_DIR, case, "program.py"))


def function_names(program):
    return [f.name for f in program.functions]


# -- §1 name_hint= ----------------------------------------------------------------------------
def run_pipeline(program):
    for ps in passes.default_pipeline():
        program = ps(program)
    return program


def test_name_hint_names_outlined_functions():
    names = function_names(run_pipeline(golden_program("anchor_name_hint")))
    for k in ("double_x", "double_x_0", "rows", "main_incore", "pair"):
        assert k in names, names
    compiled = pypto.compile(golden_program("anchor_name_hint"))
    for k in ("double_x", "double_x_0", "rows", "main_incore"):
        assert f"kernels/{k}.cpp" in compiled.files, sorted(compiled.files)
    assert "// Task 4: pair" in compiled.files["orchestration/main.cpp"]


def test_name_hint_e2e():
    compiled = pypto.compile(golden_program("anchor_name_hint"))
    x = np.random.default_rng(1).standard_normal((16, 16)).astype(np.float32)
    y = np.zeros((16, 16), np.float32)
    compiled(x, y)
    # 2x, +x, *2, -x, +x (per block rows)
    np.testing.assert_allclose(y, 6 * x, rtol=1e-5, atol=1e-5)


def test_name_hint_prints_and_reparses():
    p = golden_program("anchor_name_hint")
    text = ir.python_print(p)
    assert 'name_hint="double_x"' in text and 'pl.cluster(name_hint="pair")' in text
    assert ir.structural_equal(pl.parse_program(text), p)


def test_name_hint_clash_with_other_function_and_user_function():
    src = f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def used(self, a: {T}, c: pl.Out[{T}]) -> {T}:
        c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def first(self, a: {T}, c: pl.Out[{T}]) -> {T}:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="used"):
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def second(self, a: {T}, c: pl.Out[{T}]) -> {T}:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
        return c
'''
    names = function_names(run_pipeline(pl.parse_program(src)))
    assert "copy" in names and "second_copy" in names and "used_1" in names, names


T = "pl.Tensor[[16, 16], pl.FP32]"


@pytest.mark.parametrize("scope", ["pl.at(level=pl.Level.CORE_GROUP, name_hint={h})", "pl.spmd(2, name_hint={h})",
                                   "pl.cluster(name_hint={h})"])
def test_name_hint_not_a_string_literal(scope):
    body_check(f"with {scope.format(h='n')}:  #!\n    d = self.kernel_add(a, b, d)\nreturn d",
               "'name_hint' argument must be a string literal", "n)", help='name_hint="softmax"')


@pytest.mark.parametrize("hint", ['"1abc"', '"for"', '"a-b"'])
def test_name_hint_not_an_identifier(hint):
    body_check(f"with pl.at(level=pl.Level.CORE_GROUP, name_hint={hint}):  #!\n    d = self.kernel_add(a, b, d)\n"
               "return d", "must be a valid non-keyword identifier", hint)


def test_cluster_rejects_other_keywords():
    body_check("with pl.cluster(deps=[None]):  #!\n    d = self.kernel_add(a, b, d)\nreturn d",
               "pl.cluster has no keyword 'deps'", "[None]", help="name_hint")


def test_empty_name_hint_is_unhinted():
    body = 'with pl.at(level=pl.Level.CORE_GROUP, name_hint=""):\n    d = self.kernel_add(a, b, d)\nreturn d'
    from test_diagnostics import program
    p = pl.parse_program(program(body))
    assert "name_hint" not in ir.python_print(p)


# -- §2 pl.create_tensor(..., init_value=) ----------------------------------------------------
def test_init_value_e2e():
    compiled = pypto.compile(golden_program("anchor_init_value"))
    rng = np.random.default_rng(2)
    for _ in range(3):    # later runs reuse pool memory a previous run dirtied
        x = rng.standard_normal((16, 16)).astype(np.float32)
        xi = rng.integers(-50, 50, (16, 16)).astype(np.int32)
        out = np.ones((16, 16), np.float32)
        out_i = np.full((16, 16), 3, np.int32)
        compiled(x, xi, out, out_i)
        np.testing.assert_allclose(out, 1 + (x + 0.25), rtol=1e-6)
        np.testing.assert_array_equal(out_i, 3 + (xi - 7))


def test_init_value_prints_after_manual_dep_and_reparses():
    p = golden_program("anchor_init_value")
    text = ir.python_print(p)
    assert "pl.create_tensor([16, 16], dtype=pl.FP32, manual_dep=True, init_value=1.0)" in text
    assert "init_value=-7.0" in text
    assert ir.structural_equal(pl.parse_program(text), p)


@pytest.mark.parametrize("value,message", [
    ("n", "init_value must be a compile-time constant, got 'n'"),
    ("True", "init_value must be an int or float constant, got bool 'True'"),
    ("INF", "init_value inf is not finite"),
    ("BIG", "is beyond +-2^53"),
])
def test_init_value_parse_errors(value, message):
    body_check(f"t = pl.create_tensor([16, 16], dtype=pl.FP32, init_value={value})  #!\nreturn d", message,
               value + ")", help="init_value", prelude="BIG = 2 ** 60\nINF = float('inf')")


@pytest.mark.parametrize("dtype,value,message", [
    ("INT32", "0.5", "init_value 0.5 is not an integer, but the dtype is INT32"),
    ("FP16", "1.0", "a non-zero init_value needs a 32-bit or integer dtype, got FP16"),
    ("BF16", "-2", "a non-zero init_value needs a 32-bit or integer dtype, got BF16"),
])
def test_init_value_dtype_errors(dtype, value, message):
    body_check(f"t = pl.create_tensor([16, 16], dtype=pl.{dtype}, init_value={value})  #!\nreturn d", message,
               "pl.create_tensor")


# -- §3 pl.reshape ------------------------------------------------------------------------------
def test_reshape_e2e():
    compiled = pypto.compile(golden_program("anchor_reshape"))
    x = np.random.default_rng(3).standard_normal((16, 16)).astype(np.float32)
    y = np.zeros((16, 16), np.float32)
    z = np.zeros((16, 16), np.float32)
    compiled(x, y, z)
    np.testing.assert_allclose(y, 2 * x, rtol=1e-6)
    np.testing.assert_allclose(z, 2 * x + 1, rtol=1e-6)


def test_reshape_dispatches_on_operand_kind():
    text = ir.python_print(golden_program("anchor_reshape"))
    assert "pl.tensor.reshape(x, [8, 32])" in text and "pl.tensor.reshape(y, [8, 32])" in text
    assert "pl.tile.reshape" in text or "pl.reshape(t, [16, 16])" in text
    assert ir.structural_equal(pl.parse_program(text), golden_program("anchor_reshape"))


RESHAPE_VIEW_SRC = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, a: pl.Tensor[[64], pl.FP32], c: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        c = pl.store(pl.load(a, [0], [64]), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        v = pl.tensor.slice(x, [4, 16], [0, 0])
        w = pl.tensor.transpose(v, 0, 1)
        r = pl.reshape(w, [64])
        y = self.copy(r, y)
        return y
'''


def test_reshape_of_non_contiguous_view_fails_the_run():
    compiled = pypto.compile(pl.parse_program(RESHAPE_VIEW_SRC))
    x = np.zeros((16, 16), np.float32)
    # checked before the spec's `.reshape` line (pto2_reshape_check), naming the DSL line
    with pytest.raises(PyptoError, match="pl.tensor.reshape 'r': the source view is not contiguous") as ei:
        compiled(x, np.zeros(64, np.float32))
    assert ei.value.line == 15


def test_reshape_of_contiguous_slice_runs():
    src = RESHAPE_VIEW_SRC.replace("        w = pl.tensor.transpose(v, 0, 1)\n", "").replace("(w, [64])", "(v, [64])")
    compiled = pypto.compile(pl.parse_program(src))
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    y = np.zeros(64, np.float32)
    compiled(x, y)
    np.testing.assert_array_equal(y, x[:4].reshape(64))


def test_reshape_size_mismatch():
    body_check("t = pl.reshape(a, [16, 8])  #!\nreturn d", "tensor.reshape: cannot reshape tensor of size 256 into "
               "shape with size 128", "pl.reshape", help="must hold the same number of elements")


def test_reshape_tile_size_mismatch():
    extra = f'''
    @pl.function(type=pl.FunctionType.InCore)
    def bad(self, a: {T}, c: pl.Out[{T}]) -> {T}:
        t = pl.reshape(pl.load(a, [0, 0], [16, 16]), [4, 4])  #!
        c = pl.store(t, [0, 0], c)
        return c
'''
    from test_diagnostics import check, program
    check(program("return d", extra=extra), "cannot reshape tile of size 256 into shape with size 16", "pl.reshape")


def test_reshape_needs_tensor_or_tile():
    body_check("t = pl.reshape(n, [16, 8])  #!\nreturn d", "pl.reshape needs a tensor or a tile, got", "n, [16",
               help="Tensor -> pl.tensor.reshape")


def test_reshape_non_integer_shape():
    body_check("t = pl.reshape(a, [16, 2.5])  #!\nreturn d", "element 1 of 'shape' must be an integer", "pl.reshape")


# -- §9 tensor-level ops inside kernels and pl.at bodies ---------------------------------------
def test_tensor_ops_in_kernels_e2e():
    compiled = pypto.compile(golden_program("anchor_tensor_ops_in_kernels"))
    rng = np.random.default_rng(4)
    a = rng.standard_normal((16, 16)).astype(np.float32)
    b = rng.standard_normal((16, 16)).astype(np.float32)
    c = np.zeros((16, 16), np.float32)
    d = np.zeros((16, 16), np.float32)
    compiled(a, b, c, d)
    ref_c = np.exp((a + b) * 0.5)
    np.testing.assert_allclose(c, ref_c, rtol=1e-5)
    ones = np.ones((8, 16), np.float32)
    ones[:, 8:] = 2.0
    top = ref_c[:8]
    np.testing.assert_allclose(d[:8], top - top.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(d[8:], np.maximum(ref_c[8:], ones), rtol=1e-5)


def test_tensor_ops_lowered_to_tile_ops():
    p = run_pipeline(golden_program("anchor_tensor_ops_in_kernels"))
    text = ir.python_print(p)
    assert "pl.tensor.add" not in text and "pl.tensor.exp" not in text and "pl.tensor.row_sum" not in text
    assert "pl.tensor.add(a, b)" in ir.python_print(golden_program("anchor_tensor_ops_in_kernels"))
    assert "pl.tensor.muls(s, 0.5)" in ir.python_print(golden_program("anchor_tensor_ops_in_kernels"))


MATMUL_SRC = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 8], pl.FP32],
           c: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        c = pl.assemble(c, pl.matmul(a, b), [0, 0])
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 8], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 8], pl.FP32]], d: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        c = self.mm(a, b, c)
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.reshape(pl.cast(pl.cast(c, pl.FP16), pl.FP32), [8, 16])   # a same-dtype cast is an error
            d = pl.assemble(d, pl.reshape(pl.neg(t), [16, 8]), [0, 0])
        return d
'''


def test_tensor_matmul_cast_reshape_in_kernels_e2e():
    compiled = pypto.compile(pl.parse_program(MATMUL_SRC))
    rng = np.random.default_rng(5)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((32, 8)).astype(np.float32)
    c = np.zeros((16, 8), np.float32)
    d = np.zeros((16, 8), np.float32)
    compiled(a, b, c, d)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(d, -c.astype(np.float16).astype(np.float32), rtol=1e-6)


def test_tensor_compute_op_in_orchestration_body():
    body_check("t = pl.add(a, b)  #!\nreturn d",
               "tensor.add computes on tensor data, which an Orchestration function cannot do", "pl.add",
               help="wrap it in `with pl.at(level=pl.Level.CORE_GROUP):`")


def test_tensor_compute_op_explicit_spelling_in_orchestration_body():
    body_check("t = pl.tensor.exp(a)  #!\nreturn d", "tensor.exp computes on tensor data", "pl.tensor.exp",
               help="wrap it in `with pl.at(level=pl.Level.CORE_GROUP):`")


def test_tensor_cast_in_orchestration_body():
    body_check("t = pl.cast(a, pl.FP16)  #!\nreturn d", "tensor.cast computes on tensor data", "pl.cast")


def test_tensor_compute_op_in_non_core_group_at():
    body_check("with pl.at(level=pl.Level.CHIP):\n    t = pl.mul(a, 2.0)  #!\nreturn d",
               "tensor.muls computes on tensor data", "pl.mul")


def test_mixing_tensor_and_tile_arguments():
    extra = f'''
    @pl.function(type=pl.FunctionType.InCore)
    def bad(self, a: {T}, c: pl.Out[{T}]) -> {T}:
        t = pl.add(a, pl.load(a, [0, 0], [16, 16]))  #!
        c = pl.store(t, [0, 0], c)
        return c
'''
    from test_diagnostics import check, program
    check(program("return d", extra=extra), "pl.add cannot mix Tensor and Tile arguments", "pl.load(a",
          help="pl.load")


def test_kernel_returning_tensor_op_value_gets_a_ret_out_param():
    # rule 5: the returned tile is stored into a new trailing Out parameter; the caller creates it
    # (mm's c, no longer written, is declared In: a pl.Out no store reaches is refused,
    # test_kernel_out_never_stored.py)
    src = MATMUL_SRC.replace("c = pl.assemble(c, pl.matmul(a, b), [0, 0])\n        return c",
                             "r = pl.matmul(a, b)\n        return r")
    src = src.replace("c: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:\n        r =",
                      "c: pl.Tensor[[16, 8], pl.FP32]) -> pl.Tensor[[16, 8], pl.FP32]:\n        r =")
    assert "c: pl.Tensor[[16, 8], pl.FP32]) -> pl.Tensor[[16, 8], pl.FP32]:\n        r =" in src
    p = run_pipeline(pl.parse_program(src, "t.py"))
    mm = ir.python_print(next(f for f in p.functions if f.name == "mm"))
    assert "ret0_out: pl.Out[pl.Tensor[[16, 8], pl.FP32]]" in mm
    assert "pl.store(r, [0, 0], ret0_out)" in mm
    main = ir.python_print(next(f for f in p.functions if f.name == "main"))
    assert "ret0_out: pl.Tensor[[16, 8], pl.FP32] = pl.create_tensor([16, 8], dtype=pl.FP32)" in main
    assert "self.mm(a, b, c, ret0_out" in main
    rng = np.random.default_rng(9)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((32, 8)).astype(np.float32)
    c, d = np.zeros((16, 8), np.float32), np.zeros((16, 8), np.float32)
    pypto.compile(pl.parse_program(src, "t.py"))(a, b, c, d)
    np.testing.assert_allclose(d, -(a @ b).astype(np.float16).astype(np.float32), rtol=2e-3, atol=2e-3)   # c = the returned product


def test_tensor_returns_e2e():
    compiled = pypto.compile(golden_program("anchor_tensor_returns"))
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    for n in (2, 0):
        d = np.zeros((16, 16), np.float32)
        compiled(a, b, n, d)
        s = (a + b) * 8
        np.testing.assert_allclose(d, (np.exp(s) if n > 1 else s) * 0.5 - a, rtol=1e-5)


def test_tensor_returns_outline_and_thread():
    p = run_pipeline(golden_program("anchor_tensor_returns"))
    text = ir.python_print(p)
    # the loop carry and the if result became tiles
    assert "for i, (acc_1,) in pl.range(0, 3, 1, init_values=(acc,)" in text
    assert "acc_2: pl.Tile[[16, 16], pl.FP32] = pl.muls(acc_1, 2.0)" in text
    assert "r_1 = pl.yield_(pl.load(r_2, [0, 0], [16, 16]))" in text
    # the pl.at value used after the scope is returned through halve's ret0_out
    halve = ir.python_print(next(f for f in p.functions if f.name == "halve"))
    assert "ret0_out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]" in halve
    main = ir.python_print(next(f for f in p.functions if f.name == "main"))
    assert "p, tid = pl.submit(self.pick, s, n, ret1_out" in main
    assert "self.halve(p, ret2_out" in main


GROUP_RET_SRC = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIC)
    def vadd(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        r = pl.add(a, b)
        return r

    @pl.function(type=pl.FunctionType.AIV)
    def vneg(self, s: pl.Tensor[[16, 16], pl.FP32], d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        d = pl.assemble(d, pl.neg(s), [0, 0])
        return d

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
             d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.cluster():
            s = self.vadd(a, b)
            d = self.vneg(s, d)
        return d
'''


def test_wrapper_forwards_the_ret_out_param_e2e():
    # a Group (pl.cluster) calling a kernel that returns a tensor-op value gets a ret0_out
    # parameter of its own that it forwards; the orchestration creates the tensor
    p = run_pipeline(pl.parse_program(GROUP_RET_SRC, "t.py"))
    grp = ir.python_print(next(f for f in p.functions if f.name == "main_cluster"))
    assert "ret0_out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]" in grp
    assert "self.vadd(a, b, ret0_out" in grp
    main = ir.python_print(next(f for f in p.functions if f.name == "main"))
    assert "ret0_out: pl.Tensor[[16, 16], pl.FP32] = pl.create_tensor([16, 16], dtype=pl.FP32)" in main
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    d = np.zeros((16, 16), np.float32)
    pypto.compile(pl.parse_program(GROUP_RET_SRC, "t.py"))(a, b, d)
    np.testing.assert_allclose(d, -(a + b), rtol=1e-6)


def test_scalar_computed_in_pl_at_used_after_is_still_located():
    src = MATMUL_SRC.replace("            t = pl.reshape(pl.cast(pl.cast(c, pl.FP16), pl.FP32), [8, 16])   # a same-dtype cast is an error\n",
                             "            t = pl.reshape(pl.cast(pl.cast(c, pl.FP16), pl.FP32), [8, 16])   # a same-dtype cast is an error\n            k = 2\n").replace(
        "        return d", "        e = k + 1\n        return d")
    with pytest.raises(PyptoError, match="'k' is computed inside the pl.at scope and used after it"):
        pypto.compile(pl.parse_program(src, "t.py"))


# -- §4 @pl.function(auto_scope=...) -----------------------------------------------------------
def test_auto_scope_false_e2e():
    compiled = pypto.compile(golden_program("anchor_auto_scope"))
    x = np.random.default_rng(6).standard_normal((16, 16)).astype(np.float32)
    y = np.zeros((16, 16), np.float32)
    z = np.zeros((16, 16), np.float32)
    compiled(x, y, z)
    np.testing.assert_allclose(y, x + 1, rtol=1e-6)
    np.testing.assert_allclose(z, x + 5, rtol=1e-6)


def test_auto_scope_false_places_no_scopes_and_prints():
    p = golden_program("anchor_auto_scope")
    text = ir.python_print(p)
    assert "@pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)" in text
    assert "attrs=" not in text
    assert ir.structural_equal(pl.parse_program(text), p)
    after = ir.python_print(run_pipeline(p))
    main = after[after.index("def main"):]
    assert main.count("with pl.scope():") == 1 and main.count("with pl.manual_scope():") == 1


def test_auto_scope_true_still_wraps():
    src = ir.python_print(golden_program("anchor_auto_scope")).replace(", auto_scope=False", "")
    after = ir.python_print(run_pipeline(pl.parse_program(src)))
    main = after[after.index("def main"):]
    assert main.count("with pl.scope():") >= 2     # the compiler wraps the function body too
    code = pypto.compile(pl.parse_program(src)).files["orchestration/main.cpp"]
    assert code.index("PTO2_SCOPE()") < code.index("alloc_tensors")


def test_auto_scope_must_be_bool_literal():
    src = ("import pypto.language as pl\n\n@pl.program\nclass P:\n"
           "    @pl.function(type=pl.FunctionType.Orchestration, auto_scope=0)  #!\n"
           "    def main(self, a: pl.Tensor[[16], pl.FP32]):\n        pass\n")
    from test_diagnostics import check
    check(src, "auto_scope= must be True or False, got '0'", "0)", help="auto_scope=False")


def test_scope_mode_must_be_scope_mode():
    body_check("with pl.scope(mode=1):  #!\n    d = self.kernel_add(a, b, d)\nreturn d",
               "mode= must be pl.ScopeMode.AUTO or pl.ScopeMode.MANUAL, got '1'", "1)")


def test_manual_scope_in_manual_scope():
    body_check("with pl.manual_scope():\n    with pl.scope(mode=pl.ScopeMode.MANUAL):  #!\n"
               "        d = self.kernel_add(a, b, d)\nreturn d",
               "a manual scope cannot be nested inside another manual scope", "pl.scope(mode")


def test_auto_scope_in_manual_scope_by_mode():
    body_check("with pl.manual_scope():\n    with pl.scope(mode=pl.ScopeMode.AUTO):  #!\n"
               "        d = self.kernel_add(a, b, d)\nreturn d",
               "pl.scope() cannot be nested inside pl.manual_scope()", "pl.scope(mode")


# -- §5 pl.SplitMode / pl.split ------------------------------------------------------------------
def test_split_is_a_cpu_no_op_e2e():
    compiled = pypto.compile(golden_program("anchor_split"))
    x = np.random.default_rng(7).standard_normal((16, 16)).astype(np.float32)
    y = np.zeros((16, 16), np.float32)
    compiled(x, y)
    np.testing.assert_allclose(y, 4 * x - 1, rtol=1e-5, atol=1e-6)


def test_split_attrs_move_to_the_outlined_kernel():
    p = run_pipeline(golden_program("anchor_split"))
    fns = {f.name: f for f in p.functions}
    text = ir.python_print(p)
    assert 'def halves' in text and 'attrs={"split": 1}' in text
    assert 'attrs={"slot_num": 4, "split": 1}' in text and 'attrs={"split": 2}' in text
    assert "main_incore" in fns and "main_spmd" in fns


@pytest.mark.parametrize("opt,message,at", [
    ("pl.split()", "pl.split takes one positional argument, the pl.SplitMode", "pl.split()"),
    ("pl.split(1)", "pl.split needs a pl.SplitMode, got '1'", "1)"),
    ("pl.split(pl.SplitMode.UP_DOWN, slot_num=0)", "slot_num= must be a positive int literal, got '0'", "0)"),
    ("pl.split(pl.SplitMode.UP_DOWN, slot_num=True)", "slot_num= must be a positive int literal, got 'True'", "True"),
    ("pl.split(pl.SplitMode.UP_DOWN, depth=2)", "pl.split has no keyword 'depth'", "2)"),
    ("pl.split(pl.SplitMode.NONE), pl.split(pl.SplitMode.UP_DOWN)", "duplicate optimization 'pl.split'",
     "pl.split(pl.SplitMode.UP"),
    ("pl.unroll", "unknown optimization 'pl.unroll'", "pl.unroll"),
    ("pl.auto_chunk, pl.auto_chunk", "duplicate optimization 'pl.auto_chunk'", "pl.auto_chunk]"),
])
def test_split_diagnostics(opt, message, at):
    body_check(f"with pl.at(level=pl.Level.CORE_GROUP, optimizations=[{opt}]):  #!\n"
               "    d = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], d)\nreturn d", message, at)


def test_split_needs_core_group():
    body_check("with pl.at(level=pl.Level.CHIP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):  #!\n"
               "    d = self.kernel_add(a, b, d)\nreturn d", "pl.split needs level=pl.Level.CORE_GROUP, got "
               "pl.Level.CHIP", "pl.split(")


def test_optimizations_must_be_a_list():
    body_check("with pl.spmd(2, optimizations=pl.split(pl.SplitMode.UP_DOWN)):  #!\n"
               "    d = self.kernel_add(a, b, d)\nreturn d", "optimizations= must be a list literal", "pl.split(")


# -- §8 pipe buffers: reserve_buffer / import_peer_buffer ---------------------------------------
def test_pipe_buffers_bind_base_e2e():
    compiled = pypto.compile(golden_program("anchor_pipe_buffers"))
    x = np.random.default_rng(8).standard_normal((16, 16)).astype(np.float32)
    y = np.zeros((16, 16), np.float32)
    z = np.zeros((16, 16), np.float32)
    compiled(x, y, z)
    np.testing.assert_allclose(y, x + 256, rtol=1e-6)      # ring base 256 + spare AUTO (0)
    np.testing.assert_allclose(z, x + 256, rtol=1e-6)      # the import takes the consumer's base
    assert "reserve_buffer" not in compiled.files["orchestration/main.cpp"]


def _pipe_src(line: str, ftype: str = "AIV") -> str:
    return (f"import pypto.language as pl\n\n@pl.program\nclass P:\n"
            f"    @pl.function(type=pl.FunctionType.AIV)\n"
            f"    def consumer(self, x: {T}, y: pl.Out[{T}]) -> {T}:\n"
            f"        ring = pl.reserve_buffer(name=\"ring\", size=64)\n"
            f"        y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)\n        return y\n\n"
            f"    @pl.function(type=pl.FunctionType.{ftype})\n"
            f"    def k(self, x: {T}, y: pl.Out[{T}]) -> {T}:\n"
            f"        {line}  #!\n"
            f"        y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)\n        return y\n")


@pytest.mark.parametrize("line,message,at", [
    ('b = pl.reserve_buffer(name="a b", size=64)', "name= must be a string literal naming an identifier", '"a b"'),
    ('b = pl.reserve_buffer(name=n, size=64)', "name= must be a string literal naming an identifier", "n, size"),
    ('b = pl.reserve_buffer(name="r", size=0)', "size= must be a positive int literal (bytes), got '0'", "0)"),
    ('b = pl.reserve_buffer(name="r", size=True)', "size= must be a positive int literal", "True"),
    ('b = pl.reserve_buffer(name="r", size=64, base=-5)', "base= must be an int literal >= 0 or pl.AUTO", "-5"),
    ('b = pl.reserve_buffer(name="r")', "pl.reserve_buffer needs size=", "pl.reserve_buffer"),
    ('b = pl.reserve_buffer("r", size=64)', "takes keyword arguments only", '"r"'),
    ('b = pl.import_peer_buffer(name="ring", peer_func="nobody")', "peer_func='nobody' is not a function of this "
     "program", '"nobody"'),
    ('b = pl.import_peer_buffer(name="other", peer_func="consumer")', "peer_func='consumer' does not reserve a "
     "buffer named 'other'", '"consumer"'),
    ('b = pl.import_peer_buffer(name="ring", peer="consumer")', "pl.import_peer_buffer has no keyword 'peer'",
     '"consumer"'),
    # buf.base (§8): only a pipe buffer has one
    ('b = x.base', "'x' has no attribute 'base'", "x.base"),
    # initialize_pipe (§8): accepted as a no-op, its arguments checked
    ('pl.aiv_initialize_pipe(0, 512)', "dir_mask= must be an int literal, 1 (cube to vector), 2 (vector to cube) "
     "or 3 (both); got '0'", "0, 512"),
    ('pl.aiv_initialize_pipe(dir_mask=1, slot_size=-4)', "slot_size= must be an int literal, a positive number",
     "-4"),
    ('pl.aic_initialize_pipe(dir_mask=1)', "pl.aic_initialize_pipe needs slot_size=", "pl.aic_initialize_pipe"),
    ('pl.aic_initialize_pipe(1, 64, c2v=0)', "pl.aic_initialize_pipe has no keyword 'c2v'", "0)"),
    ('pl.aic_initialize_pipe(1, 64, x)', "c2v_consumer_buf= must be an integer scalar", "x)"),
    ('pl.aic_initialize_pipe(1, 64, 0, 0, 0)', "takes at most 4 arguments", "pl.aic_initialize_pipe"),
])
def test_pipe_buffer_diagnostics(line, message, at):
    from test_diagnostics import check
    check(_pipe_src(line), message, at)


def test_pipe_buffer_outside_kernels():
    body_check('b = pl.reserve_buffer(name="r", size=64)  #!\nreturn d',
               "pl.reserve_buffer is only valid in a kernel function or a kernel scope body", "pl.reserve_buffer",
               help="InCore / AIC / AIV")
    body_check('pl.aiv_initialize_pipe(1, 64)  #!\nreturn d',
               "pl.aiv_initialize_pipe is only valid in a kernel function or a kernel scope body",
               "pl.aiv_initialize_pipe", help="InCore / AIC / AIV")


def test_buffer_base_resolves_at_parse_time_and_initialize_pipe_reparses():
    p = golden_program("anchor_pipe_buffers")
    text = ir.python_print(p)
    assert 'pl.system.reserve_buffer(base=256, name="mirror", size=64)' in text    # base=peer.base: the peer's 256
    assert "mirror + 256 - peer" in text                                           # peer.base in an expression
    assert "pl.system.aic_initialize_pipe(peer, 0, dir_mask=1, slot_size=512)" in text
    assert ir.python_print(pl.parse_program(text)) == text
    # the import's base is read from its peer's source, so it does not depend on the parse order
    src = _pipe_src('b = pl.import_peer_buffer(name="ring", peer_func="consumer")\n'
                    '        c = pl.reserve_buffer(name="c", size=8, base=b.base)').replace(
        'name=\"ring\", size=64)', 'name=\"ring\", size=64, base=128)')
    assert 'base=128, name="c"' in ir.python_print(pl.parse_program(src))
    auto = _pipe_src('b = pl.reserve_buffer(name="q", size=8)\n        c = pl.reserve_buffer(name="c", size=8, '
                     'base=b.base)')
    assert 'reserve_buffer(base=-1, name="c"' in ir.python_print(pl.parse_program(auto))   # AUTO stays AUTO


ROW_BROADCAST_SRC = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], r: pl.Tensor[[16, 1], pl.FP32],
          c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.assemble(c, pl.sub(a, r), [0, 0])
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], r: pl.Tensor[[16, 1], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.k(a, r, c)
        return c
'''


def test_tensor_binary_op_row_broadcast_e2e():
    compiled = pypto.compile(pl.parse_program(ROW_BROADCAST_SRC))
    rng = np.random.default_rng(9)
    a = rng.standard_normal((16, 16)).astype(np.float32)
    r = rng.standard_normal((16, 1)).astype(np.float32)
    c = np.zeros((16, 16), np.float32)
    compiled(a, r, c)
    np.testing.assert_allclose(c, a - r, rtol=1e-6)
