"""codegen_bench's linearity checks (issue 17): one line per stage with its us per submission at
the largest size over the next (both past the caches) against 1.3x, and one per stage with its
instructions per submission at the largest size over the fewest at any size against 1.1x;
`make bench` copies these lines into its summary."""
import importlib.util
import os


def _bench():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "codegen_bench.py")
    spec = importlib.util.spec_from_file_location("codegen_bench", path)
    cb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cb)
    return cb


def test_growth_check_one_line_per_stage_with_ratio_and_verdict():
    cb = _bench()
    rows = [{"tasks": 10000, "parse": 0.01, "passes": 0.01, "codegen": 0.01},   # in the caches: not compared
            {"tasks": 100000, "parse": 1.00, "passes": 0.50, "codegen": 0.50},
            # us per submission 10 -> 11 (1.1x), 5 -> 10 (2.0x), 5 -> 7 (1.4x), total 20 -> 28 (1.4x)
            {"tasks": 300000, "parse": 3.30, "passes": 3.00, "codegen": 2.10}]
    lines = cb.growth_check(rows)
    assert [l.split()[2] for l in lines] == ["parse", "passes", "codegen", "total"]
    assert all(l.startswith("  growth check") for l in lines)
    by = {l.split()[2]: l for l in lines}
    assert "= 1.10x (goal <= 1.3x past the caches: met)" in by["parse"]
    assert "= 2.00x (goal <= 1.3x past the caches: NOT met)" in by["passes"]
    assert "= 1.40x (goal <= 1.3x past the caches: NOT met)" in by["codegen"]
    assert "= 1.40x (goal <= 1.3x past the caches: NOT met)" in by["total"]
    assert "300k/100k us per submission  11.00 /  10.00" in by["parse"]


def test_growth_check_needs_two_sizes_past_the_caches():
    cb = _bench()
    assert cb.growth_check([{"tasks": 10000, "parse": 1, "passes": 1, "codegen": 1},
                            {"tasks": 100000, "parse": 1, "passes": 1, "codegen": 1}]) == []


def test_instruction_check_compares_the_largest_size_with_the_fewest_per_submission():
    cb = _bench()
    rows = [{"tasks": 1000, "parse": 50_000_000, "passes": 25_000_000, "codegen": 30_000_000},   # fixed costs
            {"tasks": 10000, "parse": 350_000_000, "passes": 200_000_000, "codegen": 300_000_000},
            # per submission at 100k: parse 35,000 (1.00x of 10k), passes 24,000 (1.20x), codegen 29,000
            {"tasks": 100000, "parse": 3_500_000_000, "passes": 2_400_000_000, "codegen": 2_900_000_000}]
    lines = cb.instruction_report(rows)
    checks = {l.split()[3]: l for l in lines if l.startswith("  instruction growth check")}
    assert sorted(checks) == ["codegen", "parse", "passes", "total"]
    assert "35000 / fewest (at 10k)   35000 = 1.00x (goal <= 1.1x: met)" in checks["parse"]
    assert "24000 / fewest (at 10k)   20000 = 1.20x (goal <= 1.1x: NOT met)" in checks["passes"]
    assert "29000 / fewest (at 100k)   29000 = 1.00x (goal <= 1.1x: met)" in checks["codegen"]
    # the table: instructions and instructions per submission of each stage and the total
    assert any(l.split()[:2] == ["1000", "50000000"] and "(105000)" in l for l in lines)


def test_sizes_that_are_not_positive_counts_are_refused(capsys):
    import pytest
    cb = _bench()
    for flag, value in (("--instructions", "0"), ("--instructions", "-3"), ("--instructions", "1000,,10000"),
                        ("--instructions", "1e5"), ("--scaling", "abc"), ("--scaling", "1")):
        with pytest.raises(SystemExit) as e:
            cb.main([flag, value])
        assert e.value.code == 2
        assert "takes sizes of at least 2 submissions" in capsys.readouterr().err
