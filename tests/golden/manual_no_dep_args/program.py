"""Golden input: pl.no_dep(arg).

The program is the spec example in tests/python/spec_programs/no_dep_args.py (one copy, shared with
the parser and end-to-end tests); expected.cpp is its orchestration C++."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

from spec_programs.no_dep_args import NoDep  # noqa: E402,F401
