"""Regression tests for outcomes `make fuzz` (scripts/fuzz.py) found outside "ran" and
"located error", each reduced to its smallest program."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.errors import PyptoError


def test_kernel_returning_a_tensor_other_than_its_annotation_is_located():
    # seed 1, mutant 365: `-> pl.Tensor[[16, 17], ...]` on a kernel returning its [16, 16]
    # parameter reached a pass as an internal error (AssignStmt type mismatch).
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def work(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 17], pl.FP32]:
        out = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = self.work(x, out)
        return out
'''
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, filename="p.py")
    e = ei.value
    assert e.line == 10 and "return value is pl.Tensor[[16, 16], pl.FP32] but 'work' declares" in e.message, str(e)


_NESTED_CARRY = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, data: pl.Tensor[[256, 16], pl.FP32], row: pl.Scalar[pl.INDEX],
          out: pl.InOut[pl.Tensor[[256, 16], pl.FP32]]) -> pl.Tensor[[256, 16], pl.FP32]:
        out = pl.store(pl.load(data, [row, 0], [16, 16]), [row, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, out: pl.Tensor[[256, 16], pl.FP32],
             res: pl.Out[pl.Tensor[[256, 16], pl.FP32]]) -> pl.Tensor[[256, 16], pl.FP32]:
        res = pl.store(pl.load(out, [0, 0], [256, 16]), [0, 0], res)
        return res

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[256, 16], pl.FP32], out: pl.InOut[pl.Tensor[[256, 16], pl.FP32]],
             res: pl.Out[pl.Tensor[[256, 16], pl.FP32]]) -> pl.Tensor[[256, 16], pl.FP32]:
        with pl.manual_scope():
            prev = None
            for o in pl.parallel(4):
BODY
            res, last = pl.submit(self.copy, out, res, deps=[prev])
        return res
'''

_INNER = {
    # seed 2802, mutant 405 (case1 wrapped in `for _fz in pl.parallel(3)`): an internal error
    # "array carry size mismatch on yield of 'prev'" in the generator. (The mutant's rows
    # overlapped: here each outer iteration's two phases write its own 3 blocks.)
    "range_then_parallel_3": ('''
                for p in pl.range(2):
                    for b in pl.parallel(3):
                        out, prev = pl.submit(self.k, data, (o * 3 + b) * 16, out, deps=[prev])''',
                              [o * 3 + b for o in range(4) for b in range(3)]),
    # The same sizes compiled: every outer iteration copied its 4 ids over the others' and the
    # `copy` task after the loop waited on the last iteration's only (the race checker's 12 races).
    "parallel_4": ('''
                for b in pl.parallel(4):
                    out, prev = pl.submit(self.k, data, (o * 4 + b) * 16, out, deps=[prev])''', list(range(16))),
    "branch_parallel_2": ('''
                if o > 1:
                    for b in pl.parallel(2):
                        out, prev = pl.submit(self.k, data, (o * 2 + b) * 16, out, deps=[prev])''', [4, 5, 6, 7]),
}


@pytest.mark.parametrize("inner", sorted(_INNER))
def test_parallel_carry_of_an_inner_parallel_fan_runs_race_free(inner):
    """fuzz28 made these a located error; now the carry keeps 4 x M slots (one per inner task of
    every outer iteration) and the `copy` after the loop waits on all of them
    (tests/python/test_nested_parallel_task_ids.py)."""
    body, blocks = _INNER[inner]
    c = pypto.compile(pl.parse_program(_NESTED_CARRY.replace("BODY", body.strip("\n")), "nested.py"))
    data = np.arange(256 * 16, dtype=np.float32).reshape(256, 16)
    out, res = np.zeros_like(data), np.zeros_like(data)
    assert c(data, out, res, race_check=True).races == 0
    want = np.zeros_like(data)
    for blk in blocks:
        want[blk * 16:(blk + 1) * 16] = data[blk * 16:(blk + 1) * 16]
    np.testing.assert_array_equal(res, want)


def test_parallel_carry_of_a_joined_inner_fan_runs_race_free():
    """The old help's program: the inner ids joined by a barrier, one TaskId per outer iteration."""
    body = _INNER["parallel_4"][0] + "\n                prev = pl.system.task_dummy(deps=[prev])"
    c = pypto.compile(pl.parse_program(_NESTED_CARRY.replace("BODY", body.strip("\n")), "nested.py"))
    data = np.arange(256 * 16, dtype=np.float32).reshape(256, 16)
    out, res = np.zeros_like(data), np.zeros_like(data)
    c(data, out, res, race_check=True)
    np.testing.assert_array_equal(res, data)


def test_host_parallel_carry_of_an_inner_parallel_fan_waits_on_every_inner_task():
    """HOST: the generator copied min(3, 4) handles and the submit after the loop missed waits
    (then a located error); now it waits on all 12."""
    from codegen_test_util import compile_cpp
    from pypto import host
    t = "pl.Tensor[[16], pl.FP32]"
    src = f'''import pypto.language as pl

@pl.program
class H:
    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: {t}, c: pl.Out[{t}]) -> {t}:
        c = pl.store(pl.load(a, [0], [16]), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_add(self, a: {t}, c: pl.Out[{t}]) -> {t}:
        c = self.add(a, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: {t}, z: pl.Out[{t}]) -> {t}:
        prev = None
        for o in pl.parallel(3):
            for b in pl.parallel(4):
                z, prev = pl.submit(self.chip_add, x, z, deps=[prev])
        z, last = pl.submit(self.chip_add, x, z, deps=[prev])
        return z
'''
    code = host.generate_host_orchestration(pl.parse_program(src, "host_nested.py"), "host_main").code
    ok, log = compile_cpp(code, "host_nested_fuzz")
    assert ok, log
    prog = host.compile_host(pl.parse_program(src, "host_nested.py"), "host_main", chips=2)
    x, z = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    stats = prog(x, z)
    np.testing.assert_array_equal(z, x)
    recs = stats.task_records
    assert len(recs) == 13 and set(recs[-1]["deps"]) >= {r["index"] for r in recs[:-1]}, recs[-1]


def _rank_program(rank: int, create: bool = False) -> str:
    """A kernel reading a plane of a rank-`rank` tensor (drop_dims); `create`: the orchestration
    also makes a pl.create_tensor of that rank."""
    shp = [2] * (rank - 2) + [4, 16]
    tile, zeros = [1] * (rank - 2) + [4, 16], [0] * rank
    t = f"pl.Tensor[{shp}, pl.FP32]"
    extra = f"\n        tmp = pl.create_tensor({shp}, dtype=pl.FP32)" if create else ""
    return f'''import pypto.language as pl

@pl.program
class R:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {t}, c: pl.Out[{t}]) -> {t}:
        p = pl.load(a, {zeros}, {tile}, drop_dims={list(range(rank - 2))})
        c = pl.store(pl.add(p, p), {zeros}, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {t}, c: pl.Out[{t}]) -> {t}:{extra}
        c = self.k(a, c)
        return c
'''


def test_rank_8_tensors_run():
    c = pypto.compile(pl.parse_program(_rank_program(8), "rank8.py"))
    a = np.random.default_rng(0).standard_normal([2] * 6 + [4, 16]).astype(np.float32)
    out = np.zeros_like(a)
    c(a, out)
    want = np.zeros_like(a)
    want[(0,) * 6] = 2 * a[(0,) * 6]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("create", [False, True])
def test_rank_9_tensors_are_located(create):
    """fuzz28 (shape_rank): a rank-9 parameter or pl.create_tensor compiled, and the run failed
    with an unlocated 'tensor 0 has an invalid rank or dtype' / 'TensorCreateInfo: rank 9 >
    PTO2_MAX_DIMS' (the runtime's tensors have at most 8 dims)."""
    src = _rank_program(8 if create else 9, create)
    if create:
        src = src.replace("tmp = pl.create_tensor([2, 2, 2, 2, 2, 2, 4, 16]", "tmp = pl.create_tensor([1] * 9")
        src = src.replace("pl.create_tensor([1] * 9", "pl.create_tensor([1, 1, 1, 1, 1, 1, 1, 1, 1]")
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(src, "rank9.py"))
    e = ei.value
    assert e.line == (13 if create else 12) and "is a tensor of rank 9: the runtime's tensors have at most 8 " \
        "dimensions" in e.message, str(e)


@pytest.mark.parametrize("body", [
    "z = pl.tile.full([16, 16], pl.FP32, 0.0)",                                       # never used
    "z = pl.tile.full([16, 16], pl.FP32, 0.0)\n        z = pl.tile.full([16, 16], pl.FP32, 0.0)\n"
    "        t = pl.add(t, z)",                                                          # assigned again first
])
def test_a_dead_zero_tile_builds_under_werror(body):
    # seed 880500, mutant 28 (examples/tiled_matmul.py, `acc = pl.tile.full(.., 0.0)` repeated):
    # an FP32 full(0) fills its buffer where first used, so a dead one left a buffer no statement
    # named and g++ -Wall -Werror refused the kernel (unused variable).
    src = f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        {body}
        c = pl.store(t, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.k(a, c)
        return c
'''
    prog = pypto.compile(pl.parse_program(src, "dead_zero.py"))   # conftest builds with -Werror
    a = np.arange(256, dtype=np.float32).reshape(16, 16)
    c = np.full((16, 16), -1.0, np.float32)
    prog(a, c)
    np.testing.assert_array_equal(c, a)


def test_a_host_array_created_again_before_any_use_builds_under_werror():
    # seed 882000, mutants 135 and 246 (examples/two_chips.py, `tids = pl.array.create(..)`
    # repeated): the first array, which nothing names, made g++ -Wall -Werror refuse the HOST code
    # (unused variable). Both a TaskId array and an INT64 array.
    from pypto import host
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), pl.load(y, [0, 0], [16, 16])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = self.k(x, y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        tids = pl.array.create(2, pl.TASK_ID)
        tids = pl.array.create(2, pl.TASK_ID)
        cnt = pl.array.create(2, pl.INT64)
        for i in pl.range(2):
            y, t = pl.submit(self.chip, x, y, deps=[tids])
            tids[i] = t
        return y
'''
    prog = host.compile_host(pl.parse_program(src, "dead_array.py"), "host_main", chips=1)   # -Werror (conftest)
    x = np.ones((16, 16), np.float32)
    y = np.zeros((16, 16), np.float32)
    prog(x, y)
    np.testing.assert_array_equal(y, 2 * x)


def test_host_parameters_the_body_never_names_build_under_werror():
    # seed 882000, mutants 103, 205 and 265 (examples/two_chips.py, the submitting loop deleted):
    # a HOST parameter nothing names made g++ -Wall -Werror refuse the HOST code (an unused scalar,
    # a tensor set but not used).
    from pypto import host
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.adds(pl.load(y, [0, 0], [16, 16]), 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = self.k(y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                  s: pl.Scalar[pl.FP32], n: pl.Scalar[pl.INT64]) -> pl.Tensor[[16, 16], pl.FP32]:
        y, _ = pl.submit(self.chip, y)
        return y
'''
    prog = host.compile_host(pl.parse_program(src, "unused_params.py"), "host_main", chips=1)   # -Werror (conftest)
    y = np.zeros((16, 16), np.float32)
    prog(np.ones((16, 16), np.float32), y, 0.5, 3)
    np.testing.assert_array_equal(y, np.ones((16, 16), np.float32))
