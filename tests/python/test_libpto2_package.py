"""libpto2 for C++ projects: `cmake --install` gives find_package(pto2) and pto2.pc (runtime/CMakeLists.txt)."""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNTIME = os.path.join(ROOT, "runtime")


def _run(cmd, **kw):
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    assert cp.returncode == 0, "%s\n%s\n%s" % (" ".join(cmd), cp.stdout[-3000:], cp.stderr[-3000:])
    return cp


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    if shutil.which("cmake") is None:
        pytest.fail("cmake is needed to build libpto2")
    tmp = tmp_path_factory.mktemp("pto2pkg")
    build, prefix = tmp / "build", tmp / "prefix"
    _run(["cmake", "-S", RUNTIME, "-B", str(build), "-DPTO2_BUILD_TESTS=OFF", "-DCMAKE_BUILD_TYPE=Release",
          "-DCMAKE_INSTALL_PREFIX=%s" % prefix])
    _run(["cmake", "--build", str(build), "-j", "2", "--target", "pto2"])
    _run(["cmake", "--install", str(build)])
    return prefix


def test_find_package_consumer_builds_and_runs(prefix, tmp_path):
    build = tmp_path / "consumer"
    _run(["cmake", "-S", os.path.join(RUNTIME, "examples", "consumer"), "-B", str(build),
          "-DCMAKE_PREFIX_PATH=%s" % prefix])
    _run(["cmake", "--build", str(build)])
    out = _run([str(build / "hello_add")], cwd=str(tmp_path)).stdout   # it writes its trace in the cwd
    assert "d[0] = 5.0 (expected 5.0)" in out


def _pc_flags(prefix):
    pcdir = next(prefix.glob("lib*/pkgconfig"))
    if shutil.which("pkg-config"):
        env = dict(os.environ, PKG_CONFIG_PATH=str(pcdir))
        return _run(["pkg-config", "--cflags", "--libs", "pto2"], env=env).stdout.split()
    # no pkg-config binary: read the file's Cflags/Libs the way pkg-config would
    text = (pcdir / "pto2.pc").read_text()
    vars_, flags = {}, []
    for line in text.splitlines():
        if "=" in line and ":" not in line.split("=")[0]:
            k, v = line.split("=", 1)
            vars_[k.strip()] = v.strip()
        elif line.startswith(("Cflags:", "Libs:")):
            v = line.split(":", 1)[1]
            for k, val in vars_.items():
                v = v.replace("${%s}" % k, val)
            flags += v.split()
    return flags


def test_pkg_config_flags_build_a_program(prefix, tmp_path):
    exe = tmp_path / "hello_add"
    cxx = os.environ.get("CXX", "g++")
    _run([cxx, os.path.join(RUNTIME, "examples", "hello_add.cpp"), "-o", str(exe)] + _pc_flags(prefix))
    assert "d[0] = 5.0 (expected 5.0)" in _run([str(exe)], cwd=str(tmp_path)).stdout
