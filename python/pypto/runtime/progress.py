"""A one-line progress indicator for long steps (compiling a program), on a terminal only.

    with Progress("compiling main", total=4) as p:
        p.step("kernels/k.cpp")       # "pypto: compiling main [1/4] kernels/k.cpp" on stderr
    # the line is erased at the end

Silent when stderr is not a TTY or when ``PYPTO_QUIET=1``.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Optional, TextIO


def progress_enabled(stream: Optional[TextIO] = None) -> bool:
    """True when progress lines should be drawn on ``stream`` (default stderr)."""
    stream = stream or sys.stderr
    if os.environ.get("PYPTO_QUIET", "") not in ("", "0"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


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
        line = "pypto: %s%s %s (%.1f s)" % (self.what, count, detail, time.perf_counter() - self.start)
        line = line[:119]
        self.stream.write("\r" + line + " " * max(0, self._width - len(line)))
        self.stream.flush()
        self._width = len(line)

    def __exit__(self, *exc) -> None:
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
