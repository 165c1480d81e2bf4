"""Code generation throughput: parse, passes and orchestration codegen on a generated DSL
program with many task submissions (default 10,000).

    python benchmarks/codegen_bench.py [--tasks N] [--quick] [--profile] [--scaling 1000,10000,100000,300000]
                                       [--instructions [1000,10000,100000]]
    python benchmarks/codegen_bench.py --compare OTHER_SITE [--rounds 5]   # before/after, interleaved
    python benchmarks/codegen_bench.py --switch-cost [--tasks N] [--rounds 5]   # auto-deps off vs on
    python benchmarks/codegen_bench.py --switch-cost --compare OTHER_SITE [--rounds 5]   # ... before/after

The program has 4 kernels and one Orchestration function of N straight-line kernel calls over
8 internal buffers; times are reported separately for each stage, wall and CPU (CPU time is
the compiler's own cost on a busy machine), then the stages' CPU time at 1k / 10k / 100k / 300k
submissions (best of 3) to show they stay linear, with a growth check per stage: its us per
submission at 300k over that at 100k (both past the caches), against 1.3x. --instructions
counts each stage's instructions under callgrind at 1k / 10k / 100k and checks that the
instructions per submission at 100k are within 1.1x of the fewest at any size: the work is
linear at every size, while the time per submission steps up between 10k and 100k, where the
IR outgrows the caches. --profile
--profile
also prints, per stage, the functions with the most own time (cProfile; its per-call overhead
inflates call-heavy Python code, so read it for where to look, not for the numbers).
PYPTO_TIME_PASSES=1 prints each pass's CPU time on stderr (which pass grows with the size).

--compare OTHER_SITE measures another build of pypto (a directory holding its `pypto` package,
e.g. `pip install --target OTHER_SITE .` of an older commit) against the installed one: each
round runs every size once in a fresh process of each build, alternating, and the table gives
the best CPU time per stage over the rounds with the load average before and after, so a
busy shared machine slows both sides alike. With --switch-cost it compares what the
analyze_auto_scopes_for_deps switch adds in each build (both switch states per process).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import re
import shutil
import subprocess
import sys
import time

KERNELS = 4
BUFFERS = 8


def make_source(tasks: int) -> str:
    lines = ["import pypto.language as pl", "", "", "@pl.program", "class Bench:"]
    for k in range(KERNELS):
        lines += [
            "    @pl.function(type=pl.FunctionType.InCore)",
            "    def k%d(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],"
            " s: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:" % k,
            "        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)",
            "        return c",
            "",
        ]
    lines += [
        "    @pl.function(type=pl.FunctionType.Orchestration)",
        "    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],"
        " out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:",
    ]
    for i in range(BUFFERS):
        lines.append("        t%d = pl.create_tensor([16, 16], dtype=pl.FP32)" % i)
    lines.append("        t0 = self.k0(a, b, 0, t0)")
    for n in range(1, tasks - 1):
        src, dst = (n - 1) % BUFFERS, n % BUFFERS
        lines.append("        t%d = self.k%d(t%d, b, %d, t%d)" % (dst, n % KERNELS, src, n, dst))
    lines.append("        out = self.k1(t%d, a, 0, out)" % ((tasks - 2) % BUFFERS))
    lines.append("        return out")
    return "\n".join(lines) + "\n"


def _stage(name: str, profile: bool, fn, *args, **kwargs):
    """fn(*args, **kwargs); with profile, under cProfile, printing its top functions."""
    if not profile:
        return fn(*args, **kwargs)
    prof = cProfile.Profile()
    result = prof.runcall(fn, *args, **kwargs)
    print("-- %s: top functions by own time" % name)
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(15)
    return result


def run(tasks: int, profile: bool = False, auto_deps: bool = False) -> dict:
    import pypto.language as pl
    from pypto import codegen

    source = make_source(tasks)
    c0, t0 = time.process_time(), time.perf_counter()
    program = _stage("parse", profile, pl.parse_program, source, "codegen_bench.py")
    c1, t1 = time.process_time(), time.perf_counter()
    prepared = _stage("passes", profile, codegen.run_pipeline, program,
                      analyze_auto_scopes_for_deps=auto_deps)
    c2, t2 = time.process_time(), time.perf_counter()
    result = _stage("codegen", profile, codegen.generate_orchestration, prepared, "main", run_passes=False)
    c3, t3 = time.process_time(), time.perf_counter()
    submits = result.code.count("rt_submit_")
    assert submits == tasks, "expected %d submissions, generated %d" % (tasks, submits)
    return {"tasks": tasks, "parse_s": t1 - t0, "passes_s": t2 - t1, "codegen_s": t3 - t2,
            "parse_cpu_s": c1 - c0, "passes_cpu_s": c2 - c1, "codegen_cpu_s": c3 - c2,
            "lines": result.code.count("\n")}


def scaling(sizes, rounds: int = 3) -> list:
    """run() at each size, the best of `rounds` per stage by CPU time (a busy machine's
    waiting is not the compiler's cost): [{tasks, parse_cpu_s, ...}]."""
    rows = []
    for n in sizes:
        runs = [run(n) for _ in range(rounds)]
        best = {"tasks": n}
        for stage in ("parse", "passes", "codegen"):
            best[stage + "_cpu_s"] = min(r[stage + "_cpu_s"] for r in runs)
            best[stage + "_s"] = min(r[stage + "_s"] for r in runs)
        rows.append(best)
    return rows


_STAGES = ("parse", "passes", "codegen")


def _child_run(site, sizes) -> dict:
    """{tasks: {stage: cpu s}} of one run per size in a fresh process (pypto from `site` when
    given, else the installed one)."""
    env = dict(os.environ)
    if site:
        env["PYTHONPATH"] = site + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--json-run", ",".join(map(str, sizes))],
                         env=env, check=True, capture_output=True, text=True).stdout
    return {int(k): v for k, v in json.loads(out.splitlines()[-1]).items()}


def compare(other_site: str, sizes, rounds: int) -> None:
    """Print the before (other_site) / after (installed) table of the four stages, interleaved."""
    best = {"before": {}, "after": {}}
    load0 = os.getloadavg()[0]
    for _ in range(rounds):
        for side, site in (("before", other_site), ("after", None)):
            for n, cells in _child_run(site, sizes).items():
                b = best[side].setdefault(n, {})
                for st in _STAGES:
                    b[st] = min(b.get(st, float("inf")), cells[st])
    load1 = os.getloadavg()[0]
    print("codegen_bench --compare: best CPU seconds of %d interleaved rounds (load average %.1f -> %.1f, "
          "%d cores); us per task in brackets" % (rounds, load0, load1, os.cpu_count() or 0))
    print("  %8s %-7s %16s %16s %16s %16s" % ("tasks", "build", "parse", "passes", "codegen", "total"))
    for n in sizes:
        for side in ("before", "after"):
            cells = [best[side][n][st] for st in _STAGES]
            cells.append(sum(cells))
            print("  %8d %-7s %s" % (n, side, " ".join("%8.3f (%5.1f)" % (c, 1e6 * c / n) for c in cells)))
        ratio = sum(best["before"][n].values()) / max(sum(best["after"][n].values()), 1e-9)
        print("  %8d %-7s total %.2fx faster" % (n, "", ratio))
    if len(sizes) > 1:
        for side in ("before", "after"):
            rows = [dict(best[side][n], tasks=n) for n in sizes]
            print(side + ":" + growth_line(rows)[1:])
            for line in growth_check(rows):
                print(side + ":" + line[1:])


def growth_line(rows) -> str:
    """How far each stage is from linear: its largest over its smallest us/task across the sizes
    of `rows` ([{tasks, <stage>: cpu s}]); 1.00 = perfectly linear."""
    cells = []
    for st in _STAGES + ("total",):
        per = [(sum(r[s] for s in _STAGES) if st == "total" else r[st]) / r["tasks"] for r in rows]
        cells.append("%s %.2fx" % (st, max(per) / max(min(per), 1e-12)))
    return "  growth of us/task, largest / smallest size: " + ", ".join(cells)


# Issue 17: compile-time cost stays linear. Time per submission steps up between 10k and 100k
# submissions, where the program's IR (about 2 KB a submission) outgrows the caches (a 32 MB L3
# here) while the instructions per submission stay flat; so linearity is checked where each
# measure is meaningful: time past the caches, work (instructions, deterministic) at every size.
CACHE_BOUND_TASKS = 100000   # sizes from here on hold their IR in memory, not in the caches
GROWTH_GOAL = 1.3            # time per submission: largest size over the next, both past the caches
INSTRUCTION_GROWTH_GOAL = 1.1   # instructions per submission: largest size over the fewest at any size


def growth_check(rows) -> list:
    """One line per stage (and the total): its us per submission at the largest size over that at
    the next, both at least CACHE_BOUND_TASKS, against GROWTH_GOAL; `rows` as for growth_line.
    Empty unless two sizes are that large."""
    big = sorted(r["tasks"] for r in rows if r["tasks"] >= CACHE_BOUND_TASKS)
    if len(big) < 2:
        return []
    by = {r["tasks"]: r for r in rows}
    small, large = big[-2], big[-1]
    lines = []
    for st in _STAGES + ("total",):
        per = [(sum(by[n][s] for s in _STAGES) if st == "total" else by[n][st]) * 1e6 / n for n in (small, large)]
        ratio = per[1] / max(per[0], 1e-12)
        lines.append("  growth check %-7s %dk/%dk us per submission %6.2f / %6.2f = %.2fx (goal <= %.1fx past the "
                     "caches: %s)" % (st, large // 1000, small // 1000, per[1], per[0], ratio, GROWTH_GOAL,
                                      "met" if ratio <= GROWTH_GOAL else "NOT met"))
    return lines


def _run_stages(tasks: int, stages: int) -> None:
    """The first `stages` stages (0-3) of run(tasks), untimed: what one callgrind count covers."""
    import pypto.language as pl
    from pypto import codegen

    source = make_source(tasks)
    program = pl.parse_program(source, "codegen_bench.py") if stages >= 1 else None
    prepared = codegen.run_pipeline(program, analyze_auto_scopes_for_deps=False) if stages >= 2 else None
    if stages >= 3:
        codegen.generate_orchestration(prepared, "main", run_passes=False)


def _callgrind_count(tasks: int, stages: int) -> int:
    """Instructions executed by a fresh process running the first `stages` stages at `tasks`."""
    env = dict(os.environ, PYTHONHASHSEED="0")   # the same dict layouts every run
    res = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                          os.path.abspath(__file__), "--json-stages", "%d,%d" % (tasks, stages)],
                         env=env, capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", res.stderr)
    if res.returncode != 0 or not m:
        raise RuntimeError("callgrind run of %d tasks, %d stages failed:\n%s" % (tasks, stages, res.stderr[-2000:]))
    return int(m.group(1))


def count_instructions(sizes) -> list:
    """[{tasks, parse, passes, codegen}]: the instructions each stage executes at each size,
    counted by callgrind (exact, so a loaded machine does not blur them). Four processes per size
    run the first 0, 1, 2 and 3 stages; a stage's count is the difference of consecutive ones."""
    rows = []
    for n in sizes:
        counts = [_callgrind_count(n, k) for k in range(len(_STAGES) + 1)]
        rows.append(dict({st: counts[i + 1] - counts[i] for i, st in enumerate(_STAGES)}, tasks=n))
    return rows


def instruction_report(rows) -> list:
    """The instruction table and one check line per stage (and the total): its instructions per
    submission at the largest size over the fewest per submission at any size, against
    INSTRUCTION_GROWTH_GOAL (fixed costs make small sizes dearer per submission, never cheaper)."""
    lines = ["instructions (callgrind; per submission in brackets):",
             "  %8s %20s %20s %20s %20s" % ("tasks", "parse", "passes", "codegen", "total")]
    for r in rows:
        cells = [r[st] for st in _STAGES] + [sum(r[st] for st in _STAGES)]
        lines.append("  %8d %s" % (r["tasks"], " ".join("%12d (%5.0f)" % (c, c / r["tasks"]) for c in cells)))
    largest = max(rows, key=lambda r: r["tasks"])
    for st in _STAGES + ("total",):
        per = {r["tasks"]: (sum(r[s] for s in _STAGES) if st == "total" else r[st]) / r["tasks"] for r in rows}
        fewest = min(per, key=per.get)
        ratio = per[largest["tasks"]] / max(per[fewest], 1e-12)
        lines.append("  instruction growth check %-7s per submission at %dk %7.0f / fewest (at %dk) %7.0f = %.2fx "
                     "(goal <= %.1fx: %s)" % (st, largest["tasks"] // 1000, per[largest["tasks"]], fewest // 1000,
                                              per[fewest], ratio, INSTRUCTION_GROWTH_GOAL,
                                              "met" if ratio <= INSTRUCTION_GROWTH_GOAL else "NOT met"))
    return lines


def _child_switch(site, tasks: int) -> dict:
    """{"off": {stage: cpu s}, "on": {...}} of one run each way at `tasks`, in a fresh process
    (pypto from `site` when given, else the installed one)."""
    env = dict(os.environ)
    if site:
        env["PYTHONPATH"] = site + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--json-switch-run", str(tasks)],
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def switch_cost_compare(other_site: str, tasks: int, rounds: int) -> None:
    """Prints the switch's cost for another build (other_site, "before") and the installed one
    ("after"): each round runs both switch states in a fresh process of each build, alternating;
    best CPU seconds per stage over the rounds."""
    best = {side: {"off": {}, "on": {}} for side in ("before", "after")}
    load0 = os.getloadavg()[0]
    for _ in range(rounds):
        for side, site in (("before", other_site), ("after", None)):
            for mode, cells in _child_switch(site, tasks).items():
                b = best[side][mode]
                for st in _STAGES:
                    b[st] = min(b.get(st, float("inf")), cells[st])
    load1 = os.getloadavg()[0]
    print("analyze_auto_scopes_for_deps at %d tasks, before (%s) vs after (installed): best CPU seconds of %d "
          "interleaved rounds (load average %.1f -> %.1f)" % (tasks, other_site, rounds, load0, load1))
    for side in ("before", "after"):
        totals = {}
        for mode in ("off", "on"):
            cells = [best[side][mode][st] for st in _STAGES]
            totals[mode] = sum(cells)
            print("  %-6s %-4s parse %.3f passes %.3f codegen %.3f total %.3f" % (side, mode, *cells, totals[mode]))
        print("  %-6s the switch adds %.3f s" % (side, totals["on"] - totals["off"]))


def switch_cost(tasks: int, rounds: int) -> None:
    """Prints the stages' best CPU time with analyze_auto_scopes_for_deps off and on, interleaved."""
    best = {False: {}, True: {}}
    run(min(tasks, 1000))   # warm-up
    for _ in range(rounds):
        for on in (False, True):
            r = run(tasks, auto_deps=on)
            for st in _STAGES:
                best[on][st] = min(best[on].get(st, float("inf")), r[st + "_cpu_s"])
    print("analyze_auto_scopes_for_deps at %d tasks: best CPU seconds of %d interleaved rounds" % (tasks, rounds))
    for on in (False, True):
        cells = [best[on][st] for st in _STAGES]
        print("  %-4s parse %.3f passes %.3f codegen %.3f total %.3f" % (("on" if on else "off"), *cells, sum(cells)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=10000)
    ap.add_argument("--quick", action="store_true", help="1,000 tasks")
    ap.add_argument("--profile", action="store_true",
                    help="profile each stage (cProfile) and print its top functions; times include the overhead")
    ap.add_argument("--scaling", default="1000,10000,100000,300000",
                    help="sizes of the linearity table (best CPU time of 3 runs each); '' to skip")
    ap.add_argument("--instructions", nargs="?", const="1000,10000,100000", default="", metavar="SIZES",
                    help="also count each stage's instructions at SIZES (default 1000,10000,100000) under "
                         "callgrind: the linearity of the work, exact on a loaded machine (a few minutes)")
    ap.add_argument("--compare", metavar="OTHER_SITE", default="",
                    help="before/after table against the pypto package in OTHER_SITE (interleaved rounds)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of --compare (default 5)")
    ap.add_argument("--switch-cost", action="store_true",
                    help="stage times with analyze_auto_scopes_for_deps off vs on at --tasks (interleaved --rounds)")
    ap.add_argument("--json-run", default="", help=argparse.SUPPRESS)
    ap.add_argument("--json-switch-run", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--json-stages", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    for flag in ("scaling", "instructions"):
        try:
            bad = [x for x in getattr(args, flag).split(",") if not x.strip() or int(x) < 2] if getattr(args, flag) else []
        except ValueError:
            bad = [getattr(args, flag)]
        if bad:
            ap.error("--%s takes sizes of at least 2 submissions, comma-separated (e.g. 1000,10000), got %r"
                     % (flag, getattr(args, flag)))
    if args.json_stages:    # one count of --instructions, under callgrind
        _run_stages(*(int(x) for x in args.json_stages.split(",")))
        return 0
    if args.json_switch_run:   # one --switch-cost --compare measurement, in its own process
        n = args.json_switch_run
        run(min(n, 1000))      # warm-up: imports, first-call caches
        res = {("on" if on else "off"): run(n, auto_deps=on) for on in (False, True)}
        print(json.dumps({mode: {st: r[st + "_cpu_s"] for st in _STAGES} for mode, r in res.items()}))
        return 0
    if args.json_run:       # one --compare measurement, in its own process
        sizes = [int(x) for x in args.json_run.split(",")]
        run(min(sizes))     # warm-up: imports, first-call caches
        res = {n: run(n) for n in sizes}
        print(json.dumps({n: {st: r[st + "_cpu_s"] for st in _STAGES} for n, r in res.items()}))
        return 0
    if args.switch_cost:
        if args.compare:
            switch_cost_compare(args.compare, args.tasks, args.rounds)
        else:
            switch_cost(args.tasks, args.rounds)
        return 0
    if args.compare:
        sizes = [int(x) for x in (args.scaling or "1000,10000,100000").split(",")]
        compare(args.compare, sizes, args.rounds)
        return 0
    tasks = 1000 if args.quick else args.tasks
    r = run(tasks, args.profile)
    print("codegen_bench: %d task submissions, %d lines of C++" % (r["tasks"], r["lines"]))
    print("  %-8s %8s %8s %12s" % ("stage", "wall s", "cpu s", "tasks/s (cpu)"))
    for stage in ("parse", "passes", "codegen"):
        s, c = r[stage + "_s"], r[stage + "_cpu_s"]
        print("  %-8s %8.3f %8.3f %12.0f" % (stage, s, c, r["tasks"] / c if c > 0 else float("inf")))
    total = r["parse_s"] + r["passes_s"] + r["codegen_s"]
    total_cpu = r["parse_cpu_s"] + r["passes_cpu_s"] + r["codegen_cpu_s"]
    print("  %-8s %8.3f %8.3f %12.0f" % ("total", total, total_cpu, r["tasks"] / total_cpu))
    if r["tasks"] == 10000:
        print("  goal (issue 17, 10,000 submissions): total < 0.2 s (%.2fx of it, cpu), parse < 0.1 s (%.2fx)"
              % (total_cpu / 0.2, r["parse_cpu_s"] / 0.1))
    sizes = [] if args.quick or args.profile or not args.scaling else [int(x) for x in args.scaling.split(",")]
    if sizes:
        print("linearity (best CPU seconds of 3 runs; us per task in brackets):")
        print("  %8s %16s %16s %16s %16s" % ("tasks", "parse", "passes", "codegen", "total"))
        scaling_rows = scaling(sizes)
        for row in scaling_rows:
            n = row["tasks"]
            cells = [row[s + "_cpu_s"] for s in ("parse", "passes", "codegen")]
            cells.append(sum(cells))
            print("  %8d %s" % (n, " ".join("%8.3f (%5.1f)" % (c, 1e6 * c / n) for c in cells)))
        if len(sizes) > 1:
            rows = [dict({st: row[st + "_cpu_s"] for st in _STAGES}, tasks=row["tasks"]) for row in scaling_rows]
            print(growth_line(rows))
            for line in growth_check(rows):
                print(line)
    if args.instructions and not args.quick:
        if shutil.which("valgrind") is None:
            print("instructions: valgrind not found (scripts/setup.sh bench installs it)")
        else:
            for line in instruction_report(count_instructions([int(x) for x in args.instructions.split(",")])):
                print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
