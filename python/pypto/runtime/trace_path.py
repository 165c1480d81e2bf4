"""Where a run's trace goes: the ``trace=`` argument, else ``$PYPTO_TRACE``, checked before the run.

    PYPTO_TRACE=trace.json python prog.py      # every run writes its trace there (last run wins)
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from typing import Optional

from pypto.errors import PyptoError
from pypto.runtime.env import getenv

__all__ = ["TracePathError", "as_output_path", "probe_directory", "probe_writable", "resolve_trace_path"]


class TracePathError(PyptoError, ValueError):
    """The trace cannot be written where asked (its directory does not exist, or it is a directory)."""


def as_output_path(value, option: str) -> str:
    """``value`` of the call option ``option`` (``trace``, ``graph``) as a str path: a str,
    bytes (decoded as the OS does) or os.PathLike; a TracePathError for anything else, before
    the run (``os.fspath``'s TypeError escaped, and a bytes path ran the program, then failed
    to write to the file "b'...'").

        as_output_path(b"/tmp/t.json", "trace") == "/tmp/t.json"
    """
    if isinstance(value, (str, bytes, os.PathLike)):
        path = os.fspath(value)
        return os.fsdecode(path) if isinstance(path, bytes) else path
    raise TracePathError("%s= is the path of a file to write (str or os.PathLike), got %s"
                         % (option, type(value).__name__),
                         help="e.g. %s=\"run.%s\"; a program parameter named '%s' is passed by position (%s= is the "
                              "call's option)" % (option, "json" if option == "trace" else "dot", option, option))


def resolve_trace_path(trace: Optional[str]) -> Optional[str]:
    """``trace`` if given, else ``$PYPTO_TRACE`` (unset or empty: no trace). Raises
    ``TracePathError`` before anything runs when the file's directory does not exist, so a run's
    results are never lost to a trace that cannot be written."""
    if trace is None:
        trace = getenv("PYPTO_TRACE") or None
    if trace is None:
        return None
    trace = as_output_path(trace, "trace")
    if os.path.isdir(trace):
        raise TracePathError("cannot write the trace to %s: it is a directory" % trace,
                             help="give a file path, e.g. %s" % os.path.join(trace, "trace.json"))
    directory = os.path.dirname(os.path.abspath(trace))
    if not os.path.isdir(directory):
        raise TracePathError("cannot write the trace to %s: directory %s does not exist" % (trace, directory),
                             help="create the directory first, or give another path (trace= or PYPTO_TRACE)")
    if _mapped_in_this_process(trace):
        raise TracePathError("cannot write the trace to %s: it is a library this process has loaded (a program's "
                             "libprogram.so, libpto2, ...)" % trace,
                             help="give the trace a file of its own, e.g. trace.json (trace= or PYPTO_TRACE)")
    problem = probe_writable(trace)
    if problem:
        raise TracePathError("cannot write the trace to %s: %s" % (trace, problem),
                             help="give a path you can write (trace= or PYPTO_TRACE)")
    return trace


def _mapped_in_this_process(path: str) -> bool:
    """Whether ``path`` is a file mapped into this process (a loaded shared library, from
    /proc/self/maps; False where there is none). The trace written over the program's own
    cached libprogram.so truncated the mapping under the running code: the process died with
    SIGBUS and the cache entry was destroyed."""
    try:
        st = os.stat(path)
        with open("/proc/self/maps") as f:
            maps = f.read().splitlines()
    except OSError:
        return False
    dev = "%02x:%02x" % (os.major(st.st_dev), os.minor(st.st_dev))
    real = os.path.realpath(path)
    for line in maps:
        parts = line.split(None, 5)   # address perms offset dev inode [path]
        # the device, or the path: on overlay file systems the maps show the lower device
        if len(parts) == 6 and parts[4] == str(st.st_ino) and (parts[3] == dev or parts[5] == real):
            return True
    return False


def probe_writable(path: str) -> Optional[str]:
    """Why ``path`` cannot be opened for writing (the OS's reason), or None. Opened to append, so
    an existing file keeps its contents; a file the probe created is removed again. A path that
    exists but is no regular file (a named pipe, /dev/null) is not opened: checked with
    ``os.access``, so a pipe's reader sees only the real output."""
    existed = os.path.lexists(path)
    try:
        st = os.stat(path) if existed else None
    except OSError:   # a dangling symlink: opening it creates its target, probed below
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        # A named pipe, a device: opening it is not a probe (a FIFO's open blocked until a reader
        # came, and its close gave that reader EOF: it left before the real output was written).
        return None if os.access(path, os.W_OK) else os.strerror(errno.EACCES)
    try:
        with open(path, "ab"):
            pass
    except OSError as e:
        return e.strerror or str(e)
    if not existed:
        try:
            os.remove(path)
        except OSError:
            pass
    return None


def probe_directory(path: str) -> Optional[str]:
    """Why files cannot be written in directory ``path`` (the OS's reason, or that it is a file),
    or None. A missing directory is created, as the build would create it (and kept: removing it
    again could pull it from under another process probing the same path, e.g. MPI ranks); the
    probe's own file is removed.

        probe_directory("/proc/x")    # "No such file or directory"
    """
    path = os.path.abspath(path)
    if os.path.lexists(path) and not os.path.isdir(path):
        return "it is an existing file, not a directory"
    try:
        os.makedirs(path, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".pypto-probe-")
        os.close(fd)
        os.remove(probe)
    except OSError as e:
        return e.strerror or str(e)
    return None
