"""Valid regions in kernels agree with a NumPy model of which elements are specified
(tests/python/valid_region_fuzz.py): a seeded smoke here, more seeds under `make fuzz`
(scripts/fuzz_exprs.py --kind valid)."""
import pytest

import valid_region_fuzz as vf


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5, 7])   # 3: run-time rows, 7: rows and columns
def test_valid_region_programs_agree_with_the_model(seed):
    assert vf.check(seed) == []


def test_the_generator_covers_every_statement_kind_and_run_time_extents():
    kinds, texts = set(), []
    for seed in range(120):
        text = vf.make_case(seed)[0]
        texts.append(text)
        kinds |= {line.split("=", 1)[1].strip().split("(")[0] for line in text.splitlines()
                  if line.strip().startswith("t") and " = pl." in line}
    for call in ("pl.load", "pl.fillpad", "pl.tile.fillpad_inplace", "pl.set_validshape", "pl.tile.slice",
                 "pl.tile.assemble", "pl.sel", "pl.part_add", "pl.row_max", "pl.col_min", "pl.col_sum", "pl.row_prod",
                 "pl.tile.max", "pl.row_expand_add", "pl.col_expand", "pl.cast", "pl.tile.gather", "pl.tile.scatter",
                 "pl.tile.scatter_update", "pl.tile.gather_mask", "pl.tile.scatter_mask"):
        assert call in kinds, call
    assert any("[n0, m1])" in t or "[n1, m0])" in t for t in texts)                   # run-time extents
    assert any("atomic=pl.AtomicType.Add" in t for t in texts)
    assert any("output_dtype=pl.INT16" in t for t in texts)                           # FP16 bits as INT16
    assert any("[nr, " in t for t in texts)                                           # run-time tile rows
    assert any("[nr, nc]" in t for t in texts)                                        # and columns
    assert all(any("mask_pattern=%d" % p in t for t in texts) for p in vf.MASK_PATTERNS)


def test_the_check_sees_a_wrong_pad_value(monkeypatch):
    """With the model's pad values wrong (every pad 0), seed 9's stored FP32 +inf pad differs:
    the comparison is live."""
    monkeypatch.setattr(vf, "_pad_value", lambda dtype, pad: 0)
    findings = vf.check(9)
    assert findings and "got np.float32(inf)" in findings[0], findings
