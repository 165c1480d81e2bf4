"""Build a generated program into a shared library against libpto2, with a content-hash cache.

    from pypto._core.ir import CoreType
    from pypto.runtime.build import KernelEntry, build_program
    res = build_program(
        entry="main",
        orchestration_code=orch_cpp,                       # orchestration/<entry>.cpp
        kernel_sources={"kernel_add": kernel_cpp},         # kernels/<name>.cpp
        kernels=[KernelEntry("kernel_add", 0, CoreType.AIV)])
    res.library        # .../libprogram.so
    res.files          # {"orchestration/main.cpp": ..., "kernels/kernel_add.cpp": ..., "program_table.cpp": ...}

What gets built: the orchestration file, one file per kernel and a generated ``program_table.cpp``
(the entry function pointer and the kernel table with ids and core types, declared by the C ABI
header ``pto2_c_api.h``; the loader runs them through libpto2's ``pto2_runtime_*`` entry points),
each compiled with the system C++ compiler (``$CXX``, else ``g++``/``c++``) and linked with
libpto2 (rpath set).

The general form, ``build_sources(files, file_flags=..., support_files=...)``, builds any set of
generated sources into one library the same way; ``pypto.host.compile_host`` builds HOST programs
(host file, one orchestration per chip-level target, kernels, runner) through it.

Caching, per translation unit: each ``.cpp`` becomes an object keyed by its text, its flags,
the compiler identity and the runtime headers, so an edited kernel recompiles only itself and
files shared between programs compile once. The kernel prelude, and under GCC the orchestration
API header, are precompiled once per toolchain and runtime version (``PYPTO_PCH=0`` turns that
off). A linked library is keyed by
its objects and libpto2 itself: a second build of the same program runs no compiler. All of
it lives in ``$PYPTO_CACHE_DIR`` (default ``~/.cache/pypto``), capped at
``$PYPTO_CACHE_MAX_BYTES`` (default 2 GiB) by evicting the least recently used entries.
Builds go to temporary directories renamed into place, so concurrent builds are safe.

Compile errors raise :class:`BuildError` (a ``PyptoError``) carrying the compiler output.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from pypto.errors import PyptoError
from pypto.log import logger
from pypto.runtime import include_dir, kernel_include_dir, library_path

__all__ = ["KernelEntry", "BuildResult", "BuildError", "OutputPathError", "check_output_dir", "build_program", "build_sources", "cache_root",
           "program_table_source", "cache_max_bytes", "evict",
           "COMMON_FLAGS", "KERNEL_FLAGS", "HOST_FLAGS", "GCC_HOST_MEMORY_FLAGS", "GCC_HOST_WARNING_FLAGS",
           "host_flags", "is_gcc",
           "precompiled_include_flags"]

_BUILD_FORMAT = "pypto-build-4"
LIBRARY_NAME = "libprogram.so"
COMMON_FLAGS = ["-std=c++17", "-fPIC", "-Wall"]
# -fwrapv (both kinds of file): DSL integer scalars wrap in two's complement (as NumPy's and the
# kernels' tile ops); a plain signed overflow in printed scalar arithmetic was undefined
# behaviour, and `pl.range(m, m + 2)` with m = INT64_MAX looped forever, in an orchestration at
# -O2 and in a kernel at -O3 (tests/python/test_scalar_wrap.py). Kernels: measured within noise
# (benchmarks/wrapv_ab.py, every kernel_bench case interleaved with and without the flag).
KERNEL_FLAGS = ["-O3", "-fno-trapping-math", "-fwrapv"]   # vectorised tile loops (selects if-converted); portable (no -march)
HOST_FLAGS = ["-O2", "-fwrapv"]
# GCC only, host (orchestration) files: collect the compiler's garbage from a 64 MB heap on, at
# 30% growth (the defaults on a machine with this much memory let it grow to 4x before a
# collection). A 3,000-call orchestration with a slice before each call peaked at 348 MB and now
# at about 260 MB, for about 8% more compiler time; files under 64 MB of compiler heap (every
# small program) never collect and build exactly as before (benchmarks/orch_build_bench.py).
GCC_HOST_MEMORY_FLAGS = ["--param", "ggc-min-expand=30", "--param", "ggc-min-heapsize=65536"]
# GCC only, host files: orchestration integer arithmetic wraps (-fwrapv above), so a product GCC
# folds to an overflowing constant is the program's meaning; pto_orchestration_api.h silences
# -Woverflow with a pragma, which GCC does not keep in the precompiled header these builds use.
GCC_HOST_WARNING_FLAGS = ["-Wno-overflow"]


class BuildError(PyptoError):
    """The C++ compiler rejected a generated file (the message has its output)."""


class OutputPathError(PyptoError, ValueError):
    """``output_dir`` (``-o``) cannot take the generated files: empty, blocked by a file or a
    directory, or one of its files is the program file (found before anything is built)."""


@dataclass
class KernelEntry:
    """One kernel of the table: function ``pypto_kernel_<name>``, runtime id and core type."""
    name: str
    kernel_id: int
    core_type: "CoreType"  # pypto._core.ir.CoreType.AIC or .AIV (the stamped Function.core_type)


@dataclass
class BuildResult:
    library: str                      # path of the built shared library (in the cache)
    output_dir: str                   # where the sources were written
    files: Dict[str, str] = field(default_factory=dict)   # relative path -> source
    cached: bool = False              # True when no compiler ran
    key: str = ""
    compiled: int = 0                 # translation units compiled (0 when all were cached)


def cache_root() -> Path:
    """``$PYPTO_CACHE_DIR`` or ``~/.cache/pypto`` (``$XDG_CACHE_HOME/pypto`` when set)."""
    env = os.environ.get("PYPTO_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "pypto"


def _usable_cache_root(root: Path) -> None:
    """Creates ``root`` and checks a build can work in it (a temporary directory is made and
    removed): a cache path that is a file, under a file, or not writable is a PyptoError naming
    it and where it came from, before anything is compiled (it was a bare OSError traceback)."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        os.rmdir(tempfile.mkdtemp(prefix="tmp-probe-", dir=str(root)))
    except OSError as e:
        env = os.environ.get("PYPTO_CACHE_DIR")
        raise PyptoError("cannot use the build cache directory %s (%s): %s"
                         % (root, "$PYPTO_CACHE_DIR" if env else "the default", e.strerror or e),
                         help="set PYPTO_CACHE_DIR to a writable directory (or unset it: ~/.cache/pypto)") from None


def source_stem(name: str) -> str:
    """The file name (without .cpp) of a function's generated source: its name, or for a name
    too long for a file system (255 bytes), its first 100 bytes plus a hash of the whole name.
    The C++ code generators name the files they list (``result.files``, ``kernel_config.py``)
    by the same rule (``codegen::SourceStem``).

        source_stem("kernel_add")   # "kernel_add"
        source_stem("k" * 300)      # "kkk...k_<16 hex digits>" (100 + 17 characters)
    """
    from pypto._core import codegen as _cg
    return _cg.source_stem(name)


def program_table_source(entry: str, kernels: Sequence[KernelEntry]) -> str:
    """The generated ``program_table.cpp``: what a program library exports through the C ABI
    (``pto2_c_api.h``): the orchestration entry, its name, the kernel table and its size. The
    C++ comes from the C++ code generator (``codegen::GenerateProgramTable``), like every other
    generated file.

        program_table_source("main", [KernelEntry("kernel_add", 0, CoreType.AIV)])
    """
    from pypto._core import codegen as _cg
    return _cg.generate_program_table(entry, [(k.name, int(k.kernel_id), k.core_type) for k in kernels])


# ---------------------------------------------------------------------------------------------
# Compiler identity and the cache key.

_lock = threading.Lock()
_compiler_ids: Dict[str, str] = {}
_file_hashes: Dict[tuple, str] = {}


def find_compiler() -> str:
    """``$CXX`` if set, else the first of g++, c++, clang++ on PATH."""
    cxx = os.environ.get("CXX")
    if cxx:
        return cxx
    for c in ("g++", "c++", "clang++"):
        p = shutil.which(c)
        if p:
            return p
    raise BuildError("no C++ compiler found (looked for $CXX, g++, c++, clang++)",
                     help="install g++ (Debian: apt-get install g++) or set CXX")


def _compiler_identity(cxx: str) -> str:
    with _lock:
        if cxx in _compiler_ids:
            return _compiler_ids[cxx]
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=60).stdout
    except OSError as e:
        raise BuildError("cannot run the C++ compiler %r: %s" % (cxx, e), help="set CXX to a working compiler")
    ident = cxx + "\n" + out.strip()
    with _lock:
        _compiler_ids[cxx] = ident
    return ident


def _file_digest(path: str) -> str:
    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime_ns)
    with _lock:
        if key in _file_hashes:
            return _file_hashes[key]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    d = h.hexdigest()
    with _lock:
        _file_hashes[key] = d
    return d


def _tree_digest(root: str) -> str:
    h = hashlib.sha256()
    for dirpath, _dirs, files in sorted(os.walk(root)):
        for f in sorted(files):
            if f.endswith((".h", ".hpp")):
                p = os.path.join(dirpath, f)
                h.update(os.path.relpath(p, root).encode())
                h.update(_file_digest(p).encode())
    return h.hexdigest()


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _toolchain(cxx: str) -> str:
    """What every object depends on besides its source: compiler, format, runtime headers."""
    return _digest(_BUILD_FORMAT, _compiler_identity(cxx), _tree_digest(include_dir()),
                   _tree_digest(kernel_include_dir()))


# ---------------------------------------------------------------------------------------------
# The cache: objects per translation unit, one precompiled kernel prelude, libraries per program.
#
#   <root>/obj/<k[:2]>/<k>.o    one object per (source, flags, toolchain): an edited kernel
#                               recompiles only itself; an unchanged file of another program
#                               (the same kernel, a program table) is reused
#   <root>/pch/<k>/             a header and its .gch (the kernel prelude; the orchestration API
#                               header under GCC), built once per toolchain/runtime/flags
#   <root>/<k>/                 a linked program: libprogram.so, its sources, build.sh
#
# Every use refreshes an entry's mtime; after a build the least recently used entries are
# removed until the cache fits $PYPTO_CACHE_MAX_BYTES (default 2 GiB; 0 = no limit). Only
# entries named as above are ever removed (anything else in the directory is not pypto's), and
# none used in the last EVICT_GRACE_SECONDS (another process's build may be using it).

DEFAULT_CACHE_MAX_BYTES = 2 << 30
EVICT_GRACE_SECONDS = 300
STALE_TEMP_SECONDS = 24 * 3600   # a tmp-* directory this old was left by a build that was killed
_KEY_NAME = re.compile(r"[0-9a-f]{32}")   # an entry's key (_digest)
_SHARD_NAME = re.compile(r"[0-9a-f]{2}")  # obj/<k[:2]>
_PRELUDE = "pypto_kernel_prelude.h"
_ORCHESTRATION_HEADER = "pto_orchestration_api.h"


def cache_max_bytes() -> int:
    """``$PYPTO_CACHE_MAX_BYTES`` (plain bytes or with a K/M/G suffix), default 2 GiB; 0 = unbounded.

        os.environ["PYPTO_CACHE_MAX_BYTES"] = "500M"; cache_max_bytes()  # 524288000
    """
    raw = os.environ.get("PYPTO_CACHE_MAX_BYTES", "").strip()
    if not raw:
        return DEFAULT_CACHE_MAX_BYTES
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(raw[-1].upper(), 1)
    try:
        value = float(raw[:-1] if mult > 1 else raw) * mult
    except ValueError:
        value = float("nan")
    # inf / 1e400 were an OverflowError traceback from int(); a negative size was taken as 0
    # (unbounded) without a word.
    if not (0 <= value < float(1 << 63)):
        raise BuildError("PYPTO_CACHE_MAX_BYTES=%r is not a size" % raw,
                         help="a number of bytes >= 0 (0: unbounded), e.g. 2000000000, 500M or 2G")
    return int(value)


def build_jobs() -> int:
    """Compiler processes at once: ``$PYPTO_BUILD_JOBS`` (a positive integer), else min(4, CPUs).
    A value that is not an integer is a BuildError naming it, raised before anything is compiled
    (it was a ValueError traceback in the middle of the build)."""
    raw = os.environ.get("PYPTO_BUILD_JOBS", "").strip()
    if not raw or raw == "0":
        return min(4, os.cpu_count() or 2)
    try:
        return max(1, int(raw))
    except ValueError:
        raise BuildError("PYPTO_BUILD_JOBS=%r is not a number of jobs" % raw, help="e.g. PYPTO_BUILD_JOBS=2 (or unset)")


def _elf_intact(path: Path) -> bool:
    """Whether the shared library at ``path`` holds everything its ELF headers point at (program
    segments, section headers): a truncated library fails this before dlopen maps it. An ELF
    file of another class or byte order is not judged (True)."""
    import struct
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF":   # empty, cut inside the header, or no ELF
                return False
            if head[4] != 2 or head[5] != 1:   # not ELF64 little-endian: not judged
                return True
            phoff, shoff = struct.unpack_from("<QQ", head, 0x20)
            phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", head, 0x36)
            if shoff + shentsize * shnum > size or phoff + phentsize * phnum > size:
                return False
            f.seek(phoff)
            table = f.read(phentsize * phnum)
            for i in range(phnum):
                offset, filesz = struct.unpack_from("<Q", table, i * phentsize + 8)[0], \
                    struct.unpack_from("<Q", table, i * phentsize + 0x20)[0]
                if offset + filesz > size:
                    return False
    except (OSError, struct.error):
        return False
    return True


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:
        pass


def _object_path(root: Path, key: str) -> Path:
    return root / "obj" / key[:2] / (key + ".o")


def _cache_entries(root: Path) -> List[tuple]:
    """(last use, bytes, path) of every evictable entry: the objects, precompiled headers and
    programs the layout above names, nothing else (a directory the user keeps in the cache
    directory, another cache nested in it, was removed whole as if it were a program)."""
    out = []
    if not root.is_dir():
        return out
    for d in root.iterdir():
        if d.name == "obj" and d.is_dir():
            for sub in d.iterdir():
                if not (_SHARD_NAME.fullmatch(sub.name) and sub.is_dir()):
                    continue
                for f in sub.iterdir():
                    if f.suffix == ".o" and _KEY_NAME.fullmatch(f.stem) and f.stem.startswith(sub.name) and f.is_file():
                        st = f.stat()
                        out.append((st.st_mtime, st.st_size, f))
        elif d.name == "pch" and d.is_dir():
            for p in d.iterdir():
                if not (_KEY_NAME.fullmatch(p.name) and p.is_dir()):
                    continue
                files = [f for f in p.iterdir() if f.is_file()]
                used = [f.stat().st_mtime for f in files if f.name.endswith(".gch")]
                out.append((max(used, default=0.0), sum(f.stat().st_size for f in files), p))
        elif _KEY_NAME.fullmatch(d.name) and d.is_dir():
            lib = d / LIBRARY_NAME
            size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
            out.append((lib.stat().st_mtime if lib.exists() else 0.0, size, d))
    return out


def _remove_stale_temporaries(root: Path) -> None:
    """Removes the work directories (tmp-*) of builds killed before they could clean up, and the
    kept directories of failed builds (failed-*): older than STALE_TEMP_SECONDS, whatever the cap
    (they are garbage, not cached builds)."""
    old = time.time() - STALE_TEMP_SECONDS
    try:
        for d in root.iterdir():
            if d.name.startswith(("tmp-", "failed-")) and d.is_dir() and d.stat().st_mtime < old:
                shutil.rmtree(d, ignore_errors=True)
    except OSError:   # no cache yet, or a concurrent build renamed something: next time
        pass


def evict(root: Optional[Path] = None, max_bytes: Optional[int] = None, keep: Sequence[Path] = ()) -> int:
    """Removes least-recently-used cache entries until the cache fits ``max_bytes`` (default
    ``cache_max_bytes()``); entries in ``keep`` stay, and so do entries used in the last
    ``EVICT_GRACE_SECONDS`` (a concurrent build in another process may be about to read them:
    the cache may exceed its cap by what was used that recently). Only pypto's own entries are
    ever removed. Work directories of killed builds (tmp-*, older than ``STALE_TEMP_SECONDS``)
    are removed as well, even with no cap. Returns the bytes freed (by the entries).

        evict(max_bytes=0)   # no-op: 0 means unbounded
    """
    root = Path(root) if root is not None else cache_root()
    limit = cache_max_bytes() if max_bytes is None else max_bytes
    _remove_stale_temporaries(root)
    if limit <= 0:
        return 0
    try:
        entries = sorted(_cache_entries(root), key=lambda e: e[0])
    except OSError:  # a concurrent build renamed or removed something: try again next time
        return 0
    total = sum(e[1] for e in entries)
    kept = {Path(k) for k in keep}
    recent = time.time() - EVICT_GRACE_SECONDS
    freed = 0
    for when, size, path in entries:
        if total <= limit or when > recent:   # sorted by last use: the rest are recent too
            break
        if path in kept:
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                path.unlink()
            except OSError:
                continue
        total -= size
        freed += size
    return freed


# A compiler error that is about reading a precompiled header, not about the source.
_PCH_FAILURE = re.compile(r"precompiled header|\.gch\b|\bPCH\b")


def _precompiled_header(root: Path, cxx: str, header: str, flags: List[str], toolchain: str,
                        progress) -> Optional[Path]:
    """The directory holding ``header`` (the kernel prelude or the orchestration API header) and
    its precompiled form for these flags, built on first use (once per toolchain and runtime
    version); None when ``PYPTO_PCH=0`` or the compiler cannot build it (files then parse the
    header as usual: the objects are the same either way)."""
    if os.environ.get("PYPTO_PCH", "1") == "0":
        return None
    d = root / "pch" / _digest(toolchain, header, " ".join(flags))
    gch = d / (header + ".gch")
    if gch.is_file():
        _touch(gch)
        return d
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="tmp-pch-", dir=str(root)))
    try:
        source_dir = kernel_include_dir() if header == _PRELUDE else include_dir()
        shutil.copy2(os.path.join(source_dir, header), work / header)
        # Without -Werror: GCC warns "#pragma once in main file" for any header compiled on its
        # own. Any other warning means the header would not compile cleanly with these flags, so
        # the files parse it themselves and report it.
        lenient = [f for f in flags if f != "-Werror" and not f.startswith("-Werror=")]
        cmd = [cxx] + lenient + ["-I" + include_dir(), "-I" + kernel_include_dir(), "-x", "c++-header", header,
                                 "-o", header + ".gch"]
        progress.step("precompiling %s (once per runtime version)" % header)
        proc = run_compiler(cmd, str(work))
        out = proc.stderr or ""
        if proc.returncode != 0 or out.count("warning:") > out.count("#pragma once in main file"):
            return None
        (root / "pch").mkdir(exist_ok=True)
        try:
            os.rename(work, d)
        except OSError:  # another process built it first
            pass
        return d if gch.is_file() else None
    finally:
        if work.is_dir():
            shutil.rmtree(work, ignore_errors=True)


def precompiled_include_flags(rel: str, flags: List[str]) -> List[str]:
    """The flags that give source file ``rel`` (compiled with ``flags``) its precompiled header
    as pypto's build does, building the header on first use; [] when the file kind has none (or
    ``PYPTO_PCH=0``). For tools measuring a compile outside ``build_sources``:

        cmd = [cxx] + flags + precompiled_include_flags("orchestration/main.cpp", flags) + [...]
    """
    from pypto.runtime.progress import Progress
    cxx = find_compiler()
    header = _precompiled_kind(cxx, rel)
    if header is None:
        return []
    with Progress("precompiling %s" % header, total=1) as progress:
        d = _precompiled_header(cache_root(), cxx, header, flags, _toolchain(cxx), progress)
    if d is None:
        return []
    return ["-I" + str(d)] + (["-include", header] if header == _ORCHESTRATION_HEADER else [])


def _precompiled_kind(cxx: str, rel: str) -> Optional[str]:
    """The header a file of this kind may take precompiled: the kernel prelude for kernels (found
    by their own ``#include``), the orchestration API header for orchestration files under GCC
    (given with ``-include``: the generated file includes system headers first, and GCC uses a
    precompiled header only before the first declaration)."""
    if rel.startswith("kernels/"):
        return _PRELUDE
    if rel.startswith("orchestration/") and is_gcc(cxx):
        return _ORCHESTRATION_HEADER
    return None


# ---------------------------------------------------------------------------------------------
# Compiling.

def _extra_flags() -> List[str]:
    return os.environ.get("PYPTO_CXXFLAGS", "").split()


def run_compiler(cmd: List[str], cwd: str) -> subprocess.CompletedProcess:
    """Runs one compiler command (a separate function so tests can count invocations)."""
    logger.debug("running %s (in %s)", " ".join(cmd), cwd)
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)


def is_gcc(cxx: str) -> bool:
    """True when ``cxx`` is GCC (its ``--version`` names the Free Software Foundation, not clang)."""
    ident = _compiler_identity(cxx)
    return "Free Software Foundation" in ident and "clang" not in ident


def host_flags(cxx: str) -> List[str]:
    """The optimisation flags of a host (orchestration) file for compiler ``cxx``:
    ``host_flags("/usr/bin/g++") == HOST_FLAGS + GCC_HOST_MEMORY_FLAGS + GCC_HOST_WARNING_FLAGS``."""
    return HOST_FLAGS + (GCC_HOST_MEMORY_FLAGS + GCC_HOST_WARNING_FLAGS if is_gcc(cxx) else [])


def _file_flags(cxx: str, rel: str, file_flags: Dict[str, List[str]]) -> List[str]:
    opt = KERNEL_FLAGS if rel.startswith("kernels/") else host_flags(cxx)
    return COMMON_FLAGS + opt + _extra_flags() + list(file_flags.get(rel, []))


def _object_name(rel: str) -> str:
    return "obj/" + rel.replace("/", "__").rsplit(".", 1)[0] + ".o"


def _link_command(cxx: str, lib: str, objs: List[str]) -> List[str]:
    libdir = os.path.dirname(os.path.abspath(lib))
    return [cxx, "-shared", "-o", LIBRARY_NAME] + objs + [os.path.abspath(lib), "-Wl,-rpath," + libdir, "-pthread"]


def _compile_command(cxx: str, rel: str, file_flags: Dict[str, List[str]], pch: Optional[Path] = None) -> List[str]:
    inc = ["-I" + include_dir(), "-I" + kernel_include_dir()]
    header = _precompiled_kind(cxx, rel) if pch is not None else None
    if header is not None:
        inc.insert(0, "-I" + str(pch))   # found first: GCC takes the .gch next to the header copy
        if header == _ORCHESTRATION_HEADER:
            inc += ["-include", header]
    return [cxx] + _file_flags(cxx, rel, file_flags) + inc + ["-c", rel, "-o", _object_name(rel)]


def _check(proc: subprocess.CompletedProcess, cmd: List[str], what: str, workdir: str) -> None:
    if proc.returncode == 0:
        return
    out = (proc.stderr or "") + (proc.stdout or "")
    if len(out) > 8000:
        out = out[:8000] + "\n... (%d more characters)" % (len(out) - 8000)
    extra = _extra_flags()
    # The user's own flags or compiler come first: a bad PYPTO_CXXFLAGS was blamed on pypto.
    help_text = ("PYPTO_CXXFLAGS=%r is set: check those flags first (unset it to build with pypto's own); "
                 "otherwise this is a pypto bug" % " ".join(extra) if extra else
                 "CXX=%s is set: check that compiler first (unset it to use g++); otherwise this is a pypto bug"
                 % os.environ["CXX"] if os.environ.get("CXX") else "this is usually a pypto bug in generated code")
    raise BuildError("C++ compilation of %s failed (exit %d)\n  command: %s\n  in: %s\n%s"
                     % (what, proc.returncode, " ".join(cmd), workdir, out.rstrip()),
                     help=help_text + "; please report it with the files of the build directory")


def _keep_failed_build(root: Path, key: str, work: str, e: BuildError) -> BuildError:
    """The BuildError ``e`` of a build in ``work``, that directory kept as ``<root>/failed-<key>``
    (replacing an older one; removed with the stale temporaries after a day) so that the message's
    "in: DIR" and "report it with the files of the build directory" point at something that
    exists: the work directory was removed before the message was read."""
    kept = root / ("failed-" + key)
    try:
        _remove_entry(kept)
        os.rename(work, kept)
    except OSError:   # could not keep it: the message stays as it was
        return e
    return BuildError(e.message.replace(work, str(kept)),
                      help=(e.help or "") + " (kept in %s)" % kept, file=e.file, line=e.line)


def _write_files(root: str, files: Dict[str, str]) -> None:
    for rel, text in files.items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)


def _build_script(compiles: List[List[str]], link: List[str]) -> str:
    lines = ["#!/bin/sh", "# Rebuilds libprogram.so from these sources (the commands pypto ran, without its cache).",
             "set -e", "cd \"$(dirname \"$0\")\"", "mkdir -p obj"]
    lines += [" ".join(c) for c in compiles]
    lines.append(" ".join(link))
    return "\n".join(lines) + "\n"


def _exports_name(path: Path, name: str) -> bool:
    """Whether the file at ``path`` holds the symbol name ``name`` (its dynamic string table
    does, for a library that exports it): a valid ELF of another library (a file copied over the
    cached one) is told apart before dlopen, which keeps a library loaded under its path for the
    life of the process (a rebuilt one at the same path would not be loaded)."""
    import mmap
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return m.find(name.encode() + b"\0") >= 0
    except (OSError, ValueError):   # ValueError: an empty file cannot be mapped
        return False


def _remove_entry(final: Path) -> None:
    """Removes a damaged cache entry, whatever it is (a directory, a file, a symlink)."""
    if final.is_dir() and not final.is_symlink():
        shutil.rmtree(final, ignore_errors=True)
    else:
        try:
            os.unlink(final)
        except OSError:
            pass


def _same_path(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_output_dir(output_dir, rels: Sequence[str], protected: Sequence[str] = ()) -> str:
    """The absolute ``output_dir`` after checking, before anything is built or written, that each
    of ``rels`` (relative paths) can be written under it: a PyptoError naming the first path
    that cannot (a component that is an existing file, a target that is a directory), or that
    is one of the ``protected`` files (paths, or ``(path, role)`` pairs: "the program file", "the
    --inputs file"; writing there would replace it). An empty ``output_dir`` is refused (it was the current directory).

        check_output_dir("out", ["kernels/k.cpp", "build.sh"])
    """
    if not isinstance(output_dir, (str, os.PathLike)):
        raise OutputPathError("output_dir= is a directory path (str or os.PathLike), got %s" % type(output_dir).__name__,
                         help="e.g. output_dir=\"out\"")
    output_dir = os.fsdecode(os.fspath(output_dir))
    if not output_dir.strip():
        raise OutputPathError("output_dir=%r: the path is empty; give a directory name" % output_dir,
                         help="output_dir=None (the default) keeps the build in the cache only")
    out = os.path.abspath(output_dir)
    if os.path.lexists(out) and not os.path.isdir(out):
        raise OutputPathError("output directory %s is an existing file" % out,
                              help="give output_dir= / -o a directory (it is created when missing)")
    named = [(p, "the program file") if isinstance(p, str) else tuple(p) for p in protected]
    named = [(p, role) for p, role in named if p and os.path.exists(p)]
    for rel in rels:
        dest = os.path.join(out, rel)
        for p, role in named:
            if os.path.lexists(dest) and _same_path(dest, p):
                raise OutputPathError("the generated %s would be written to %s, which is %s %s: writing there would "
                                      "replace it" % (rel, dest, role, p),
                                      help="give output_dir= / -o a directory of its own")
        parent = os.path.dirname(dest)
        while parent != out and not os.path.lexists(parent):
            parent = os.path.dirname(parent)
        if os.path.lexists(parent) and not os.path.isdir(parent):
            raise OutputPathError("cannot write %s: %s is an existing file, not a directory" % (dest, parent),
                             help="remove it or give output_dir= / -o another directory")
        if os.path.isdir(dest):
            raise OutputPathError("cannot write %s: it is a directory" % dest,
                             help="remove it or give output_dir= / -o another directory")
    return out


def build_program(entry: str, orchestration_code: str, kernel_sources: Dict[str, str],
                  kernels: Sequence[KernelEntry], output_dir: Optional[str] = None,
                  extra_files: Optional[Dict[str, str]] = None, protected: Sequence[str] = ()) -> BuildResult:
    """Writes, compiles (or finds cached) and links one program entry; see the module doc.
    ``protected``: files ``output_dir`` must not write over (``check_output_dir``)."""
    files: Dict[str, str] = {"orchestration/%s.cpp" % source_stem(entry): orchestration_code}
    for name, code in kernel_sources.items():
        files["kernels/%s.cpp" % source_stem(name)] = code
    files["program_table.cpp"] = program_table_source(entry, kernels)
    for rel, code in (extra_files or {}).items():
        files[rel] = code
    return build_sources(files, output_dir=output_dir, label=entry, protected=protected,
                         required_symbol="pypto_program_kernel_table")


def build_sources(files: Dict[str, str], output_dir: Optional[str] = None,
                  file_flags: Optional[Dict[str, List[str]]] = None,
                  support_files: Optional[Dict[str, str]] = None, label: str = "",
                  protected: Sequence[str] = (), required_symbol: str = "") -> BuildResult:
    """Compiles (or finds cached) every ``.cpp`` of ``files`` (relative path -> source) and links
    them with libpto2 into one library, cached per translation unit and per program (see the
    module doc). ``BuildResult.compiled`` counts the translation units the compiler ran on.

    ``file_flags`` adds flags to one file's compile command (e.g. ``-D`` renames); they are part
    of that file's key. ``output_dir`` is checked before anything is built (``check_output_dir``,
    with ``protected``); a cached library that lacks ``required_symbol`` is built again. ``support_files`` are built and keyed too but are not program sources:
    they are not in ``BuildResult.files``. ``label`` names the program in progress output.

        build_sources({"kernels/k.cpp": src, ...}, output_dir="out")
    """
    from pypto.runtime.progress import Progress

    file_flags = dict(file_flags or {})
    support_files = dict(support_files or {})
    all_files = dict(files)
    all_files.update(support_files)
    if output_dir is not None:   # a blocked path was a raw OSError after the whole build
        output_dir = check_output_dir(output_dir, [*files, *support_files, "build.sh", LIBRARY_NAME], protected)
    cxx = find_compiler()
    lib = library_path()
    toolchain = _toolchain(cxx)
    sources = sorted(p for p in all_files if p.endswith(".cpp"))
    obj_keys = {rel: _digest(toolchain, rel, " ".join(_file_flags(cxx, rel, file_flags)), all_files[rel])
                for rel in sources}
    link = _link_command(cxx, lib, [_object_name(rel) for rel in sources])
    key = _digest(toolchain, " ".join(link[1:]), _file_digest(lib),
                  *[part for rel in sources for part in (rel, obj_keys[rel])],
                  *[part for rel in sorted(all_files) for part in (rel, all_files[rel])])
    root = cache_root()
    final = root / key
    cached = (final / LIBRARY_NAME).is_file()
    if cached and (not _elf_intact(final / LIBRARY_NAME) or
                   required_symbol and not _exports_name(final / LIBRARY_NAME, required_symbol)):
        # A truncated library (a full disk, a file written over it): dlopen mapped its segments
        # past the end of the file and the process died with SIGBUS. Another library copied over
        # it loaded and lacked the program's symbols (a RunError until the cache was deleted by
        # hand). Built again instead.
        logger.warning("cached library %s is damaged; building it again", final / LIBRARY_NAME)
        _remove_entry(final)
        cached = False
    elif not cached and os.path.lexists(final):
        # An entry without its library (deleted by hand, a dangling symlink, a directory in its
        # place) or a file in the entry's place: the rename of the new build onto it failed, on
        # every compile of the program. Replaced by the new build.
        logger.warning("cache entry %s has no library; building it again", final)
    compiled = 0
    used: List[Path] = [final]
    if cached:
        logger.info("build cache hit: %s (%s)", label or "program", final / LIBRARY_NAME)
        _touch(final / LIBRARY_NAME)
    else:
        jobs = build_jobs()   # bad values are refused before anything is compiled
        cache_max_bytes()     # (it was read only by the eviction after the build)
        _usable_cache_root(root)
        missing = []
        for rel in sources:
            obj = _object_path(root, obj_keys[rel])
            if obj.is_file():
                _touch(obj)   # in use from now on: another process's eviction leaves it (EVICT_GRACE_SECONDS)
            else:
                missing.append(rel)
        logger.info("build cache miss: %s (compiling %d of %d translation units, %d cached; cache %s)",
                    label or "program", len(missing), len(sources), len(sources) - len(missing), root)
        with Progress("compiling %s" % (label or "program"), total=len(missing) + 1) as progress:
            pchs: Dict[str, Optional[Path]] = {}   # header -> its precompiled directory (None: failed)
            for rel in missing:
                header = _precompiled_kind(cxx, rel)
                if header is not None and header not in pchs and not file_flags.get(rel):
                    pchs[header] = _precompiled_header(root, cxx, header, _file_flags(cxx, rel, {}), toolchain,
                                                       progress)
            work = tempfile.mkdtemp(prefix="tmp-%s-" % key[:8], dir=str(root))
            try:
                _write_files(work, all_files)
                os.makedirs(os.path.join(work, "obj"), exist_ok=True)
                with open(os.path.join(work, "build.sh"), "w") as f:
                    f.write(_build_script([_compile_command(cxx, rel, file_flags) for rel in sources], link))
                with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
                    futs = []
                    for rel in missing:
                        header = _precompiled_kind(cxx, rel)
                        use_pch = pchs.get(header) if header and not file_flags.get(rel) else None
                        cmd = _compile_command(cxx, rel, file_flags, use_pch)
                        futs.append((rel, cmd, use_pch, pool.submit(run_compiler, cmd, work)))
                    for rel, cmd, use_pch, fut in futs:
                        proc = fut.result()
                        if proc.returncode != 0 and use_pch is not None and _PCH_FAILURE.search(proc.stderr or ""):
                            # A damaged cached precompiled header (truncated, edited) failed every
                            # later build as "a pypto bug" (tester F #8): removed (built again by
                            # the next build), and this file compiled without it.
                            logger.warning("the precompiled header in %s could not be read; removing it and "
                                           "compiling %s without it", use_pch, rel)
                            shutil.rmtree(str(use_pch), ignore_errors=True)
                            cmd = _compile_command(cxx, rel, file_flags)
                            proc = run_compiler(cmd, work)
                        _check(proc, cmd, rel, work)
                        progress.step(rel)
                        obj = _object_path(root, obj_keys[rel])
                        obj.parent.mkdir(parents=True, exist_ok=True)
                        os.replace(os.path.join(work, _object_name(rel)), obj)
                compiled = len(missing)
                for rel in sources:   # the objects (touched when found, or just built), linked from obj/
                    obj = _object_path(root, obj_keys[rel])
                    used.append(obj)
                    into = os.path.join(work, _object_name(rel))
                    try:
                        shutil.copy2(str(obj), into)
                    except FileNotFoundError:
                        # Removed since it was found (deleted by hand, or evicted by a process
                        # older than the grace period): compiled again, as a missing one.
                        logger.warning("cached object for %s vanished during the build; compiling it again", rel)
                        cmd = _compile_command(cxx, rel, file_flags)
                        _check(run_compiler(cmd, work), cmd, rel, work)
                        obj.parent.mkdir(parents=True, exist_ok=True)
                        shutil.copy2(into, str(obj))
                        compiled += 1
                progress.step("linking")
                linked = run_compiler(link, work)
                reused = [rel for rel in sources if rel not in missing]
                if linked.returncode != 0 and reused:
                    # An object taken from the cache may be damaged (truncated by a full disk or a
                    # crash, edited by hand): the link failed on it and was reported as a pypto bug
                    # in the generated code. Those objects are compiled again, once, and linked
                    # again; a second failure is reported as it is.
                    logger.warning("linking %s failed with %d cached object(s); compiling them again",
                                   label or "program", len(reused))
                    for rel in reused:
                        cmd = _compile_command(cxx, rel, file_flags)
                        _check(run_compiler(cmd, work), cmd, rel, work)
                        os.replace(os.path.join(work, _object_name(rel)), _object_path(root, obj_keys[rel]))
                        shutil.copy2(str(_object_path(root, obj_keys[rel])), os.path.join(work, _object_name(rel)))
                    compiled += len(reused)
                    linked = run_compiler(link, work)
                _check(linked, link, "the program library (link)", work)
                shutil.rmtree(os.path.join(work, "obj"), ignore_errors=True)
                try:
                    os.rename(work, final)
                except OSError:  # another process finished the same build first, or a damaged entry
                    if not (final / LIBRARY_NAME).is_file():
                        _remove_entry(final)
                        try:
                            os.rename(work, final)
                        except OSError as e:
                            if not (final / LIBRARY_NAME).is_file():
                                raise PyptoError("cannot put the build of %s into the cache at %s: %s"
                                                 % (label or "the program", final, e.strerror or e),
                                                 help="remove %s and compile again" % final) from None
            except BuildError as e:
                raise _keep_failed_build(root, key, work, e) from None
            finally:
                if os.path.isdir(work):
                    shutil.rmtree(work, ignore_errors=True)
        used += [p for p in pchs.values() if p is not None]
        evict(root, keep=used)
    out = str(final)
    if output_dir is not None and os.path.isdir(output_dir) and _same_path(output_dir, str(final)):
        # output_dir is the program's own cache entry (CompiledProgram.output_dir passed back):
        # every file is already there (copying one onto itself was a shutil.SameFileError).
        output_dir = None
    if output_dir is not None:
        out = os.path.abspath(output_dir)
        try:
            os.makedirs(out, exist_ok=True)
        except OSError as e:   # an existing file, no permission...: say where, not a bare OSError
            raise PyptoError("cannot write the generated sources to %s: %s" % (out, e.strerror or e),
                             help="give a directory (output_dir= / -o) that exists or can be created") from None
        _write_files(out, files)
        for extra in (*support_files, "build.sh", LIBRARY_NAME):
            src = final / extra
            if src.is_file():
                shutil.copy2(str(src), os.path.join(out, extra))
    return BuildResult(library=str(final / LIBRARY_NAME), output_dir=out, files=files, cached=cached, key=key,
                       compiled=compiled)
