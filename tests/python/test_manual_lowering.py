"""Manual-dependency lowering rules, asserted on the spec examples.

The golden files themselves are tests/golden/manual_<program>/ (program.py imports the spec
example from tests/python/spec_programs/, expected.cpp is its C++), run by the shared harness
tests/python/test_golden.py (exact match + g++ -Wall -Werror). This file checks that every
example has a golden case and asserts the specific lines each lowering rule must produce.
"""

import importlib
import pathlib
import re
import sys

import pytest

from pypto import codegen
from pypto._core import ir

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent.parent
GOLDEN = ROOT / "tests" / "golden"
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

# spec program module -> the example it is
PROGRAMS = {
    "mech1_manual_scope": "示例 1: manual_scope + explicit edge",
    "mech2_explicit_edges": "示例 2: explicit edge on top of auto tracking (runtime-allocated Out)",
    "mech3_at_blocks": "示例 3: pl.at blocks with `as tid`",
    "mech4_manual_dep_tensor": "示例 4: create_tensor(manual_dep=True)",
    "predicate_spmd_submit": "调度谓词: pl.spmd_submit with predicate=",
    "moe_skip_empty": "调度谓词: MoE skip empty experts",
    "spmd_scoped": "pl.spmd scoped forms (with, with ... as tid, for i in pl.spmd)",
    "at_scoped": "pl.at scoped forms with predicate / allow_early_resolve / no_dep_args",
    "case1_phase_fence": "case1: N_PHASES x N_BRANCHES array-carry fence (+ ExpandManualPhaseFence)",
    "task_dummy_barrier": "pl.system.task_dummy, pl.array.create, tids[k] = tid, prev = tids[k]",
    "no_dep_args": "pl.no_dep(arg)",
    "cluster_spmd": "pl.cluster around pl.spmd; CORE_GROUP pl.at inside a CHIP pl.at",
}


def program_of(name):
    mod = importlib.import_module(f"spec_programs.{name}")
    progs = [v for v in vars(mod).values() if isinstance(v, ir.Program)]
    assert len(progs) == 1
    return progs[0]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_example_has_a_golden_case(name):
    d = GOLDEN / f"manual_{name}"
    assert (d / "program.py").is_file() and (d / "expected.cpp").is_file(), d


def gen(name):
    prog = program_of(name)
    return codegen.generate_orchestration(prog, "main").code


# ---- the specific lowering rules, asserted on the spec examples ---------------------------

def test_mech1_fresh_tid_unguarded_and_one_set_dependencies():
    code = gen("mech1_manual_scope")
    assert "PTO2_SCOPE(PTO2ScopeMode::MANUAL) {" in code
    assert "PTO2TaskId stage1_tid = task_0_outs.task_id();" in code
    assert "PTO2TaskId params_t1_deps[1];" in code
    assert "params_t1_deps[params_t1_deps_count++] = stage1_tid;" in code
    assert "is_valid" not in code
    assert code.count("set_dependencies(") == 1


def test_mech2_runtime_allocated_output():
    code = gen("mech2_explicit_edges")
    assert "params_t0.add_output(params_t0_out0_ci);" in code
    # A runtime-allocated output keeps its binding (orchestration_codegen.txt "Excluded from remap").
    assert "const Tensor& tmp = task_0_outs.get_ref(0);" in code
    assert "params_t1.add_input(tmp);" in code
    assert code.count("get_ref(0)") == 1
    assert "PTO2_SCOPE(PTO2ScopeMode::MANUAL)" not in code   # auto tracking stays on


def test_mech4_manual_dep_tensor():
    code = gen("mech4_manual_dep_tensor")
    assert "TensorCreateInfo scratch_ci(scratch_ci_shapes, 1, DataType::FLOAT32, true);" in code


def test_predicates_lower_to_core_task_predicate():
    assert "params_t1.set_predicate(CoreTaskPredicate(ext_rc, {0, 0}, PredicateOp::GT, 0));" in gen("predicate_spmd_submit")
    moe = gen("moe_skip_empty")
    assert "set_predicate(CoreTaskPredicate(row_count, {e}, PredicateOp::GT, 0));" in moe
    assert "params_t1_deps[params_t1_deps_count++] = g_tid;" in moe


def test_spmd_scoped_forms():
    code = gen("spmd_scoped")
    assert code.count("launch_spec.set_block_num(4);") == 2
    assert "launch_spec.set_block_num(1);" in code
    assert "launch_spec.set_require_sync_start(true);" in code
    assert "set_allow_early_resolve(true);" in code
    assert "set_predicate(CoreTaskPredicate(ext_rc, {0, 0}, PredicateOp::GT, 0));" in code


def test_at_scoped_forms():
    code = gen("at_scoped")
    assert "add_no_dep(ext_x);" in code
    assert "set_allow_early_resolve(true);" in code
    assert "PredicateOp::GT" in code


def test_case1_array_carry_and_fence():
    code = gen("case1_phase_fence")
    assert "PTO2TaskId prev_tid_1[4];" in code                     # outer carry: array of N_BRANCHES
    assert "prev_tid_1[k] = prev_tid;" in code                       # broadcast None seed
    assert "prev_tid_2[k] = prev_tid_1[k];" in code                  # inner init: slot-by-slot copy
    assert "prev_tid_2[branch] = prev_tid_3;" in code                # slot yield
    assert "prev_tid_1[k] = prev_tid_2[k];" in code                  # outer yield copy
    assert "if (params_t0_deps_count > 0) prev_tid_fence = rt_submit_dummy_task(params_t0).task_id();" in code


def test_task_dummy_and_arrays():
    code = gen("task_dummy_barrier")
    assert "PTO2TaskId tids[4];" in code
    assert re.search(r'tids\[pto2_array_slot\(k, \d+, "[^"]+", \d+\)\] = tid;', code)   # checked at run time
    assert "PTO2TaskId first = tids[0];" in code
    assert "PTO2TaskId params_t1_deps[5];" in code                   # 4 slots + first
    assert "PTO2TaskId params_t2_deps[2];" in code                   # barrier + tids[1]
    assert "params_t2.set_task_timing_slot(3);" in code


def test_cluster_with_spmd_is_one_group_task():
    code = gen("cluster_spmd")
    assert "MixedKernels mixed_0 = {INVALID_KERNEL_ID, 0, INVALID_KERNEL_ID};" in code
    assert "params_t0.launch_spec.set_block_num(2);" in code
    assert "set_predicate(CoreTaskPredicate(ext_out, {0, 0}, PredicateOp::NE, 0));" in code
