"""The runtime fault suite (issue 15): overlapping argument arrays, concurrent calls from
several Python threads, failed runs that must leave the program usable and let close() and
interpreter exit finish, and a 10^6-task loop under a memory bound.
"""
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.compiler import ArgumentValueError, RunError

# The case of the issue: `a` is read by the first task, `b` written by the second; as different
# NumPy views of one buffer they looked independent to the runtime and raced (1 run in 20 wrong).
OVERLAP_SRC = '''
import pypto.language as pl

@pl.program
class Overlap:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, x: pl.Tensor[[16, 8], pl.FP32],
               y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 8]), 2.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = pl.store(pl.tile.full([16, 8], pl.FP32, 7.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 8], pl.FP32], b: pl.Out[pl.Tensor[[16, 8], pl.FP32]],
             c: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        c = self.double(a, c)
        b = self.fill(b)
        return c
'''

LOOP_SRC = '''
import pypto.language as pl

@pl.program
class Loop:
    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, x: pl.Tensor[[16, 16], pl.FP32],
            y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), pl.tile.full([16, 16], pl.FP32, 1.0)), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        for i in pl.range(n):
            t = pl.create_tensor([16, 16], dtype=pl.FP32)
            t = self.inc(x, t)
            out = self.inc(t, out)
        return out
'''


@pytest.fixture(scope="module")
def overlap():
    prog = pypto.compile(pl.parse_program(OVERLAP_SRC, filename="overlap.py"))
    yield prog
    prog.close()


@pytest.fixture(scope="module")
def loop():
    prog = pypto.compile(pl.parse_program(LOOP_SRC, filename="loop.py"))
    yield prog
    prog.close()


def test_overlapping_views_one_written_are_refused(overlap):
    for _ in range(20):
        buf = np.ones((24, 8), np.float32)
        c = np.zeros((16, 8), np.float32)
        with pytest.raises(ArgumentValueError) as ei:
            overlap(buf[0:16], buf[8:24], c)
        msg = str(ei.value)
        assert "'a' and 'b' are different views of overlapping memory" in msg and "'b' is written" in msg, msg
        assert (buf == 1).all() and (c == 0).all(), "nothing may run"


def test_overlap_between_two_outputs_and_through_reshape_is_refused(overlap):
    buf = np.zeros((32, 8), np.float32)
    with pytest.raises(ArgumentValueError, match="overlapping memory"):
        overlap(np.ones((16, 8), np.float32), buf[0:16], buf[15:31])
    rows = np.zeros((17, 8), np.float32)
    with pytest.raises(ArgumentValueError, match="'a' and 'c' are different views"):   # In shifted by one row
        overlap(rows[0:16], np.zeros((16, 8), np.float32), rows[1:17])
    flat = np.zeros(16 * 8 + 1, np.float32)
    with pytest.raises(ArgumentValueError, match="overlapping memory"):   # shifted by one element
        overlap(flat[1:].reshape(16, 8), flat[:-1].reshape(16, 8), np.zeros((16, 8), np.float32))


def test_disjoint_views_and_the_same_array_twice_are_fine(overlap):
    buf = np.ones((48, 8), np.float32)
    overlap(buf[0:16], buf[16:32], buf[32:48])          # disjoint views of one buffer
    assert (buf[16:32] == 7).all() and (buf[32:48] == 2).all()
    a = np.full((16, 8), 3.0, np.float32)
    overlap(a, np.zeros((16, 8), np.float32), a)         # the very same array read and written
    assert (a == 6).all()


def test_four_threads_calling_one_program(loop):
    """Calls from several threads are serialised (one run at a time per CompiledProgram), each
    with its own arguments; every result is right."""
    errors, results = [], {}

    def worker(k):
        try:
            for r in range(5):
                x = np.full((16, 16), float(k * 10 + r), np.float32)
                out = np.zeros_like(x)
                loop(x, out, 20)
                results[(k, r)] = out.copy()
        except Exception as e:      # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, errors
    assert len(results) == 20
    for (k, r), out in results.items():
        assert (out == k * 10 + r + 2).all(), (k, r, out[0, 0])


def test_separate_compiled_programs_run_in_threads():
    """One CompiledProgram per thread (the second compile is a cache hit): separate runtimes."""
    progs = [pypto.compile(pl.parse_program(LOOP_SRC, filename="loop.py")) for _ in range(2)]
    outs = [np.zeros((16, 16), np.float32) for _ in progs]
    errors = []

    def worker(k):
        try:
            progs[k](np.full((16, 16), float(k), np.float32), outs[k], 2000)
        except Exception as e:      # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for p in progs:
        p.close()
    assert not errors, errors
    assert (outs[0] == 2).all() and (outs[1] == 3).all()


def test_failed_runs_leave_the_program_usable(loop):
    x = np.zeros((16, 16), np.float32)
    out = np.zeros_like(x)
    for _ in range(3):
        with pytest.raises(RunError, match="memory limit") as ei:
            loop(x, out, 3, memory_limit=100)      # one 1 KiB tensor exceeds the limit
        assert "memory_limit= bounds the bytes of live runtime tensors" in ei.value.help
    loop(x, out, 3, memory_limit=100000)
    assert (out == 2).all()


def test_a_deadlocked_runtime_is_replaced_not_reused(loop):
    """A run that deadlocks leaves stuck tasks in its runtime's ring (the DSL cannot express a
    deadlock, so a stand-in runtime reports one): the program drops that runtime, closing it, and
    the next call runs on a fresh one."""
    x = np.zeros((16, 16), np.float32)
    out = np.zeros_like(x)
    loop(x, out, 1)
    real = loop._runtime

    class Deadlocked:
        config = real.config
        closed = False

        def run(self, *args, **kwargs):
            raise RunError("the run failed: deadlock: 1 task(s) can never run: task #7")

        run_marshalled = run   # the call's fast path (runtime/fast_args.py) uses this entry

        def close(self):
            self.closed = True
    stuck = Deadlocked()
    loop._runtime = stuck
    with pytest.raises(RunError, match="deadlock"):
        loop(x, out, 1)
    assert stuck.closed and loop._runtime is None
    real.close()
    out[:] = 0
    loop(x, out, 2)
    assert (out == 2).all()


CHILD = textwrap.dedent("""
    import resource, sys, time
    import numpy as np
    import pypto, pypto.language as pl
    from pypto.compiler import RunError
    prog = pypto.compile(pl.parse_program(sys.argv[1], filename="loop.py"))
    x = np.zeros((16, 16), np.float32); out = np.zeros_like(x)
    try:
        prog(x, out, 3, memory_limit=100)
    except RunError:
        print("FAILED-RUN")
    n = int(sys.argv[2])
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    stats = prog(x, out, n // 2, memory_limit=1 << 16, task_ring_size=64)
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert (out == 2).all()
    print("TASKS", stats.tasks, "PEAK", stats.peak_bytes, "RSS_GROWTH_KB", rss1 - rss0)
    if sys.argv[3] == "close":
        prog.close()
        print("CLOSED")
    # else: interpreter exit with the runtime's worker threads still parked
""")


@pytest.mark.parametrize("ending", ["close", "exit"])
def test_million_tasks_under_a_memory_bound_then_close_or_exit(ending):
    """10^6 tasks with 64 KiB of runtime tensors and 64 ring slots: memory stays bounded (the
    run's peak within the limit, the process's RSS growing by far less than the tasks would
    take if kept); after a failed run, close() and interpreter exit finish."""
    n = 10 ** 6
    r = subprocess.run([sys.executable, "-c", CHILD, LOOP_SRC, str(n), ending], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FAILED-RUN" in r.stdout
    words = r.stdout.split()
    tasks = int(words[words.index("TASKS") + 1])
    peak = int(words[words.index("PEAK") + 1])
    growth_kb = int(words[words.index("RSS_GROWTH_KB") + 1])
    assert tasks == n
    assert peak <= 1 << 16
    assert growth_kb < 64 * 1024, "RSS grew by %d KiB over 10^6 tasks" % growth_kb
    if ending == "close":
        assert "CLOSED" in r.stdout
