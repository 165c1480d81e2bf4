"""Printer round trip: parse -> print -> parse gives a structurally equal program, and printing
is a fixed point (print(parse(print(p))) == print(p)).

Each program below exercises one construct of docs/dsl.md; together they cover every
construct the printer emits. Programs of the spec documents (tests/python/spec_programs/) are
round-tripped too, when that directory has any.
"""

import pathlib
import textwrap

import pytest

import pypto.language as pl
from pypto import ir

HEADER = "import pypto.language as pl\n\n"

KERNELS = '''
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                   c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 16])
        tb = pl.load(b, [0, 0], [16, 16])
        c = pl.store(pl.add(ta, tb), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def kernel_two(self, a: pl.Tensor[[16, 16], pl.FP32], p: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                   m: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
        ta = pl.load(a, [0, 0], [16, 16])
        p = pl.store(pl.exp(ta), [0, 0], p)
        m = pl.store(pl.neg(ta), [0, 0], m)
        return p, m
'''

T16 = "pl.Tensor[[16, 16], pl.FP32]"


def program(orch_body: str, params: str = f"a: {T16}, b: {T16}, d: pl.Out[{T16}]",
            ret: str = T16, extra: str = "", prelude: str = "") -> str:
    """A program with the shared kernels and one orchestration function `main`."""
    body = textwrap.indent(textwrap.dedent(orch_body).strip("\n"), " " * 8)
    return (HEADER + prelude + "\n@pl.program\nclass P:" + KERNELS + textwrap.dedent(extra) +
            f"\n    @pl.function(type=pl.FunctionType.Orchestration)\n"
            f"    def main(self, {params}) -> {ret}:\n{body}\n")


PROGRAMS = {
    "vector_add": program("""
        c = pl.create_tensor([16, 16], dtype=pl.FP32)
        c = self.kernel_add(a, b, c)
        d = self.kernel_add(c, b, d)
        return d
    """),
    "multi_output_unpack": program("""
        p = pl.create_tensor([16, 16], dtype=pl.FP32)
        m = pl.create_tensor([16, 16], dtype=pl.FP32)
        p, m = self.kernel_two(a, p, m)
        d = self.kernel_add(p, m, d)
        return d
    """),
    "tuple_index": program("""
        p = pl.create_tensor([16, 16], dtype=pl.FP32)
        m = pl.create_tensor([16, 16], dtype=pl.FP32)
        pm = self.kernel_two(a, p, m)
        d = self.kernel_add(pm[1], pm[0], d)
        return d
    """),
    "for_loop_carry": program("""
        for i in pl.range(4):
            d = self.kernel_add(a, d, d)
        return d
    """),
    "for_explicit_iter_args": program("""
        for i, (acc,) in pl.range(0, 4, 1, init_values=(d,)):
            acc_next = self.kernel_add(a, acc, acc)
            acc_out = pl.yield_(acc_next)
        return acc_out
    """),
    "for_no_carry_scalar_args": program("""
        for i in pl.range(2, 10, 2):
            c = pl.create_tensor([16, 16], dtype=pl.FP32)
            c = self.kernel_add(a, b, c)
        return d
    """),
    "parallel_loop": program("""
        for i in pl.parallel(4):
            c = pl.create_tensor([16, 16], dtype=pl.FP32)
            c = self.kernel_add(a, b, c)
        return d
    """),
    "nested_loops_two_carries": program("""
        c = pl.create_tensor([16, 16], dtype=pl.FP32)
        for i in pl.range(3):
            for j in pl.range(i, 5):
                c = self.kernel_add(a, c, c)
                d = self.kernel_add(c, b, d)
        return d
    """),
    "if_else_branches": program("""
        for i in pl.range(4):
            if i % 2 == 0:
                d = self.kernel_add(a, d, d)
            else:
                d = self.kernel_add(b, d, d)
        return d
    """),
    "if_without_else": program("""
        for i in pl.range(4):
            if i > 1 and i < 3:
                d = self.kernel_add(a, d, d)
        return d
    """),
    "scalar_params_and_exprs": program("""
        for i in pl.range(n):
            c = pl.create_tensor([16, 16], dtype=pl.FP32)
            c = self.kernel_add(a, b, c)
            if (i * 4 + n) // 2 - 1 >= min(n, 3):
                d = self.kernel_add(c, d, d)
        return d
    """, params=f"a: {T16}, b: {T16}, d: pl.Out[{T16}], n: pl.Scalar[pl.INDEX]"),
    "dynamic_dims_and_dim": HEADER + '''
M = pl.dynamic("M")

@pl.program
class Dyn:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_row(self, a: pl.Tensor[[M, 16], pl.FP32], i: pl.Scalar[pl.INDEX],
                   c: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
        t = pl.load(a, [i, 0], [1, 16])
        c = pl.store(pl.relu(t), [i, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, 16], pl.FP32], c: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
        for i in pl.range(pl.tensor.dim(a, 0)):
            c = self.kernel_row(a, i, c)
        return c
''',
    "tensor_ops": program("""
        s = pl.tensor.slice(a, [8, 16], [8, 0])
        t = pl.tensor.transpose(b, 0, 1)
        x = pl.create_tensor([16, 16], dtype=pl.FP32)
        x = pl.tensor.assemble(x, a, [0, 0])
        v = a[1, 2]
        d = self.kernel_add(x, t, d)
        return d
    """),
    "manual_scope_and_submit": program("""
        with pl.manual_scope():
            c = pl.create_tensor([16, 16], dtype=pl.FP32)
            c, t0 = pl.submit(self.kernel_add, a, b, c)
            d, t1 = pl.submit(self.kernel_add, c, b, d, deps=[t0])
        return d
    """),
    "submit_options": program("""
        c = pl.create_tensor([16, 16], dtype=pl.FP32, manual_dep=True)
        c, t0 = pl.submit(self.kernel_add, a, b, c, allow_early_resolve=True, timing_slot=3)
        d, t1 = pl.submit(self.kernel_add, pl.no_dep(c), b, d, deps=[t0, None])
        return d
    """),
    "submit_predicate": program("""
        rc = pl.create_tensor([1, 1], dtype=pl.INT32)
        d, t1 = pl.submit(self.kernel_add, a, b, d, predicate=(rc[0, 0] > 0))
        return d
    """),
    "spmd_submit": program("""
        d, t0 = pl.spmd_submit(self.kernel_add, a, b, d, core_num=4, sync_start=True)
        return d
    """),
    "no_dep_call": program("""
        d = self.kernel_add(pl.no_dep(a), b, d)
        return d
    """),
    "task_dummy_invalid_array": program("""
        with pl.manual_scope():
            prev = None
            tids = pl.array.create(4, pl.TASK_ID)
            for k in pl.range(4):
                d, tid = pl.submit(self.kernel_add, a, b, d, deps=[prev])
                tids[k] = tid
                prev = tids[k]
            barrier = pl.system.task_dummy(deps=[prev])
            d, t2 = pl.submit(self.kernel_add, a, b, d, deps=[barrier, tids])
        return d
    """),
    "at_scope": program("""
        with pl.at(level=pl.Level.CORE_GROUP) as tid:
            ta = pl.load(a, [0, 0], [16, 16])
            d = pl.store(ta, [0, 0], d)
        with pl.at(level=pl.Level.CORE_GROUP, deps=[tid], no_dep_args=[b]):
            tb = pl.load(b, [0, 0], [16, 16])
            d = pl.store(tb, [0, 0], d)
        return d
    """),
    "spmd_scopes": program("""
        with pl.spmd(4) as tid:
            ta = pl.load(a, [0, 0], [16, 16])
            d = pl.store(ta, [0, 0], d)
        for i in pl.spmd(2, deps=[tid]):
            tb = pl.load(b, [0, 0], [16, 16])
            d = pl.store(tb, [0, 0], d)
        return d
    """),
    "kernel_tile_ops": HEADER + '''
@pl.program
class Tiles:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
          c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ta: pl.Tile[[16, 16], pl.FP32] = pl.load(a, [0, 0], [16, 16])
        tb = pl.load(b, [0, 0], [16, 16])
        x = pl.sub(pl.mul(ta, 2.0), pl.div(tb, 0.5))
        y = pl.maximum(pl.exp(x), pl.minimum(pl.sqrt(ta), pl.rsqrt(tb)))
        r = pl.row_max(y)
        z = pl.row_expand_sub(y, r)
        s = pl.row_sum(pl.abs(z))
        w = pl.row_expand_div(z, s)
        f = pl.tile.full([16, 16], pl.FP32, 1.0)
        w = pl.add(w, f)
        h = pl.cast(w, pl.FP16)
        g = pl.cast(h, pl.FP32)
        c = pl.store(g, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
           c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 16])
        tb = pl.load(b, [0, 0], [16, 16])
        la = pl.move(ta, target_memory=pl.MemorySpace.Left)
        rb = pl.move(tb, target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(la, rb)
        acc = pl.matmul_acc(acc, la, rb)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.AIV)
    def blocks(self, a: pl.Tensor[[64, 16], pl.FP32], c: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        i = pl.tile.get_block_idx()
        n = pl.tile.get_block_num()
        t = pl.load(a, [i * 16, 0], [16, 16])
        c = pl.store(pl.recip(t), [i * 16, 0], c)
        return c
''',
    "runtime_scope_and_cluster": program("""
        with pl.scope():
            c = pl.create_tensor([16, 16], dtype=pl.FP32)
            c = self.kernel_add(a, b, c)
        with pl.cluster():
            d = self.kernel_add(c, b, d)
        return d
    """),
    "elif_chain_and_scalar_ops": program("""
        for i in pl.range(6):
            x = pl.cast(i, pl.INT64)
            if i == 0:
                d = self.kernel_add(a, d, d)
            elif not (i < 3 or x > 4):
                d = self.kernel_add(b, d, d)
            elif -i + 2 != 0:
                d = self.kernel_add(d, d, d)
        return d
    """),
    "predicate_forms": program("""
        rc = pl.create_tensor([2, 2], dtype=pl.INT32)
        rc, t0 = pl.submit(self.gate, rc)
        d, t1 = pl.submit(self.kernel_add, a, b, d, deps=[t0], predicate=(0 < rc[1, 0]))
        d, t2 = pl.spmd_submit(self.kernel_add, a, b, d, core_num=2, deps=[t0, t1], timing_slot=0,
                               predicate=(rc[0, 1] == -3))
        with pl.spmd(2, deps=[t0], allow_early_resolve=True, predicate=(rc[0, 0] >= 1)) as t3:
            ta = pl.load(a, [0, 0], [16, 16])
            d = pl.store(ta, [0, 0], d)
        return d
    """, extra="""
    @pl.function(type=pl.FunctionType.InCore)
    def gate(self, rc: pl.InOut[pl.Tensor[[2, 2], pl.INT32]]) -> pl.Tensor[[2, 2], pl.INT32]:
        rc = pl.store(pl.load(rc, [0, 0], [2, 2]), [0, 0], rc)
        return rc
"""),
    "taskid_carries_in_parallel": program("""
        with pl.manual_scope():
            prev = None
            for phase in pl.range(2):
                for br in pl.parallel(4):
                    d, prev = pl.submit(self.kernel_add, a, b, d, deps=[prev])
            v = pl.tensor.read(d, [0, 1])
        return d
    """),
    "explicit_array_update": program("""
        with pl.manual_scope():
            tids = pl.array.create(2, pl.TASK_ID)
            d, t = pl.submit(self.kernel_add, a, b, d)
            tids = pl.array.update_element(tids, 0, t)
            tids = pl.array.update_element(tids, 1, pl.system.task_invalid())
            first = pl.array.get_element(tids, 0)
            d, t2 = pl.submit(self.kernel_add, a, b, d, deps=[first])
        return d
    """),
    "function_kinds": HEADER + '''
@pl.program
class Kinds:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Mat] = pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
        c = pl.store(t, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.exp(pl.load(a, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Group)
    def both(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.cube(a, c)
        c = self.vec(a, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.both(a, c)
        return c
''',
    "scalar_kernel_params": HEADER + '''
@pl.program
class Scal:
    @pl.function(type=pl.FunctionType.AIC, level=pl.Level.AIC)
    def scale(self, a: pl.Tensor[[16, 16], pl.FP32, pl.Layout.DN], f: pl.Scalar[pl.FP32],
              flag: pl.Scalar[pl.BOOL],
              c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Vec] = pl.load(a, [0, 0], [16, 16])
        c = pl.store(pl.mul(t, f), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32, pl.Layout.DN],
             c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.scale(a, 0.25, True, c)
        c = self.scale(a, 3.0, False, c)
        return c
''',
}


def _roundtrip(src: str):
    p1 = pl.parse_program(src)
    text1 = ir.python_print(p1)
    try:
        p2 = pl.parse_program(text1)
    except Exception as e:  # pragma: no cover - shows the printed text on failure
        pytest.fail(f"printed text does not parse: {e}\n--- printed ---\n{text1}")
    eq, why = ir.structural_equal_explain(p1, p2)
    assert eq, f"{why}\n--- printed ---\n{text1}"
    assert ir.structural_hash(p1) == ir.structural_hash(p2)
    text2 = ir.python_print(p2)
    assert text2 == text1, "printing is not a fixed point"
    return p1, text1


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_roundtrip(name):
    _roundtrip(PROGRAMS[name])


SPEC_DIR = pathlib.Path(__file__).parent / "spec_programs"
SPEC_FILES = sorted(SPEC_DIR.glob("*.py")) if SPEC_DIR.is_dir() else []


@pytest.mark.parametrize("path", SPEC_FILES, ids=[p.stem for p in SPEC_FILES])
def test_roundtrip_spec_programs(path):
    _roundtrip(path.read_text())


def test_printed_form_details():
    """Spot checks of the printed spelling of constructs the round trip alone cannot pin."""
    _, text = _roundtrip(PROGRAMS["for_loop_carry"])
    assert "init_values=(d,)" in text and "pl.yield_(" in text
    _, text = _roundtrip(PROGRAMS["submit_predicate"])
    assert "predicate=(rc[0, 0] > 0)" in text
    _, text = _roundtrip(PROGRAMS["task_dummy_invalid_array"])
    assert "pl.system.task_invalid()" in text
    assert "pl.array.create(4, pl.TASK_ID)" in text
    assert "pl.system.task_dummy(deps=[" in text
    assert "with pl.manual_scope():" in text
    _, text = _roundtrip(PROGRAMS["multi_output_unpack"])
    assert "p_1, m_1 = self.kernel_two(a, p, m)" in text
    _, text = _roundtrip(PROGRAMS["spmd_submit"])
    assert "pl.spmd_submit(self.kernel_add, a, b, d, core_num=4, sync_start=True)" in text


# ---------------------------------------------------------------------------------------------
# Property test: random scalar expression trees (every BinaryOp, Not, Neg, min/max, literals of
# each kind) survive print -> parse. This pins operator precedence and parenthesisation.

def _random_expr(rng, params, depth, want):
    a, b, f, flag = params
    B = ir.BinaryOp
    if depth == 0 or rng.random() < 0.25:
        if want == "bool":
            return rng.choice([flag, ir.ConstBool.make(rng.random() < 0.5)])
        if want == "float":
            return rng.choice([f, ir.ConstFloat.make(rng.choice([0.5, 2.0, 1e-05, 3.25, -1.5]))])
        return rng.choice([a, b, ir.ConstInt.make(rng.randint(-3, 9))])
    if want == "bool":
        r = rng.random()
        if r < 0.4:
            kind = rng.choice(["int", "float"])
            op = rng.choice([B.Eq, B.Ne, B.Lt, B.Le, B.Gt, B.Ge])
            return ir.BinaryExpr.make(op, _random_expr(rng, params, depth - 1, kind),
                                      _random_expr(rng, params, depth - 1, kind))
        if r < 0.8:
            return ir.BinaryExpr.make(rng.choice([B.And, B.Or]), _random_expr(rng, params, depth - 1, "bool"),
                                      _random_expr(rng, params, depth - 1, "bool"))
        return ir.UnaryExpr.make(ir.UnaryOp.Not, _random_expr(rng, params, depth - 1, "bool"))
    if rng.random() < 0.15:
        inner = _random_expr(rng, params, depth - 1, want)
        if isinstance(inner, (ir.ConstInt, ir.ConstFloat)):
            # `-5` is the literal -5 (the parser folds a negated literal): no Neg node.
            return type(inner).make(-inner.value)
        if want == "int" and rng.random() < 0.3:
            return ir.UnaryExpr.make(ir.UnaryOp.BitNot, inner)
        return ir.UnaryExpr.make(ir.UnaryOp.Neg, inner)
    ops = [B.Add, B.Sub, B.Mul, B.FloorDiv, B.Mod, B.Min, B.Max] + ([B.Div] if want == "float" else
                                                                     [B.BitAnd, B.BitOr, B.BitXor, B.Shl, B.Shr])
    return ir.BinaryExpr.make(rng.choice(ops), _random_expr(rng, params, depth - 1, want),
                              _random_expr(rng, params, depth - 1, want))


def test_random_scalar_expressions_roundtrip():
    import random
    from pypto.errors import PyptoError
    rng = random.Random(2024)
    types = {"a": ir.DataType.INDEX, "b": ir.DataType.INDEX, "f": ir.DataType.FP32, "flag": ir.DataType.BOOL}
    checked = 0
    for _ in range(400):
        params = [ir.Var.make(n, ir.ScalarType.make(t)) for n, t in types.items()]
        try:
            e = _random_expr(rng, params, 4, rng.choice(["int", "float", "bool"]))
        except PyptoError:
            continue   # an ill-typed combination the IR rejects
        x = ir.Var.make("x", e.type)
        body = ir.SeqStmts.make([ir.AssignStmt.make(x, e), ir.ReturnStmt.make([x])])
        fn = ir.Function.make("main", ir.FunctionType.Opaque, params, [ir.ParamDirection.In] * 4, [e.type], body)
        prog = ir.Program.make("Fuzz", [fn])
        text = ir.python_print(prog)
        eq, why = ir.structural_equal_explain(prog, pl.parse_program(text))
        assert eq, f"{why}\n{ir.python_print(e)}"
        checked += 1
    assert checked > 300
