"""Conditional expressions `a if c else b` (and `and` / `or` around them): only the chosen branch
is evaluated, as in Python, in kernels, orchestrations and HOST functions; a compile-time
condition picks its branch when parsed. Before, every one was "unsupported Python expression
(IfExp)"."""
import importlib.util

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError

HEAD = '''
import pypto.language as pl
BIG = True
SMALL = 0


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16 if BIG else 8, 16], pl.FP32], w: pl.Tensor[[16, 16], pl.FP32],
          n: pl.Scalar[pl.INT64], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        KBODY
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], w: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INT64],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        OBODY
        return y
'''
K = "\n        "
LOAD = "t = pl.load(x, [0, 0], [16, 16])" + K
STORE = K + "y = pl.store(t, [0, 0], y)"
CALL = "y = self.k(x, w, n, y)"
NS = (0, 1, 5, -3)


def _load(tmp_path, kbody, obody, name="condexpr"):
    path = tmp_path / f"{name}.py"
    path.write_text(HEAD.replace("KBODY", kbody).replace("OBODY", obody))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.P


def _run(prog):
    c = pypto.compile(prog)
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    w = -x
    out = {}
    for n in NS:
        y = np.zeros((16, 16), np.float32)
        c(x, w, n, y)
        out[n] = y
    return x, w, out


CASES = {
    "tensor_in_orchestration": (LOAD + STORE, "z = x if n > 0 else w" + K + "y = self.k(z, w, n, y)",
                                lambda x, w, n: x if n > 0 else w),
    "call_argument": (LOAD + STORE, "y = self.k(x if n > 0 else w, w, n, y)", lambda x, w, n: x if n > 0 else w),
    "tile_in_kernel": ("t = pl.load(x, [0, 0], [16, 16])" + K + "t = pl.add(t, t) if n > 2 else pl.mul(t, t)" + STORE,
                       CALL, lambda x, w, n: x + x if n > 2 else x * x),
    "nested_scalars_promoted": (LOAD + "t = pl.add(t, n * 2 if n > 2 else (0.5 if n > 0 else 3))" + STORE, CALL,
                                lambda x, w, n: x + np.float32(n * 2 if n > 2 else 0.5 if n > 0 else 3)),
    # Python evaluates one branch: for n = 5 the other reads x[19, 0], which fails the run.
    "read_only_when_in_range": (LOAD + STORE, "i = n + 14" + K + "v = x[i, 0] if i < 16 else 0.0" + K + CALL + K +
                                "if v > 100.0:" + K + "    y = self.k(w, w, n, y)",
                                lambda x, w, n: w if 0 <= n + 14 < 16 and x[n + 14, 0] > 100 else x),
    "kernel_read_only_when_in_range": (LOAD + "i = n + 14" + K + "v = pl.tensor.read(x, [i, 1]) if i < 16 else -1.0" +
                                       K + "t = pl.add(t, v)" + STORE, CALL,
                                       lambda x, w, n: x + (x[n + 14, 1] if n + 14 < 16 else -1)),
    # `and` evaluates its second operand only when the first holds (for n = 5: no x[19, 0]).
    "lazy_and": (LOAD + STORE, "i = n + 14" + K + CALL + K + "if i < 16 and (x[i, 0] if i >= 0 else 0.0) > 100.0:" +
                 K + "    y = self.k(w, w, n, y)", lambda x, w, n: w if 0 <= n + 14 < 16 and x[n + 14, 0] > 100 else x),
    "lazy_or": (LOAD + STORE, CALL + K + "if n > 3 or (n == 1 if n > 0 else False):" + K + "    y = self.k(w, w, n, y)",
                lambda x, w, n: w if n > 3 or n == 1 else x),
    "loop_carry": (LOAD + "acc = 0" + K + "for j in pl.range(5):" + K + "    acc = acc + j if j < n else acc" + K +
                   "t = pl.add(t, pl.cast(acc, pl.FP32))" + STORE, CALL,
                   lambda x, w, n: x + sum(j for j in range(5) if j < n)),
    "parallel_loop": (LOAD + STORE, "for j in pl.parallel(2):" + K +
                      "    y = self.k(x if j == 0 else w, w, n, y) if n >= 0 else y",
                      lambda x, w, n: w if n >= 0 else 0 * x),
    # `and` / `or` with a number give the operand Python gives, not a bool (`n or 5` was True).
    "and_or_values_in_orchestration": (LOAD + "t = pl.add(t, pl.cast(n, pl.FP32))" + STORE,
                                       "m = (n or 5) + (n and 7) * 100" + K + "y = self.k(x, w, m, y)",
                                       lambda x, w, n: x + np.float32((n or 5) + (n and 7) * 100)),
    "and_or_values_in_kernel": (LOAD + "f = pl.cast(n, pl.FP32) * 0.5" + K +
                                "t = pl.add(t, pl.cast((n > 2) or n * 10, pl.FP32) + (f and 3))" + STORE, CALL,
                                lambda x, w, n: x + np.float32(float((n > 2) or n * 10) + ((n * 0.5) and 3))),
    "lazy_or_value": (LOAD + "t = pl.add(t, pl.cast(n, pl.FP32))" + STORE,
                      "i = n + 14" + K + "v = (i < 16 and x[i, 0]) or -1.0" + K +
                      "y = self.k(x, w, pl.cast(v, pl.INT64), y)",
                      lambda x, w, n: x + (x[n + 14, 0] if n + 14 < 16 else np.float32(-1))),
    "compile_time_or_value": (LOAD + "t = pl.add(t, pl.cast(n, pl.FP32))" + STORE,
                              "for j in pl.range(SMALL or 2):" + K + "    y = self.k(x, w, n + j, y)",
                              lambda x, w, n: x + np.float32(n + 1)),
    # A compile-time condition: the other branch is not parsed (another type, an unknown name).
    "compile_time": ("t = pl.load(x, [0, 0], [16 if SMALL == 0 and BIG else 8, 16]) if BIG else undefined_name" + K +
                     "for j in pl.unroll(0, 3 if not SMALL else 1):" + K + "    t = pl.add(t, 1.0)" + STORE, CALL,
                     lambda x, w, n: x + 3),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    d = tmp_path_factory.mktemp("condexpr")
    return {name: _load(d, kb, ob, name) for name, (kb, ob, _) in CASES.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_runs_as_python_would(programs, name):
    x, w, out = _run(programs[name])
    want = CASES[name][2]
    for n in NS:
        np.testing.assert_array_equal(out[n], want(x, w, n), err_msg=f"n = {n}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_prints_as_an_if_and_round_trips(programs, name):
    text = ir.python_print(programs[name])
    assert " if " not in text.replace("    if ", ""), text       # no conditional expression is left
    ok, why = ir.structural_equal_explain(pl.parse_program(text), programs[name])
    assert ok, why


def test_an_assignment_names_the_if_result(programs):
    text = ir.python_print(programs["tensor_in_orchestration"])
    assert "z = pl.yield_(x)" in text and "z = pl.yield_(w)" in text, text
    text = ir.python_print(programs["nested_scalars_promoted"])
    assert "cond_value = pl.yield_(pl.cast(n * 2, pl.FP32))" in text, text


def test_a_taskid_meets_none(tmp_path):
    ob = ("with pl.manual_scope():" + K + "    y, t1 = pl.submit(self.k, x, w, n, y)" + K +
          "    z = t1 if n > 0 else None" + K + "    y, t2 = pl.submit(self.k, w, w, n, y, deps=[z])")
    prog = _load(tmp_path, LOAD + STORE, ob)
    text = ir.python_print(prog)
    assert "z = pl.yield_(t1)" in text and "pl.system.task_invalid()" in text, text
    # n > 0: the second task waits for the first, so w is written last (for n <= 0 the two
    # writes of y would race: no run of that here)
    c = pypto.compile(prog)
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    for n in (1, 5) * 4:
        y = np.zeros((16, 16), np.float32)
        c(x, -x, n, y)
        np.testing.assert_array_equal(y, -x)


@pytest.mark.parametrize("kbody,obody,message", [
    ("t = pl.load(x, [0, 0], [16, 16]) if n > 0 else pl.load(x, [0, 0], [8, 16])" + STORE, CALL,
     "have different types: pl.Tile[[16, 16], pl.FP32] and pl.Tile[[8, 16], pl.FP32]"),
    (LOAD + "s = t if n > 0 else 1.0" + STORE, CALL, "have different types: pl.Tile[[16, 16], pl.FP32] and pl.Scalar"),
    (LOAD + "u = 1.0 if t else 2.0" + STORE, CALL, "the condition of a conditional expression must be a number or a bool"),
    (LOAD + STORE, "with pl.manual_scope():" + K + "    y, t1 = pl.submit(self.k, x, w, n, y)" + K +
     "    z = t1 if n > 0 else 3", "a TaskId can only meet another TaskId"),
    (LOAD + STORE, "z = x if n > 0 else undefined_name", "unknown name 'undefined_name'"),
])
def test_misuse_is_a_located_error(tmp_path, kbody, obody, message):
    with pytest.raises(PyptoError) as e:
        _load(tmp_path, kbody, obody)
    assert message in str(e.value) and "condexpr.py:" in str(e.value), str(e.value)


def test_host_function(tmp_path):
    """A HOST orchestration (the two_chips example) with conditional expressions for a block
    index, a scale and a TaskId."""
    import pathlib
    src = (pathlib.Path(__file__).parents[2] / "examples" / "two_chips.py").read_text()
    old = "            z, tid = pl.submit(self.chip_normalize, x, k, shift, scale, z)\n"
    assert old in src
    src = src.replace(old, "            kk = k if k < BLOCKS else 0\n            sc = scale if kk >= 0 else 2.0\n"
                           "            z, tid = pl.submit(self.chip_normalize, x, kk, shift, sc, z)\n"
                           "            tid = tid if k >= 0 else None\n")
    path = tmp_path / "two_chips_condexpr.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("two_chips_condexpr", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    stats = mod.run(chips=2)          # checks y against NumPy itself
    assert stats.tasks == 5
