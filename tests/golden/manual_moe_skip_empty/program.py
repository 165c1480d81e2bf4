"""Golden input: 调度谓词: MoE skip empty experts.

The program is the spec example in tests/python/spec_programs/moe_skip_empty.py (one copy, shared with
the parser and end-to-end tests); expected.cpp is its orchestration C++."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

from spec_programs.moe_skip_empty import MoeSkipEmpty  # noqa: E402,F401
