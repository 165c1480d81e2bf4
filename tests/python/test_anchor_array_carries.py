"""anchor_features.md §13 — pl.Array loop carries and if-results for every dtype, updated in
place, and the verifier that refuses reading an array version an in-place update replaced.
Golden C++: tests/golden/anchor_array_carries/."""
import os
import re

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen

from codegen_test_util import GOLDEN_DIR, load_single_program
from test_diagnostics import program


def golden():
    return load_single_program(os.path.join(GOLDEN_DIR, "anchor_array_carries", "program.py"))


def reference(n):
    w = [0.5] * 4
    for i in range(n):
        w[i % 4] += 1.0
    if n > 2:
        w[0] = 10.0
    z = [0, n] if n > 3 else [0, 0]
    return w[0] + w[1] + z[1]


@pytest.mark.parametrize("n", [0, 2, 3, 5])
def test_array_carries_e2e_numpy(n):
    compiled = pypto.compile(golden())
    x = np.random.default_rng(n).standard_normal((16, 16)).astype(np.float32)
    out = np.zeros_like(x)
    compiled(x, out, n, race_check=True)
    np.testing.assert_allclose(out, reference(n) * x, rtol=1e-6, atol=1e-6)


def test_in_place_carries_phi_and_slot_copies_in_cpp():
    cpp = pypto.compile(golden()).files["orchestration/main.cpp"]
    assert cpp.count("float w[4] = {};") == 1 and "w[0] = 10.0f;" in cpp      # a constant slot: not checked
    assert re.search(r'w\[pto2_array_slot\(k, 4, "[^"]+", \d+\)\] = 0\.5f;', cpp)
    assert "int32_t z[2];" in cpp
    assert "z[k] = v[k];" in cpp and "z[k] = u[k];" in cpp and "hits[k] = z[k];" in cpp


@pytest.mark.parametrize("dtype, value, ctype", [("pl.INT64", "pl.cast(i, pl.INT64)", "int64_t"),
                                                 ("pl.BOOL", "i > 0", "bool"),
                                                 ("pl.FP32", "pl.cast(i, pl.FP32)", "float"),
                                                 ("pl.INDEX", "i", "int64_t")])
def test_array_carry_of_every_dtype(dtype, value, ctype):
    src = program(f"arr = pl.array.create(3, {dtype})\n"
                  f"for i in pl.range(3):\n"
                  f"    arr[i] = {value}\n"
                  f"s = arr[2]\n"
                  f"if s:\n"
                  f"    d = self.kernel_add(a, b, d)\n"
                  f"return d")
    compiled = pypto.compile(pl.parse_program(src, "t.py"))
    assert f"{ctype} arr[3] = {{}};" in compiled.files["orchestration/main.cpp"]
    a = np.ones((16, 16), np.float32)
    d = np.zeros_like(a)
    compiled(a, a, d, np.zeros((16, 16), np.int32), 1)
    np.testing.assert_allclose(d, 2 * a)


def test_reading_an_older_array_version_after_an_update_is_refused():
    src = program("w = pl.array.create(2, pl.INT32)\n"
                  "old = w\n"
                  "w[0] = pl.cast(n, pl.INT32)\n"
                  "x = old[0]  #!\n"
                  "return d")
    p = pl.parse_program(src, "t.py")
    with pytest.raises(pypto.PyptoError) as ei:
        codegen.generate_orchestration(p, "main")
    e = ei.value
    line = next(i + 1 for i, s in enumerate(src.splitlines()) if "#!" in s)
    assert "array 'old' is read after an in-place update (line %d) replaced its contents" % (line - 1) in e.message
    assert "read the array's latest name" in e.help and (e.file, e.line) == ("t.py", line)


def test_reading_the_loop_init_after_a_loop_that_updates_it_is_refused():
    src = program("w = pl.array.create(2, pl.INT32)\n"
                  "old = w\n"
                  "for i in pl.range(n):\n"
                  "    w[0] = pl.cast(i, pl.INT32)\n"
                  "x = old[1]  #!\n"
                  "return d")
    with pytest.raises(pypto.PyptoError, match="array 'old' is read after an in-place update"):
        codegen.generate_orchestration(pl.parse_program(src, "t.py"), "main")


def test_reading_a_version_both_branches_kept_is_fine():
    src = program("w = pl.array.create(2, pl.INT32)\n"
                  "old = w\n"
                  "q = pl.array.create(2, pl.INT32)\n"
                  "if n > 1:\n"
                  "    q[0] = pl.cast(n, pl.INT32)\n"
                  "x = old[1]\n"
                  "y = q[0]\n"
                  "return d")
    codegen.generate_orchestration(pl.parse_program(src, "t.py"), "main")
