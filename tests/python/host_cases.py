"""HOST programs with NumPy references, run by test_host_mpi.py in-process and under mpirun.

    python host_cases.py inprocess [case ...]          # every case when none is named
    mpirun -np 3 python host_cases.py mpi [case ...]   # rank 0 prints "OK <case> ..." per case
    mpirun -np 3 python host_cases.py mpi-error case   # prints "ERROR <case>: <message>" instead
                                                       # of raising (fault tests)
    mpirun -np 2 python host_cases.py mpi-chips N      # asks for N chips (bad-input test)
    mpirun -np 3 python host_cases.py mpi-setchips     # prog.chips = 1 on an MPI program (refused), then runs
    mpirun -np 2 python host_cases.py mpi-badargs      # calls with a wrong dtype, then runs
    mpirun -np 3 python host_cases.py mpi-bytes        # prints the tensor bytes moved per run
    mpirun -np 5 python host_cases.py mpi-bytes-sharded  # the same for examples/sharded_matmul.py

Cases: the three HOST golden programs (tests/golden/host_*), examples/two_chips.py and
examples/sharded_matmul.py. Each
builds random inputs, runs, and compares every output with NumPy (FP32, rtol = atol = 1e-5).
host_control_flow runs with steps = 0: its last submission is fire-and-forget (ordered only
by the per-target chain), so with steps > 0 it races with the adds by design.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)


def _golden(case):
    from codegen_test_util import GOLDEN_DIR, load_single_program
    return load_single_program(os.path.join(GOLDEN_DIR, case, "host_program.py"))


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def case_host_basic(compile_host, rng):
    prog = compile_host(_golden("host_basic"))
    x, y = (rng.standard_normal(64).astype(np.float32) for _ in range(2))
    z, w = np.zeros(64, np.float32), np.zeros(64, np.float32)
    stats = prog(x, y, z, w)
    _close(z, x + y)
    _close(w, x + 5 * y)
    return stats


def case_host_control_flow(compile_host, rng):
    prog = compile_host(_golden("host_control_flow"))
    x, acc = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    acc0 = acc.copy()
    tmp = np.zeros_like(x)
    stats = prog(x, acc, tmp, 0.5, 0, True)
    _close(acc, acc0)
    _close(tmp, acc0 * np.float32(1.0))  # tmp = x * 0.5, then (chained) tmp = acc * (0.5 * 2)
    return stats


def case_host_taskid_arrays(compile_host, rng):
    prog = compile_host(_golden("host_taskid_arrays"))
    x = rng.standard_normal((64, 16)).astype(np.float32)
    acc = rng.standard_normal((16, 16)).astype(np.float32)
    acc0 = acc.copy()
    parts = np.zeros_like(x)
    total, out = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    alpha = 0.75
    stats = prog(x, parts, total, acc, out, alpha)
    parts_ref = x * np.float32(alpha)
    total_ref = parts_ref.reshape(4, 16, 16).sum(axis=0)
    _close(parts, parts_ref)
    _close(total, total_ref)
    _close(acc, acc0 + 2 * total_ref)
    _close(out, acc0 + 3 * total_ref)
    return stats


def _example(name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "examples", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def case_two_chips(compile_host, rng):
    return _example("two_chips").run(chips=2, distributed=compile_host.distributed)


def case_sharded_matmul(compile_host, rng):
    # Four shards on four targets, then a reduction (the example checks C and S itself).
    return _example("sharded_matmul").run(chips=4, distributed=compile_host.distributed)


CASES = {name[5:]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


def main(argv):
    from pypto import host
    mode = argv[0]
    names = argv[1:] or sorted(CASES)
    if mode == "mpi-chips":
        try:
            host.compile_host(_golden("host_basic"), chips=int(argv[1]), distributed="mpi")
        except Exception as e:  # every rank refuses before anything runs
            print("ERROR chips: %s" % e, flush=True)
            return 3
        return 0
    if mode == "mpi-setchips":
        prog = host.compile_host(_golden("host_basic"), distributed="mpi")
        chips = prog.chips
        prog.chips = 1
        x = np.zeros(64, np.float32)
        try:
            prog(x, x.copy(), x.copy(), x.copy())
        except Exception as e:
            print("ERROR setchips: %s" % e, flush=True)
        prog.chips = chips
        case_host_basic(lambda p: prog, np.random.default_rng(1))
        print("OK after setchips", flush=True)
        return 0
    if mode == "mpi-badargs":
        prog = host.compile_host(_golden("host_basic"), distributed="mpi")
        x = np.full(64, 0.1)          # float64 values float32 has not: refused, not rounded
        try:
            prog(x, x, x, x)
        except Exception as e:
            print("ERROR badargs: %s" % e, flush=True)
        case_host_basic(lambda p: prog, np.random.default_rng(1))
        print("OK after badargs", flush=True)
        return 0
    if mode == "mpi-bytes":
        # host_basic is one per-target chain (z = x + y, w = z + y, w += y three times): it stays
        # on one rank, and only the final z and w come back (w's intermediate values never do).
        prog = host.compile_host(_golden("host_basic"), distributed="mpi")
        rng = np.random.default_rng(3)
        x, y = (rng.standard_normal(64).astype(np.float32) for _ in range(2))
        z, w = np.zeros(64, np.float32), np.zeros(64, np.float32)
        for run in range(3):
            if run == 2:
                x += 1  # the caller changed x: it is sent again, nothing else is
            stats = prog(x, y, z, w)
            _close(z, x + y)
            _close(w, x + 5 * y)
            print("BYTES run=%d to=%d from=%d between=%d ranks=%s" % (
                run, stats.bytes_to_chips, stats.bytes_from_chips, stats.bytes_between_chips,
                sorted({r.rank for r in stats.records})), flush=True)
        return 0
    if mode == "mpi-bytes-sharded":
        stats = _example("sharded_matmul").run(chips=4, distributed="mpi")  # NumPy-checked inside
        print("BYTES to=%d from=%d between=%d ranks=%s" % (
            stats.bytes_to_chips, stats.bytes_from_chips, stats.bytes_between_chips,
            [r.rank for r in stats.records]), flush=True)
        return 0
    if mode == "mpi-error":
        for name in names:
            try:
                CASES[name](lambda p: host.compile_host(p, distributed="mpi"), np.random.default_rng(7))
                print("NO ERROR %s" % name, flush=True)
            except Exception as e:
                print("ERROR %s: %s" % (name, e), flush=True)
        return 0

    def compile_host(program):
        return host.compile_host(program, distributed=mode)
    compile_host.distributed = mode
    rng = np.random.default_rng(7)
    for name in names:
        stats = CASES[name](compile_host, rng)
        print("OK %s: %d next-level tasks on %d chips (%s)" % (name, stats.tasks_executed, stats.chips,
                                                              stats.transport), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
