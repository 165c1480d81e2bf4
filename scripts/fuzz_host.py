"""`make fuzz` part: random distributed HOST programs (tests/python/host_fuzz.py) in-process and
over MPI, each compared with NumPy; any disagreement, or a run that fails, is a finding.

    python scripts/fuzz_host.py [--count N] [--seed S] [--ranks R] [--no-mpi] [--faults]

In-process: cases S..S+N-1 (1 to 4 chips by seed). MPI (when mpirun and libpto2_mpi are there
and --no-mpi is not given): the same cases in one `mpirun -np R` job (R - 1 chip ranks), then
again over TCP loopback. `--faults`: the fault-injection cases (a chip task that fails, then
runs that must compute NumPy's result from what the failure left; host_fuzz.py's docstring). The
test suite checks a few seeds of each; the default here starts at 1000.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python")
sys.path.insert(0, HERE)

import host_fuzz  # noqa: E402


def mpi_available() -> bool:
    if shutil.which("mpirun") is None:
        return False
    from pypto.runtime import library_path
    return os.path.isfile(os.path.join(os.path.dirname(library_path()), "libpto2_mpi.so"))


def run_mpi(ranks, lo, hi, mca=(), timeout=3600, fault=False):
    """Cases lo..hi-1 in one mpirun job (the fault-injection ones with `fault`): (findings, the
    job's output)."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = ["mpirun", "-np", str(ranks), "--oversubscribe", *mca, sys.executable,
           os.path.join(HERE, "host_fuzz.py"), "mpi-faults" if fault else "mpi", str(lo), str(hi)]
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    out = cp.stdout + cp.stderr
    findings = [ln[len("FINDING "):] for ln in cp.stdout.splitlines() if ln.startswith("FINDING ")]
    if cp.returncode != 0 or "DONE %d " % (hi - lo) not in cp.stdout:
        findings.append("mpirun -np %d %s: exit %d without finishing:\n%s" % (ranks, " ".join(mca), cp.returncode,
                                                                             out[-3000:]))
    return findings, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--no-mpi", action="store_true")
    ap.add_argument("--faults", action="store_true", help="fault-injection cases")
    args = ap.parse_args(argv)
    t0 = time.time()
    findings = []
    for seed in range(args.seed, args.seed + args.count):
        try:
            found = host_fuzz.check(seed, fault=args.faults)
        except Exception as e:   # a failing build or run is a finding too
            found = ["seed %d: %s" % (seed, str(e).splitlines()[0])]
        for f in found:
            print("finding (in-process): " + f, flush=True)
        findings += found
    print("fuzz_host: %d cases in-process in %.0f s, %d finding(s)" % (args.count, time.time() - t0, len(findings)),
          flush=True)
    if not args.no_mpi and mpi_available():
        for mca in ((), ("--mca", "btl", "tcp,self")):
            t1 = time.time()
            found, _ = run_mpi(args.ranks, args.seed, args.seed + args.count, mca, fault=args.faults)
            for f in found:
                print("finding (mpi %s): %s" % (" ".join(mca) or "default", f), flush=True)
            findings += found
            print("fuzz_host: %d cases on %d MPI ranks%s in %.0f s, %d finding(s)"
                  % (args.count, args.ranks, " (tcp)" if mca else "", time.time() - t1, len(found)), flush=True)
    elif not args.no_mpi:
        print("fuzz_host: MPI skipped (no mpirun or libpto2_mpi)", flush=True)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
