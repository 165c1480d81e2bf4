"""Locating, building against and loading libpto2, the PTO2 runtime on CPU threads.

    from pypto import runtime
    runtime.include_dir()         # -I for generated orchestration code (pto_orchestration_api.h)
    runtime.kernel_include_dir()  # -I for generated CPU kernels (pypto_kernel_prelude.h)
    runtime.library_path()        # libpto2.so

Installed package: the headers live in ``<pypto>/runtime/include`` and the library in
``<pypto>/_lib/libpto2.so`` (put there by the Python build). From a source tree, the headers
fall back to ``runtime/include`` and the library to ``$PYPTO_LIBPTO2`` or a CMake build dir.
The builder (``pypto.runtime.build``) and the loader (``pypto.runtime.loader``) are used by
``pypto.compile``; see docs/running.md.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from pypto.errors import PyptoError

__all__ = ["include_dir", "kernel_include_dir", "library_path", "RuntimeNotFoundError"]

_HERE = Path(__file__).resolve().parent          # <pypto>/runtime
_PKG = _HERE.parent                              # <pypto>
_SOURCE_ROOT = _PKG.parent.parent                # repository root when run from the source tree


class RuntimeNotFoundError(PyptoError):
    """libpto2 or its headers could not be found."""


def include_dir() -> str:
    """The directory holding ``pto_orchestration_api.h`` (pass it to ``-I``);
    ``$PYPTO_RUNTIME_INCLUDE`` overrides the search (use it together with ``$PYPTO_LIBPTO2``).

    >>> import os; os.path.exists(os.path.join(include_dir(), "pto_orchestration_api.h"))
    True
    """
    env = os.environ.get("PYPTO_RUNTIME_INCLUDE")
    if env:
        return env
    candidates = [_HERE / "include", _SOURCE_ROOT / "runtime" / "include"]
    try:  # next to the compiled extension module (an installed or editable build)
        from pypto import _core  # noqa: F401
        candidates.insert(1, Path(_core.__file__).resolve().parent / "runtime" / "include")
    except ImportError:
        pass
    for c in candidates:
        if (c / "pto_orchestration_api.h").is_file():
            return str(c)
    raise RuntimeNotFoundError("cannot find pto_orchestration_api.h (looked in %s)"
                               % ", ".join(str(c) for c in candidates),
                               help="reinstall pypto (`pip install .`) so the runtime headers are installed")


def kernel_include_dir() -> str:
    """The directory holding ``pypto_kernel_prelude.h``, included by generated CPU kernels."""
    return str(_HERE / "include_kernel")


def library_path() -> str:
    """Path of ``libpto2.so``; ``$PYPTO_LIBPTO2`` overrides the search."""
    env = os.environ.get("PYPTO_LIBPTO2")
    if env:
        if os.path.isdir(env):   # was "does not exist"
            raise RuntimeNotFoundError("PYPTO_LIBPTO2=%s is a directory; it names the library file" % env,
                                       help="set it to the path of libpto2.so (e.g. %s/libpto2.so) or unset it"
                                       % env.rstrip("/"))
        if not os.path.isfile(env):
            raise RuntimeNotFoundError("PYPTO_LIBPTO2=%s does not exist" % env)
        try:
            with open(env, "rb") as f:
                elf = f.read(4) == b"\x7fELF"
        except OSError as e:
            raise RuntimeNotFoundError("PYPTO_LIBPTO2=%s cannot be read: %s" % (env, e.strerror or e)) from None
        if not elf:   # was a linker error blamed on the generated code, after compiling
            raise RuntimeNotFoundError("PYPTO_LIBPTO2=%s is not a shared library (no ELF header)" % env,
                                       help="set it to the path of libpto2.so or unset it")
        return env
    candidates = [_PKG / "_lib" / "libpto2.so"]
    try:
        from pypto import _core
        candidates.append(Path(_core.__file__).resolve().parent / "_lib" / "libpto2.so")
    except ImportError:
        pass
    for c in candidates:
        if c.is_file():
            return str(c)
    # Source tree: a CMake build of the runtime (newest first).
    found = sorted(glob.glob(str(_SOURCE_ROOT / "build" / "**" / "libpto2.so"), recursive=True),
                   key=lambda p: os.path.getmtime(p), reverse=True)
    if found:
        return found[0]
    raise RuntimeNotFoundError("cannot find libpto2.so (looked in %s and %s/build)"
                               % (", ".join(str(c) for c in candidates), _SOURCE_ROOT),
                               help="reinstall pypto (`pip install .`) or set PYPTO_LIBPTO2")
