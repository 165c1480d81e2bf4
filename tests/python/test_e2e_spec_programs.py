"""The complete programs of the spec documents (tests/python/spec_programs, with kernels filled
in) compiled, run on the CPU runtime and checked against NumPy references written here from
the programs' meaning (FP32: rtol = atol = 1e-5; exp/sqrt rtol 1e-5).

mixed_kernel: its Group's AIC and AIV kernels start together and the AIV one reads what the
AIC one writes; the generated kernels order that with the runtime's group flags (the AIC kernel
signals, the AIV kernel waits), so it is checked numerically across worker counts, repeatedly.
"""
import importlib.util
import os
import sys

import numpy as np
import pytest

import pypto

SPEC_DIR = os.path.join(os.path.dirname(__file__), "spec_programs")
RNG = np.random.default_rng(7)


def load(name):
    spec = importlib.util.spec_from_file_location("spec_e2e_" + name, os.path.join(SPEC_DIR, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    progs = [v for v in vars(mod).values() if hasattr(v, "functions") and hasattr(v, "dynamic_dims")]
    assert len(progs) == 1
    return mod, progs[0]


def f32(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def close(got, expect):
    np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-5)


def run_orch_basic(c, _m):
    a, b, d = f32(16, 16), f32(16, 16), np.zeros((16, 16), np.float32)
    c(a, b, d)
    close(d, a + 2 * b)


def run_for_stmt(c, _m):
    a, acc = f32(16, 16), f32(16, 16)
    expect = acc + 4 * a
    c(a, acc)
    close(acc, expect)


def run_if_stmt(c, _m):
    a, b = f32(16, 16), f32(16, 16)
    out = np.zeros_like(a)
    c(a, b, out, 1)
    close(out, a + b)
    c(a, b, out, 0)
    close(out, a - b)


def run_tuple_softmax(c, _m):
    sij = f32(16, 16)
    p, m, l = np.zeros((16, 16), np.float32), np.zeros((16, 1), np.float32), np.zeros((16, 1), np.float32)
    c(sij, 0.5, p, m, l)
    s = sij.astype(np.float64) * 0.5
    close(m, s.max(axis=1, keepdims=True))
    close(p, np.exp(s - s.max(axis=1, keepdims=True)))
    close(l, np.exp(s - s.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True))


def run_output_alias(c, _m):
    a, b = f32(16, 16), f32(16, 16)
    output, final = np.zeros_like(a), np.zeros_like(a)
    c(a, b, output, final)
    close(output, a + b)
    close(final, np.maximum(a + b, 0))


def run_dynamic_dims(c, mod):
    for rows in (16, 64):
        x = f32(rows, 16, lo=-1, hi=1)
        y = np.zeros_like(x)
        c(x, y)
        close(y, np.exp(np.exp(x.astype(np.float64))))


def run_tensor_ops(c, _m):
    x = f32(32, 16)
    gate = np.array([3, 0, 0, 0], np.int32)
    out = np.zeros((32, 16), np.float32)
    c(x, gate, out)
    expect = np.zeros_like(out)
    expect[16:] = x[:16].T * 3
    close(out, expect)


def run_mech1_manual_scope(c, _m):
    x = f32(64)
    scratch, out = np.zeros(64, np.float32), np.zeros(64, np.float32)
    c(x, scratch, out)
    close(scratch, np.exp(x))
    close(out, -np.exp(x.astype(np.float64)))


def run_mech2_explicit_edges(c, _m):
    x = f32(64)
    out = np.zeros(64, np.float32)
    c(x, out)
    close(out, np.sqrt(np.abs(x.astype(np.float64))))


def run_case1_phase_fence(c, mod):
    rows = mod.N_PHASES * mod.N_BRANCHES * mod.TILE_M
    data = f32(rows, 16)
    out = np.zeros_like(data)
    c(data, out)
    close(out, data)


def run_no_dep_args(c, _m):
    x = f32(32, 16)
    cache = np.zeros_like(x)
    c(x, cache)
    close(cache, x)


def run_at_scoped(c, _m):
    x = f32(128, 128)
    rc = np.ones((128, 128), np.int32)
    out = np.full((128, 128), 5.0, np.float32)
    c(x, rc, out)                       # predicate rc[0, 0] > 0 holds: out = x, then out = x + out
    close(out, 2 * x)
    rc[0, 0] = 0
    out[:] = 5.0
    stats = c(x, rc, out)               # predicate false: the middle task is skipped
    close(out, x + 5)
    assert stats.tasks_skipped == 1


def run_mech3_at_blocks(c, _m):
    x = f32(64)
    mid, out = np.zeros(64, np.float32), np.zeros(64, np.float32)
    c(x, mid, out)
    close(mid, np.exp(x))
    close(out, np.exp(x.astype(np.float64)) + x)


def run_mech4_manual_dep_tensor(c, _m):
    x = f32(64)
    out = np.zeros(64, np.float32)
    c(x, out)
    close(out, 2 * x + 1)


def run_spmd_scoped(c, _m):
    x = f32(16, 16, lo=-1, hi=1)
    rc = np.zeros((16, 16), np.int32)
    out = np.zeros((16, 16), np.float32)
    c(x, rc, out, aiv_workers=4)        # sync_start on 4 blocks needs 4 AIV workers at once
    np.testing.assert_array_equal(rc, np.ones((16, 16), np.int32))
    close(out, np.exp(x))


def run_cluster_spmd(c, _m):
    x = f32(16, 16)
    # The SPMD work task writes x + block_idx there (1.5 or 2.5, whichever block writes last);
    # the predicate reads it as an integer (1 or 2, never 0), so the last task sets out = x.
    x[0, 0] = 1.5
    out = np.zeros((16, 16), np.float32)
    c(x, out)
    close(out, x)


def run_moe_skip_empty(c, _m):
    x = f32(64, 16, lo=-1, hi=1)
    out = np.zeros_like(x)
    c(x, out)
    close(out, np.exp(x))


def run_predicate_spmd_submit(c, _m):
    x = f32(16, 16)
    rc = np.zeros((16, 16), np.int32)
    out = np.full((16, 16), 7.0, np.float32)
    c(x, rc, out)                       # gate makes rc[0, 0] = 1 > 0: expert runs
    close(out, np.maximum(x, 0))
    rc[:] = -5
    out[:] = 7.0
    c(x, rc, out)                       # rc[0, 0] = -4: expert skipped, out untouched
    close(out, np.full((16, 16), 7.0))
    np.testing.assert_array_equal(rc, np.full((16, 16), -4, np.int32))


def run_task_dummy_barrier(c, mod):
    x = f32(16 * mod.N, 16, lo=-1, hi=1)
    parts = np.zeros_like(x)
    out = np.zeros((16, 16), np.float32)
    c(x, parts, out)
    close(parts, np.exp(x))
    close(out, np.exp(x[:16]))


CASES = {
    "orch_basic": run_orch_basic, "for_stmt": run_for_stmt, "if_stmt": run_if_stmt,
    "tuple_softmax": run_tuple_softmax, "output_alias": run_output_alias, "dynamic_dims": run_dynamic_dims,
    "tensor_ops": run_tensor_ops, "mech1_manual_scope": run_mech1_manual_scope,
    "mech2_explicit_edges": run_mech2_explicit_edges, "case1_phase_fence": run_case1_phase_fence,
    "no_dep_args": run_no_dep_args, "at_scoped": run_at_scoped, "mech3_at_blocks": run_mech3_at_blocks,
    "mech4_manual_dep_tensor": run_mech4_manual_dep_tensor, "spmd_scoped": run_spmd_scoped,
    "cluster_spmd": run_cluster_spmd, "moe_skip_empty": run_moe_skip_empty,
    "predicate_spmd_submit": run_predicate_spmd_submit, "task_dummy_barrier": run_task_dummy_barrier,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_spec_program_runs_and_matches_numpy(name):
    mod, program = load(name)
    compiled = pypto.compile(program)
    CASES[name](compiled, mod)


# Derived dependencies (analyze_auto_scopes_for_deps): the same programs and checks, race-checked.
# The spec's own programs use user pl.submit (runtime-allocated outputs, allow_early_resolve),
# pl.at / pl.spmd with deps=, predicates and manual scopes: what the analysis must get right.
DERIVED = ["at_scoped", "cluster_spmd", "dynamic_dims", "for_stmt", "if_stmt", "mech2_explicit_edges",
           "mech3_at_blocks", "mech4_manual_dep_tensor", "moe_skip_empty", "no_dep_args", "orch_basic",
           "output_alias", "spmd_scoped", "tensor_ops", "tuple_softmax"]


@pytest.mark.parametrize("name", DERIVED)
def test_spec_program_with_derived_dependencies_matches_numpy_race_checked(name):
    mod, program = load(name)
    prepared = pypto.codegen.run_pipeline(program, analyze_auto_scopes_for_deps=True)
    verdicts = [f.attrs["auto_deps"] for f in prepared.functions if "auto_deps" in f.attrs]
    assert verdicts and not any(v.startswith("fallback") for v in verdicts), verdicts
    compiled = pypto.compile(program, analyze_auto_scopes_for_deps=True)

    def race_checked(*args, **kwargs):
        stats = compiled(*args, race_check="error", **kwargs)
        assert stats.races == 0
        return stats

    CASES[name](race_checked, mod)


def test_mixed_kernel_group_kernels_synchronise():
    # The Group's data flow (mm writes c, act reads it) becomes flag 0: signal after mm, wait before act.
    from pypto.compiler import generate
    _mod, program = load("mixed_kernel")
    _entry, _prepared, _result, sources, _entries = generate(program)
    assert "pto2_group_signal(ctx, 0);" in sources["mm"] and "pto2_group_wait" not in sources["mm"]
    assert "if (!pto2_group_wait(ctx, 0)) return;" in sources["act"] and "pto2_group_signal" not in sources["act"]
    # The signal comes after mm's store of c; the wait before act's load of c.
    assert sources["mm"].rindex("pto2_group_signal") > sources["mm"].rindex("store")
    assert sources["act"].index("pto2_group_wait") < sources["act"].index("load")


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_mixed_kernel_group_matches_numpy(workers):
    # out = relu(a @ b): the AIV kernel reads the c the AIC kernel of the same Group wrote.
    _mod, program = load("mixed_kernel")
    compiled = pypto.compile(program)
    for _ in range(8):
        a = RNG.standard_normal((16, 16)).astype(np.float16)
        b = RNG.standard_normal((16, 16)).astype(np.float16)
        out = np.full((16, 16), -1.0, np.float32)
        stats = compiled(a, b, out, aic_workers=workers, aiv_workers=workers)
        assert stats.tasks == 1 and stats.tasks_executed == 1
        expect = np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0)
        np.testing.assert_allclose(out, expect, rtol=1e-4, atol=1e-4)
