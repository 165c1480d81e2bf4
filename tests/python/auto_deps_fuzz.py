"""Random AUTO orchestration programs for the AutoDeriveTaskDependencies differential test.

    src = program_source(seed)                    # DSL text of one random program
    check_program(seed, runs=4)                   # compile with the switch off and on, run both
                                                  # on `runs` input sets, compare, race-check "on"

Programs: tiles of 16 rows of three [128, 16] tensors (x In, y / z InOut) and one created
temporary, accessed through pl.tensor.slice views with affine offsets (constants, loop
variables, (outer * k + inner), shifted by one tile), inside pl.range / pl.parallel / dynamic
pl.range(n) loops (nested up to two deep) and `if n > 3:` branches, by kernels that copy,
accumulate (InOut), read a whole tensor, or write two outputs. The switch-off build is the
reference: every output must be bit-identical with the switch on, and the race checker must
report nothing. A share of the tasks are the user's own `pl.submit`s (USER_SUBMITS) with deps=
naming None, the TaskId `prev` (set by some submits and `pl.system.task_dummy` barriers: a
TaskId carried through loops and merged by ifs) or the submit just before; some copy into an
output the runtime allocates (`t, tid = pl.submit(self.copy, a)`) that the next task reads. Used by tests/python/test_auto_deps_differential.py (small, seeded) and
scripts/fuzz_auto_deps.py (`make fuzz`).

    check_batch(range(50), runs=2)                # 50 programs, both builds of each, in ONE library

check_batch is the cheap form: every program starts with the same five kernel calls (so all
share one kernel table), the 2 x N orchestration functions are renamed and concatenated into one
translation unit behind a dispatcher entry that picks one by a second scalar, so a batch costs
one compiler run instead of 2 x N, and runs go straight to the runtime (no per-program load).
"""

from __future__ import annotations

import random

import numpy as np

TILES = 8
ROWS = TILES * 16
USER_SUBMITS = 0.3   # the share of tasks spelled as the user's pl.submit with deps=

KERNELS = f'''
    @pl.function(type=pl.FunctionType.InCore)
    def init(self, a: pl.Tensor[[{ROWS}, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[{ROWS}, 16], pl.FP32]]) -> pl.Tensor[[{ROWS}, 16], pl.FP32]:
        c2 = pl.store(pl.load(a, [0, 0], [{ROWS}, 16]), [0, 0], c)
        return c
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        c2 = pl.store(pl.add(t, t), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c2 = pl.store(pl.add(pl.mul(pl.load(c, [0, 0], [16, 16]), 0.5), pl.load(a, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def whole(self, a: pl.Tensor[[{ROWS}, 16], pl.FP32],
              c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        u = pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(a, [{ROWS - 16}, 0], [16, 16]))
        c2 = pl.store(pl.add(pl.load(c, [0, 0], [16, 16]), u), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def split(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
        t = pl.load(a, [0, 0], [16, 16])
        b2 = pl.store(pl.add(t, 1.0), [0, 0], b)
        c2 = pl.store(pl.mul(t, 3.0), [0, 0], c)
        return b, c
'''


class _Gen:
    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.lines: list[str] = []
        self.n = 0
        self.in_parallel = 0   # prev is not set in a pl.parallel body (it would become an array of ids)

    def name(self, base):
        self.n += 1
        return "%s%d" % (base, self.n)

    def tile(self, vars_):
        """An affine tile index expression (string) valid for every value of the loop vars.
        vars_: [(name, trip)] of the enclosing loops (trip None = dynamic, <= TILES)."""
        r = self.r
        forms = ["const"]
        if vars_:
            forms += ["var", "var_shift"]
        if len(vars_) >= 2 and vars_[0][1] and vars_[1][1] and vars_[0][1] * vars_[1][1] <= TILES:
            forms.append("outer_inner")
        f = r.choice(forms)
        if f == "const":
            return str(r.randrange(TILES))
        if f == "outer_inner":
            (o, _), (i, ti) = vars_[0], vars_[1]
            return "(%s * %d + %s)" % (o, ti, i)
        v, trip = r.choice(vars_)
        if f == "var_shift" and trip is not None and trip < TILES:
            return "(%s + %d)" % (v, r.randrange(TILES - trip + 1))
        return v

    def task(self, ind, vars_):
        r = self.r
        kind = r.choice(["copy", "acc", "acc", "whole", "split"])
        srcs = ["x", "y", "z", "tmp"]
        dsts = ["y", "z", "tmp"]
        pad = "    " * ind
        def view(t, idx):
            v = self.name("v")
            self.lines.append("%s%s = pl.tensor.slice(%s, [16, 16], [%s * 16, 0])" % (pad, v, t, idx))
            return v
        if kind == "whole":
            d = view(r.choice(dsts), self.tile(vars_))
            self.call(pad, "whole", [r.choice(srcs), d], 1)
            return
        a = view(r.choice(srcs), self.tile(vars_))
        if kind == "split":
            b = view(r.choice(dsts), self.tile(vars_))
            c = view(r.choice(dsts), self.tile(vars_))
            if b == c:
                return
            self.call(pad, "split", [a, b, c], 2)
            return
        if r.random() < USER_SUBMITS / 2:   # through an output the runtime allocates
            t, tid = self.name("t"), self.name("tid")
            self.lines.append("%s%s, %s = pl.submit(self.copy, %s, deps=[%s])" % (pad, t, tid, a, self.dep()))
            a = t
        d = view(r.choice(dsts), self.tile(vars_))
        self.call(pad, kind, [a, d], 1)

    def dep(self):
        return self.r.choice(["None", "prev", "prev"])

    def call(self, pad, kernel, args, results):
        """`r = self.k(args)`, or the user's `r, tid = pl.submit(self.k, args, deps=[...])`."""
        names = [self.name("r") for _ in range(results)]
        if self.r.random() >= USER_SUBMITS:
            self.lines.append("%s%s = self.%s(%s)" % (pad, ", ".join(names), kernel, ", ".join(args)))
            return
        tid = "prev" if self.r.random() < 0.5 and not self.in_parallel else self.name("tid")
        self.lines.append("%s%s, %s = pl.submit(self.%s, %s, deps=[%s])" % (
            pad, ", ".join(names), tid, kernel, ", ".join(args), self.dep()))
        if self.r.random() < 0.15 and not self.in_parallel:
            self.lines.append("%sprev = pl.system.task_dummy(deps=[prev, %s])" % (pad, tid))

    def block(self, ind, vars_, budget):
        r = self.r
        start = len(self.lines)
        for _ in range(r.randint(1, 3)):
            if budget <= 0:
                break
            c = r.random()
            pad = "    " * ind
            if c < 0.45 or len(vars_) >= 2:
                self.task(ind, vars_)
                budget -= 1
            elif c < 0.9:
                v = self.name("i")
                kind = r.choice(["range", "range", "parallel", "dynamic"])
                if kind == "dynamic":
                    trip = None
                    self.lines.append("%sfor %s in pl.range(n):" % (pad, v))
                else:
                    trip = r.randint(1, 4)
                    self.lines.append("%sfor %s in pl.%s(%d):" % (pad, v, kind, trip))
                self.in_parallel += kind == "parallel"
                self.block(ind + 1, vars_ + [(v, trip)], budget - 1)
                self.in_parallel -= kind == "parallel"
                budget -= 2
            else:
                self.lines.append("%sif n > 3:" % pad)
                self.block(ind + 1, vars_, 1)
                budget -= 1
        if len(self.lines) == start:
            self.task(ind, vars_)


def program_source(seed: int) -> str:
    g = _Gen(seed)
    g.block(2, [], g.r.randint(2, 6))
    body = "\n".join(g.lines)
    return f'''import pypto.language as pl


@pl.program
class Fuzz{seed}:
{KERNELS}
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{ROWS}, 16], pl.FP32], y: pl.InOut[pl.Tensor[[{ROWS}, 16], pl.FP32]],
             z: pl.InOut[pl.Tensor[[{ROWS}, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[{ROWS}, 16], pl.FP32]:
        prev = None
        tmp = pl.create_tensor([{ROWS}, 16], dtype=pl.FP32)
        t0 = self.init(x, tmp)
        p0 = pl.tensor.slice(x, [16, 16], [0, 0])
        p1 = pl.tensor.slice(tmp, [16, 16], [0, 0])
        p2 = pl.tensor.slice(tmp, [16, 16], [16, 0])
        p3 = self.copy(p0, p1)
        p4 = self.acc(p0, p2)
        p5 = self.whole(x, p1)
        p6, p7 = self.split(p0, p1, p2)
{body}
        return y
'''


def load(seed: int):
    import pypto.language as pl
    return pl.parse_program(program_source(seed))


def inputs(seed: int, run: int):
    rng = np.random.default_rng(seed * 1000 + run)
    x = rng.standard_normal((ROWS, 16)).astype(np.float32)
    y = rng.standard_normal((ROWS, 16)).astype(np.float32)
    z = rng.standard_normal((ROWS, 16)).astype(np.float32)
    n = int(rng.integers(0, TILES + 1))
    return x, y, z, n


def check_program(seed: int, runs: int = 1, workers: int = 2):
    """Compiles program `seed` with the switch off and on and compares `runs` runs; the "on"
    runs are race-checked (mode "error"). Returns the "on" program's auto_deps verdict."""
    import pypto
    from pypto import codegen
    program = load(seed)
    off = pypto.compile(program)
    on = pypto.compile(program, analyze_auto_scopes_for_deps=True)
    for run in range(runs):
        x, y, z, n = inputs(seed, run)
        y1, z1, y2, z2 = y.copy(), z.copy(), y.copy(), z.copy()
        off(x, y1, z1, n, aiv_workers=workers)
        on(x, y2, z2, n, aiv_workers=workers, race_check=True)
        assert np.array_equal(y1, y2) and np.array_equal(z1, z2), \
            "seed %d run %d: switch-on results differ\n%s" % (seed, run, program_source(seed))
    prepared = codegen.run_pipeline(program, analyze_auto_scopes_for_deps=True)
    return prepared.get("main").attrs.get("auto_deps", "")


def _batch_library(seeds):
    """Builds the switch-off and switch-on orchestration of every program of `seeds` into one
    library. Returns (library path, {seed: auto_deps verdict}); selector 2 * k (+1 for "on")
    runs program seeds[k]."""
    from pypto import compiler
    from pypto.runtime.build import build_sources, program_table_source, source_stem

    parts, dispatch, verdicts = [], [], {}
    kernels, kernel_sources = None, None
    for k, seed in enumerate(seeds):
        program = load(seed)
        for on in (False, True):
            _, prepared, result, sources, entries = compiler.generate(program, analyze_auto_scopes_for_deps=on)
            table = [(e.name, e.kernel_id, e.core_type) for e in entries]
            if kernels is None:
                kernels, kernel_sources = entries, sources
            assert table == [(e.name, e.kernel_id, e.core_type) for e in kernels] and sources == kernel_sources, \
                "seed %d: kernel table differs from the batch's" % seed
            sel = 2 * k + int(on)
            parts.append("#define aicpu_orchestration_entry fuzz_entry_%d\n"
                         "#define aicpu_orchestration_config fuzz_config_%d\n%s\n"
                         "#undef aicpu_orchestration_entry\n#undef aicpu_orchestration_config\n"
                         % (sel, sel, result.code))
            dispatch.append("        case %d: fuzz_entry_%d(orch_args); break;" % (sel, sel))
            if on:
                verdicts[seed] = prepared.get("main").attrs.get("auto_deps", "")
    parts.append("""extern "C" {
__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipStorageTaskArgs& orch_args) {
    (void)orch_args;
    return PTO2OrchestrationConfig{ .expected_arg_count = 5 };
}
__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipStorageTaskArgs& orch_args) {
    switch ((int64_t)orch_args.scalar(1)) {
%s
        default: break;
    }
}
}  // extern "C"
""" % "\n".join(dispatch))
    files = {"orchestration/fuzz_batch.cpp": "\n".join(parts),
             "program_table.cpp": program_table_source("fuzz_batch", kernels)}
    for name, code in kernel_sources.items():
        files["kernels/%s.cpp" % source_stem(name)] = code
    # -O0: the orchestration code only submits tasks; optimizing 2 x N functions costs most of the build.
    flags = {"orchestration/fuzz_batch.cpp": ["-O0"]}
    return build_sources(files, file_flags=flags, label="auto_deps fuzz batch of %d" % len(seeds)).library, verdicts


def check_batch(seeds, runs: int = 1, workers: int = 2):
    """check_program for many programs at once (see the module doc): both builds of every
    program in one library; each "on" run race-checked (mode "error") and bit-identical to
    the "off" run. Returns {seed: the "on" program's auto_deps verdict}."""
    from pypto.runtime.args import TensorArg, runtime_dtype_code
    from pypto.runtime.loader import ProgramLibrary

    seeds = list(seeds)
    path, verdicts = _batch_library(seeds)
    rt = ProgramLibrary(path).create_runtime(1, workers)
    fp32 = runtime_dtype_code("FP32")

    def run(sel, x, y, z, n, race_check):
        args = [TensorArg(a.ctypes.data, fp32, a.shape) for a in (x, y, z)]
        stats = rt.run(args, [n, sel], race_check=race_check, tensor_names=["x", "y", "z"])
        assert stats.tasks >= 5, "selector %d ran %d tasks (the dispatcher missed it)" % (sel, stats.tasks)

    for k, seed in enumerate(seeds):
        for r in range(runs):
            x, y, z, n = inputs(seed, r)
            y1, z1, y2, z2 = y.copy(), z.copy(), y.copy(), z.copy()
            run(2 * k, x, y1, z1, n, 0)
            run(2 * k + 1, x, y2, z2, n, 2)   # RaceError on any unordered conflicting pair
            assert np.array_equal(y1, y2) and np.array_equal(z1, z2), \
                "seed %d run %d: switch-on results differ\n%s" % (seed, r, program_source(seed))
    return verdicts
