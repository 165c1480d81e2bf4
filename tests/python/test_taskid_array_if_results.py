"""TaskId arrays as if-results (issue 13, anchor_features.md §13; golden
tests/golden/manual_taskid_array_if/). Refused before ("if result 'tids' has an unsupported
type"); now a branch that updates the pre-if array in place yields that array (no code) and
branches that yield different arrays fill a phi array slot by slot. Checked on the numbers
(NumPy, race-checked), on the executed task graph (the consumer waits for every slot's task)
and on the located errors for misuse."""

import os
import re

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen
from pypto.errors import PyptoError

from codegen_test_util import GOLDEN_DIR, load_single_program

_NODE = re.compile(r'^\s*(\w+) \[label="((?:[^"\\]|\\.)*)", kind="(\w+)"', re.M)
_EDGE = re.compile(r'^\s*(\w+) -> (\w+) \[kind="(\w+)"', re.M)


def golden():
    return load_single_program(os.path.join(GOLDEN_DIR, "manual_taskid_array_if", "program.py"))


def reference(n, out):
    want = out.copy()
    if n > 1:
        want *= 2              # the first pl.parallel doubles every block
    if n > 2:
        want *= 2              # the second one again
    want[:16] *= 2             # the consumer doubles block 0
    return want


def _graph(compiled, *inputs):
    text = compiled.task_graph(*inputs)
    tasks = [m.group(1) for m in _NODE.finditer(text) if m.group(3) == "task"]
    succ = {}
    for m in _EDGE.finditer(text):
        succ.setdefault(m.group(1), set()).add(m.group(2))
    return tasks, succ


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_task_id_array_if_results_e2e_numpy(n):
    compiled = pypto.compile(golden())
    out = np.random.default_rng(n).standard_normal((64, 16)).astype(np.float32)
    want = reference(n, out)
    compiled(out, n, race_check=True)
    np.testing.assert_allclose(out, want, rtol=1e-6)


@pytest.mark.parametrize("n, producers", [(2, 4), (3, 4)])
def test_the_consumer_depends_on_every_slot_of_the_if_result(n, producers):
    compiled = pypto.compile(golden())
    tasks, succ = _graph(compiled, np.ones((64, 16), np.float32), n)
    last = tasks[-1]
    direct = [t for t in tasks[:-1] if last in succ.get(t, ())]
    assert len(direct) == producers                  # deps=[fin] fans out over fin's 4 slots
    assert direct == tasks[-1 - producers:-1]        # ... the slots of the branch that ran


def test_in_place_result_and_phi_array_in_cpp():
    code = codegen.generate_orchestration(golden(), "main").code
    assert code.count("PTO2TaskId tids[4];") == 1 and "PTO2TaskId fin[4];" in code
    assert "fin[k] = again[k];" in code and "fin[k] = tids[k];" in code
    assert re.search(r'tids\[pto2_array_slot\(b, 4, "[^"]+", \d+\)\] = t;', code) and "if (fin[k].is_valid())" in code


def _program(body):
    src = '''import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, row: pl.Scalar[pl.INDEX],
          out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        t = pl.load(out, [row, 0], [16, 16])
        out = pl.store(pl.add(t, t), [row, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 16], pl.FP32]:
''' + "\n".join("        " + line for line in body.strip("\n").splitlines()) + "\n        return out\n"
    return src, pl.parse_program(src, "t.py")


def _marked_line(src):
    return next(i + 1 for i, s in enumerate(src.splitlines()) if "#!" in s)


def test_if_result_without_an_else_keeps_the_pre_if_array():
    src, p = _program('''
with pl.manual_scope():
    tids = pl.array.create(2, pl.TASK_ID)
    if n > 0:
        out, t = pl.submit(self.k, 0, out)
        tids[0] = t
    out, u = pl.submit(self.k, 0, out, deps=[tids])
''')
    code = codegen.generate_orchestration(p, "main").code
    assert code.count("PTO2TaskId tids") == 1 and "tids[0] = t;" in code
    out = np.ones((64, 16), np.float32)
    pypto.compile(p)(out, 1, race_check=True)
    assert out[0, 0] == 4 and out[16, 0] == 1


def test_phi_array_used_after_its_manual_scope_is_a_located_error():
    src, p = _program('''
with pl.manual_scope():
    a = pl.array.create(2, pl.TASK_ID)
    b = pl.array.create(2, pl.TASK_ID)
    out, t = pl.submit(self.k, 0, out)
    b[0] = t
    if n > 0:
        fin = b
    else:
        fin = a
out, u = pl.submit(self.k, 0, out, deps=[fin])  #!
''')
    with pytest.raises(PyptoError) as ei:
        codegen.generate_orchestration(p, "main")
    e = ei.value
    assert "deps= names TaskId 'fin" in e.message and "whose scope has already closed here" in e.message
    assert (e.file, e.line) == ("t.py", _marked_line(src))


# VerifyArrayVersions covers TaskId arrays (issue 13): `tids[k] = t` overwrites the slot in
# place, so a dependency on an older version would wait for the new task instead of the old one.

@pytest.mark.parametrize("body", [
    # deps= on the version from before the update
    '''
with pl.manual_scope():
    tids = pl.array.create(2, pl.TASK_ID)
    old = tids
    out, t = pl.submit(self.k, 0, out)
    tids[0] = t
    out, u = pl.submit(self.k, 16, out, deps=[old])  #!
''',
    # a branch updated it in place: after the if the old version is gone on one path
    '''
with pl.manual_scope():
    tids = pl.array.create(2, pl.TASK_ID)
    old = tids
    if n > 0:
        out, t = pl.submit(self.k, 0, out)
        tids[0] = t
    out, u = pl.submit(self.k, 16, out, deps=[old])  #!
''',
    # a slot read of the old version after a loop that updates it
    '''
with pl.manual_scope():
    tids = pl.array.create(4, pl.TASK_ID)
    old = tids
    for b in pl.parallel(4):
        out, t = pl.submit(self.k, b * 16, out)
        tids[b] = t
    prev = old[1]  #!
    out, u = pl.submit(self.k, 16, out, deps=[prev])
''',
    # a task_dummy's deps=
    '''
with pl.manual_scope():
    tids = pl.array.create(2, pl.TASK_ID)
    old = tids
    out, t = pl.submit(self.k, 0, out)
    tids[1] = t
    bar = pl.system.task_dummy(deps=[old])  #!
    out, u = pl.submit(self.k, 0, out, deps=[bar])
''',
])
def test_reading_a_replaced_task_id_array_version_is_a_located_error(body):
    src, p = _program(body)
    with pytest.raises(PyptoError) as ei:
        codegen.generate_orchestration(p, "main")
    e = ei.value
    assert "TaskId array 'old' is read after an in-place update (line" in e.message
    assert "this older version no longer exists" in e.message
    assert "read the array's latest name" in e.help and "old[k]" in e.help
    assert (e.file, e.line) == ("t.py", _marked_line(src))


def test_a_slot_snapshot_before_the_update_and_the_latest_version_are_fine():
    src, p = _program('''
with pl.manual_scope():
    tids = pl.array.create(2, pl.TASK_ID)
    out, t = pl.submit(self.k, 0, out)
    tids[0] = t
    first = tids[0]                     # a scalar snapshot survives the next update
    out, t2 = pl.submit(self.k, 0, out, deps=[tids])
    tids[0] = t2
    out, t3 = pl.submit(self.k, 16, out, deps=[first])
    out, t4 = pl.submit(self.k, 0, out, deps=[tids])
''')
    code = codegen.generate_orchestration(p, "main").code
    assert "PTO2TaskId first = tids[0];" in code
    out = np.ones((64, 16), np.float32)
    pypto.compile(p)(out, 0, race_check=True)
    assert out[0, 0] == 8 and out[16, 0] == 2 and out[32, 0] == 1


# A pl.parallel TaskId carry (pl.slots(N)) as an if-result (golden manual_taskid_slots_if/):
# before, the if-result was a scalar `PTO2TaskId prev_1;` assigned an array (C++ did not compile).

def slots_golden():
    return load_single_program(os.path.join(GOLDEN_DIR, "manual_taskid_slots_if", "program.py"))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
def test_slot_array_if_result_e2e_numpy(n):
    compiled = pypto.compile(slots_golden())
    out = np.random.default_rng(n).standard_normal((64, 16)).astype(np.float32)
    want = out * 2 ** min(n, 3)        # one doubling per phase that ran
    want[:16] *= 2                     # the consumer
    compiled(out, n, race_check=True)
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_slot_array_if_result_is_a_phi_array_in_cpp_and_orders_the_consumer():
    code = codegen.generate_orchestration(slots_golden(), "main").code
    phi = re.search(r"PTO2TaskId (prev_\d+)\[4\];\n\s*if \(r < n\)", code)
    assert phi, code
    assert re.search(r"\n(\s*)%s\[k\] = prev_\d+\[k\];" % phi.group(1), code)   # slot copies, both branches
    compiled = pypto.compile(slots_golden())
    tasks, succ = _graph(compiled, np.ones((64, 16), np.float32), 2)
    assert len(tasks) == 9
    last = tasks[-1]
    assert [t for t in tasks if last in succ.get(t, ())] == tasks[4:8]   # every slot of phase 1
    # phase 1 waits for phase 0 through one barrier (ExpandManualPhaseFence): 4 edges in, 4 out
    (barrier,) = {s for a in tasks[0:4] for s in succ.get(a, ())}
    assert barrier not in tasks and all(succ[a] == {barrier} for a in tasks[0:4])
    assert succ[barrier] == set(tasks[4:8])


def test_slot_arrays_of_different_sizes_in_the_branches_are_a_located_error():
    src, p = _program('''
with pl.manual_scope():
    prev = None
    if n > 0:  #!
        for b in pl.parallel(4):
            out, prev = pl.submit(self.k, b * 16, out, deps=[prev])
    else:
        for b in pl.parallel(2):
            out, prev = pl.submit(self.k, b * 16, out, deps=[prev])
    out, last = pl.submit(self.k, 0, out, deps=[prev])
''')
    with pytest.raises(PyptoError) as ei:
        codegen.generate_orchestration(p, "main")
    e = ei.value
    assert "is an array of 4 TaskIds in one branch and of 2 in the other" in e.message
    assert "same trip count" in e.help and (e.file, e.line) == ("t.py", _marked_line(src))
