"""Runs a C++ check program against the kernel headers (the SIMD-path tests): built with the
kernels' own flags (pypto.runtime.build.KERNEL_FLAGS) plus -Wall -Werror, run, and held to its
report line `paths P checks C mismatches M`: no mismatch, and every SIMD path this CPU has
(AVX-512, AVX2) compared.

    run_kernel_check(tmp_path, "exp_paths", PROGRAM)
"""

from __future__ import annotations

import subprocess

from pypto import runtime
from pypto.runtime.build import KERNEL_FLAGS

from codegen_test_util import RUNTIME_INCLUDE


def simd_paths_of_this_cpu() -> int:
    """How many of the kernels' SIMD paths (AVX-512, AVX2) this CPU can run."""
    with open("/proc/cpuinfo") as f:
        flags = f.read()
    return (" avx512f" in flags) + (" avx2" in flags)


def run_kernel_check(tmp_path, name: str, program: str, extra_flags=(), timeout=None) -> str:
    """Builds and runs `program`; asserts as the module doc says and returns its stdout."""
    src = tmp_path / (name + ".cpp")
    src.write_text(program)
    exe = tmp_path / name
    cp = subprocess.run(["g++", "-std=c++17", *KERNEL_FLAGS, "-Wall", "-Werror", *extra_flags,
                         "-I", runtime.kernel_include_dir(), "-I", RUNTIME_INCLUDE, str(src), "-o", str(exe)],
                        capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "mismatches 0" in run.stdout
    assert f"paths {simd_paths_of_this_cpu()} " in run.stdout, run.stdout
    return run.stdout
