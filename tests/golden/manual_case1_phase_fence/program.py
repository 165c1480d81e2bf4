"""Golden input: case1: N_PHASES x N_BRANCHES array-carry fence (+ ExpandManualPhaseFence).

The program is the spec example in tests/python/spec_programs/case1_phase_fence.py (one copy, shared with
the parser and end-to-end tests); expected.cpp is its orchestration C++."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

from spec_programs.case1_phase_fence import Case1  # noqa: E402,F401
