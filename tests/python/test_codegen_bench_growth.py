"""codegen_bench's growth check (issue 17): one line per stage with its us per submission at 100k
over that at 10k, against the 1.3x goal; `make bench` copies these lines into its summary."""
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
    rows = [{"tasks": 10000, "parse": 0.10, "passes": 0.05, "codegen": 0.05},
            # us per submission 10 -> 11 (1.1x), 5 -> 10 (2.0x), 5 -> 7 (1.4x), total 20 -> 28 (1.4x)
            {"tasks": 100000, "parse": 1.10, "passes": 1.00, "codegen": 0.70}]
    lines = cb.growth_check(rows)
    assert [l.split()[2] for l in lines] == ["parse", "passes", "codegen", "total"]
    assert all(l.startswith("  growth check") for l in lines)
    by = {l.split()[2]: l for l in lines}
    assert "= 1.10x (goal <= 1.3x: met)" in by["parse"]
    assert "= 2.00x (goal <= 1.3x: NOT met)" in by["passes"]
    assert "= 1.40x (goal <= 1.3x: NOT met)" in by["codegen"]
    assert "= 1.40x (goal <= 1.3x: NOT met)" in by["total"]
    assert "100k/10k us per submission  11.00 /  10.00" in by["parse"]


def test_growth_check_needs_both_sizes():
    cb = _bench()
    assert cb.growth_check([{"tasks": 1000, "parse": 1, "passes": 1, "codegen": 1},
                            {"tasks": 10000, "parse": 1, "passes": 1, "codegen": 1}]) == []
