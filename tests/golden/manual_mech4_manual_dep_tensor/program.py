"""Golden input: 示例 4: create_tensor(manual_dep=True).

The program is the spec example in tests/python/spec_programs/mech4_manual_dep_tensor.py (one copy, shared with
the parser and end-to-end tests); expected.cpp is its orchestration C++."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

from spec_programs.mech4_manual_dep_tensor import Mech4  # noqa: E402,F401
