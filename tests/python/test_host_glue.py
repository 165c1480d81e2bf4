"""The glue file of a built HOST program (host_runner.cpp) comes from the C++ code generator
(codegen::GenerateHostEntryGlue, `pypto._core.host.generate_host_entry_glue`), not from
string formatting in Python; it compiles with -Wall -Werror, and a HOST run returns a
RunStats like an L2 run."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pypto._core.ir import CoreType

from codegen_test_util import GOLDEN_DIR, compile_cpp, load_single_program


def test_glue_registers_every_target_and_kernel_once():
    from pypto._core import host as _host
    code = _host.generate_host_entry_glue([("chip_a", 0, [("k_add", 0, CoreType.AIV), ("k_mm", 1, CoreType.AIC)]),
                                           ("chip_b", 1, [("k_add", 0, CoreType.AIV)])])
    assert 'l3.register_target(0, "chip_a", &l2_entry_chip_a);' in code
    assert 'l3.register_target(1, "chip_b", &l2_entry_chip_b);' in code
    assert 'l3.register_target_kernel(0, 1, "k_mm", pto2::CoreType::AIC, &pypto_kernel_k_mm);' in code
    assert 'l3.register_target_kernel(1, 0, "k_add", pto2::CoreType::AIV, &pypto_kernel_k_add);' in code
    assert code.count('extern "C" void pypto_kernel_k_add(PTO2KernelContext*);') == 1
    for fn in ("pypto_host_register", "pypto_host_run", "pypto_host_last_tasks", "pypto_host_release"):
        assert 'extern "C"' in code and fn + "(" in code
    ok, log = compile_cpp(code, "glue")
    assert ok, log


def test_glue_rejects_a_bad_core_type():
    from pypto._core import host as _host
    with pytest.raises(ValueError, match="kernel 'k' of target 'chip_a' has core type 'MIXED' \\(expected AIC or AIV\\)"):
        _host.generate_host_entry_glue([("chip_a", 0, [("k", 0, CoreType.MIXED)])])
    with pytest.raises(TypeError):   # the core type is the enum, not its spelling
        _host.generate_host_entry_glue([("chip_a", 0, [("k", 0, "GPU")])])


def test_compile_host_uses_the_generated_glue_and_returns_run_stats():
    from pypto import host
    from pypto._core import host as _host
    from pypto.runtime.loader import RunStats
    prog = host.compile_host(load_single_program(os.path.join(GOLDEN_DIR, "host_basic", "host_program.py")))
    assert prog.files["host_runner.cpp"] == _host.generate_host_entry_glue([("chip_add", 0, [("kernel_add", 0, CoreType.AIV)])])
    x, y = np.ones(64, np.float32), np.full(64, 2.0, np.float32)
    z, w = np.zeros(64, np.float32), np.zeros(64, np.float32)
    stats = prog(x, y, z, w)
    assert isinstance(stats, RunStats) and isinstance(stats, host.HostRunStats)
    assert stats.tasks == 5 and stats.tasks_executed == 5 and stats.wall_seconds > 0
    assert stats["tasks_executed"] == 5  # the former dict spelling still works
    assert [r.index for r in stats.records] == [1, 2, 3, 4, 5]
    assert stats.records[1].deps == (1,)
    np.testing.assert_allclose(w, x + 5 * y)
