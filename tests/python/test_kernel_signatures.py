"""Per-kernel signature metadata (func_name_to_id / func_name_to_core_type /
func_name_to_signature) and kernel_config.py (anchor §15): the run-time direction of each
tensor argument in add_* order at the kernel's first submission; NoDep and promoted Out count
as written; runtime-allocated outputs are OUT; both kernels of a mixed task get its list."""
import os
import subprocess
import sys

import pytest

import pypto.language as pl
from pypto import codegen

from codegen_test_util import GOLDEN_DIR, load_single_program

SRC = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
          c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.muls(pl.load(a, [0, 0], [16, 16]), s), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.AIC)
    def mm(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        b = pl.store(pl.matmul(pl.move(pl.load(a, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Left),
                               pl.move(pl.load(b, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Right)), [0, 0], b)
        return b

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
             d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.manual_scope():
            t, t0 = pl.submit(self.k, a, 2.0)                 # c left out: runtime-allocated OUT
            d, t1 = pl.submit(self.k, t, 1.0, d, deps=[t0])   # a later submission does not change it
        b = self.mm(pl.no_dep(a), b)                          # NoDep -> INOUT
        return d
'''


def _result():
    prog = pl.parse_program(SRC, "sig.py")
    return codegen.generate_orchestration(prog, "main")


def test_signatures_ids_and_core_types():
    r = _result()
    assert r.func_name_to_id == r.kernel_ids == {"k": 0, "mm": 1}
    assert r.func_name_to_core_type == {"k": "AIV", "mm": "AIC"}
    assert r.func_name_to_signature == {"k": ["IN", "OUT"], "mm": ["INOUT", "INOUT"]}


def test_mixed_task_kernels_share_the_task_signature():
    prog = load_single_program(os.path.join(GOLDEN_DIR, "mixed_kernels", "program.py"))
    r = codegen.generate_orchestration(prog, codegen.orchestration_functions(prog)[0])
    groups = [n for n in r.core_types if n not in r.kernel_ids]
    assert not set(groups) & set(r.func_name_to_signature)          # Group names are not keys
    assert set(r.func_name_to_signature) == set(r.kernel_ids)
    assert set(r.func_name_to_core_type.values()) <= {"AIC", "AIV"}


def test_kernel_config_py_is_valid_python_with_the_metadata(tmp_path):
    r = _result()
    text = r.files["kernel_config.py"]
    ns = {}
    exec(compile(text, "kernel_config.py", "exec"), ns)
    assert ns["ORCHESTRATION"] == {"source": "orchestration/main.cpp", "function_name": "aicpu_orchestration_entry"}
    assert ns["RUNTIME_CONFIG"]["aicpu_thread_num"] == 4
    assert ns["KERNELS"] == [
        {"func_id": 0, "name": "k", "source": "kernels/k.cpp", "core_type": "aiv", "signature": ["IN", "OUT"]},
        {"func_id": 1, "name": "mm", "source": "kernels/mm.cpp", "core_type": "aic", "signature": ["INOUT", "INOUT"]},
    ]


def test_pypto_compile_writes_kernel_config(tmp_path):
    src = tmp_path / "prog.py"
    src.write_text(SRC)
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "pypto.cli", "compile", str(src), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (out / "kernel_config.py").is_file() and (out / "orchestration" / "main.cpp").is_file()
    assert '"signature": ["IN", "OUT"]' in (out / "kernel_config.py").read_text()
