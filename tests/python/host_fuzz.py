"""Differential fuzzing of distributed HOST programs (docs/distributed.md): random DAGs of
next-level tasks over shared arrays, run on the L3 runtime in-process and over MPI, compared with
NumPy running the same tasks one after another in submission order.

A case has NA FP32 (every third seed FP16) arrays of BLOCKS row blocks ([BLOCKS * B, W]), all arguments of the HOST
entry. Each of its TASKS submissions runs one chip-level target, a wrapper of one kernel that
writes one row block of its last array `c`:
  scale   c[k] = a[k] * s                      (c InOut)
  put     c[k] = a[k] * s                      (c Out: the other blocks are not written)
  axpy    c[k] = c[k] + a[k] * s               (reads c[k])
  move    c[k] = a[j]                          (another block of another array)
  same    c[k] = max(c[k], c[k])               (writes the values c[k] already holds)
  total   c[k] = a[0] + a[1] + ... + a[B - 1]  (reads all of a)
a the same array as c a fifth of the time; with two targets per kernel, so tasks of one target form a per-target chain and tasks of the other
run wherever they are placed. A quarter of the statements are pl.range (or pl.parallel) loops submitting one
task per block of a range (the loop variable as the block), their ids in a TaskId array that later deps=
name whole or element by element. Some tasks are fire-and-forget (a plain call `x = self.chip_...(...)`,
no id): those that need no deps=, followed by a task of the same target, whose id stands for them
(the chain orders it after them). A scale is a literal or the HOST parameter s0, and some
submissions sit in an if / else on the HOST parameter flag (another scale in each branch); each
run draws s0 and flag. Every pair of tasks that touch a common block, one writing it, is
ordered: by the chain, by an explicit deps= on the earlier task, or through a barrier
(pl.system.task_dummy) that waits on it; so the result is NumPy's, whatever the placement. Some
deps are redundant (already implied), some tasks get extra ones, and the scales are powers of two
or 1 (every product and sum exact in FP32), so the comparison is exact, bit for bit (a scale by -1
of a 0 writes -0.0 over 0.0: a change only in the bits).

Each case runs three times on the same program: once, again on its own results (arrays the run
left where the last run put them), and once more after the caller changed one array, so MPI's
between-run caching (docs/distributed.md "Between runs") is exercised.

Fault injection (`check(seed, fault=True)`, `host_fuzz.py mpi-faults LO HI`): the program also
submits, under `if fail:` (a HOST parameter) at a random point and after a random earlier task,
a task of the target `chip_fail`, whose chip orchestration fails its assert. The case runs five
times, fail = False, True, False, True, False: each failing run must raise the run's error naming
that task and the assert's message (not hang, not crash), and each run after one must compute
NumPy's result from whatever the failed run left in the arrays (in-process some writes may be
there, under MPI those of the tasks completed before the failure), so the runtime and MPI's
between-run caching come out of a failure consistent.

    findings = check(seed=3)                 # in-process, 1..4 chips by seed; [] when it agrees
    mpirun -np 4 python host_fuzz.py mpi 0 20   # the same cases on 3 MPI chip ranks

Used by tests/python/test_host_fuzz.py (a seeded smoke in-process and under mpirun) and
scripts/fuzz_host.py (more seeds).
"""
import random
import sys

import numpy as np

BLOCKS, B, W = 4, 2, 8
ROWS = BLOCKS * B
NA = 4
TASKS = 14   # at least; a loop may pass it
KERNELS = ["scale", "put", "axpy", "move", "same", "total"]
SCALES = [1.0, 2.0, 0.5, -1.0, -0.25, 4.0]

# The arrays' element type, by seed: FP16 every third case (2-byte elements through the L3
# runtime and MPI; the values stay exact in FP16 too, see _inputs), else FP32.
NUMPY = {"FP32": (np.float32, np.uint32), "FP16": (np.float16, np.uint16)}


def case_dtype(seed: int) -> str:
    return "FP16" if seed % 3 == 2 else "FP32"


def _tensor_type(dtype: str) -> str:
    return "pl.Tensor[[%d, %d], pl.%s]" % (ROWS, W, dtype)
_KERNEL_DEFS = {
    # name: (parameters after a, the body's stored value, c's direction)
    "scale": ("k: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.FP32]", "pl.mul(pl.load(a, [k * B, 0], [B, W]), s)", "InOut"),
    "put": ("k: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.FP32]", "pl.mul(pl.load(a, [k * B, 0], [B, W]), s)", "Out"),
    "axpy": ("k: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.FP32]",
             "pl.add(pl.load(c, [k * B, 0], [B, W]), pl.mul(pl.load(a, [k * B, 0], [B, W]), s))", "InOut"),
    "move": ("j: pl.Scalar[pl.INDEX], k: pl.Scalar[pl.INDEX]", "pl.load(a, [j * B, 0], [B, W])", "InOut"),
    "same": ("k: pl.Scalar[pl.INDEX]", "pl.maximum(pl.load(c, [k * B, 0], [B, W]), pl.load(c, [k * B, 0], [B, W]))",
             "InOut"),
    "total": ("k: pl.Scalar[pl.INDEX]", None, "InOut"),   # the value: _total_expr()
}


def _total_expr():
    loads = ["pl.load(a, [%d, 0], [B, W])" % (j * B) for j in range(BLOCKS)]
    e = loads[0]
    for ld in loads[1:]:
        e = "pl.add(%s, %s)" % (e, ld)
    return e


FAIL_TARGET = '''
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_fail(self, k: pl.Scalar[pl.INDEX], c: pl.InOut[{t}]) -> {t}:
        assert k < 0, "injected chip failure"
        c = self.k_same(k, c)
        return c
'''
FAIL_MESSAGE = "injected chip failure"


def _kernels_text(t):
    out = []
    for name, (params, value, direction) in _KERNEL_DEFS.items():
        if name == "total":
            value = _total_expr()
        a_param = "" if name == "same" else "a: %s, " % t
        out.append('''
    @pl.function(type=pl.FunctionType.InCore)
    def k_{name}(self, {a}{params}, c: pl.{d}[{t}]) -> {t}:
        c = pl.store({value}, [k * B, 0], c)
        return c
'''.format(name=name, a=a_param, params=params, d=direction, t=t, value=value))
        args = ("" if name == "same" else "a, ") + ", ".join(p.split(":")[0] for p in params.split(", ")) + ", c"
        for target in range(2):
            out.append('''
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_{name}_{target}(self, {a}{params}, c: pl.{d}[{t}]) -> {t}:
        c = self.k_{name}({args})
        return c
'''.format(name=name, target=target, a=a_param, params=params, d=direction, t=t, args=args))
    return "".join(out)


class _Task:
    def __init__(self, kernel, target, a, c, k, j, s):
        self.kernel, self.target, self.a, self.c, self.k, self.j, self.s = kernel, target, a, c, k, j, s

    def reads(self):
        r = set()
        if self.kernel in ("scale", "put", "axpy"):
            r.add((self.a, self.k))
        if self.kernel == "move":
            r.add((self.a, self.j))
        if self.kernel == "total":
            r |= {(self.a, b) for b in range(BLOCKS)}
        if self.kernel in ("axpy", "same"):
            r.add((self.c, self.k))
        return r

    def writes(self):
        return {(self.c, self.k)}

    def scale(self, params):
        """s: a literal, the HOST parameter s0, or ("flag", then, else): the branch of an if on flag."""
        s = self.s
        if isinstance(s, tuple):
            s = s[1] if params["flag"] else s[2]
        return params["s0"] if s == "s0" else s

    def apply(self, arrs, params):
        a = arrs[self.a] if self.a is not None else None
        c, rows = arrs[self.c], slice(self.k * B, (self.k + 1) * B)
        s = c.dtype.type(self.scale(params))   # the kernel's scalar in the tile's dtype
        if self.kernel in ("scale", "put"):
            c[rows] = a[rows] * s
        elif self.kernel == "axpy":
            c[rows] = c[rows] + a[rows] * s
        elif self.kernel == "move":
            c[rows] = a[self.j * B:(self.j + 1) * B]
        elif self.kernel == "same":
            pass
        else:
            acc = a[0:B].copy()
            for b in range(1, BLOCKS):
                acc = acc + a[b * B:(b + 1) * B]
            c[rows] = acc


def make_case(seed: int, fault: bool = False):
    """(program text, tasks, chips): the tasks in submission order (the model replays them). With
    `fault`, the program also has the failing task under `if fail:` (not in `tasks`)."""
    rng = random.Random(seed)
    starts = []                       # per top-level statement: (its first line, tasks before it)
    lines, tasks, done = [], [], []   # done[i]: the set of earlier tasks task i is ordered after
    names = []                        # the DSL name of each task's id
    loops = []                        # the tasks of each loop (the elements of its TaskId array tl<n>)

    def chained(t):   # the per-target chain orders t after every earlier task of its target
        after = set()
        for p, q in enumerate(tasks):
            if q.kernel == t.kernel and q.target == t.target:
                after |= {p} | done[p]
        return after

    def conflicts(t):   # the tasks t must follow: a common block, one of the two writing it
        return {p for p, q in enumerate(tasks) if (q.writes() & (t.reads() | t.writes())) or (q.reads() & t.writes())}

    def dep_names(deps):   # a loop's whole TaskId array when every element is in deps
        # a fire-and-forget task has no id: the first named task chained after it stands for it (none
        # yet: this is that task, the statement right after it, ordered after it by the chain)
        deps = [p if names[p] else next((q for q in range(p + 1, len(names)) if names[q] and p in done[q]), None)
                for p in deps]
        deps = [p for p in deps if p is not None]
        out, rest = [], list(dict.fromkeys(deps))
        for n, members in enumerate(loops):
            if set(members) <= set(rest) and rng.random() < 0.7:
                out.append("tl%d" % n)
                rest = [p for p in rest if p not in members]
        return out + [names[p] for p in rest]

    successor = None   # after a fire-and-forget task: its kernel and target, for a named task chained after it
    while len(tasks) < TASKS:
        stmt = len(lines)
        starts.append((stmt, len(tasks)))
        kernel, target = successor or (rng.choice(KERNELS), rng.randrange(2))
        forgets = successor is None and rng.random() < 0.12   # no id, if it needs no deps=
        successor = None
        c = rng.randrange(NA)
        # a is c a fifth of the time: one array as both arguments (the kernels read before they store)
        a = None if kernel == "same" else c if rng.random() < 0.2 else rng.choice([x for x in range(NA) if x != c])
        j, scale = rng.randrange(BLOCKS), rng.choice(SCALES + ["s0"] * 2)
        loop = rng.random() < 0.25   # a pl.range over blocks lo..hi-1, the loop variable as the block
        # an if / else on the HOST parameter flag: the same task with another scale in each branch
        branch = not loop and kernel in ("scale", "put", "axpy") and rng.random() < 0.3
        if branch:
            scale = ("flag", scale, rng.choice(SCALES + ["s0"]))
        lo, hi = sorted(rng.sample(range(BLOCKS + 1), 2)) if loop else (None, None)
        blocks = range(lo, hi) if loop else [rng.randrange(BLOCKS)]
        deps, first = [], len(tasks)
        for k in blocks:   # the deps the iterations need (one deps= list serves them all)
            t = _Task(kernel, target, a, c, k, j, scale)
            after = chained(t)
            for p in deps:
                after |= {p} | done[p]
            for p in sorted(conflicts(t) - after, reverse=True):
                if p not in after:
                    deps.append(p)
                    after |= {p} | done[p]
            tasks.append(t)
            done.append(after)   # may miss what a later iteration's deps add: only more deps follow
        forgets = forgets and not loop and not branch and not deps
        if first and not forgets and rng.random() < 0.3:   # an extra dependency, needed or not
            deps.append(rng.randrange(first))
        dnames = dep_names(deps)
        if len(dnames) > 1 and rng.random() < 0.3:   # through a barrier
            lines.append("b%d = pl.system.task_dummy(deps=[%s])" % (stmt, ", ".join(dnames)))
            dnames = ["b%d" % stmt]
        block = "i" if loop else "%d" % blocks[0]
        args = ([] if a is None else ["x%d" % a]) + (["%d" % j] if kernel == "move" else []) + [block]
        calls = []
        for sc in ((scale[1], scale[2]) if branch else (scale,)):
            sargs = args + ([sc if sc == "s0" else repr(sc)] if kernel in ("scale", "put", "axpy") else [])
            calls.append("pl.submit(self.chip_%s_%d, %s%s)" % (kernel, target, ", ".join(sargs + ["x%d" % c]),
                                                               ", deps=[%s]" % ", ".join(dnames) if dnames else ""))
        call = calls[0]
        if loop:
            n = len(loops)
            loops.append(list(range(first, len(tasks))))
            names.extend("tl%d[%d]" % (n, k - lo) for k in blocks)
            lines += ["tl%d = pl.array.create(%d, pl.TASK_ID)" % (n, hi - lo),
                      "for i in pl.%s(%d, %d):" % (rng.choice(["range", "range", "parallel"]), lo, hi),
                      "    x%d, tid = %s" % (c, call),
                      "    tl%d[i - %d] = tid" % (n, lo)]
        elif forgets:   # a plain call: a next-level task without a handle, ordered by its target's chain
            names.append(None)
            lines.append("x%d = self.chip_%s_%d(%s)" % (c, kernel, target, call.split("(", 1)[1][len("self.chip_%s_%d, " % (kernel, target)):-1]))
            successor = (kernel, target)
        elif branch:
            names.append("t%d" % first)
            lines += ["if flag:", "    x%d, t%d = %s" % (c, first, calls[0]),
                      "else:", "    x%d, t%d = %s" % (c, first, calls[1])]
        else:
            names.append("t%d" % first)
            lines.append("x%d, t%d = %s" % (c, first, call))
    t = _tensor_type(case_dtype(seed))
    params = ", ".join(["x%d: pl.InOut[%s]" % (n, t) for n in range(NA)] +
                       ["s0: pl.Scalar[pl.FP32]", "flag: pl.Scalar[pl.BOOL]"] +
                       (["fail: pl.Scalar[pl.BOOL]"] if fault else []))
    if fault:   # after a random earlier task (or none), at a statement boundary
        line, before = rng.choice(starts + [(len(lines), len(tasks))])
        named = [names[p] for p in range(before) if names[p]]
        deps = ", deps=[%s]" % rng.choice(named) if named and rng.random() < 0.7 else ""
        c = rng.randrange(NA)
        lines[line:line] = ["if fail:", "    x%d, tfail = pl.submit(self.chip_fail, %d, x%d%s)"
                            % (c, rng.randrange(BLOCKS), c, deps)]
    text = '''import pypto.language as pl

B = {B}
W = {W}


@pl.program
class HostFuzz:{kernels}
    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, {params}) -> {t}:
{body}
        return x0
'''.format(B=B, W=W, kernels=_kernels_text(t), params=params, t=t,
           body="\n".join("        " + ln for ln in lines))
    if fault:
        text = text.replace("    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)",
                            FAIL_TARGET.format(t=t) + "\n    @pl.function(type=pl.FunctionType.Orchestration, "
                            "level=pl.Level.HOST)", 1)
    return text, tasks, 1 + seed % 4


def _inputs(seed):
    rng = np.random.default_rng(seed)
    # small integers times powers of two (every sum and product of the kernels is exact in FP32;
    # FP16 rounds the same way as NumPy's float16, one operation at a time), a quarter of them 0
    # (a negative scale makes them -0.0)
    dtype = NUMPY[case_dtype(seed)][0]
    return [(rng.integers(-64, 64, (ROWS, W)) * 0.25 * (rng.random((ROWS, W)) > 0.25)).astype(dtype)
            for _ in range(NA)]


def _model(tasks, arrs, params):
    arrs = [a.copy() for a in arrs]
    for t in tasks:
        t.apply(arrs, params)
    return arrs


def _compare(seed, run, arrs, want):
    findings = []
    for n, (got, w) in enumerate(zip(arrs, want)):
        bits = NUMPY[case_dtype(seed)][1]
        differ = got.view(bits) != w.view(bits)   # bit for bit: -0.0 is not 0.0
        if differ.any():
            i = tuple(int(v) for v in np.argwhere(differ)[0])
            findings.append("seed %d run %d: x%d differs at %s: got %r, model %r (%d elements)"
                            % (seed, run, n, i, got[i], w[i], int(differ.sum())))
    return findings


def run_faults(prog, seed, tasks):
    """The five runs of fault injection (see the module docstring); returns the disagreements."""
    findings = []
    arrs = _inputs(seed)
    rng = random.Random(seed)
    for run, fail in enumerate([False, True, False, True, False]):
        params = {"s0": rng.choice(SCALES), "flag": rng.random() < 0.5}
        want = _model(tasks, arrs, params)
        try:
            prog(*arrs, params["s0"], params["flag"], fail)
        except Exception as e:   # the failing runs: the run's error, naming the task and the assert
            text = str(e)
            if not fail:
                findings.append("seed %d run %d: a run without the failing task failed: %s"
                                % (seed, run, text.splitlines()[0]))
            elif "chip_fail" not in text or FAIL_MESSAGE not in text:
                findings.append("seed %d run %d: the failure's error does not name the task and its assert: %s"
                                % (seed, run, text[:400]))
            continue
        if fail:
            findings.append("seed %d run %d: the run with the failing task did not fail" % (seed, run))
        else:
            findings += _compare(seed, run, arrs, want)
    return findings


def run_case(prog, seed, tasks):
    """Runs the program three times (see the module docstring); returns the disagreements."""
    findings = []
    arrs = _inputs(seed)   # the same arrays every run: each starts from what the last one left
    rng = random.Random(seed)
    for run in range(3):
        if run == 2:
            arrs[seed % NA] += arrs[seed % NA].dtype.type(1.0)   # the caller changed an array between runs
        params = {"s0": rng.choice(SCALES), "flag": rng.random() < 0.5}
        want = _model(tasks, arrs, params)
        prog(*arrs, params["s0"], params["flag"])
        findings += _compare(seed, run, arrs, want)
    return findings


def check(seed: int, fault: bool = False):
    """Builds case `seed`, runs it in-process on 1..4 chips and returns the disagreements (with
    `fault`: the fault-injection runs)."""
    import pypto.language as pl
    from pypto import host
    text, tasks, chips = make_case(seed, fault)
    prog = host.compile_host(pl.parse_program(text, "host_fuzz_%d.py" % seed), chips=chips)
    return (run_faults if fault else run_case)(prog, seed, tasks)


def main(argv):
    """`mpi LO HI` (or `mpi-faults LO HI`: fault injection) under mpirun: rank 0 builds and checks
    cases LO..HI-1 on the chip ranks and prints `FINDING ...` per disagreement, then
    `DONE <cases> <findings>`; the other ranks serve."""
    import pypto.language as pl
    from pypto import host
    mode, lo, hi = argv[0], int(argv[1]), int(argv[2])
    assert mode in ("mpi", "mpi-faults"), mode
    fault = mode == "mpi-faults"
    bad = 0
    for seed in range(lo, hi):
        text, tasks, _ = make_case(seed, fault)
        prog = host.compile_host(pl.parse_program(text, "host_fuzz_%d.py" % seed), distributed="mpi")
        try:
            findings = (run_faults if fault else run_case)(prog, seed, tasks)
        except Exception as e:   # a run that fails is a finding too
            findings = ["seed %d: %s" % (seed, str(e).splitlines()[0])]
        for f in findings:
            print("FINDING " + f, flush=True)
        bad += bool(findings)
    print("DONE %d %d" % (hi - lo, bad), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
