"""Kernel code generation of the reference tile ops, family by family: the helper call each op
emits (golden-style substrings of the generated C++), that every registered tile op is covered
by a family here, and that a kernel using all of them compiles with -O2 -Wall -Wextra -Werror."""
import shutil
import subprocess

import pytest

import pypto.language as pl
from pypto import codegen
from pypto._core import ir, kernel_cpu
from pypto.runtime import include_dir, kernel_include_dir

from e2e_util import kernel_program_text
from test_e2e_ops_reference import FLOAT_OPS, INT_OPS, float_inputs

# family -> [(DSL expr, text the kernel must contain)]
FAMILIES = {
    "broadcast binary": [("pl.rem(ta, tc)", "pypto_kernel::binary_bcast<pypto_kernel::Storage::F32>(tmp, ta, 16, 32, tc, 1, 32, 16, 32, pypto_kernel::Rem{})"),
                         ("pl.add(ta, tr)", "binary_bcast<pypto_kernel::Storage::F32>(tmp, ta, 16, 32, tr, 16, 1, 16, 32, pypto_kernel::Add{})"),
                         ("pl.add(ta, tb)", "pypto_kernel::binary<pypto_kernel::Storage::F32>(tmp, ta, tb, 512, pypto_kernel::Add{})")],
    "tile x scalar": [("pl.lrelu(ta, 0.5)", "binary_scalar<pypto_kernel::Storage::F32>(tmp, ta, static_cast<float>((0.5f)), 512, pypto_kernel::LRelu{})")],
    "three operands": [("pl.subc(ta, tb, tc)", "ternary_bcast<pypto_kernel::Storage::F32>(tmp, ta, 16, 32, tb, 16, 32, tc, 1, 32, 16, 32, pypto_kernel::Sub{})"),
                       ("pl.addsc(ta, 2.0, tb)", "binary_scalar_tile<pypto_kernel::Storage::F32>(tmp, ta, 16, 32, static_cast<float>((2.0f)), tb, 16, 32, 16, 32, pypto_kernel::Add{})")],
    "unary": [("pl.tile.sin(ta)", "unary_float<pypto_kernel::Storage::F32>(tmp, ta, 512, pypto_kernel::Sin{})")],
    "reductions": [("pl.col_max(ta)", "col_reduce<pypto_kernel::Storage::F32>(tmp, ta, 16, 32, pypto_kernel::Max{})"),
                   ("pl.max(ta, axis=1, keepdim=True)", "row_reduce<pypto_kernel::Storage::F32>(tmp, ta, 16, 32, pypto_kernel::Max{})")],
    "broadcasts": [("pl.col_expand_expdif(ta, tc)", "col_expand<pypto_kernel::Storage::F32>(tmp, ta, tc, 16, 32, pypto_kernel::ExpDif{})"),
                   ("pl.row_expand(ta, tr)", "row_expand<pypto_kernel::Storage::F32>(tmp, ta, tr, 16, 32, pypto_kernel::Second{})")],
    "shape": [("pl.tile.transpose(ta, 0, 1)", "pypto_kernel::transpose(tmp, ta, 16, 32)"),
              ("pl.tile.extract(ta, 1, 2, [4, 4])", "if (!pypto_kernel::extract_block(ctx, tmp, ta, 16, 32, static_cast<int64_t>(1), static_cast<int64_t>(2), 4, 4, \"tile.extract of tile 'ta'\")) return;")],
    "matmul": [("pl.matmul_bias(ta, tw, tc)", "matmul_bias<pypto_kernel::Storage::F32>(tmp, ta, tw, tc, 16, 32, 32)")],
}

EXPECTED_SHAPES = {"pl.col_max(ta)": [1, 32], "pl.max(ta, axis=1, keepdim=True)": [16, 1],
                   "pl.tile.transpose(ta, 0, 1)": [32, 16], "pl.tile.extract(ta, 1, 2, [4, 4])": [4, 4]}

INPUTS = [("a", [16, 32], "FP32"), ("b", [16, 32], "FP32"), ("r", [16, 1], "FP32"), ("c", [1, 32], "FP32"),
          ("w", [32, 32], "FP32")]


def kernel_source(inputs, outputs, scalars=()):
    prog = pl.parse_program(kernel_program_text(inputs, outputs, scalars))
    return kernel_cpu.generate(codegen.run_pipeline(prog), "k")


@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_emission(family):
    for expr, text in FAMILIES[family]:
        src = kernel_source(INPUTS, [("o", EXPECTED_SHAPES.get(expr, [16, 32]), "FP32", expr)])
        assert text in src, f"{expr}: expected\n  {text}\nin\n{src}"


# Registered tile ops that are not tile-valued kernel ops, or that refuse on the CPU.
NOT_KERNEL_VALUES = {"tile.load", "tile.store", "tile.get_block_idx", "tile.get_block_num"}
REFUSED = {"tile.tpush_to_aiv", "tile.tpush_to_aic", "tile.tpop_from_aic", "tile.tpop_from_aiv", "tile.alloc",
           "tile.sort32", "tile.mrgsort_format1", "tile.mrgsort_format2", "tile.gather_compare"}


def test_every_registered_tile_op_is_exercised():
    """A new tile op must come with an end-to-end case (test_e2e_ops*.py) or be listed as refused."""
    import test_e2e_ops
    exercised = " ".join([e for e, _s, _f in FLOAT_OPS.values()] + [e for e, _s, _f in INT_OPS.values()])
    exercised += " pl.not_( pl.batch_matmul( pl.tile.batch_matmul_acc( pl.cmps( pl.exp( pl.log( pl.sqrt("
    exercised += " pl.rsqrt( pl.recip( pl.neg( pl.abs( pl.relu( pl.row_max( pl.row_min( pl.row_sum( pl.row_expand_add("
    exercised += " pl.row_expand_sub( pl.row_expand_mul( pl.row_expand_div( pl.matmul( pl.matmul_acc( pl.maximum("
    exercised += " pl.minimum( pl.div( pl.cast( pl.move( pl.tile.full( pl.tile.create( pl.or_( pl.and_("
    import test_e2e_ops_access   # element access and the lane index (tests/python/test_e2e_ops_access.py)
    exercised += " " + " ".join(test_e2e_ops_access.ACCESS_BODY) + test_e2e_ops_access.SCATTER_GATHER
    assert test_e2e_ops   # the core ops' end-to-end file
    missing = []
    for name in ir.op_names():
        if not name.startswith("tile.") or name in NOT_KERNEL_VALUES | REFUSED:
            continue
        short = name[len("tile."):]
        spellings = {f"pl.{short}(", f"pl.tile.{short}(", f"pl.{short}_("}
        if not any(s in exercised for s in spellings):
            missing.append(name)
    assert not missing, f"tile ops without an end-to-end case: {missing}"


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_all_reference_ops_compile_warning_free(tmp_path):
    vals = float_inputs()
    fsrc = kernel_source([(n, list(v.shape), "FP32") for n, v in vals.items()],
                         [("o_" + n, s, "FP32", e) for n, (e, s, _f) in FLOAT_OPS.items()],
                         [("s", "FP32"), ("i", "INDEX")])
    ints = {"a": [16, 32], "b": [16, 32], "k": [16, 32], "idx": [16, 32], "u": [2, 4], "src": [8, 32],
            "mi": [16, 24], "wi": [24, 32]}
    isrc = kernel_source([(n, s, "INT32") for n, s in ints.items()],
                         [("o_" + n, s, "INT32", e) for n, (e, s, _f) in INT_OPS.items()], [("i", "INT32")])
    for tag, src in (("float_ops", fsrc), ("int_ops", isrc)):
        path = tmp_path / (tag + ".cpp")
        path.write_text(src)
        r = subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I" + include_dir(),
                            "-I" + kernel_include_dir(), "-c", str(path), "-o", str(tmp_path / (tag + ".o"))],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[:4000]
