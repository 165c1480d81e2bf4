"""Golden input: pl.cluster around pl.spmd; CORE_GROUP pl.at inside a CHIP pl.at.

The program is the spec example in tests/python/spec_programs/cluster_spmd.py (one copy, shared with
the parser and end-to-end tests); expected.cpp is its orchestration C++."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

from spec_programs.cluster_spmd import ClusterSpmd  # noqa: E402,F401
