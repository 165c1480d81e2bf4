"""Helpers shared by the orchestration codegen tests (golden files, compile checks)."""

from __future__ import annotations

import os
import subprocess
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNTIME_INCLUDE = os.path.join(REPO, "runtime", "include")
GOLDEN_DIR = os.path.join(REPO, "tests", "golden")


def significant_lines(code: str):
    """Lines that are neither blank nor comment-only, trailing whitespace removed."""
    out = []
    for line in code.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        out.append(line.rstrip())
    return out


def compile_cpp(code: str, tag: str = "orch"):
    """Compiles `code` with g++ -std=c++17 -Wall -Werror -c against the runtime header.

    Returns (ok, compiler output)."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, tag + ".cpp")
        with open(src, "w") as f:
            f.write(code)
        cp = subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-c", "-I", RUNTIME_INCLUDE, src,
                             "-o", os.path.join(d, tag + ".o")], capture_output=True, text=True)
        return cp.returncode == 0, cp.stdout + cp.stderr


def load_single_program(path: str):
    """The one @pl.program object defined by the Python file `path`."""
    from pypto import cli
    programs = cli.load_programs(path)
    assert len(programs) == 1, "%s should define exactly one program, found %s" % (path, sorted(programs))
    return next(iter(programs.values()))
