"""A TaskId (any scalar) a loop rebinds before reading it, read neither after the loop nor around an
enclosing loop, is not carried (python/pypto/frontend/control_flow.py, _dead_scalar). Before, a pl.parallel
loop followed by another loop that reuses the name (`x, tid = pl.submit(...)`, found by
tests/python/host_fuzz.py) was refused: "loop-carried TaskId 'tid' is a scalar but starts from an
array of TaskIds", though no value of `tid` flows into or out of the second loop. A name whose value
does flow still is carried, and the array-versus-scalar error stays where it is real."""
import re

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import host
from pypto.errors import PyptoError

_KERNEL = '''
    @pl.function(type=pl.FunctionType.InCore)
    def k_add(self, k: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.FP32],
              c: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        c = pl.store(pl.add(pl.load(c, [k * 2, 0], [2, 8]), s), [k * 2, 0], c)
        return c
'''


def _l2(body):
    return ('import pypto.language as pl\n\n@pl.program\nclass P:' + _KERNEL + '''
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, c: pl.InOut[pl.Tensor[[8, 8], pl.FP32]], d: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
''' + "".join("        " + ln + "\n" for ln in body.strip("\n").splitlines()) + "        return c\n")


def _host(body):
    return ('import pypto.language as pl\n\n@pl.program\nclass P:' + _KERNEL + '''
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_add(self, k: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.FP32],
                 c: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        c = self.k_add(k, s, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def main(self, c: pl.InOut[pl.Tensor[[8, 8], pl.FP32]], d: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
''' + "".join("        " + ln + "\n" for ln in body.strip("\n").splitlines()) + "        return c\n")


# pl.parallel leaves 2 TaskIds under 'tid'; the pl.range loop binds a fresh one per iteration
_REUSED = '''
ids = pl.array.create(2, pl.TASK_ID)
for i in pl.parallel(2):
    c, tid = pl.submit(SELF_add, i, 1.0, c)
    ids[i] = tid
jds = pl.array.create(4, pl.TASK_ID)
for i in pl.range(4):
    d, tid = pl.submit(SELF_add, i, 2.0, d, deps=[ids])
    jds[i] = tid
c, _ = pl.submit(SELF_add, 3, 4.0, c, deps=[jds])
'''


def _want():
    c, d = np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32)
    c[0:4] += 1.0
    d[:] += 2.0
    c[6:8] += 4.0
    return c, d


def test_a_task_id_reused_after_a_parallel_loop_runs_at_l2():
    prog = pypto.compile(pl.parse_program(_l2(_REUSED.replace("SELF_add", "self.k_add")), "p.py"))
    try:
        c, d = np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32)
        prog(c, d)
    finally:
        prog.close()
    for got, want in zip((c, d), _want()):
        np.testing.assert_array_equal(got, want)


def test_a_task_id_reused_after_a_parallel_loop_runs_at_l3():
    prog = host.compile_host(pl.parse_program(_host(_REUSED.replace("SELF_add", "self.chip_add")), "p.py"), chips=2)
    c, d = np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32)
    prog(c, d)
    for got, want in zip((c, d), _want()):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("make", [_l2, _host], ids=["l2", "host"])
def test_a_task_id_read_after_the_loop_is_still_carried_and_the_real_conflict_refused(make):
    # after the pl.range loop 'tid' is its last iteration's TaskId, or (no iteration) the pl.parallel
    # loop's 2: the carry is needed, and it cannot start from the array
    target = "self.k_add" if make is _l2 else "self.chip_add"
    body = _REUSED.replace("SELF_add", target).replace("deps=[jds])", "deps=[tid])")
    with pytest.raises(PyptoError) as ei:
        src = make(body)
        if make is _l2:
            pypto.compile(pl.parse_program(src, "p.py"))
        else:
            host.compile_host(pl.parse_program(src, "p.py"), chips=2)
    assert "loop-carried TaskId 'tid' is a scalar but starts from an array of TaskIds" in str(ei.value), str(ei.value)
    assert ei.value.line == src.splitlines().index("        for i in pl.range(4):") + 1, str(ei.value)


def test_which_task_ids_a_loop_carries():
    from pypto import ir

    def carries(body):   # the loops that carry t (printed t, t_1, ...)
        text = ir.python_print(pl.parse_program(_l2(body), "p.py"))
        return [inits for inits in re.findall(r"init_values=\(([^)]*)\)", text)
                if any(re.fullmatch(r"t(_\d+)?", n.strip()) for n in inits.split(","))]

    fresh = '''
t = None
for i in pl.range(2):
    c, t = pl.submit(self.k_add, i, 1.0, c)
'''
    assert carries(fresh) == []                                                      # dead on entry and after
    assert carries(fresh + "c, _ = pl.submit(self.k_add, 0, 1.0, c, deps=[t])\n")    # read after the loop
    read_first = '''
t = None
for i in pl.range(2):
    c, t = pl.submit(self.k_add, i, 1.0, c, deps=[t])
'''
    assert carries(read_first)                                                       # read before rebound
    back_edge = '''
t = None
for j in pl.range(2):
    c, _ = pl.submit(self.k_add, j, 1.0, c, deps=[t])
    for i in pl.range(2):
        c, t = pl.submit(self.k_add, i, 1.0, c)
'''
    assert len(carries(back_edge)) == 2       # the inner loop's t reaches the outer loop's next iteration
    one_branch = '''
t = None
for i in pl.range(2):
    if i > 0:
        c, t = pl.submit(self.k_add, i, 1.0, c)
c, _ = pl.submit(self.k_add, 0, 1.0, c, deps=[t])
'''
    assert carries(one_branch)                # rebound on one path only: the value before the loop flows
