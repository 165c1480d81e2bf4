"""Golden input: 示例 1: manual_scope + explicit edge.

The program is the spec example in tests/python/spec_programs/mech1_manual_scope.py (one copy, shared with
the parser and end-to-end tests); expected.cpp is its orchestration C++."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

from spec_programs.mech1_manual_scope import Mech1  # noqa: E402,F401
