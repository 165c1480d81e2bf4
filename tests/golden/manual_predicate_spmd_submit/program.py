"""Golden input: 调度谓词: pl.spmd_submit with predicate=.

The program is the spec example in tests/python/spec_programs/predicate_spmd_submit.py (one copy, shared with
the parser and end-to-end tests); expected.cpp is its orchestration C++."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

from spec_programs.predicate_spmd_submit import PredicateSubmit  # noqa: E402,F401
