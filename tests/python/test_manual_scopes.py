"""TaskId lifetime across PTO2_SCOPE blocks and tensors that cross a manual scope:

- a user edge naming a TaskId whose scope closed is a located error (codegen-level rejection);
- an Array[N, TASK_ID] declared before a manual scope and written inside it survives the
  scope (the enclosing-storage array-carry exception);
- a buffer created inside a manual scope and read after it is hoisted before the block.
"""

import pathlib
import textwrap

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen
from pypto.errors import PyptoError

KERNEL = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64], pl.FP32], out: pl.InOut[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        out = pl.store(pl.exp(pl.load(x, [0], [64])), [0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def part(self, x: pl.Tensor[[64], pl.FP32], i: pl.Scalar[pl.INDEX],
             out: pl.InOut[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        out = pl.store(pl.add(pl.load(x, [i * 16], [16]), 1.0), [i * 16], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[64], pl.FP32], out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        out = pl.store(pl.load(x, [0], [64]), [0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32], out: pl.InOut[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
{body}
        return out
'''


def program(tmp_path, body, name="prog.py"):
    src = KERNEL.format(body=textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8))
    path = tmp_path / name
    path.write_text(src)
    return pl.parse_program(src, str(path)), src


def line_of(src, needle):
    return next(i + 1 for i, l in enumerate(src.splitlines()) if needle in l)


def test_unresolvable_user_edge_names_the_task_id_and_line(tmp_path):
    prog, src = program(tmp_path, """
        with pl.manual_scope():
            out, t = pl.submit(self.k, x, out)
        out, _ = pl.submit(self.k, x, out, deps=[t])
    """)
    with pytest.raises(PyptoError) as ei:
        codegen.generate_orchestration(prog, "main")
    msg = str(ei.value)
    assert "deps= names TaskId 't'" in msg
    assert "whose scope has already closed" in msg
    assert f"prog.py:{line_of(src, 'deps=[t]')}:" in msg                      # the consumer's line
    assert f"produced at {tmp_path / 'prog.py'}:{line_of(src, 'out, t = pl.submit')}" in msg


def test_unresolvable_user_edge_is_a_dependency_error_and_a_value_error(tmp_path):
    import pypto
    from pypto.errors import DependencyError

    prog, src = program(tmp_path, """
        with pl.manual_scope():
            out, t = pl.submit(self.k, x, out)
        out, _ = pl.submit(self.k, x, out, deps=[t])
    """)
    with pytest.raises(ValueError) as ei:        # the spec raises pypto::ValueError
        codegen.generate_orchestration(prog, "main")
    assert isinstance(ei.value, DependencyError) and isinstance(ei.value, PyptoError)
    assert pypto.DependencyError is DependencyError
    assert "deps= names TaskId 't'" in str(ei.value)          # the message is kept
    assert f"prog.py:{line_of(src, 'deps=[t]')}:" in str(ei.value)


def test_same_edge_inside_the_scope_is_fine(tmp_path):
    prog, _ = program(tmp_path, """
        with pl.manual_scope():
            out, t = pl.submit(self.k, x, out)
            out, _ = pl.submit(self.k, x, out, deps=[t])
    """)
    assert "= t;" in codegen.generate_orchestration(prog, "main").code


def test_array_written_in_manual_scope_survives_it(tmp_path):
    prog, _ = program(tmp_path, """
        tids = pl.array.create(4, pl.TASK_ID)
        with pl.manual_scope():
            for i in pl.range(4):
                out, tid = pl.submit(self.part, x, i, out)
                tids[i] = tid
        barrier = pl.system.task_dummy(deps=[tids])
        out, _ = pl.submit(self.k, x, out, deps=[barrier])
    """)
    code = codegen.generate_orchestration(prog, "main").code
    assert "PTO2TaskId tids[4];" in code
    assert "if (tids[k].is_valid()) params_t1_deps[params_t1_deps_count++] = tids[k];" in code
    c = pypto.compile(prog)
    x = np.random.rand(64).astype(np.float32)
    out = np.zeros(64, np.float32)
    st = c(x, out, aiv_workers=4)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)
    assert st.tasks_dummy == 1


def test_buffer_created_in_manual_scope_is_hoisted_for_readers_after_it(tmp_path):
    prog, _ = program(tmp_path, """
        with pl.manual_scope():
            buf = pl.create_tensor([64], dtype=pl.FP32)
            buf, t = pl.submit(self.copy, x, buf)
            out, _ = pl.submit(self.k, buf, out, deps=[t])
        out = self.k(buf, out)
    """)
    code = codegen.generate_orchestration(prog, "main").code
    hoisted = code.index("TaskOutputTensors alloc_0 = alloc_tensors(buf_ci);")
    assert hoisted < code.index("PTO2_SCOPE(PTO2ScopeMode::MANUAL)")
    c = pypto.compile(prog)
    x = np.random.rand(64).astype(np.float32)
    out = np.zeros(64, np.float32)
    c(x, out)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)


def test_parallel_carry_with_start_and_step_writes_slot_by_index(tmp_path):
    prog, _ = program(tmp_path, """
        with pl.manual_scope():
            prev = None
            for r in pl.range(2):
                for i in pl.parallel(0, 4, 2):
                    out, prev = pl.submit(self.part, x, i + r, out, deps=[prev])
            out, _ = pl.submit(self.part, x, 3, out, deps=[prev])
    """)
    code = codegen.generate_orchestration(prog, "main").code
    assert "PTO2TaskId prev_1[2];" in code
    assert "prev_2[i / 2] = " in code
    c = pypto.compile(prog)
    x = np.random.rand(64).astype(np.float32)
    out = np.zeros(64, np.float32)
    c(x, out, aiv_workers=2)
    np.testing.assert_allclose(out, x + 1.0, rtol=1e-6)


def test_runtime_allocated_output_read_after_its_manual_scope_is_an_error(tmp_path):
    # `tmp` is allocated by the runtime (copy's Out argument left out) inside the manual scope;
    # that storage is reclaimed when the scope ends, so reading it after the scope is refused
    # with a located error (instead of C++ that names an out-of-scope TaskOutputTensors).
    prog, src = program(tmp_path, """
        with pl.manual_scope():
            tmp, t = pl.submit(self.copy, x)
        out = self.k(tmp, out)
    """)
    with pytest.raises(PyptoError) as ei:
        codegen.generate_orchestration(prog, "main")
    msg = str(ei.value)
    assert "'tmp' is used outside the runtime scope that produced it" in msg
    assert f"(line {line_of(src, 'tmp, t = pl.submit')})" in msg
    assert f"prog.py:{line_of(src, 'out = self.k(tmp, out)')}:" in msg
    assert "help: create it before the scope with pl.create_tensor" in msg


def test_runtime_allocated_output_read_inside_its_manual_scope_runs(tmp_path):
    prog, _ = program(tmp_path, """
        with pl.manual_scope():
            tmp, t = pl.submit(self.copy, x)
            out, _ = pl.submit(self.k, tmp, out, deps=[t])
    """)
    x = np.linspace(-1, 1, 64).astype(np.float32)
    out = np.zeros(64, np.float32)
    pypto.compile(prog)(x, out)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-5)
