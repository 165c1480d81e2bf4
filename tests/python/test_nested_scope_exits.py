"""Values leaving a `with pl.scope()` / `pl.manual_scope()` block nested inside another such block,
and then the outer block too (issue 13; golden tests/golden/nested_scope_exit/). Refused before
("'src' is used outside the runtime scope that produced it ..."; for the TaskId "... a TaskId
lives in the PTO2_SCOPE it is produced in"). StampScopeExits now stamps a nested block's exit
values on the outer block as well, and ResolveTaskIds carries a TaskId out of nested blocks."""

import os

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen
from pypto.errors import PyptoError

from codegen_test_util import GOLDEN_DIR


def _golden():
    with open(os.path.join(GOLDEN_DIR, "nested_scope_exit", "program.py")) as f:
        return f.read()


def _reference(n, a, b, c):
    src, dst = a.copy(), b.copy()
    for _ in range(n):
        dst[...] = src * 2 + 1
        src, dst = dst, src
    out = src * (n + 1)
    c = c.copy()
    for _ in range(2):
        c = out * 2 + 1
    return c * 0.5


@pytest.mark.parametrize("inner", ["manual_scope", "scope"])
@pytest.mark.parametrize("n", [0, 1, 4])
def test_values_leave_nested_blocks_e2e_numpy(inner, n):
    src = _golden()
    if inner == "scope":   # pl.scope() nested in pl.scope() (the TaskId edges then order nothing new)
        src = src.replace("            with pl.manual_scope():\n                prev", "            with pl.scope():\n                prev")
    compiled = pypto.compile(pl.parse_program(src, "program.py"))
    rng = np.random.default_rng(n)
    a, b, c = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(3))
    want = _reference(n, a, b, c)
    out = np.zeros_like(a)
    compiled(a, b, c, out, n, race_check=True)
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_the_outer_slot_is_assigned_right_after_the_inner_block():
    code = codegen.generate_orchestration(pl.parse_program(_golden(), "program.py"), "main").code
    assert "std::optional<Tensor> src_exit;" in code and "std::optional<Tensor> src_exit_1;" in code
    inner_end = code.index("Tensor src = *src_exit_1;")
    assert code.index("src_exit = src;", inner_end) < code.index("Tensor src = *src_exit;")
    assert "steps_exit = steps_exit_1;" in code and "to_u64(((float)(steps_exit)))" in code
    # The TaskId is declared before the nested blocks of the loop body and assigned inside them.
    assert code.index("PTO2TaskId last_1 = PTO2TaskId::invalid();") < code.index("last_1 = task_2_outs.task_id();")


_KERNELS = '''
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, x: pl.Tensor[[16, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), 1.0), [0, 0], y)
        return y
'''


def _program(body):
    src = "import pypto.language as pl\n\n@pl.program\nclass P:" + _KERNELS + '''
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
''' + "\n".join("        " + line for line in body.strip("\n").splitlines()) + "\n        return out\n"
    return src, pl.parse_program(src, "t.py")


def _line(src, marker="#!"):
    return next(i + 1 for i, s in enumerate(src.splitlines()) if marker in s)


def test_a_runtime_allocated_tensor_still_cannot_leave_nested_blocks():
    src, p = _program('''
acc = a
with pl.scope():
    with pl.manual_scope():
        for i in pl.range(n):
            acc, t = pl.submit(self.step, acc)  #!
out, _ = pl.submit(self.step, acc, out)
''')
    with pytest.raises(PyptoError) as ei:
        codegen.generate_orchestration(p, "main")
    e = ei.value
    assert "loop-carried 'acc" in e.message and "a tensor the runtime allocated inside that scope" in e.message
    assert (e.file, e.line) == ("t.py", _line(src))


# pl.Array if results read after their block (golden tests/golden/scope_array_if_exit/): refused
# before ("'z' is used outside the runtime scope that produced it ...").

@pytest.mark.parametrize("n", [0, 4, 5])
def test_array_if_results_read_after_the_block_e2e_numpy(n):
    with open(os.path.join(GOLDEN_DIR, "scope_array_if_exit", "program.py")) as f:
        compiled = pypto.compile(pl.parse_program(f.read(), "program.py"))
    x = np.random.default_rng(n).standard_normal((16, 16)).astype(np.float32)
    z1 = n if n > 3 else 7
    w1 = 5 if n > 4 else 0
    out = np.zeros_like(x)
    compiled(x, out, n, race_check=True)
    np.testing.assert_allclose(out, x + (z1 + 2 + w1), rtol=1e-6)


def test_array_exit_slots_are_c_arrays_copied_slot_by_slot():
    with open(os.path.join(GOLDEN_DIR, "scope_array_if_exit", "program.py")) as f:
        code = codegen.generate_orchestration(pl.parse_program(f.read(), "program.py"), "main").code
    assert "int32_t z_exit[2];" in code and "int32_t w_exit[2];" in code
    assert "z_exit[k] = z_exit_1[k];" in code          # on into the outer block's slot
    assert "w_exit[0] = 2;" in code                     # later in-place versions live in the slot
