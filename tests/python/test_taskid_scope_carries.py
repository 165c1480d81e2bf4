"""TaskIds carried out of a runtime scope by a loop (issue 13; orchestration_codegen.txt
"lexical-scope lifetime", issue #1811): the carried TaskId's C++ variable is declared before
the PTO2_SCOPE block, so the loop's yield after the block still names it. Each program here
was refused before ("yielded TaskId 'prev' is out of scope here", or a message calling the
TaskId a tensor the runtime allocated); now it compiles, runs ordered as the spec describes
(checked on the executed task graph) and gives the NumPy result."""

import re

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen
from pypto.errors import PyptoError

_NODE = re.compile(r'^\s*(\w+) \[label="((?:[^"\\]|\\.)*)", kind="(\w+)"', re.M)
_EDGE = re.compile(r'^\s*(\w+) -> (\w+) \[kind="(\w+)"', re.M)

_KERNEL = '''
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, row: pl.Scalar[pl.INDEX],
          out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        t = pl.load(out, [row, 0], [16, 16])
        out2 = pl.store(pl.add(t, t), [row, 0], out)
        return out
'''


def _program(body):
    src = "import pypto.language as pl\n\n@pl.program\nclass P:\n" + _KERNEL + '''
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
''' + "\n".join("        " + line for line in body.strip("\n").splitlines()) + "\n        return out\n"
    return pl.parse_program(src)


def _graph(compiled, *inputs):
    """Task nodes in submission order (label 'k'), barrier nodes, and reachability."""
    text = compiled.task_graph(*inputs)
    nodes = [(m.group(1), m.group(2).split("\\n")[0], m.group(3)) for m in _NODE.finditer(text)]
    succ = {}
    for m in _EDGE.finditer(text):
        succ.setdefault(m.group(1), set()).add(m.group(2))

    def reaches(a, b):
        seen, todo = set(), [a]
        while todo:
            n = todo.pop()
            for s in succ.get(n, ()):
                if s == b:
                    return True
                if s not in seen:
                    seen.add(s)
                    todo.append(s)
        return False

    tasks = [n for n, label, kind in nodes if kind == "task"]
    return tasks, [n for n, _, kind in nodes if kind == "barrier"], reaches


def test_issue_1811_parallel_carry_through_manual_scope_in_a_range_loop():
    p = _program('''
prev = None
for n in pl.range(3):
    with pl.manual_scope():
        for b in pl.parallel(4):
            out, prev = pl.submit(self.k, b * 16, out, deps=[prev])
out, last = pl.submit(self.k, 0, out, deps=[prev])
''')
    code = codegen.generate_orchestration(p, "main").code
    # The inner array carry is declared before the MANUAL block; the outer yield copies it after.
    before, inside = code.split("PTO2_SCOPE(PTO2ScopeMode::MANUAL) {", 1)
    assert re.search(r"PTO2TaskId (\w+)\[4\];\s*$", before)
    compiled = pypto.compile(p)
    out = np.arange(64 * 16, dtype=np.float32).reshape(64, 16)
    want = out.copy()
    want[16:] *= 8          # three phases double each block
    want[:16] *= 16         # and the consumer doubles block 0 once more
    compiled(out)
    np.testing.assert_allclose(out, want)
    tasks, barriers, reaches = _graph(compiled, np.ones((64, 16), np.float32))
    assert len(tasks) == 13 and len(barriers) == 2   # phase 0 starts from None: no barrier
    phases = [tasks[0:4], tasks[4:8], tasks[8:12]]
    for earlier, later in zip(phases, phases[1:]):
        for a in earlier:
            for b in later:
                assert reaches(a, b), (a, b)        # every task of phase n+1 waits for all of phase n
    for phase in phases:
        for a in phase:
            assert all(not reaches(a, b) for b in phase)   # a phase's branches stay parallel
    assert all(reaches(a, tasks[12]) for a in phases[2])   # the consumer after the loop


@pytest.mark.parametrize("scope", ["manual_scope", "scope"])
def test_scalar_task_id_carried_through_a_scope_in_a_range_loop(scope):
    p = _program(f'''
prev = None
for n in pl.range(3):
    with pl.{scope}():
        out, prev = pl.submit(self.k, n * 16, out, deps=[prev])
out, last = pl.submit(self.k, 48, out, deps=[prev])
''')
    code = codegen.generate_orchestration(p, "main").code
    assert re.search(r"PTO2TaskId (\w+) = PTO2TaskId::invalid\(\);\n\s*PTO2_SCOPE", code)
    compiled = pypto.compile(p)
    out = np.arange(64 * 16, dtype=np.float32).reshape(64, 16)
    want = out * 2
    compiled(out)
    np.testing.assert_allclose(out, want)
    tasks, _, reaches = _graph(compiled, np.ones((64, 16), np.float32))
    assert len(tasks) == 4
    for a, b in zip(tasks, tasks[1:]):
        assert reaches(a, b)                        # the carried TaskId chains the iterations


def test_task_id_used_after_its_scope_is_named_a_task_id():
    p = _program('''
prev = None
for n in pl.range(3):
    with pl.manual_scope():
        out, t = pl.submit(self.k, 0, out, deps=[prev])
        prev = pl.system.task_dummy(deps=[t])
''')
    with pytest.raises(PyptoError) as e:
        codegen.generate_orchestration(p, "main")
    msg = str(e.value)
    assert "TaskId 'prev" in msg and "tensor the runtime allocated" not in msg
