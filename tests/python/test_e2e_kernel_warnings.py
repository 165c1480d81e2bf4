"""Every generated CPU kernel of the examples and spec programs compiles warning-free with
`-O2 -Wall -Wextra -Werror` (the build itself uses -O3 -Wall without -Werror)."""
import glob
import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

from pypto import codegen
from pypto._core import kernel_cpu
from pypto.runtime import include_dir, kernel_include_dir

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
FILES = sorted(glob.glob(os.path.join(ROOT, "examples", "*.py")) +
               glob.glob(os.path.join(ROOT, "tests", "python", "spec_programs", "*.py")))
FILES = [f for f in FILES if os.path.basename(f) not in ("demo.py", "__init__.py")]


def programs_of(path):
    name = "kw_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return [v for v in vars(mod).values() if hasattr(v, "functions") and hasattr(v, "dynamic_dims")]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.basename(p))
def test_kernels_compile_without_warnings(path, tmp_path):
    for program in programs_of(path):
        prepared = codegen.run_pipeline(program)
        kernels = [n for n, t in kernel_cpu.functions(prepared) if t in ("InCore", "AIC", "AIV")]
        assert kernels
        for name in kernels:
            src = tmp_path / (name + ".cpp")
            src.write_text(kernel_cpu.generate(prepared, name))
            r = subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I" + include_dir(),
                                "-I" + kernel_include_dir(), "-c", str(src), "-o", str(tmp_path / (name + ".o"))],
                               capture_output=True, text=True)
            assert r.returncode == 0, "%s:%s\n%s" % (path, name, r.stderr[:3000])
