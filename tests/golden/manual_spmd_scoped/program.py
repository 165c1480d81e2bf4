"""Golden input: pl.spmd scoped forms (with, with ... as tid, for i in pl.spmd).

The program is the spec example in tests/python/spec_programs/spmd_scoped.py (one copy, shared with
the parser and end-to-end tests); expected.cpp is its orchestration C++."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

from spec_programs.spmd_scoped import SpmdScoped  # noqa: E402,F401
