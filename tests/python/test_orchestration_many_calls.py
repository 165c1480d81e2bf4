"""A straight-line orchestration of thousands of kernel calls builds (each call's Arg in its own
block, long runs split into unoptimised chunk functions) and runs without overflowing the stack.

Before, every call's Arg (about 1.4 KB) stayed alive for the whole entry function: 3,000 calls
made a 4 MB frame, which overflows the 1 MiB stack of the thread used here (and ~6,000 calls
overflow a default 8 MB main thread); g++ -O2 also took over 600 s and 3 GB to build it.
The run happens in a subprocess so a stack overflow fails the test instead of killing pytest.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

CALLS = 3000


def program_head(name: str) -> list:
    """The lines of a program class ``name`` up to its Orchestration function: the import and
    one kernel, add(x, y, z): z = x + y over 8x8 FP32 tensors."""
    return [
        "import pypto.language as pl",
        "",
        "",
        "@pl.program",
        "class %s:" % name,
        "    @pl.function(type=pl.FunctionType.InCore)",
        "    def add(self, x: pl.Tensor[[8, 8], pl.FP32], y: pl.Tensor[[8, 8], pl.FP32],",
        "            z: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:",
        "        z = pl.store(pl.add(pl.load(x, [0, 0], [8, 8]), pl.load(y, [0, 0], [8, 8])), [0, 0], z)",
        "        return z",
        "",
    ]


def many_calls_source(calls: int) -> str:
    """A program whose Orchestration function makes ``calls`` straight-line kernel calls:
    out = a + calls * b (each call adds b once)."""
    lines = program_head("ManyCalls") + [
        "    @pl.function(type=pl.FunctionType.Orchestration)",
        "    def main(self, a: pl.Tensor[[8, 8], pl.FP32], b: pl.Tensor[[8, 8], pl.FP32],",
        "             out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:",
        "        t0 = pl.create_tensor([8, 8], dtype=pl.FP32)",
        "        t1 = pl.create_tensor([8, 8], dtype=pl.FP32)",
        "        t0 = self.add(a, b, t0)",
    ]
    for n in range(1, calls - 1):
        src, dst = (n - 1) % 2, n % 2
        lines.append("        t%d = self.add(t%d, b, t%d)" % (dst, src, dst))
    lines.append("        out = self.add(t%d, b, out)" % ((calls - 2) % 2))
    lines.append("        return out")
    return "\n".join(lines) + "\n"


_CHILD = textwrap.dedent(r"""
    import sys, threading
    import numpy as np
    import pypto, pypto.language as pl
    from pypto import codegen
    source = open(sys.argv[1]).read()
    calls = int(sys.argv[2])
    program = pl.parse_program(source, sys.argv[1])
    code = codegen.generate_orchestration(program, "main").code
    assert code.count("rt_submit_aiv_task") == calls
    assert "PYPTO_CALL_CHUNK" in code
    compiled = pypto.compile(program)
    a = np.full((8, 8), 0.5, np.float32)
    b = np.ones((8, 8), np.float32)
    out = np.zeros((8, 8), np.float32)
    errors = []
    def run():
        try:
            compiled(a, b, out)
        except BaseException as e:
            errors.append(e)
    threading.stack_size(1 << 20)   # 1 MiB: the old 4 MB frame overflows it
    t = threading.Thread(target=run)
    t.start()
    t.join()
    if errors:
        raise errors[0]
    np.testing.assert_array_equal(out, np.full((8, 8), 0.5 + calls, np.float32))
    print("ok")
""")


def test_thousands_of_calls_build_and_run_on_a_small_stack(tmp_path):
    prog = tmp_path / "many_calls.py"
    prog.write_text(many_calls_source(CALLS))
    env = dict(os.environ, PYPTO_QUIET="1")
    r = subprocess.run([sys.executable, "-c", _CHILD, str(prog), str(CALLS)], env=env, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), (
        "exit %d (negative: killed by a signal, e.g. -11 for a stack overflow)\n%s\n%s"
        % (r.returncode, r.stdout[-2000:], r.stderr[-4000:]))


def test_small_functions_keep_the_plain_form():
    """Fewer than 64 calls: the spec's form (no per-call blocks, no chunks; golden files
    unchanged); 200 calls in a row: per-call blocks in chunks of at most 64."""
    import pypto.language as pl
    from pypto import codegen
    code = codegen.generate_orchestration(pl.parse_program(many_calls_source(40), "few.py"), "main").code
    assert "PYPTO_CALL_CHUNK" not in code and "{\n            Arg params_t" not in code
    assert code.count("rt_submit_aiv_task") == 40
    code = codegen.generate_orchestration(pl.parse_program(many_calls_source(200), "more.py"), "main").code
    assert code.count("[&]() PYPTO_CALL_CHUNK {") == 4   # 200 calls: chunks of 64, 64, 64, 8


def submits_source(submits: int) -> str:
    """``submits`` straight-line pl.submit calls, each depending on the previous one's TaskId:
    out = out + submits."""
    lines = [
        "import pypto.language as pl",
        "",
        "",
        "@pl.program",
        "class ManySubmits:",
        "    @pl.function(type=pl.FunctionType.InCore)",
        "    def inc(self, z: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:",
        "        z = pl.store(pl.add(pl.load(z, [0, 0], [8, 8]), 1.0), [0, 0], z)",
        "        return z",
        "",
        "    @pl.function(type=pl.FunctionType.Orchestration)",
        "    def main(self, out: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:",
        "        t = None",
    ]
    lines += ["        out, t = pl.submit(self.inc, out, deps=[t])"] * submits
    lines.append("        return out")
    return "\n".join(lines) + "\n"


def test_many_submits_get_blocks_and_keep_their_task_ids(tmp_path):
    """pl.submit in a function of 64+ tasks: the TaskOutputTensors is declared before the
    task's block (later submits read its TaskId), the Arg lives in the block; it runs."""
    import numpy as np
    import pypto
    import pypto.language as pl
    from pypto import codegen
    path = tmp_path / "many_submits.py"
    path.write_text(submits_source(100))
    program = pl.parse_program(path.read_text(), str(path))
    code = codegen.generate_orchestration(program, "main").code
    assert "TaskOutputTensors task_99_outs;\n" in code and "task_99_outs = rt_submit_aiv_task(" in code
    out = np.zeros((8, 8), np.float32)
    pypto.compile(program)(out)
    np.testing.assert_array_equal(out, np.full((8, 8), 100.0, np.float32))
