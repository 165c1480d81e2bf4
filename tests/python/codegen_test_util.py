"""Helpers shared by the orchestration codegen tests (golden files, compile checks)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNTIME_INCLUDE = os.path.join(REPO, "runtime", "include")
GOLDEN_DIR = os.path.join(REPO, "tests", "golden")


def load_module(path, name: str):
    """Imports the Python file at `path` as module `name` (registered in sys.modules: the DSL
    parser reads a program's source through its module). `mod = load_module(tmp / "p.py", "p")`"""
    spec = importlib.util.spec_from_file_location(name, str(path))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def significant_lines(code: str):
    """Lines that are neither blank nor comment-only, trailing whitespace removed."""
    out = []
    for line in code.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        out.append(line.rstrip())
    return out


def compile_cpp(code: str, tag: str = "orch", exported=()):
    """Compiles `code` with g++ -std=c++17 -Wall -Werror -c against the runtime header.

    With `exported` (symbol names) the object is built as for a shared object with hidden visibility
    (-fPIC -fvisibility=hidden) and each name must be a GLOBAL symbol of DEFAULT visibility in it
    (readelf), i.e. one a `-fvisibility=hidden` .so still exports; a miss fails like a compile error.
    Returns (ok, compiler output).
      compile_cpp(code, "if_else", exported=("aicpu_orchestration_entry",))"""
    with tempfile.TemporaryDirectory() as d:
        src, obj = os.path.join(d, tag + ".cpp"), os.path.join(d, tag + ".o")
        with open(src, "w") as f:
            f.write(code)
        hidden = ["-fPIC", "-fvisibility=hidden"] if exported else []
        cp = subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", *hidden, "-c", "-I", RUNTIME_INCLUDE, src,
                             "-o", obj], capture_output=True, text=True)
        if cp.returncode != 0 or not exported:
            return cp.returncode == 0, cp.stdout + cp.stderr
        syms = subprocess.run(["readelf", "-sW", obj], capture_output=True, text=True).stdout
        # readelf -s columns: Num: Value Size Type Bind Vis Ndx Name
        default = {f[7] for f in (line.split() for line in syms.splitlines())
                   if len(f) >= 8 and f[4] == "GLOBAL" and f[5] == "DEFAULT" and f[6] != "UND"}
        missing = [s for s in exported if s not in default]
        return not missing, ("not exported under -fvisibility=hidden: %s\n%s" % (missing, syms)) if missing else ""


def load_single_program(path: str):
    """The one @pl.program object defined by the Python file `path`."""
    from pypto import cli
    programs = cli.load_programs(path)
    assert len(programs) == 1, "%s should define exactly one program, found %s" % (path, sorted(programs))
    return next(iter(programs.values()))
