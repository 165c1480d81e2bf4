"""pypto's PEP 517 build backend: scikit-build-core, plus a one-line build progress on the
user's terminal during a plain ``pip install .`` (pip captures the backend's output and shows
it only with ``-v``, so a 2-4 minute C++ build looked frozen).

    [build-system]
    build-backend = "pypto_build_backend"
    backend-path = ["scripts/build_backend"]

While the wheel builds, the backend's stdout (where CMake and Ninja print ``[i/n] ...``) goes
through a pipe: every line is passed on unchanged (``pip install -v .`` shows the same log as
before) and Ninja's steps are drawn as ``pypto: building the pypto C++ core [57/212]
ir_printer.cpp (41.0 s)`` on ``/dev/tty``, the user's terminal. Nothing is drawn when there is
no terminal, when stdout already is one (the log is visible), with ``PYPTO_QUIET=1``, or under
``make install`` (which draws the same line itself: ``PYPTO_BUILD_PROGRESS=0``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import threading
from typing import Callable, Iterator, Mapping, Optional

from scikit_build_core import build as _skbuild

_HERE = os.path.dirname(os.path.abspath(__file__))
_PROGRESS_PY = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "python", "pypto", "runtime", "progress.py")


def progress_destination(environ: Mapping[str, str], stdout_is_tty: bool, tty_available: bool) -> Optional[str]:
    """Where the build progress line goes: ``"/dev/tty"`` when the user has a terminal that does
    not already see the build log, else None (draw nothing).

        progress_destination({}, stdout_is_tty=False, tty_available=True)   # -> "/dev/tty" (pip captures)
        progress_destination({"PYPTO_QUIET": "1"}, False, True)             # -> None
    """
    if environ.get("PYPTO_QUIET", "") not in ("", "0") or environ.get("PYPTO_BUILD_PROGRESS", "") == "0":
        return None
    if stdout_is_tty or not tty_available:
        return None
    return "/dev/tty"


def _open_tty(environ: Mapping[str, str]):
    """The user's terminal, open for writing, or None."""
    try:
        stdout_is_tty = os.isatty(1)
    except OSError:
        stdout_is_tty = False
    try:
        tty = open("/dev/tty", "w")  # noqa: SIM115 - closed by _tty_progress
    except OSError:
        return None
    if progress_destination(environ, stdout_is_tty, tty.isatty()) is None:
        tty.close()
        return None
    return tty


def _load_progress():
    spec = importlib.util.spec_from_file_location("_pypto_build_progress", _PROGRESS_PY)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def _tty_progress() -> Iterator[None]:
    """Routes fd 1 through a pipe for the duration, drawing Ninja's steps on /dev/tty."""
    tty = _open_tty(os.environ)
    if tty is None:
        yield
        return
    try:
        progress = _load_progress()
    except Exception:  # noqa: BLE001 - progress is a nicety, never a reason to fail a build
        tty.close()
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    read_fd, write_fd = os.pipe()
    os.dup2(write_fd, 1)
    os.close(write_fd)

    def pump() -> None:
        out = os.fdopen(saved, "w", closefd=False)
        with os.fdopen(read_fd, "r", errors="replace") as lines, \
                progress.Progress("building the pypto C++ core", stream=tty) as p:
            for line in lines:
                out.write(line)
                out.flush()
                m = progress._NINJA_STEP.match(line.strip())
                if m:
                    p.done, p.total = int(m.group(1)) - 1, int(m.group(2))
                    p.step(os.path.basename(m.group(3)))

    thread = threading.Thread(target=pump, name="pypto-build-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)  # closes the pipe's last write end: the pump sees EOF
        thread.join()
        os.close(saved)
        tty.close()


def _with_progress(hook: Callable) -> Callable:
    def wrapped(*args, **kwargs):
        with _tty_progress():
            return hook(*args, **kwargs)
    wrapped.__name__ = hook.__name__
    wrapped.__doc__ = hook.__doc__
    return wrapped


build_wheel = _with_progress(_skbuild.build_wheel)
build_editable = _with_progress(_skbuild.build_editable)
build_sdist = _skbuild.build_sdist
get_requires_for_build_wheel = _skbuild.get_requires_for_build_wheel
get_requires_for_build_sdist = _skbuild.get_requires_for_build_sdist
get_requires_for_build_editable = _skbuild.get_requires_for_build_editable
prepare_metadata_for_build_wheel = _skbuild.prepare_metadata_for_build_wheel
prepare_metadata_for_build_editable = _skbuild.prepare_metadata_for_build_editable

__all__ = ["build_wheel", "build_editable", "build_sdist", "get_requires_for_build_wheel",
           "get_requires_for_build_sdist", "get_requires_for_build_editable", "prepare_metadata_for_build_wheel",
           "prepare_metadata_for_build_editable", "progress_destination"]
