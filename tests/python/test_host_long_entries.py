"""Long HOST-level entries (64 task statements or more) build in linear time: the body is an
unoptimised function of its own, and each run of submissions is printed 64 at a time in an
unoptimised function of its own, the TaskHandles declared before it and assigned in it (each
submission's TaskArgs in a block of its own). Before, the whole entry was one -O2 function:
300 submissions took 2.4 s to build, 1,000 took 16 s (3,000 now: 2.3 s and 160 MB). The
program runs on 2 chips and computes what NumPy computes."""

from __future__ import annotations

import re

import numpy as np

import pypto.language as pl
from pypto import host

from test_host_l3 import host_src


def long_body(steps: int) -> str:
    """d = a + b first; then `steps` increments of e chained by their TaskIds, a loop of three
    more, a barrier, and a last one waiting on the very first TaskId (read far on, after the
    loop) and on the barrier."""
    lines = ["d, first = pl.submit(self.chip_add, a, b, d)", "e, t = pl.submit(self.chip_inc, e, deps=[first])"]
    lines += ["e, t = pl.submit(self.chip_inc, e, deps=[t])"] * (steps - 1)
    lines += ["for i in pl.range(3):",
              "    e, t = pl.submit(self.chip_inc, e, deps=[t])",
              "both = pl.system.task_dummy(deps=[t, first])",
              "e, last = pl.submit(self.chip_inc, e, deps=[first, both])",
              "return d"]
    return "\n".join(lines)


def test_a_long_host_entry_is_chunked_and_runs(monkeypatch, tmp_path):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    steps = 150
    program = pl.parse_program(host_src(long_body(steps)), "long_host.py")
    code = host.generate_host_orchestration(program, "main").code
    chunks = code.count("[&]() PYPTO_UNOPTIMISED {")
    # the body; the run of steps + 1; the loop's; the last submission (the barrier between)
    assert chunks == 1 + (steps + 1 + 63) // 64 + 1 + 1, code
    # every submission's TaskArgs is in a chunk, in a block of its own; its handle is declared
    # before the chunk
    body = code[code.index("[&]() PYPTO_UNOPTIMISED {") + 1:]
    for m in re.finditer(r"TaskArgs (args_t\d+);(?=(?:(?!TaskArgs).)*?submit_next_level\(\d+, \1\))", body, re.S):
        assert body.rfind("[&]() PYPTO_UNOPTIMISED {", 0, m.start()) > body.rfind("}();", 0, m.start()), m.group(1)
        assert body[:m.start()].rstrip().endswith("{"), m.group(1)
    assert re.search(r"TaskHandle first;\n(\s+TaskHandle t\w*;\n)+\s+\[&\]\(\) PYPTO_UNOPTIMISED \{", code), code
    assert "args_t%d.add_dep_wait(first);" % (steps + 3) in code   # read far on, after the loop

    compiled = host.compile_host(program, "main", chips=2)
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal(16).astype(np.float32) for _ in range(2))
    d = np.zeros(16, np.float32)
    e = rng.standard_normal(16).astype(np.float32)
    e0 = e.copy()
    stats = compiled(a, b, d, e)
    np.testing.assert_allclose(d, a + b, rtol=1e-6)
    np.testing.assert_allclose(e, e0 + (steps + 3 + 1), rtol=1e-5)
    assert stats["tasks_executed"] == 1 + steps + 3 + 1 and stats["barriers"] == 1


def test_a_short_host_entry_keeps_its_plain_form():
    code = host.generate_host_orchestration(pl.parse_program(host_src(long_body(8)), "short.py"), "main").code
    assert "PYPTO_UNOPTIMISED" not in code and "TaskHandle first = submit_next_level(" in code, code
