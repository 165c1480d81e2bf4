"""Golden input: 示例 2: explicit edge on top of auto tracking (runtime-allocated Out).

The program is the spec example in tests/python/spec_programs/mech2_explicit_edges.py (one copy, shared with
the parser and end-to-end tests); expected.cpp is its orchestration C++."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

from spec_programs.mech2_explicit_edges import Mech2  # noqa: E402,F401
