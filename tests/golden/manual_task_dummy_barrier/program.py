"""Golden input: pl.system.task_dummy, pl.array.create, tids[k] = tid, prev = tids[k].

The program is the spec example in tests/python/spec_programs/task_dummy_barrier.py (one copy, shared with
the parser and end-to-end tests); expected.cpp is its orchestration C++."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

from spec_programs.task_dummy_barrier import DummyBarrier  # noqa: E402,F401
