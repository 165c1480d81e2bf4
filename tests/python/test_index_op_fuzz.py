"""The index ops in kernels (gather, scatter, scatter_update, mscatter, gather_row) agree bit for
bit with a NumPy model, and a bad index fails the run at its op's line without writing outside a
tensor (tests/python/index_op_fuzz.py): a seeded smoke here, more seeds under `make fuzz`
(scripts/fuzz_exprs.py --kind index)."""
import random

import pytest

import index_op_fuzz as fz


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5, 9, 17])   # 1, 5, 9, 17: a third run with a bad index
def test_index_op_programs_agree_with_the_model(seed):
    assert fz.check(seed) == []


def test_the_generator_covers_every_op_dtype_and_failure():
    texts, failing = [], set()
    for seed in range(120):
        case = fz.make_case(seed)
        texts.append(fz.program_text(case))
        if seed % fz.BAD_SEED == 1:
            inp = fz.draw_inputs(case, 2)
            if fz.inject_bad(case, inp, random.Random(seed * 5 + 2)):
                try:
                    fz.run_model(case, inp)
                except fz.BadIndex as e:
                    failing.add(case.steps[e.stmt - 1][0])
    text = "\n".join(texts)
    for call in ("pl.tile.gather(ta,", "pl.tile.scatter(", "pl.tile.scatter_update(", "pl.mscatter(",
                 "pl.tile.gather_row(", "transpose=True", "pl.tile.rems(", "pl.cast(", "pl.tile.reshape(",
                 ", [q0, ", "pl.tile.gather(pl."):
        assert call in text, call
    for dtype in fz.DTYPES:
        assert "pl.%s]" % dtype in text, dtype
    assert failing == {"gather", "scatter", "scatter_update", "mscatter", "gather_row"}, failing


def test_the_check_sees_a_wrong_model(monkeypatch):
    """With the model's gather_row writing a copy instead of its dst in place, seed 3 (whose stored
    tile was a gather_row's dst) differs: the comparison is live."""
    real = fz.run_model

    def copy_not_in_place(case, inp):
        steps = case.steps
        case.steps = [("load", 0) if s[0] == "gather_row" else s for s in steps]
        try:
            return real(case, inp)
        finally:
            case.steps = steps
    monkeypatch.setattr(fz, "run_model", copy_not_in_place)
    found = [s for s in range(12) if fz.check(s)]
    assert found, "no seed of 0..11 noticed gather_row's effect"
