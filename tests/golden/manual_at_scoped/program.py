"""Golden input: pl.at scoped forms with predicate / allow_early_resolve / no_dep_args.

The program is the spec example in tests/python/spec_programs/at_scoped.py (one copy, shared with
the parser and end-to-end tests); expected.cpp is its orchestration C++."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

from spec_programs.at_scoped import AtScoped  # noqa: E402,F401
