"""A seeded smoke of the chunking fuzzer (tests/python/chunk_fuzz.py; `make fuzz` runs
scripts/fuzz_chunked_operands.py over many more): random straight-line programs of 70-160 calls
with values read at every distance, built with -Werror and compared with their NumPy model."""

import pytest

import chunk_fuzz


@pytest.mark.parametrize("seed", range(4))
def test_random_program_is_chunked_and_computes_its_model(seed, monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    assert "chunks" in chunk_fuzz.check(seed)
