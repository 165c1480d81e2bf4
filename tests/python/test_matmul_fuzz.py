"""The matmul family in kernels on random shapes and operand offsets agrees exactly with NumPy
(tests/python/matmul_fuzz.py): a seeded smoke here, more seeds under `make fuzz`
(scripts/fuzz_exprs.py --kind matmul)."""
import pytest

import matmul_fuzz as mf


@pytest.mark.parametrize("seed", range(3))
def test_matmul_programs_agree_with_numpy(seed):
    assert mf.check(seed) == []


def test_the_generator_covers_every_form_and_dtype():
    cases = [c for seed in range(40) for c in mf.make_program(seed)[1]]
    assert {c["kind"] for c in cases} == set(mf.KINDS)
    assert {c["dtype"] for c in cases} == set(mf.DTYPES)
    assert {c["rdt"] for c in cases} == {"FP32", "FP16", "INT8", "INT32"}
    assert any(c["a_shape"][1] > c["kt"] and c["m"] > 8 for c in cases)   # strided, several row blocks

