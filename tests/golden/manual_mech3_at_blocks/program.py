"""Golden input: 示例 3: pl.at blocks with `as tid`.

The program is the spec example in tests/python/spec_programs/mech3_at_blocks.py (one copy, shared with
the parser and end-to-end tests); expected.cpp is its orchestration C++."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

from spec_programs.mech3_at_blocks import Mech3  # noqa: E402,F401
