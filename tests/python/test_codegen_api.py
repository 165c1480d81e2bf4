"""The Python API of orchestration codegen (spec "Python API"): pypto.codegen / pypto.backend,
the pass pipeline and IR dumps, kernel ids, signatures, and user-facing errors."""

from __future__ import annotations

import os
import textwrap

import pytest

import pypto.language as pl
from pypto import PyptoError, backend, codegen, ir

from codegen_test_util import GOLDEN_DIR, load_single_program, significant_lines

ORCH_BASIC = os.path.join(GOLDEN_DIR, "orch_basic", "program.py")


@pytest.fixture
def orch_basic():
    return load_single_program(ORCH_BASIC)


def test_generate_by_name_and_by_function(orch_basic):
    by_name = codegen.generate_orchestration(orch_basic, "orch_basic")
    by_fn = codegen.generate_orchestration(orch_basic, orch_basic.orch_basic)
    assert by_name.code == by_fn.code
    assert by_name.files == {"orchestration/orch_basic.cpp": by_name.code,
                             "kernel_config.py": by_name.files["kernel_config.py"]}
    assert by_name.func_name == "orch_basic"


def test_kernel_ids_per_callee_in_first_use_order(orch_basic):
    r = codegen.generate_orchestration(orch_basic, "orch_basic")
    assert r.kernel_ids == {"kernel_add": 0}
    assert r.core_types == {"kernel_add": "AIV"}
    assert r.code.count("rt_submit_aiv_task(0, params_t") == 2   # spec README decision 3


def test_signature(orch_basic):
    sig = codegen.generate_orchestration(orch_basic, "orch_basic").signature
    assert [(s.name, s.kind, s.dtype, list(s.shape), s.direction, s.slot) for s in sig] == [
        ("a", "tensor", "FP32", ["16", "16"], "In", 0),
        ("b", "tensor", "FP32", ["16", "16"], "In", 1),
        ("d", "tensor", "FP32", ["16", "16"], "Out", 2),
    ]


def test_signature_scalars_and_dynamic_dims():
    prog = load_single_program(os.path.join(GOLDEN_DIR, "scalars", "program.py"))
    sig = codegen.generate_orchestration(prog, "main").signature
    assert [(s.name, s.kind, s.dtype, s.slot) for s in sig[2:]] == [
        ("alpha", "scalar", "FP32", 0), ("count", "scalar", "INT64", 1), ("enabled", "scalar", "BOOL", 2)]
    prog = load_single_program(os.path.join(GOLDEN_DIR, "dynamic_dims", "program.py"))
    sig = codegen.generate_orchestration(prog, "main").signature
    assert list(sig[1].shape) == ["M", "16"]


def test_backend_selection(orch_basic):
    assert isinstance(backend.get_backend_type(), backend.BackendType)
    old = backend.get_backend_type()
    try:
        backend.set_backend_type(backend.BackendType.Ascend910B)
        assert backend.get_backend_type() is backend.BackendType.Ascend910B
        r = codegen.generate_orchestration(orch_basic, orch_basic.orch_basic)
        assert r.backend is backend.BackendType.Ascend910B
        with pytest.raises(TypeError):
            backend.set_backend_type("Ascend910B")
    finally:
        backend.set_backend_type(old)


def test_run_pipeline_materializes_scopes_and_stamps_carries():
    prog = load_single_program(os.path.join(GOLDEN_DIR, "for_loops", "program.py"))
    prepared = codegen.run_pipeline(prog)
    text = ir.python_print(prepared)
    assert "pl.scope()" in text
    assert "pl.scope()" not in ir.python_print(prog)
    loops = [s for s in _walk(prepared.get("main").body) if isinstance(s, ir.ForStmt)]
    rebinds = [[c.rebind for c in l.carries] for l in loops]
    assert rebinds[0] == [False]                     # acc: written in place
    assert False in rebinds[1] and True in rebinds[1]  # buf in place; cur and off rebound
    assert "NormalizeReturnOrder" in codegen.pass_names()


def _walk(stmt):
    yield stmt
    for attr in ("stmts",):
        for s in getattr(stmt, attr, None) or []:
            yield from _walk(s)
    for attr in ("body", "then_body", "else_body"):
        s = getattr(stmt, attr, None)
        if s is not None:
            yield from _walk(s)


def test_dump_ir_after_each_pass(orch_basic, tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_DUMP_IR", str(tmp_path))
    codegen.generate_orchestration(orch_basic, "orch_basic")
    names = sorted(os.listdir(tmp_path))
    assert names[0] == "00_Input.py"
    for i, p in enumerate(codegen.pass_names(), start=1):
        assert "%02d_%s.py" % (i, p) in names
    last = (tmp_path / ("%02d_ClassifyIterArgCarry.py" % (codegen.pass_names().index("ClassifyIterArgCarry") + 1))).read_text()
    assert "with pl.scope():" in last
    pl.parse_program(last)   # the dumps are DSL text


def _program(src: str):
    return pl.parse_program(textwrap.dedent(src), "prog.py")


KERNEL = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
        return y
'''


def test_error_unknown_function(orch_basic):
    with pytest.raises(PyptoError, match="no function named 'nope'"):
        codegen.generate_orchestration(orch_basic, "nope")


def test_error_not_orchestration(orch_basic):
    with pytest.raises(PyptoError, match="not Orchestration"):
        codegen.generate_orchestration(orch_basic, "kernel_add")


def test_error_assemble_of_dynamic_source():
    # A statically shaped source is copied by LowerTensorAssemble; a dynamic one cannot be.
    prog = _program(KERNEL + '''
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, sizes: pl.Tensor[[4], pl.INT64], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        n = sizes[0]
        part = pl.create_tensor([n, 16], dtype=pl.FP32)
        out = pl.tensor.assemble(out, part, [16, 0])
        return out
''')
    with pytest.raises(PyptoError) as e:
        codegen.generate_orchestration(prog, "main")
    msg = str(e.value)
    assert "tensor.assemble" in msg and "prog.py:" in msg and "help:" in msg


def test_assemble_copy_kernel_is_a_kernel():
    prog = load_single_program(os.path.join(GOLDEN_DIR, "tensor_assemble_copy", "program.py"))
    r = codegen.generate_orchestration(prog, "main")
    assert r.kernel_ids == {"scale_rows": 0, "pypto_copy_fp32_16x16": 1}
    assert r.core_types["pypto_copy_fp32_16x16"] == "AIV"
    assert codegen.run_pipeline(prog).get("pypto_copy_fp32_16x16").type == ir.FunctionType.InCore


def test_error_tile_op_in_orchestration():
    # The frontend refuses it at the op; on IR built another way VerifyOrchestrationProgram does
    # (tests/cpp/transforms/test_verify_program.cpp).
    with pytest.raises(PyptoError, match="pl.load is a tile operation, which only a kernel can run") as ei:
        _program(KERNEL + '''
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 16])
        out = self.k(x, out)
        return out
''')
    assert ei.value.file == "prog.py" and ei.value.line > 0


def test_error_parallel_task_id_carry_needs_literal_trip_count():
    # The parser already rejects it; ClassifyIterArgCarry checks again on IR built by other
    # means (C++ test ClassifyIterArgCarry.DynamicParallelTripCountIsUserError).
    src = KERNEL + '''
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.manual_scope():
            prev = None
            for i in pl.parallel(n):
                out, prev = pl.submit(self.k, x, out, deps=[prev])
        return out
'''
    with pytest.raises(PyptoError, match="statically-known trip count"):
        codegen.generate_orchestration(_program(src), "main")


@pytest.mark.parametrize("case", ["orch_basic", "for_loops", "if_else", "tensor_assemble_copy", "nested_loops"])
def test_pipeline_is_idempotent(case):
    # pypto.compile runs the pipeline and generate_orchestration runs it again by default.
    prog = load_single_program(os.path.join(GOLDEN_DIR, case, "program.py"))
    once = codegen.run_pipeline(prog)
    assert ir.structural_equal(codegen.run_pipeline(once), once)


def test_wrong_option_types_are_a_clear_error(orch_basic):
    # nanobind's "incompatible function arguments" signature dump, and an AttributeError of
    # parse_program's own code for a text that is no str.
    with pytest.raises(PyptoError, match=r"run_pipeline\(\): analyze_auto_scopes_for_deps= is True or False, "
                                         r"got 'yes' \(str\)"):
        codegen.run_pipeline(orch_basic, analyze_auto_scopes_for_deps="yes")
    with pytest.raises(PyptoError, match=r"run_pipeline\(\): verify= is True or False, got 1 \(int\)"):
        codegen.run_pipeline(orch_basic, verify=1)
    with pytest.raises(PyptoError, match=r"run_pipeline\(\): dump_dir= is a directory path .*got int"):
        codegen.run_pipeline(orch_basic, dump_dir=3)
    with pytest.raises(PyptoError, match=r"pl.parse_program takes the program's source text \(a str\), got int"):
        pl.parse_program(123)
    with pytest.raises(PyptoError, match=r"pl.parse_program: filename= names the text's file .*got int"):
        pl.parse_program("x = 1\n", 5)
    with pytest.raises(PyptoError, match=r"pl.parse_function takes the program's source text \(a str\), got NoneType"):
        pl.parse_function(None)
    assert codegen.run_pipeline(orch_basic, analyze_auto_scopes_for_deps=True) is not None
