"""The dependency surface (manual_dependencies spec): pl.submit / pl.spmd_submit, deps=,
None seeds, TaskId arrays, task_dummy, pl.no_dep, predicates and the best-effort producer
check (including its documented blind spots), and the pl.at / pl.spmd / pl.cluster /
pl.manual_scope scopes."""

import textwrap
import warnings

import pytest

import pypto.language as pl
from pypto._core import ir
from pypto.errors import PyptoError
from pypto.frontend.diagnostics import NoDepInManualScopeWarning, PyptoWarning

T = "pl.Tensor[[16, 16], pl.FP32]"
RC = "pl.Tensor[[16, 16], pl.INT32]"
KERNELS = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {T}, c: pl.Out[{T}]) -> {T}:
        c = pl.store(pl.exp(pl.load(a, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def k2(self, a: {T}, p: pl.Out[{T}], m: pl.Out[{T}]) -> tuple[{T}, {T}]:
        p = pl.store(pl.exp(pl.load(a, [0, 0], [16, 16])), [0, 0], p)
        m = pl.store(pl.exp(pl.load(a, [0, 0], [16, 16])), [0, 0], m)
        return p, m

    @pl.function(type=pl.FunctionType.InCore)
    def gate(self, rc: pl.InOut[{RC}]) -> {RC}:
        rc = pl.store(pl.load(rc, [0, 0], [16, 16]), [0, 0], rc)
        return rc

    @pl.function(type=pl.FunctionType.InCore)
    def copy_rc(self, rc: {RC}, out: pl.Out[{RC}]) -> {RC}:
        out = pl.store(pl.load(rc, [0, 0], [16, 16]), [0, 0], out)
        return out
"""


def main_stmts(body):
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)
    src = (f"import pypto.language as pl\n\n@pl.program\nclass P:{KERNELS}\n"
           f"    @pl.function(type=pl.FunctionType.Orchestration)\n"
           f"    def main(self, a: {T}, d: pl.Out[{T}], rc: pl.InOut[{RC}], rc2: pl.Out[{RC}],\n"
           f"             n: pl.Scalar[pl.INDEX]) -> {T}:\n{body}\n        return d\n")
    p = pl.parse_program(src, "t.py")
    return ir.flatten_stmts(p.get("main").body)[:-1]


def submits(stmts):
    out = []
    for s in stmts:
        if isinstance(s, ir.AssignStmt) and isinstance(s.value, ir.Submit):
            out.append(s.value)
        for attr in ("body", "then_body"):
            if hasattr(s, attr) and getattr(s, attr) is not None:
                out += submits(ir.flatten_stmts(getattr(s, attr)))
    return out


def test_submit_shape_and_unpacking():
    tmp, out, tid = main_stmts("d, t = pl.submit(self.k, a, d, timing_slot=15, allow_early_resolve=True)")
    sub = tmp.value
    assert sub.callee == "k" and len(sub.args) == 2 and sub.core_num is None
    assert sub.timing_slot == 15 and sub.allow_early_resolve and not sub.sync_start
    assert list(sub.deps) == [] and sub.predicate is None
    assert [e for e in sub.type.elements][-1] == ir.ScalarType.make(ir.DataType.TASK_ID)
    assert out.value.index == 0 and tid.value.index == 1
    assert tid.var.type == ir.ScalarType.make(ir.DataType.TASK_ID)


def test_submit_may_omit_trailing_out_args():
    tmp, p, m, t = main_stmts("p, m, t = pl.submit(self.k2, a)")
    sub = tmp.value
    assert len(sub.args) == 1
    assert len(sub.type.elements) == 3          # callee returns (2) + TaskId, although 2 args omitted


def test_spmd_submit_fields_and_single_target_form():
    stmts = main_stmts("""
        d, t = pl.spmd_submit(self.k, a, d, core_num=n * 2, sync_start=True, deps=[None])
        res = pl.spmd_submit(self.k, a, d, core_num=4)
    """)
    s1, s2 = submits(stmts)
    assert isinstance(s1.core_num, ir.BinaryExpr) and s1.sync_start and list(s1.deps) == []
    assert s2.core_num.value == 4
    assert isinstance(stmts[-1].var.type, ir.TupleType)


def test_deps_entries():
    stmts = main_stmts("""
        d, t1 = pl.submit(self.k, a, d)
        tids = pl.array.create(4, pl.TASK_ID)
        tids[1] = t1
        prev = tids[1]
        b = pl.system.task_dummy(deps=[t1, tids])
        d, t2 = pl.submit(self.k, a, d, deps=[t1, None, tids, prev, b, tids[n]])
    """)
    sub = submits(stmts)[-1]
    names = [d.name for d in sub.deps]
    assert names == ["t1", "tids", "prev", "b", "tids_slot"]
    assert all(isinstance(d, ir.Var) for d in sub.deps)
    create = [s for s in stmts if isinstance(s, ir.AssignStmt) and s.var.name == "tids"]
    assert create[0].value.callee == "array.create" and create[0].value.attrs == {"size": 4, "dtype": "TASK_ID"}
    assert create[1].value.callee == "array.update_element"          # tids[1] = t1 rebinds tids
    assert sub.deps[1].same_as(create[1].var)
    dummy = [s for s in stmts if isinstance(s, ir.AssignStmt) and s.var.name == "b"][0].value
    assert dummy.callee == "system.task_dummy" and dummy.attrs["dummy_task"] is True
    assert [e.name for e in dummy.manual_dep_edges] == ["t1", "tids"]
    slot = [s for s in stmts if isinstance(s, ir.AssignStmt) and s.var.name == "tids_slot"][0]
    assert slot.value.callee == "array.get_element"


def test_no_dep_marks_only_that_argument():
    stmts = main_stmts("""
        d = self.k(pl.no_dep(a), d)
        d, t = pl.submit(self.k, a, pl.no_dep(d))
    """)
    call = stmts[0].value
    assert list(call.arg_directions) == [ir.ArgDirection.NoDep, ir.ArgDirection.Unset]
    assert list(submits(stmts)[0].arg_directions) == [ir.ArgDirection.Unset, ir.ArgDirection.NoDep]


def test_no_dep_inside_manual_scope_warns():
    """Decision (docs/dsl.md): pl.no_dep inside pl.manual_scope() is a warning, not an error;
    the NoDep direction is kept and has no effect."""
    with pytest.warns(NoDepInManualScopeWarning, match=r"no effect inside pl.manual_scope\(\).*t.py:\d+:\d+"):
        (scope,) = main_stmts("""
            with pl.manual_scope():
                d = self.k(pl.no_dep(a), d)
        """)
    assert issubclass(NoDepInManualScopeWarning, PyptoWarning)
    assert isinstance(scope, ir.RuntimeScopeStmt) and scope.mode == ir.RuntimeScopeMode.Manual
    call = ir.flatten_stmts(scope.body)[0].value
    assert list(call.arg_directions) == [ir.ArgDirection.NoDep, ir.ArgDirection.Unset]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        main_stmts("d = self.k(pl.no_dep(a), d)")       # outside a manual scope: no warning


def test_predicate_ir_normal_and_mirrored():
    stmts = main_stmts("""
        rc, g = pl.submit(self.gate, rc)
        d, t1 = pl.submit(self.k, a, d, deps=[g], predicate=(rc[0, n] >= -3))
        d, t2 = pl.submit(self.k, a, d, deps=[g], predicate=(0 != rc[1, 1]))
    """)
    _, s1, s2 = submits(stmts)
    p = s1.predicate
    assert p.op == ir.BinaryOp.Ge and isinstance(p.a, ir.Cast)
    assert p.a.type == ir.ScalarType.make(ir.DataType.INT64)
    read = p.a.value
    assert read.callee == "tensor.read" and read.args[0].name == "rc" and isinstance(read.args[1], ir.MakeTuple)
    assert isinstance(p.b, ir.ConstInt) and p.b.value == -3
    q = s2.predicate
    assert q.op == ir.BinaryOp.Ne and isinstance(q.a, ir.ConstInt) and isinstance(q.b, ir.Cast)


def test_predicate_printed_spellings_are_accepted():
    stmts = main_stmts("""
        d, t1 = pl.submit(self.k, a, d, predicate=(pl.cast(pl.tensor.read(rc, [0, 0]), pl.INT64) > 0))
        d, t2 = pl.submit(self.k, a, d, predicate=(pl.tensor.read(rc, [0, 0]) > 0))
    """)
    s1, s2 = submits(stmts)
    assert ir.structural_equal(s1.predicate, s2.predicate)
    assert s1.predicate.a.value.callee == "tensor.read"


@pytest.mark.parametrize("body", [
    # alias: rc_alias = rc is a new variable with no recorded producer
    "rc, g = pl.submit(self.gate, rc)\nrc_alias = rc\nd, t = pl.submit(self.k, a, d, predicate=(rc_alias[0, 0] > 0))",
    # Out-arg aliasing: only names bound by the unpacking are tracked, not the arguments
    "x, g = pl.submit(self.copy_rc, rc, rc2)\nd, t = pl.submit(self.k, a, d, predicate=(rc2[0, 0] > 0))",
    # intermediate call: rc3 = self.helper(rc) washes the link out
    "rc, g = pl.submit(self.gate, rc)\nrc3 = self.gate(rc)\nd, t = pl.submit(self.k, a, d, predicate=(rc3[0, 0] > 0))",
    # single-target pl.spmd_submit records nothing
    "res = pl.spmd_submit(self.gate, rc, core_num=1)\nrc4 = res[0]\n"
    "d, t = pl.submit(self.k, a, d, predicate=(rc4[0, 0] > 0))",
    # an Array[N, TASK_ID] entry in deps= skips the check (including deps=[tids[i]])
    "tids = pl.array.create(2, pl.TASK_ID)\nrc, g = pl.submit(self.gate, rc)\n"
    "d, t = pl.submit(self.k, a, d, deps=[tids], predicate=(rc[0, 0] > 0))",
    "tids = pl.array.create(2, pl.TASK_ID)\nrc, g = pl.submit(self.gate, rc)\n"
    "d, t = pl.submit(self.k, a, d, deps=[tids[0]], predicate=(rc[0, 0] > 0))",
    # producer later in source order (loop-carried rc written by the previous iteration)
    "for i in pl.range(2):\n    d, t = pl.submit(self.k, a, d, predicate=(rc[0, 0] > 0))\n"
    "    rc, g = pl.submit(self.gate, rc)",
    # a scope without `as tid` records nothing (its task id cannot be named)
    "with pl.spmd(1):\n    rc = self.gate(rc)\nd, t = pl.submit(self.k, a, d, predicate=(rc[0, 0] > 0))",
], ids=["alias", "out_arg", "intermediate_call", "single_target_spmd_submit", "array_dep", "array_slot_dep",
        "later_producer", "scope_without_tid"])
def test_producer_check_blind_spots_stay_blind(body):
    main_stmts(body)


def test_producer_check_accepts_listed_producer():
    main_stmts("""
        rc, g = pl.submit(self.gate, rc)
        d, t = pl.submit(self.k, a, d, deps=[g], predicate=(rc[0, 0] > 0))
        with pl.spmd(1) as g2:
            rc = self.gate(rc)
        with pl.at(level=pl.Level.CORE_GROUP, deps=[g2], predicate=(rc[0, 0] > 0)):
            d = self.k(a, d)
    """)


def test_producer_check_rejects_missing_producer():
    with pytest.raises(PyptoError, match=r"producer of predicate tensor 'rc' \(task id 'g'\) is not in deps="):
        main_stmts("rc, g = pl.submit(self.gate, rc)\nd, t = pl.submit(self.k, a, d, predicate=(rc[0, 0] > 0))")


def test_at_scope_attrs_and_tid():
    stmts = main_stmts("""
        d, t0 = pl.submit(self.k, a, d)
        with pl.at(level=pl.Level.CORE_GROUP, deps=[t0, None], allow_early_resolve=True,
                   predicate=(rc[0, 0] > 0), no_dep_args=[a]) as tid:
            d = self.k(a, d)
        d, t1 = pl.submit(self.k, a, d, deps=[tid])
        with pl.at(level=pl.Level.CHIP):
            d = self.k(a, d)
    """)
    scope = [s for s in stmts if isinstance(s, ir.ScopeStmt)]
    at, chip = scope
    assert at.scope_kind == ir.ScopeKind.At
    assert at.attrs == {"level": "CORE_GROUP"}   # the task options are the typed ScopeStmt.options
    assert at.options.allow_early_resolve is True and at.options.sync_start is False
    assert [v.name for v in at.options.deps] == ["t0"]
    assert [v.name for v in at.options.no_dep_args] == ["a"]
    assert isinstance(at.options.predicate, ir.BinaryExpr)
    assert at.task_id_var.name == "tid" and at.block_var is None
    assert submits(stmts)[-1].deps[0].same_as(at.task_id_var)
    assert chip.attrs == {"level": "CHIP"} and chip.task_id_var is None and chip.options.empty()


def test_spmd_scope_forms_and_cluster():
    stmts = main_stmts("""
        with pl.spmd(4, sync_start=True) as t:
            d = self.k(a, d)
        with pl.spmd(core_num=n, deps=[t]):
            d = self.k(a, d)
        for i in pl.spmd(2, allow_early_resolve=True):
            d = self.k(a, d)
        with pl.cluster():
            d = self.k(a, d)
    """)
    s1, s2, s3, cl = stmts
    assert s1.scope_kind == ir.ScopeKind.Spmd and s1.attrs["core_num"].value == 4 and s1.options.sync_start
    assert set(s1.attrs) == {"core_num"} and s1.task_id_var.name == "t"
    assert s2.attrs["core_num"].name == "n" and s2.options.deps[0].same_as(s1.task_id_var)
    assert s3.block_var.name == "i" and s3.task_id_var is None and s3.options.allow_early_resolve is True
    assert not s3.options.sync_start and s3.options.predicate is None
    assert cl.scope_kind == ir.ScopeKind.Cluster and cl.attrs == {} and cl.options.empty()


def test_placeholder_targets_are_bound():
    stmts = main_stmts("""
        d, _ = pl.submit(self.k, a, d)
        p, __1 = self.k2(a, d, d)
    """)
    tmp1, d1, t1, tmp2, p1, m1 = stmts
    assert isinstance(tmp1.value, ir.Submit) and (d1.value.index, t1.value.index) == (0, 1)
    assert t1.var.name == "_" and m1.var.name == "__1" and m1.value.tuple.same_as(tmp2.var)


def test_producer_check_follows_task_dummy_barriers():
    main_stmts("""
        rc, g = pl.submit(self.gate, rc)
        b1 = pl.system.task_dummy(deps=[g])
        b2 = pl.system.task_dummy(deps=[b1])
        d, t = pl.submit(self.k, a, d, deps=[b2], predicate=(rc[0, 0] > 0))
    """)
    with pytest.raises(PyptoError, match="producer of predicate tensor 'rc'"):
        main_stmts("""
            rc, g = pl.submit(self.gate, rc)
            d, t0 = pl.submit(self.k, a, d)
            b = pl.system.task_dummy(deps=[t0])
            d, t = pl.submit(self.k, a, d, deps=[b], predicate=(rc[0, 0] > 0))
        """)
