"""One-line progress indicators for long steps, on a terminal only: compiling a program
(``Progress``), a long run (``RunIndicator``) and building the C++ core (``run_build``, what
``make install`` uses).

    with Progress("compiling main", total=4) as p:
        p.step("kernels/k.cpp")       # "pypto: compiling main [1/4] kernels/k.cpp" on stderr
    # the line is erased at the end

    with RunIndicator("running main", counts=rt.progress):  # after 1 s, ticking:
        rt.run(...)           # "pypto: running main 1200/5000 tasks done (3.2 s)"

    python python/pypto/runtime/progress.py build -- python -m pip install -v .

Silent when stderr is not a TTY or when ``PYPTO_QUIET=1``. This file uses the standard
library only: ``make install`` runs it by path before pypto is installed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from typing import Callable, List, Optional, TextIO, Tuple


# The stream last asked and whether it is a terminal: every call of a program asks (issue 17:
# isatty is a system call, 0.6 us of a 4 us call), and a stream's file does not change under it.
_tty_seen: Tuple[Optional[TextIO], bool] = (None, False)


def _is_tty(stream: TextIO) -> bool:
    global _tty_seen
    seen, tty = _tty_seen
    if seen is stream and not getattr(stream, "closed", False):
        return tty
    try:
        tty = bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
    _tty_seen = (stream, tty)
    return tty


def progress_enabled(stream: Optional[TextIO] = None) -> bool:
    """True when progress lines should be drawn on ``stream`` (default stderr)."""
    if not _is_tty(stream or sys.stderr):   # first: cheap once asked, and runs check this per call
        return False
    return os.environ.get("PYPTO_QUIET", "") in ("", "0")


class Progress:
    """Draws ``pypto: <what> [i/n] <detail> (t s)`` on one terminal line, rewritten in place."""

    def __init__(self, what: str, total: int = 0, stream: Optional[TextIO] = None):
        self.what, self.total, self.done = what, total, 0
        self.stream = stream or sys.stderr
        self.enabled = progress_enabled(self.stream)
        self.start = time.perf_counter()
        self._width = 0

    def __enter__(self) -> "Progress":
        self._draw("")
        return self

    def step(self, detail: str = "") -> None:
        """One more unit done (``detail`` names it)."""
        self.done += 1
        self._draw(detail)

    def _draw(self, detail: str) -> None:
        if not self.enabled:
            return
        count = " [%d/%d]" % (min(self.done, self.total), self.total) if self.total else ""
        line = "pypto: %s%s%s (%.1f s)" % (self.what, count, " " + detail if detail else "",
                                            time.perf_counter() - self.start)
        line = line[:119]
        self.stream.write("\r" + line + " " * max(0, self._width - len(line)))
        self.stream.flush()
        self._width = len(line)

    def __exit__(self, *exc) -> None:
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()


def task_counts_text(counts: Optional[Callable[[], Tuple[int, int]]]) -> str:
    """``"1200/5000 tasks done"`` from ``counts()`` = (submitted, completed) so far; "" when
    there is no counter or it fails (a progress line never breaks a run).

        task_counts_text(lambda: (5000, 1200))   # -> "1200/5000 tasks done"
    """
    if counts is None:
        return ""
    try:
        submitted, completed = counts()
    except Exception:  # noqa: BLE001 - the indicator is best effort
        return ""
    return "%d/%d tasks done" % (min(int(completed), int(submitted)), int(submitted))


class RunIndicator:
    """Draws ``pypto: <what> (t s)`` once a step has taken ``delay`` seconds, rewritten every
    ``interval`` seconds until the step ends (then erased): a long run shows it is alive, a
    short one prints nothing. The step must release the GIL (runs do). ``counts`` (the
    runtime's ``progress``: tasks submitted and completed so far, two atomic loads) adds the
    task count: ``pypto: running main 1200/5000 tasks done (3.2 s)``.

        with RunIndicator("running main", counts=rt.progress):
            stats = rt.run(tensors, scalars)
    """

    def __init__(self, what: str, delay: float = 1.0, interval: float = 0.25, stream: Optional[TextIO] = None,
                 counts: Optional[Callable[[], Tuple[int, int]]] = None):
        self.progress = Progress(what, stream=stream)
        self.counts = counts
        self.delay, self.interval = delay, interval
        self._stop: Optional[threading.Event] = None  # made when drawing: a silent indicator costs ~nothing
        self._thread: Optional[threading.Thread] = None

    def __enter__(self) -> "RunIndicator":
        if self.progress.enabled:
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._tick, name="pypto-progress", daemon=True)
            self._thread.start()
        return self

    def _tick(self) -> None:
        if self._stop.wait(self.delay):
            return
        while True:
            text = task_counts_text(self.counts)
            self.progress._draw(text)
            if self._stop.wait(self.interval):
                return

    def __exit__(self, *exc) -> None:
        if self._thread is not None and self._stop is not None:
            self._stop.set()
            self._thread.join()
            self.progress.__exit__(*exc)


_NINJA_STEP = re.compile(r"^\[(\d+)/(\d+)\]\s+(?:Building \w+ object |Linking \w+ \w+ library |Linking \w+ )?(\S+)")


def run_build(cmd: List[str], what: str = "building the pypto C++ core", stream: Optional[TextIO] = None) -> int:
    """Runs the build command ``cmd`` (``pip install -v .``: CMake/Ninja print ``[i/n] ...``
    lines) and shows ``pypto: <what> [i/n] <file> (t s)`` on one terminal line. Without a
    terminal (or with ``PYPTO_QUIET=1``) nothing is shown while it runs. On failure the last
    80 lines of its output are printed. Returns the command's exit code.

        sys.exit(run_build([sys.executable, "-m", "pip", "install", "-v", "."]))
    """
    stream = stream or sys.stderr
    tail: List[str] = []
    with Progress(what, stream=stream) as p:
        # The build backend would draw the same line on /dev/tty: this function draws it here.
        env = dict(os.environ, PYPTO_BUILD_PROGRESS="0")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                                env=env)
        assert proc.stdout is not None
        for line in proc.stdout:
            tail.append(line)
            del tail[:-80]
            m = _NINJA_STEP.match(line.strip())
            if m:
                p.done, p.total = int(m.group(1)) - 1, int(m.group(2))
                p.step(os.path.basename(m.group(3)))
        rc = proc.wait()
    if rc != 0:
        stream.write("".join(tail))
        stream.write("pypto: %s failed (exit code %d); the lines above are the end of its output\n" % (what, rc))
    elif p.enabled:
        stream.write("pypto: %s: done in %.1f s\n" % (what, time.perf_counter() - p.start))
    stream.flush()
    return rc


def _main(argv: List[str]) -> int:
    if len(argv) < 3 or argv[0] != "build" or argv[1] != "--":
        sys.stderr.write("usage: python progress.py build -- <build command ...>\n")
        return 2
    return run_build(argv[2:])


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
