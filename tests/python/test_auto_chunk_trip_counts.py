"""pl.auto_chunk trip counts at the ends of int64 and with chunks far larger than the loop.

SplitChunkedLoops counts a chunked loop's iterations without forming stop - start (which leaves
int64 for bounds far apart although the count fits when |step| > 1), and a chunk's inner loop
runs only the iterations the loop has left. Before, three things went wrong:
- `range(-2**62, 2**62, 2**61, chunk=2)` counted 0 trips (stop - start wrapped): nothing ran;
- with a run-time step, the last chunk's index `co + ci * s` could wrap around int64 and pass the
  guard `i < stop`: the body ran for indices the loop does not have;
- `chunk=C` with C far above the trip count ran C guard tests per chunk (2**62 never ended).
Every case is checked against Python's range: which indices the body saw, and how often.
"""
import random

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.errors import PyptoError
from pypto.runtime.loader import RunError

I64_MIN, I64_MAX = -2 ** 63, 2 ** 63 - 1

SRC = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 8], pl.FP32], a: pl.Scalar[pl.INDEX], b: pl.Scalar[pl.INDEX],
             s: pl.Scalar[pl.INDEX], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
             z: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> tuple[pl.Tensor[[8, 8], pl.FP32], pl.Tensor[[8, 8], pl.FP32]]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
            for i in pl.{KIND}(A, B, {STEP}, chunk={CHUNK}, chunk_policy="{POLICY}"):
                k = i % 8
                m = i // 5 % 8
                y = pl.assemble(y, pl.add(pl.slice(y, [1, 8], [k, 0]), pl.slice(x, [1, 8], [k, 0])), [k, 0])
                z = pl.assemble(z, pl.add(pl.slice(z, [1, 8], [m, 0]), pl.slice(x, [1, 8], [m, 0])), [m, 0])
        return y, z
'''

# (loop kind, policy, step: "s" for the run-time one, chunk)
VARIANTS = [
    ("parallel", "guarded", "s", 3),
    ("range", "leading_full", "s", 3),
    ("parallel", "leading_full", "s", 2),
    ("range", "guarded", "s", 10 ** 9),
    ("parallel", "guarded", str(2 ** 61), 2),
    ("range", "leading_full", "-3", 4),
    ("parallel", "guarded", "1", 10 ** 12),
    ("range", "guarded", str(-2 ** 60), 5),
]

_compiled = {}


def compiled(variant, bounds="a, b"):
    key = (variant, bounds)
    if key not in _compiled:
        kind, policy, step, chunk = variant
        a, b = bounds.split(", ")
        src = SRC.replace("{KIND}", kind).replace("{POLICY}", policy).replace("{STEP}", step) \
                 .replace("{CHUNK}", str(chunk)).replace("A, B", f"{a}, {b}")
        _compiled[key] = pypto.compile(pl.parse_program(src, "t.py"))
    return _compiled[key]


def expected(x, indices):
    y, z = np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32)
    for i in indices:
        y[i % 8] += x[i % 8]
        z[i // 5 % 8] += x[i // 5 % 8]
    return y, z


def bounds_for(rng, s, trips):
    """(a, b) with len(range(a, b, s)) == trips, somewhere in int64, often at its ends."""
    span = (trips - 1) * abs(s) if trips else 0
    room = I64_MAX - I64_MIN - span
    where = rng.choice(["low", "high", "any"])
    off = 0 if where == "low" else room if where == "high" else rng.randrange(room + 1)
    first = I64_MIN + off if s > 0 else I64_MAX - off
    if trips == 0:
        return first, min(max(first - s * rng.randrange(0, 3), I64_MIN), I64_MAX)
    last = first + (trips - 1) * s
    rest = rng.randrange(1, abs(s) + 1)      # b is past the last index by 1..|s|, within int64
    b = last + rest if s > 0 else last - rest
    b = min(max(b, I64_MIN), I64_MAX)
    return first, b


def cases(variant, seed):
    rng = random.Random(seed)
    _, _, step, chunk = variant
    steps = [int(step)] if step != "s" else [1, -1, 2, -3, 7, 2 ** 61, -(2 ** 61), 2 ** 62 - 1, -(2 ** 62)]
    out = []
    for s in steps:
        for trips in (0, 1, 2, 3, 5, 8, 13):
            trips = min(trips, 1 + (I64_MAX - I64_MIN) // abs(s))   # the indices fit in int64
            a, b = bounds_for(rng, s, trips)
            if len(range(a, b, s)) == trips:
                out.append((a, b, s))
    return out


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: "-".join(map(str, v)))
def test_chunked_loops_visit_pythons_indices_at_the_ends_of_int64(variant):
    prog = compiled(variant)
    x = (np.arange(64, dtype=np.float32).reshape(8, 8) + 1) / 64
    step, chunk = variant[2], variant[3]
    for a, b, s in cases(variant, 17):
        y, z = np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32)
        if step == "s" and not I64_MIN <= s * chunk <= I64_MAX:
            with pytest.raises(RunError, match="overflows int64"):
                prog(x, a, b, s, y, z)
            continue
        prog(x, a, b, s, y, z)
        wy, wz = expected(x, range(a, b, s))
        np.testing.assert_allclose(y, wy, rtol=1e-6, err_msg=f"range({a}, {b}, {s}), chunk {chunk}")
        np.testing.assert_allclose(z, wz, rtol=1e-6, err_msg=f"range({a}, {b}, {s}), chunk {chunk}")


@pytest.mark.parametrize("policy", ["guarded", "leading_full"])
@pytest.mark.parametrize("a,b,step", [
    (-2 ** 62, 2 ** 62, 2 ** 61),                   # stop - start = 2**63: used to count 0 trips
    (-9223372036854775000, 9223372036854775000, 2),  # 2**63 - 808 trips: counts (never run here)
    (2 ** 62, -2 ** 62 - 5, -(2 ** 61)),
    (0, 3, 1),
])
def test_constant_bounds_far_apart_count_their_trips(policy, a, b, step):
    kind = "range"
    prog_src = SRC.replace("{KIND}", kind).replace("{POLICY}", policy).replace("{STEP}", str(step)) \
                  .replace("{CHUNK}", "2").replace("A, B", f"{a}, {b}")
    prog = pypto.compile(pl.parse_program(prog_src, "t.py"))
    if len(range(a, b, step)) > 100:
        return                                      # compiles: the count fits in int64
    x = (np.arange(64, dtype=np.float32).reshape(8, 8) + 1) / 64
    y, z = np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32)
    prog(x, 0, 0, 1, y, z)
    wy, wz = expected(x, range(a, b, step))
    np.testing.assert_allclose(y, wy, rtol=1e-6)
    np.testing.assert_allclose(z, wz, rtol=1e-6)


def test_constant_bounds_with_more_than_int64_trips_are_a_located_error():
    src = SRC.replace("{KIND}", "parallel").replace("{POLICY}", "guarded").replace("{STEP}", "1") \
             .replace("{CHUNK}", "2").replace("A, B", "-9223372036854775000, 9223372036854775000")
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(src, "t.py"))
    e = ei.value
    assert "more than 2^63 - 1 iterations" in e.message and (e.file, e.line) == ("t.py", 11), e


@pytest.mark.parametrize("chunk", [4, 10 ** 6, 2 ** 62])
def test_a_chunk_far_larger_than_the_loop_runs_only_the_loops_iterations(chunk):
    """Three trips in chunks of 2**62: one task of three iterations (before: 2**62 guard tests)."""
    prog = compiled(("parallel", "guarded", "1", chunk))
    x = (np.arange(64, dtype=np.float32).reshape(8, 8) + 1) / 64
    for a, b in ((0, 3), (5, 5), (-7, 6)):
        y, z = np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32)
        prog(x, a, b, 1, y, z)
        wy, wz = expected(x, range(a, b))
        np.testing.assert_allclose(y, wy, rtol=1e-6)
        np.testing.assert_allclose(z, wz, rtol=1e-6)
