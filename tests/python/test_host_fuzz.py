"""Distributed HOST programs agree with NumPy (tests/python/host_fuzz.py): a seeded smoke
in-process and under mpirun, with and without an injected chip failure; more seeds under
`make fuzz` (scripts/fuzz_host.py, --faults)."""
import os
import re
import sys

import pytest

import host_fuzz as hf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import fuzz_host  # noqa: E402


@pytest.mark.parametrize("seed", range(4))   # 1, 2, 3 and 4 chips
def test_host_programs_agree_with_numpy_in_process(seed):
    assert hf.check(seed) == []


@pytest.mark.skipif(not fuzz_host.mpi_available(), reason="Open MPI or libpto2_mpi not available")
def test_host_programs_agree_with_numpy_over_mpi():
    findings, out = fuzz_host.run_mpi(4, 0, 4, timeout=600)
    assert findings == [], out
    assert "DONE 4 0" in out, out


@pytest.mark.parametrize("seed", range(4))
def test_host_programs_come_out_of_an_injected_chip_failure_consistent_in_process(seed):
    assert hf.check(seed, fault=True) == []


@pytest.mark.skipif(not fuzz_host.mpi_available(), reason="Open MPI or libpto2_mpi not available")
def test_host_programs_come_out_of_an_injected_chip_failure_consistent_over_mpi():
    findings, out = fuzz_host.run_mpi(4, 0, 4, timeout=600, fault=True)
    assert findings == [], out
    assert "DONE 4 0" in out, out


def test_the_fault_check_sees_a_failure_it_did_not_expect(monkeypatch):
    # Expecting another message, every failing run is a finding: the check reads the error.
    monkeypatch.setattr(hf, "FAIL_MESSAGE", "some other message")
    findings = hf.check(1, fault=True)
    assert len(findings) == 2 and all("does not name the task" in f for f in findings), findings
    # The failing task sits under `if fail:` at a statement boundary, sometimes after a task.
    texts = [hf.make_case(seed, fault=True)[0] for seed in range(20)]
    assert all(t.count("if fail:") == 1 and "def chip_fail(" in t for t in texts)
    assert any(re.search(r"pl.submit\(self.chip_fail, \d, x\d, deps=\[", t) for t in texts)
    assert hf.make_case(3)[0] == hf.make_case(3, fault=False)[0] and "chip_fail" not in hf.make_case(3)[0]


def test_the_generator_covers_every_kernel_barriers_loops_aliasing_and_redundant_deps():
    texts = [hf.make_case(seed)[0] for seed in range(40)]
    calls = [ln for t in texts for ln in t.splitlines() if "pl.submit(" in ln]
    for kernel in hf.KERNELS:
        for target in range(2):
            assert any("self.chip_%s_%d," % (kernel, target) in c for c in calls), (kernel, target)
    assert any("pl.system.task_dummy(deps=[" in t for t in texts)
    assert any(re.match(r"\s+x(\d), t\d+ = pl.submit\(self.chip_\w+, x\1,", c) for c in calls)   # a is c
    assert sum("deps=" not in c for c in calls) > 10 and sum("deps=" in c for c in calls) > 100
    assert sum("for i in pl.range(" in t for t in texts) > 15 and any("for i in pl.parallel(" in t for t in texts)
    assert any(re.search(r"deps=\[[^\]]*\btl\d+\b(?!\[)", t) for t in texts)                    # a whole TaskId array
    assert any(re.search(r"deps=\[[^\]]*\btl\d+\[\d+\]", t) for t in texts)                     # one element
    assert any(re.search(r"^\s+x\d = self\.chip_", t, re.M) for t in texts)                     # fire-and-forget
    assert any("if flag:" in t for t in texts) and any(", s0, x" in c for c in calls)           # HOST scalars
    assert sum("pl.Tensor[[8, 8], pl.FP16]" in t for t in texts) == 13                          # FP16 arrays


def test_the_check_sees_a_wrong_model(monkeypatch):
    """With the model's 'same' kernel adding 1 to the first row of its block, every case that runs
    one differs: the comparison is live."""
    apply = hf._Task.apply

    def wrong(self, arrs, params):
        apply(self, arrs, params)
        if self.kernel == "same":
            arrs[self.c][self.k * hf.B] += 1
    monkeypatch.setattr(hf._Task, "apply", wrong)
    findings = hf.check(0)
    assert findings and "differs" in findings[0], findings
