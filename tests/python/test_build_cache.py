"""The build cache (docs/running.md, "The build cache"): objects per translation unit (an edited
kernel recompiles only itself), the kernel prelude precompiled once, LRU eviction under
PYPTO_CACHE_MAX_BYTES, and the progress line drawn only on a terminal."""
import io
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.runtime import build as build_mod
from pypto.runtime.progress import Progress

SRC = """
import pypto.language as pl

@pl.program
class Two:
    @pl.function(type=pl.FunctionType.InCore)
    def k1(self, x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 8]), 2.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def k2(self, y: pl.Tensor[[16, 8], pl.FP32], z: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        z = pl.store(pl.add(pl.load(y, [0, 0], [16, 8]), pl.load(y, [0, 0], [16, 8])), [0, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]],
             z: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = self.k1(x, y)
        z = self.k2(y, z)
        return z
"""


def _compiled_files(calls):
    return sorted(c[c.index("-c") + 1] for c in calls if "-c" in c)


def test_an_edited_kernel_recompiles_only_itself(compiler_calls):
    first = pypto.compile(pl.parse_program(SRC))
    assert {"kernels/k1.cpp", "kernels/k2.cpp", "orchestration/main.cpp", "program_table.cpp"} <= \
        set(_compiled_files(compiler_calls))
    del compiler_calls[:]
    edited = pypto.compile(pl.parse_program(SRC.replace("2.0), [0, 0], y)", "3.0), [0, 0], y)")))
    assert _compiled_files(compiler_calls) == ["kernels/k1.cpp"]       # and the link
    assert len(compiler_calls) == 2 and not edited.cached and edited.library != first.library
    y, z = edited(np.ones((16, 8), np.float32))
    assert y[0, 0] == 3.0 and z[0, 0] == 6.0


def test_the_kernel_prelude_is_precompiled_once(compiler_calls, monkeypatch):
    pypto.compile(pl.parse_program(SRC))
    pch = [c for c in compiler_calls if "c++-header" in c]
    assert len(pch) == (2 if build_mod.is_gcc(build_mod.find_compiler()) else 1)
    kernels = [c for c in compiler_calls if "-c" in c and c[c.index("-c") + 1].startswith("kernels/")]
    pch_dir = [a for a in kernels[0] if a.startswith("-I") and "/pch/" in a]
    assert pch_dir and os.path.isfile(os.path.join(pch_dir[0][2:], "pypto_kernel_prelude.h.gch"))
    del compiler_calls[:]
    pypto.compile(pl.parse_program(SRC.replace("2.0", "5.0")))        # another program: no second PCH
    assert not [c for c in compiler_calls if "c++-header" in c]
    monkeypatch.setenv("PYPTO_PCH", "0")
    del compiler_calls[:]
    pypto.compile(pl.parse_program(SRC.replace("2.0", "7.0")))
    assert not any("/pch/" in a for c in compiler_calls for a in c)


def test_a_damaged_precompiled_header_is_removed_and_the_build_goes_on(compiler_calls, caplog):
    """A truncated .gch failed every later build, reported as "a pypto bug" (tester F #8)."""
    import logging
    pypto.compile(pl.parse_program(SRC))
    kernels = [c for c in compiler_calls if "-c" in c and c[c.index("-c") + 1].startswith("kernels/")]
    pch_dir = [a[2:] for a in kernels[0] if a.startswith("-I") and "/pch/" in a][0]
    gch = os.path.join(pch_dir, "pypto_kernel_prelude.h.gch")
    with open(gch, "r+b") as f:
        f.truncate(1000)
    with caplog.at_level(logging.WARNING, logger="pypto"):
        y, z = pypto.compile(pl.parse_program(SRC.replace("2.0", "4.0")))(np.ones((16, 8), np.float32))
    assert y[0, 0] == 4.0 and z[0, 0] == 8.0
    assert "precompiled header" in caplog.text and not os.path.exists(pch_dir)
    del compiler_calls[:]
    pypto.compile(pl.parse_program(SRC.replace("2.0", "6.0")))         # the next build precompiles it again
    assert [c for c in compiler_calls if "c++-header" in c] and os.path.isfile(gch)


def _command_of(compiler_calls, kind):
    return next(c for c in compiler_calls if "-c" in c and c[c.index("-c") + 1].startswith(kind))


@pytest.mark.skipif(not build_mod.is_gcc(build_mod.find_compiler()), reason="GCC only")
def test_the_headers_are_precompiled_under_gcc_and_werror(compiler_calls, monkeypatch, tmp_path):
    # A generated orchestration file includes system headers before pto_orchestration_api.h,
    # and GCC takes a precompiled header only before the first declaration: the header is
    # given with -include, its .gch found first on the include path. Under -Werror, GCC's
    # "#pragma once in main file" (said of every header compiled alone) failed the kernel
    # prelude's precompilation, and kernels silently parsed it again. The objects are the same
    # as without precompiled headers.
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    objects = {}
    for pch in ("1", "0"):
        monkeypatch.setenv("PYPTO_PCH", pch)
        monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / ("cache-" + pch)))
        del compiler_calls[:]
        res = pypto.compile(pl.parse_program(SRC))
        orch = _command_of(compiler_calls, "orchestration/")
        if pch == "1":
            assert orch[orch.index("-include") + 1] == "pto_orchestration_api.h"
            work = tmp_path / "again"
            shutil.copytree(os.path.dirname(res.library), work)
            (work / "obj").mkdir(exist_ok=True)
            for cmd, header in ((orch, "pto_orchestration_api.h"),
                                (_command_of(compiler_calls, "kernels/"), "pypto_kernel_prelude.h")):
                pch_dir = [a[2:] for a in cmd if a.startswith("-I") and "/pch/" in a]
                assert len(pch_dir) == 1
                # GCC falls back to the header without a word when it cannot use the .gch: -H
                # marks the one it used with "!"
                used = subprocess.run(cmd + ["-H"], cwd=str(work), capture_output=True, text=True)
                assert used.returncode == 0 and "! " + os.path.join(pch_dir[0], header + ".gch") in used.stderr, \
                    used.stderr[:2000]
        else:
            assert "-include" not in orch and not any("/pch/" in a for c in compiler_calls for a in c)
        objects[pch] = sorted(p.read_bytes() for p in (tmp_path / ("cache-" + pch) / "obj").rglob("*.o"))
        y, z = res(np.ones((16, 8), np.float32))
        assert y[0, 0] == 2.0 and z[0, 0] == 4.0
    assert len(objects["1"]) == 4 and objects["1"] == objects["0"]


def test_an_edited_kernel_header_rebuilds_what_includes_it(compiler_calls, monkeypatch, tmp_path):
    # The kernel headers (pypto_kernel_matmul.h and the others the prelude includes) are compiled
    # into every program: the cache key hashes their content, so a changed header is never
    # served an object built from the old one.
    import shutil
    headers = tmp_path / "include_kernel"
    shutil.copytree(build_mod.kernel_include_dir(), headers)
    monkeypatch.setattr(build_mod, "kernel_include_dir", lambda: str(headers))
    first = pypto.compile(pl.parse_program(SRC))
    del compiler_calls[:]
    assert pypto.compile(pl.parse_program(SRC)).cached and not compiler_calls
    with open(headers / "pypto_kernel_matmul.h", "a") as f:
        f.write("// edited\n")
    edited = pypto.compile(pl.parse_program(SRC))
    assert {"kernels/k1.cpp", "kernels/k2.cpp"} <= set(_compiled_files(compiler_calls))
    assert not edited.cached and edited.library != first.library


def _entry(path, size, age):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    t = time.time() - age
    os.utime(path, (t, t))


def _key(c):
    return c * 32   # an entry's name: 32 hex digits, as build keys are


def test_lru_eviction_keeps_the_cache_under_its_cap(tmp_path):
    root = tmp_path / "cache"
    _entry(root / _key("a") / "libprogram.so", 1000, age=4000)      # oldest program
    _entry(root / _key("b") / "libprogram.so", 1000, age=2000)
    _entry(root / "obj" / "cc" / (_key("c") + ".o"), 500, age=3000)
    _entry(root / "obj" / "dd" / (_key("d") + ".o"), 500, age=1000)
    freed = build_mod.evict(root, max_bytes=1600)
    assert freed == 1500
    assert not (root / _key("a")).exists() and not (root / "obj" / "cc" / (_key("c") + ".o")).exists()
    assert (root / _key("b") / "libprogram.so").exists() and (root / "obj" / "dd" / (_key("d") + ".o")).exists()
    assert build_mod.evict(root, max_bytes=0) == 0                      # 0 = unbounded


def test_eviction_removes_only_pypto_entries(tmp_path):
    # A cache directory shared with other files (another cache nested in it, the user's notes)
    # lost them whole: every directory not named obj or pch was taken for a program.
    root = tmp_path / "cache"
    foreign = [root / "notes" / "draft.txt", root / "asan" / "obj" / "ee" / (_key("e") + ".o"),
               root / "README", root / "obj" / "zz" / (_key("f") + ".o"), root / "obj" / "ab" / "mine.o",
               root / "obj" / "ab" / (_key("1") + ".o"),        # a key outside its shard
               root / "pch" / "headers" / "x.h.gch", root / ("A" * 32) / "libprogram.so"]
    for f in foreign:
        _entry(f, 1000, age=9000)
    _entry(root / _key("2") / "libprogram.so", 1000, age=9000)
    _entry(root / "obj" / "33" / (_key("3") + ".o"), 1000, age=9000)
    _entry(root / "pch" / _key("4") / "p.h.gch", 1000, age=9000)
    assert build_mod.evict(root, max_bytes=1) == 3000
    assert all(f.exists() for f in foreign)
    assert not (root / _key("2")).exists() and not (root / "pch" / _key("4")).exists()
    assert not (root / "obj" / "33" / (_key("3") + ".o")).exists()


def test_eviction_keeps_entries_used_within_the_grace_period(tmp_path):
    # Another process's build may be about to read an entry it just looked up: only entries
    # unused for EVICT_GRACE_SECONDS are removed, even when the cache stays over its cap.
    root = tmp_path / "cache"
    grace = build_mod.EVICT_GRACE_SECONDS
    _entry(root / _key("a") / "libprogram.so", 1000, age=grace + 60)
    _entry(root / _key("b") / "libprogram.so", 1000, age=grace - 60)
    _entry(root / "obj" / "cc" / (_key("c") + ".o"), 1000, age=5)
    assert build_mod.evict(root, max_bytes=1) == 1000
    assert not (root / _key("a")).exists()
    assert (root / _key("b") / "libprogram.so").exists() and (root / "obj" / "cc" / (_key("c") + ".o")).exists()


def test_eviction_removes_work_directories_of_killed_builds(tmp_path):
    # A build killed mid-way (SIGKILL, a power cut) left its tmp-* directory for ever.
    root = tmp_path / "cache"
    stale = build_mod.STALE_TEMP_SECONDS
    _entry(root / "tmp-0123abcd-xyz" / "obj" / "k.o", 1000, age=0)
    os.utime(root / "tmp-0123abcd-xyz", (time.time() - stale - 60,) * 2)
    _entry(root / "tmp-4567cdef-abc" / "k.cpp", 1000, age=0)            # a build in progress
    build_mod.evict(root, max_bytes=0)                                 # even with no cap
    assert not (root / "tmp-0123abcd-xyz").exists() and (root / "tmp-4567cdef-abc" / "k.cpp").exists()


def test_a_cached_object_that_vanishes_during_a_build_is_compiled_again(compiler_calls, monkeypatch, caplog):
    # Found by the program fuzzer: a build found k2's object in the cache, then (while compiling
    # k1) it was removed, and copying it into the link was a FileNotFoundError traceback.
    pypto.compile(pl.parse_program(SRC))
    del compiler_calls[:]
    real = build_mod.run_compiler
    removed = []

    def remove_cached_objects(cmd, cwd):
        if not removed:
            for o in (pypto_cache() / "obj").rglob("*.o"):
                o.unlink()
                removed.append(o)
        return real(cmd, cwd)

    monkeypatch.setattr(build_mod, "run_compiler", remove_cached_objects)
    edited = pypto.compile(pl.parse_program(SRC.replace("2.0), [0, 0], y)", "5.0), [0, 0], y)")))
    assert removed and "vanished during the build" in caplog.text
    # Every object but the old k1's was needed again: compiled again and back in the cache.
    assert sum(o.exists() for o in removed) == len(removed) - 1
    assert len(_compiled_files(compiler_calls)) == len(removed)   # the edited k1 and the vanished ones
    y, z = edited(np.ones((16, 8), np.float32))
    assert y[0, 0] == 5.0 and z[0, 0] == 10.0


def pypto_cache():
    return build_mod.cache_root()


def test_cache_max_bytes_from_the_environment(monkeypatch):
    monkeypatch.setenv("PYPTO_CACHE_MAX_BYTES", "500M")
    assert build_mod.cache_max_bytes() == 500 << 20
    monkeypatch.setenv("PYPTO_CACHE_MAX_BYTES", "12345")
    assert build_mod.cache_max_bytes() == 12345
    monkeypatch.setenv("PYPTO_CACHE_MAX_BYTES", "lots")
    with pytest.raises(build_mod.BuildError, match="PYPTO_CACHE_MAX_BYTES"):
        build_mod.cache_max_bytes()


def test_a_build_evicts_least_recently_used_programs(compiler_calls, monkeypatch, tmp_path):
    old = pypto.compile(pl.parse_program(SRC.replace("2.0", "9.0")))
    t = time.time() - 3600
    os.utime(old.library, (t, t))
    monkeypatch.setenv("PYPTO_CACHE_MAX_BYTES", "1")                    # everything but the build in use
    new = pypto.compile(pl.parse_program(SRC.replace("2.0", "8.0")))
    assert not os.path.exists(old.library) and os.path.exists(new.library)
    y, _z = new(np.ones((16, 8), np.float32))
    assert y[0, 0] == 8.0


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_draws_one_line_on_a_terminal_only(monkeypatch):
    monkeypatch.delenv("PYPTO_QUIET", raising=False)
    tty = _Tty()
    with Progress("compiling main", total=2, stream=tty) as p:
        p.step("kernels/k.cpp")
        p.step("linking")
    out = tty.getvalue()
    assert "pypto: compiling main [1/2] kernels/k.cpp" in out and "[2/2] linking" in out
    assert "\n" not in out and out.endswith("\r")                       # one line, erased at the end
    pipe = io.StringIO()
    with Progress("compiling main", total=1, stream=pipe) as p:
        p.step("x")
    assert pipe.getvalue() == ""
    monkeypatch.setenv("PYPTO_QUIET", "1")
    quiet = _Tty()
    with Progress("compiling main", total=1, stream=quiet) as p:
        p.step("x")
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("where", ["a_file", "under_a_file"])
def test_cache_dir_that_cannot_be_used_is_a_clear_error(tmp_path, monkeypatch, where):
    # A PYPTO_CACHE_DIR that is a file (or lies under one) was a bare FileExistsError /
    # NotADirectoryError traceback from the build; now a PyptoError naming the path and the variable.
    f = tmp_path / "taken"
    f.write_text("keep me")
    cache = f if where == "a_file" else f / "sub"
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(cache))
    with pytest.raises(pypto.PyptoError) as ei:
        pypto.compile(pl.parse_program(SRC, "two.py"))
    msg = str(ei.value)
    assert "cannot use the build cache directory %s ($PYPTO_CACHE_DIR):" % cache in msg, msg
    assert "set PYPTO_CACHE_DIR to a writable directory" in msg
    assert f.read_text() == "keep me"


def test_cache_dir_that_does_not_exist_yet_is_created(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "new" / "cache"))
    prog = pypto.compile(pl.parse_program(SRC.replace("2.0", "3.0"), "two.py"))
    x = np.ones((16, 8), np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    prog(x, y, z)
    assert z[0, 0] == 6.0
    assert not [p for p in os.listdir(tmp_path / "new" / "cache") if p.startswith("tmp-")]   # the probe is gone


def test_build_jobs_that_is_not_a_number_is_a_clear_error(tmp_path, monkeypatch):
    # was a ValueError traceback from int() in the middle of the build
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PYPTO_BUILD_JOBS", "abc")
    with pytest.raises(build_mod.BuildError, match="PYPTO_BUILD_JOBS='abc' is not a number of jobs"):
        pypto.compile(pl.parse_program(SRC.replace("2.0", "5.0"), "two.py"))
    for raw, jobs in (("", min(4, os.cpu_count() or 2)), ("0", min(4, os.cpu_count() or 2)), ("3", 3), ("-2", 1)):
        monkeypatch.setenv("PYPTO_BUILD_JOBS", raw)
        assert build_mod.build_jobs() == jobs


@pytest.mark.parametrize("raw", ["inf", "1e400", "-5", "-1G", "nan", "lots"])
def test_cache_max_bytes_that_is_no_size_is_refused_before_compiling(tmp_path, monkeypatch, raw):
    # inf / 1e400 were an OverflowError traceback, -5 was taken as unbounded silently, and 'lots'
    # was refused only by the eviction after the whole build
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PYPTO_CACHE_MAX_BYTES", raw)
    calls = []
    monkeypatch.setattr(build_mod, "run_compiler", lambda cmd, cwd: calls.append(cmd) or pytest.fail("compiled"))
    with pytest.raises(build_mod.BuildError, match="PYPTO_CACHE_MAX_BYTES=%r is not a size" % raw):
        pypto.compile(pl.parse_program(SRC.replace("2.0", "4.0"), "three.py"))
    assert not calls


@pytest.mark.parametrize("kind, message", [("dir", "is a directory; it names the library file"),
                                           ("text", "is not a shared library (no ELF header)")])
def test_libpto2_override_that_is_no_library_is_refused_before_compiling(tmp_path, monkeypatch, kind, message):
    # a directory was reported as "does not exist"; a text file failed at the link, after compiling,
    # as "usually a pypto bug in generated code"
    from pypto.runtime import RuntimeNotFoundError
    path = tmp_path / "lib"
    if kind == "dir":
        path.mkdir()
    else:
        path.write_text("not a library\n")
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PYPTO_LIBPTO2", str(path))
    monkeypatch.setattr(build_mod, "run_compiler", lambda cmd, cwd: pytest.fail("compiled"))
    with pytest.raises(RuntimeNotFoundError, match="PYPTO_LIBPTO2=%s %s" % (path, re.escape(message))):
        pypto.compile(pl.parse_program(SRC.replace("2.0", "3.0"), "four.py"))


def test_compile_error_under_the_users_flags_points_at_them(tmp_path, monkeypatch):
    # help said "this is usually a pypto bug in generated code" for a bad PYPTO_CXXFLAGS
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-fno-such-flag-for-pypto")
    monkeypatch.delenv("CXX", raising=False)
    with pytest.raises(build_mod.BuildError) as e:
        pypto.compile(pl.parse_program(SRC.replace("2.0", "6.0"), "five.py"))
    assert "PYPTO_CXXFLAGS='-fno-such-flag-for-pypto' is set: check those flags first" in e.value.help
    assert "-fno-such-flag-for-pypto" in str(e.value)


def test_a_damaged_cached_object_is_compiled_again(tmp_path, monkeypatch):
    # a truncated object in the cache failed the link, reported as "usually a pypto bug in
    # generated code"; the cache had to be deleted by hand
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    first = pypto.compile(pl.parse_program(SRC.replace("2.0", "7.0"), "seven.py"))
    lib_dir = os.path.dirname(first.library)
    objects = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path / "cache" / "obj") for f in fs]
    assert objects
    for o in objects:
        with open(o, "r+b") as f:
            f.truncate(64)
    import shutil
    shutil.rmtree(lib_dir)          # the library is built again from the (damaged) cached objects
    again = pypto.compile(pl.parse_program(SRC.replace("2.0", "7.0"), "seven.py"))
    y, _z = again(np.ones((16, 8), np.float32))
    assert y[0, 0] == 7.0
    assert all(os.path.getsize(o) > 64 for o in objects)   # the cache holds good objects again


def test_a_cached_library_that_does_not_load_is_built_again(tmp_path, monkeypatch):
    # an empty or truncated cached libprogram.so (e.g. a trace written over it) was a RunError
    # 'cannot load ...: file too short' in every later process until the cache was deleted by hand
    import subprocess
    import sys
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    src = SRC.replace("2.0", "11.0")
    first = subprocess.run([sys.executable, "-c", "import sys, pypto, pypto.language as pl; "
                            "print(pypto.compile(pl.parse_program(sys.argv[1], 'eleven.py')).library)", src],
                           capture_output=True, text=True, timeout=600, env=dict(os.environ))
    assert first.returncode == 0, first.stderr[-2000:]
    lib = first.stdout.split()[-1]
    with open(lib, "r+b") as f:   # truncated (this process has not loaded it: no mapping to pull away)
        f.truncate(4096)
    again = pypto.compile(pl.parse_program(src, "eleven.py"))
    assert again.library == lib and os.path.getsize(lib) > 4096
    y, _z = again(np.ones((16, 8), np.float32))
    assert y[0, 0] == 11.0


def _program_build(src, name):
    """A function building ``src`` with build_program, as pypto.compile does, without loading
    the library (this process would keep it loaded under its path: dlopen of a rebuilt library at
    the same path returns the loaded one)."""
    from pypto.compiler import generate
    entry, _prepared, result, sources, entries = generate(pl.parse_program(src, name))
    return lambda **kw: build_mod.build_program(entry, result.code, sources, entries, **kw)


def test_a_damaged_cache_entry_is_built_again(tmp_path, monkeypatch):
    # An entry whose libprogram.so was missing (deleted, a dangling symlink, a directory) or whose
    # path was a file failed every compile of the program with a raw OSError from the rename (the
    # program was compiled first, every time); a valid ELF of another library was a RunError
    # "does not export pypto_program_kernel_table ... delete the build cache".
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    build = _program_build(SRC.replace("2.0", "13.0"), "thirteen.py")
    first = build()
    lib = first.library
    entry = os.path.dirname(lib)

    def file_for_entry():
        shutil.rmtree(entry)
        with open(entry, "w") as f:
            f.write("not a directory")
    damages = {
        "missing": lambda: os.remove(lib),
        "dangling symlink": lambda: (os.remove(lib), os.symlink(str(tmp_path / "nowhere.so"), lib)),
        "directory": lambda: (os.remove(lib), os.mkdir(lib)),
        "entry is a file": file_for_entry,
        "another library": lambda: shutil.copy(build_mod.library_path(), lib),
    }
    for what, damage in damages.items():
        damage()
        again = build()
        assert not again.cached and again.library == lib, what
        assert os.path.isfile(lib) and not os.path.islink(lib) and build_mod._elf_intact(Path(lib)), what
        assert build_mod._exports_name(Path(lib), "pypto_program_kernel_table"), what
        assert build().cached, what   # and served from the cache from then on
    assert pypto.compile(pl.parse_program(SRC.replace("2.0", "13.0"), "thirteen.py"))(
        np.ones((16, 8), np.float32))[0][0, 0] == 13.0


def test_output_dir_that_is_the_programs_cache_entry_writes_nothing(tmp_path, monkeypatch):
    # CompiledProgram.output_dir passed back as output_dir=: shutil.SameFileError (build.sh
    # copied onto itself).
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    program = pl.parse_program(SRC.replace("2.0", "14.0"), "fourteen.py")
    first = pypto.compile(program)
    before = {f: os.stat(os.path.join(first.output_dir, f)).st_mtime_ns for f in ("build.sh", "program_table.cpp")}
    again = pypto.compile(program, output_dir=first.output_dir)
    assert again.output_dir == first.output_dir and again.cached
    assert before == {f: os.stat(os.path.join(first.output_dir, f)).st_mtime_ns for f in before}
    assert again(np.ones((16, 8), np.float32))[0][0, 0] == 14.0


def test_a_failed_build_keeps_its_directory_where_the_message_points(tmp_path, monkeypatch):
    # "in: <cache>/tmp-..." and "report it with the files of the build directory" named a
    # directory the build had already removed.
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PYPTO_PCH", "0")
    monkeypatch.setattr(build_mod, "run_compiler",
                        lambda cmd, cwd: subprocess.CompletedProcess(cmd, 1, "", "an error of the compiler"))
    for value in ("15.0", "16.0"):   # the second failure of the same program replaces the kept directory
        with pytest.raises(build_mod.BuildError) as e:
            pypto.compile(pl.parse_program(SRC.replace("2.0", value), "fifteen.py"))
        kept = re.search(r"\n  in: (\S+)\n", e.value.message).group(1)
        assert os.path.basename(kept).startswith("failed-") and "(kept in %s)" % kept in e.value.help
        assert os.path.isfile(os.path.join(kept, "build.sh")) and os.path.isdir(os.path.join(kept, "kernels"))
    assert not [d for d in os.listdir(tmp_path / "cache") if d.startswith("tmp-")]


def test_output_dir_that_cannot_take_the_files_is_refused_before_building(tmp_path, monkeypatch):
    # A file where a directory goes, a directory where a file goes: a raw FileExistsError /
    # IsADirectoryError after the whole build; output_dir="" wrote into the current directory; a
    # generated file that is the program's own source file replaced it.
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(build_mod, "run_compiler", lambda cmd, cwd: pytest.fail("built before the check"))
    program = pl.parse_program(SRC.replace("2.0", "17.0"), "seventeen.py")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "kernels").write_text("x")
    (tmp_path / "b" / "orchestration" / "main.cpp").mkdir(parents=True)
    for out, message in (("a", r"cannot write .*/a/kernels/k1.cpp: .*/a/kernels is an existing file, not a directory"),
                         ("b", r"cannot write .*/b/orchestration/main.cpp: it is a directory"),
                         ("", r"output_dir='': the path is empty; give a directory name")):
        with pytest.raises(build_mod.OutputPathError, match=message):
            pypto.compile(program, output_dir=str(tmp_path / out) if out else "")
    src = tmp_path / "c" / "program_table.cpp"   # a program file whose name a generated file has
    src.parent.mkdir()
    src.write_text(SRC.replace("2.0", "17.0"))
    with pytest.raises(build_mod.OutputPathError, match=r"the generated program_table.cpp would be written to "
                                                        r".*/c/program_table.cpp, which is the program file"):
        pypto.compile(pl.parse_program(src.read_text(), str(src)), output_dir=str(src.parent))
    assert src.read_text() == SRC.replace("2.0", "17.0")
