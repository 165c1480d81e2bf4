"""Fixtures shared by the Python tests."""

import os

import pytest

# Every pass run in the test suite is followed by the well-formedness verifier and a re-check
# of the IR properties the pass claims to keep (pypto/transforms/pass.h).
os.environ.setdefault("PYPTO_VERIFY_PASSES", "1")
# Every program the suite builds is built as a user's -Werror build would be: pypto's own flags,
# its precompiled headers, and -Werror (a warning in generated C++ or in the headers it includes
# is a failure). The flags of a file compiled alone (-c, no precompiled header) did not show two
# warnings GCC 12 only gives through the precompiled header, which drops `#pragma GCC
# diagnostic`. A run with its own PYPTO_CXXFLAGS (the ASan job) keeps them.
os.environ.setdefault("PYPTO_CXXFLAGS", "-Werror")

from pypto.runtime import build as build_mod


@pytest.fixture
def compiler_calls(tmp_path, monkeypatch):
    """A fresh build cache directory; returns the list of compiler commands run from now on
    (so a test can assert that a cached compile runs none)."""
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    calls = []
    real = build_mod.run_compiler

    def counting(cmd, cwd):
        calls.append(cmd)
        return real(cmd, cwd)

    monkeypatch.setattr(build_mod, "run_compiler", counting)
    return calls
