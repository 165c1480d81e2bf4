"""The task options of pl.at / pl.spmd scopes (ScopeStmt.options), a loop's chunk request
(ForStmt.chunk / chunk_policy) and an import's peer base (Call.peer_base) are typed IR fields,
not string-keyed attrs (issue 11): the parser builds them, the printer prints them as the DSL
keywords, the parser reads the print back to an equal program, structural equality tells
different values apart, and a hand-written attrs={...} key for one is a located error. Every
pass that rebuilds a loop or an op call keeps every typed field (ForStmt.with_typed_fields_of,
ir.with_pass_results_of)."""

import textwrap

import pytest

import pypto.language as pl
from pypto._core import ir
from pypto.errors import PyptoError
from pypto.ir import passes

T = "pl.Tensor[[16, 16], pl.FP32]"
RC = "pl.Tensor[[16, 16], pl.INT32]"
KERNELS = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {T}, c: pl.Out[{T}]) -> {T}:
        c = pl.store(pl.exp(pl.load(a, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def gate(self, rc: pl.InOut[{RC}]) -> {RC}:
        rc = pl.store(pl.load(rc, [0, 0], [16, 16]), [0, 0], rc)
        return rc
"""


def source(body: str) -> str:
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)
    return (f"import pypto.language as pl\n\n@pl.program\nclass P:{KERNELS}\n"
            f"    @pl.function(type=pl.FunctionType.Orchestration)\n"
            f"    def main(self, a: {T}, d: pl.Out[{T}], rc: pl.InOut[{RC}]) -> {T}:\n{body}\n        return d\n")


def parse(body: str):
    return pl.parse_program(source(body), "t.py")


def scopes(prog):
    return [s for s in ir.flatten_stmts(prog.get("main").body) if isinstance(s, ir.ScopeStmt)]


def roundtrip(prog):
    text = ir.python_print(prog)
    again = pl.parse_program(text, "printed.py")
    ok, why = ir.structural_equal_explain(prog, again)
    assert ok, f"{why}\n{text}"
    assert ir.structural_hash(prog) == ir.structural_hash(again)
    assert ir.python_print(again) == text
    return text


OPTIONS_BODY = """
    rc, g = pl.submit(self.gate, rc)
    with pl.at(level=pl.Level.CORE_GROUP, deps=[g], predicate=(rc[0, 0] > 0), allow_early_resolve=True,
               no_dep_args=[a], name_hint="first") as t1:
        d = self.k(a, d)
    with pl.spmd(4, sync_start=True, deps=[t1]):
        d = self.k(a, d)
    for i in pl.spmd(2, allow_early_resolve=True):
        d = self.k(a, d)
"""


def test_scope_options_are_typed_printed_as_keywords_and_reparse_equal():
    prog = parse(OPTIONS_BODY)
    at, spmd, spmd_for = scopes(prog)
    assert at.attrs == {"level": "CORE_GROUP", "name_hint": "first"}
    assert [v.name for v in at.options.deps] == ["g"] and [v.name for v in at.options.no_dep_args] == ["a"]
    assert isinstance(at.options.predicate, ir.BinaryExpr) and at.options.allow_early_resolve
    assert set(spmd.attrs) == {"core_num"} and spmd.options.sync_start and spmd.options.deps[0].same_as(at.task_id_var)
    assert spmd_for.options.allow_early_resolve and not spmd_for.options.sync_start
    text = roundtrip(prog)
    # One stable spelling: every scope keyword in name order, the typed options among the attrs.
    assert ("with pl.at(level=pl.Level.CORE_GROUP, allow_early_resolve=True, deps=[g], name_hint=\"first\", "
            "no_dep_args=[a], predicate=(rc_1[0, 0] > 0)) as t1:") in text
    assert "with pl.spmd(4, deps=[t1], sync_start=True):" in text
    assert "for i in pl.spmd(2, allow_early_resolve=True):" in text


@pytest.mark.parametrize("old, new", [
    ("allow_early_resolve=True,\n               no_dep_args=[a]", "allow_early_resolve=False,\n               no_dep_args=[a]"),
    ("deps=[g], predicate", "deps=[g, g], predicate"),
    ("predicate=(rc[0, 0] > 0)", "predicate=(rc[0, 0] > 1)"),
    ("no_dep_args=[a]", "no_dep_args=[d]"),
    ("pl.spmd(4, sync_start=True", "pl.spmd(4, sync_start=False"),
])
def test_structural_equality_tells_scope_option_values_apart(old, new):
    assert old in OPTIONS_BODY
    base, other = parse(OPTIONS_BODY), parse(OPTIONS_BODY.replace(old, new))
    assert ir.structural_equal(base, parse(OPTIONS_BODY))
    ok, why = ir.structural_equal_explain(base, other)
    assert not ok and "ScopeStmt.options" in why


def test_outlining_moves_the_typed_options_onto_the_submit():
    prog = passes.OutlineIncoreScopes()(parse(OPTIONS_BODY))
    subs = [s.value for s in ir.flatten_stmts(prog.get("main").body)
            if isinstance(s, ir.AssignStmt) and isinstance(s.value, ir.Submit)]
    gate, first, spmd, spmd_for = subs
    assert [v.name for v in first.deps] == ["g"] and first.allow_early_resolve and first.predicate is not None
    assert not first.sync_start and first.arg_directions[0] == ir.ArgDirection.NoDep   # no_dep_args=[a]
    assert spmd.sync_start and len(spmd.deps) == 1 and not spmd.allow_early_resolve
    assert spmd_for.allow_early_resolve and not spmd_for.sync_start


def test_scope_make_refuses_the_old_string_keys():
    body = ir.EvalStmt.make(ir.ConstInt.make(0))
    with pytest.raises(Exception, match="typed ScopeStmt::options"):
        ir.ScopeStmt.make(ir.ScopeKind.Spmd, {"core_num": ir.ConstInt.make(4), "sync_start": True}, body)
    scope = ir.ScopeStmt.make(ir.ScopeKind.Spmd, {"core_num": ir.ConstInt.make(4)}, body)
    typed = scope.with_options(ir.ScopeOptions(sync_start=True))
    assert typed.options.sync_start and not scope.options.sync_start
    assert not ir.structural_equal(scope, typed)


CHUNK_BODY = """
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):
        for i in pl.parallel(0, 10, 1, chunk=4):
            d = pl.assemble(d, pl.tensor.slice(a, [4, 16], [i, 0]), [i, 0])
        for j in pl.range(0, 8, 1, chunk=3, chunk_policy="leading_full"):
            d = pl.assemble(d, pl.tensor.slice(a, [4, 16], [j, 0]), [j, 0])
"""


def loops(stmt):
    out = []
    for s in ir.flatten_stmts(stmt):
        if isinstance(s, ir.ForStmt):
            out.append(s)
        for attr in ("body", "then_body", "else_body"):
            if getattr(s, attr, None) is not None:
                out += loops(getattr(s, attr))
    return out


def test_chunk_request_is_typed_printed_as_keywords_and_reparses_equal():
    prog = parse(CHUNK_BODY)
    guarded, leading = loops(prog.get("main").body)
    assert (guarded.chunk, guarded.chunk_policy) == (4, ir.ChunkPolicy.Guarded) and guarded.attrs == {}
    assert (leading.chunk, leading.chunk_policy) == (3, ir.ChunkPolicy.LeadingFull) and leading.attrs == {}
    text = roundtrip(prog)
    assert 'pl.parallel(0, 10, 1, init_values=(d,), chunk=4, chunk_policy="guarded")' in text
    assert 'pl.range(0, 8, 1, init_values=(d_3,), chunk=3, chunk_policy="leading_full")' in text
    split = passes.SplitChunkedLoops()(prog)
    assert all(f.chunk == 0 for f in loops(split.get("main").body))   # consumed by the pass
    assert passes.verify_property(passes.IRProperty.ChunkedLoopsSplit, prog) != []
    assert passes.verify_property(passes.IRProperty.ChunkedLoopsSplit, split) == []


@pytest.mark.parametrize("old, new", [
    ("chunk=4)", "chunk=5)"),
    ('chunk_policy="leading_full"', 'chunk_policy="guarded"'),
])
def test_structural_equality_tells_chunk_requests_apart(old, new):
    ok, why = ir.structural_equal_explain(parse(CHUNK_BODY), parse(CHUNK_BODY.replace(old, new)))
    assert not ok and "ForStmt.chunk" in why


@pytest.mark.parametrize("key", ["chunk", "chunk_policy"])
def test_chunk_keys_in_loop_attrs_are_a_located_error(key):
    body = CHUNK_BODY.replace("pl.parallel(0, 10, 1, chunk=4)", f'pl.parallel(0, 10, 1, attrs={{"{key}": 4}})')
    with pytest.raises(PyptoError) as e:
        parse(body)
    msg = str(e.value)
    assert f"'{key}' is no loop attr" in msg and "t.py:" in msg and f"pl.range(..., {key}=...)" in msg


def _loop_with_every_typed_field():
    """A loop whose every typed field differs from its default: carries / trip_count
    (ClassifyIterArgCarry / StampStaticTripCounts), inplace_carries, loop_origin / chunk_stride
    (SplitChunkedLoops) and the chunk request."""
    idx = ir.ScalarType.make(ir.DataType.INDEX)
    i, s, acc0 = ir.Var.make("i", idx), ir.Var.make("s", idx), ir.Var.make("acc0", idx)
    acc = ir.IterArg.make("acc", idx, acc0)
    out = ir.Var.make("out", idx)
    step = ir.BinaryExpr.make(ir.BinaryOp.Mul, s, ir.ConstInt.make(4))
    body = ir.YieldStmt.make([ir.BinaryExpr.make(ir.BinaryOp.Add, acc, i)])
    make = lambda b: ir.ForStmt.make(i, ir.ConstInt.make(0), ir.ConstInt.make(64), step, [acc], b, [out])
    full = (make(body).with_results([ir.LoopCarry.rebound(0)], 16).with_inplace_carries([0])
            .with_chunk_split(ir.LoopOrigin.ChunkOuter, 4).with_chunk(2, ir.ChunkPolicy.LeadingFull))
    return make, body, full


def test_a_loop_rebuild_keeps_every_typed_field():
    make, body, full = _loop_with_every_typed_field()
    plain = make(body)
    assert not ir.structural_equal(plain, full)
    rebuilt = plain.with_typed_fields_of(full)
    assert ir.structural_equal(rebuilt, full) and ir.structural_hash(rebuilt) == ir.structural_hash(full)
    assert (rebuilt.trip_count, rebuilt.inplace_carries, rebuilt.chunk_stride, rebuilt.loop_origin, rebuilt.chunk,
            rebuilt.chunk_policy) == (16, [0], 4, ir.LoopOrigin.ChunkOuter, 2, ir.ChunkPolicy.LeadingFull)
    # Each field alone is compared: a rebuild that dropped any one of them would not be equal.
    for partial in (plain.with_results([ir.LoopCarry.rebound(0)], 16).with_inplace_carries([0])
                    .with_chunk_split(ir.LoopOrigin.ChunkOuter, 4),
                    plain.with_results([ir.LoopCarry.rebound(0)], 16).with_inplace_carries([0])
                    .with_chunk(2, ir.ChunkPolicy.LeadingFull),
                    plain.with_results([ir.LoopCarry.rebound(0)], 16).with_chunk_split(ir.LoopOrigin.ChunkOuter, 4)
                    .with_chunk(2, ir.ChunkPolicy.LeadingFull),
                    plain.with_inplace_carries([0]).with_chunk_split(ir.LoopOrigin.ChunkOuter, 4)
                    .with_chunk(2, ir.ChunkPolicy.LeadingFull)):
        assert not ir.structural_equal(partial, full)


# A printed program whose loops carry the orchestration loop fields (carries, trip_count, the
# SplitChunkedLoops results) around task calls, so the passes that rebuild loops rebuild them.
REBUILT_BODY = """
    for i, (d1,) in pl.range(0, 8, 2, init_values=(d,), carries=(pl.rebind,), trip_count=4, loop_origin="chunk_inner"):
        d2 = self.k(a, d1)
        d3 = pl.yield_(d2)
    for j, (d4,) in pl.parallel(0, n, s * 4, init_values=(d3,), chunk_stride=4, loop_origin="chunk_outer"):
        d5 = self.k(a, d4)
        d6 = pl.yield_(d5)
    return d6
"""


def _typed_fields(f):
    return (f.carries, f.trip_count, f.inplace_carries, f.loop_origin, f.chunk_stride, f.chunk, f.chunk_policy)


@pytest.mark.parametrize("make_pass", [
    lambda: passes.MaterializeRuntimeScopes(),   # wraps the loop bodies in runtime scopes
    lambda: passes.DeriveCallDirections(),       # rewrites the calls (the IRMutator rebuilds the loops)
])
def test_the_passes_that_rebuild_loops_keep_every_typed_field(make_pass):
    body = textwrap.indent(textwrap.dedent(REBUILT_BODY).strip("\n"), " " * 8)
    src = (f"import pypto.language as pl\n\n@pl.program\nclass P:{KERNELS}\n"
           f"    @pl.function(type=pl.FunctionType.Orchestration)\n"
           f"    def main(self, a: {T}, d: pl.Out[{T}], n: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.INDEX]) -> {T}:\n"
           f"{body}\n")
    prog = pl.parse_program(src, "t.py")
    before = loops(prog.get("main").body)
    assert _typed_fields(before[0])[:2] == ([ir.LoopCarry.rebound(0)], 4)
    assert _typed_fields(before[1])[3:5] == (ir.LoopOrigin.ChunkOuter, 4)
    after = loops(make_pass()(prog).get("main").body)
    assert len(after) == 2 and not any(x.same_as(y) for x, y in zip(after, before))   # rebuilt
    assert [_typed_fields(f) for f in after] == [_typed_fields(f) for f in before]


KERNEL_LOOP = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 16])
        for i, (acc,) in pl.range(0, 4, 1, init_values=(t,), inplace_carries=[0], carries=(pl.rebind,), trip_count=4):
            v = pl.tensor.read(x, [0, 0])
            nxt = pl.add(acc, acc)
            acc_out = pl.yield_(nxt)
        y2 = pl.store(acc_out, [0, 0], y)
        return y
"""


def test_convert_tensor_to_tile_ops_keeps_every_typed_field_of_a_kernel_loop():
    prog = pl.parse_program(KERNEL_LOOP, "k.py")
    (before,) = loops(prog.get("k").body)
    (after,) = loops(passes.ConvertTensorToTileOps()(prog).get("k").body)
    assert not after.same_as(before)   # the tensor.read in the body was converted: the loop is rebuilt
    assert _typed_fields(after) == _typed_fields(before) == ([ir.LoopCarry.rebound(0)], 4, [0], ir.LoopOrigin.User, 0, 0,
                                                             ir.ChunkPolicy.Guarded)


PIPE = f"""
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV)
    def consumer(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        ring = pl.reserve_buffer(name="ring", size=4096, base=256)
        y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.AIC)
    def producer(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        peer = pl.import_peer_buffer(name="ring", peer_func="consumer"BASE)
        y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
        return y
"""


def _import(prog):
    return [s.value for s in ir.flatten_stmts(prog.get("producer").body)
            if isinstance(s, ir.AssignStmt) and isinstance(s.value, ir.Call)
            and s.value.callee == "system.import_peer_buffer"][0]


def test_import_peer_base_is_typed_printed_as_base_and_reparses_equal():
    before = pl.parse_program(PIPE.replace("BASE", ""), "t.py")
    assert _import(before).peer_base == -2 and "base" not in _import(before).attrs
    after = passes.ResolvePeerBufferBases()(before)
    imp = _import(after)
    assert imp.peer_base == 256 and imp.attrs == {"name": "ring", "peer_func": "consumer"}
    text = roundtrip(after)
    assert 'pl.system.import_peer_buffer(base=256, name="ring", peer_func="consumer", cpu_base=256)' in text
    written = pl.parse_program(PIPE.replace("BASE", ", base=256"), "t.py")
    assert _import(written).peer_base == 256 and not ir.structural_equal(before, written)
    with pytest.raises(PyptoError, match=r"base= of pl.import_peer_buffer must be the base"):
        pl.parse_program(PIPE.replace("BASE", ", base=128"), "t.py")
