"""Differential fuzzing of control flow in kernels (docs/dsl.md "Values and SSA", "Allocations
that outlive their loop or branch"): random kernels of nested loops and branches that carry tiles
and scalars, compared with the same statements run as Python on NumPy arrays.

A kernel is a tree of statements over [R, C] tiles of one dtype (INT32, FP32 or FP16, seed k
takes DTYPES[k % 3]) and INDEX scalars:
- tile ops (tile_expr_fuzz's exact ones: binary, unary, tile x scalar with a literal or a scalar
  expression, a row / column reduction broadcast back over a tile), and [R, 1] column tiles (row
  reductions, ops on columns) carried like the others and broadcast back by pl.row_expand_*, a conditional expression
  choosing between two tiles, and tuple assignments that swap tiles (`ta, tb = tb, ta`) or read
  both before binding (`ta, tb = tb, pl.add(ta, tb)`);
- loads (of x, and of what earlier stores wrote into out) and stores at row blocks chosen by
  run-time scalars (`[(s % 3) * R, 0]`), and
  `pl.tensor.write` of a scalar into an INT64 tensor at a run-time column;
- scalar statements (`s = (...) % M`: + - * // %, min, max, abs, conditional expressions),
  BOOL ones (`b = <condition>`, read by later conditions) and, on float tiles, FP32 ones
  (`f = pl.cast(s, pl.FP32) * 0.5`, `f = g * 0.5 + pl.cast(s, pl.FP32)`, `f = g - h`: NumPy
  float32 in the model) used as tile ops' scalars;
- `pl.range` / Python `range` (one to three arguments, negative steps, bounds from the scalar
  parameters n0 / n1, from enclosing loop variables and scalars: zero trips included),
  `pl.parallel` and `pl.unroll`, nested up to three deep;
- a third of the seeds (dynamic_rows) load with a run-time row count `nr` (the orchestration passes
  R): the same values through run-time-shaped tiles;
- `if` / `elif` / `else` on comparisons joined by `and` / `or` / `not`, some without `else`.
A name rebound in a loop is carried; a name first bound in a loop body (scalars) is read after
it (the implicit carry, 0 when the loop runs no iteration); a name bound in every branch of an
`if` is read after it. Names are never reused once out of scope, so Python's scoping (with an
unbound scalar reading 0) is the reference: the model is the kernel's own statements run by
Python with `pl` bound to NumPy versions of the ops (tile_expr_fuzz's references). Every run
(three draws of n0, n1 and the inputs; an unbound BOOL reads False) must store the model's bits (a NaN matching any NaN) in
`out` and write the model's scalars into `os`. Seeds 3, 7, 11, ... compile the printed form of the
parsed program (explicit `init_values=` / `pl.yield_`) instead.

    findings = check(seed=3)      # [] when the kernel agrees with the model

Used by tests/python/test_kernel_flow_fuzz.py (a seeded smoke) and scripts/fuzz_exprs.py --kind flow.
"""
import random

import numpy as np

import tile_expr_fuzz as tf

DTYPES = ["INT32", "FP32", "FP16"]
SHAPES = [(1, 1), (1, 8), (2, 5), (3, 16), (4, 8), (8, 3)]
XS, OS, NW = 3, 4, 6          # row blocks of x and out, columns of os
STATEMENTS = 26               # per kernel, counting those in loop and branch bodies
MAX_DEPTH = 3
BINARY = {"INT32": ["add", "sub", "mul", "maximum", "minimum", "xor", "and_"],
          "FP32": ["add", "sub", "mul", "maximum", "minimum", "div"],
          "FP16": ["add", "sub", "mul", "maximum", "minimum"]}
UNARY = ["neg", "abs", "relu"]
WITH_SCALAR = ["adds", "subs", "muls", "maximums", "minimums"]
REDUCE = [("row_expand_%s", "row_%s"), ("col_expand_%s", "col_%s")]
FLOAT_LITERALS = ["0.5", "-2.0", "-0.0", "3.0"]


class _Scope:
    """Names visible at a point of the kernel; `bound` collects those (re)bound in this block."""

    def __init__(self, tiles, scalars, loop_vars, bools=(), floats=(), cols=()):
        self.tiles, self.scalars, self.loop_vars = set(tiles), set(scalars), list(loop_vars)
        self.bools, self.floats, self.cols = set(bools), set(floats), set(cols)
        self.bound = set()

    def child(self, loop_var=None):
        return _Scope(self.tiles, self.scalars, self.loop_vars + ([loop_var] if loop_var else []), self.bools,
                      self.floats, self.cols)

    def names(self, prefix):
        return {"t": self.tiles, "s": self.scalars, "b": self.bools, "f": self.floats, "c": self.cols}[prefix]

    def values(self):
        """The scalar-like names (INDEX, BOOL, FP32)."""
        return self.scalars | self.bools | self.floats


def dynamic_rows(seed: int) -> bool:
    return (seed // len(DTYPES)) % 3 == 2


class _Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.dtype = DTYPES[seed % len(DTYPES)]
        self.r, self.c = self.rng.choice(SHAPES)
        # a third of the seeds load with a run-time row count (nr, passed as R): the same values
        # through run-time-shaped tiles and their carry slots
        self.rows = "nr" if dynamic_rows(seed) else str(self.r)
        self.columns = True   # [R, 1] tiles (row reductions) carried like the [R, C] ones
        self.binary, self.unary = BINARY[self.dtype], UNARY   # the ops it draws from
        self.lines = []          # (indent, text)
        self.scalar_names = set()
        self.count = 0
        self.budget = STATEMENTS

    def fresh(self, prefix):
        self.count += 1
        return "%s%d" % (prefix, self.count)

    def emit(self, indent, text):
        self.lines.append((indent, text))

    # -- scalar expressions (INDEX; kept small so that no trip count or value runs away) --
    def atom(self, scope):
        rng = self.rng
        names = sorted(scope.scalars) + scope.loop_vars
        if names and rng.random() < 0.75:
            return rng.choice(names)
        return str(rng.randint(-2, 9))

    def sexpr(self, scope, depth=0):
        rng = self.rng
        if depth >= 2 or rng.random() < 0.3:
            return self.atom(scope)
        a, b = self.sexpr(scope, depth + 1), self.sexpr(scope, depth + 1)
        form = rng.randrange(8)
        if form == 0:
            return "(%s + %s)" % (a, b)
        if form == 1:
            return "(%s - %s)" % (a, b)
        if form == 2:
            return "(%s * %s %% 97)" % (a, b)
        if form == 3:
            return "(%s // %d)" % (a, rng.randint(1, 4))
        if form == 4:
            return "(%s %% %d)" % (a, rng.randint(1, 5))
        if form == 5:
            return "%s(%s, %s)" % (rng.choice(["min", "max"]), a, b)
        if form == 6:
            return "abs(%s)" % a
        return "(%s if %s else %s)" % (a, self.cond(scope, depth + 1), b)

    def cond(self, scope, depth=0):
        rng = self.rng
        form = rng.randrange(7)
        if form == 6 and scope.bools:
            return rng.choice(sorted(scope.bools))
        if form == 0 and depth < 2:
            return "%s %s %s" % (self.cond(scope, 2), rng.choice(["and", "or"]), self.cond(scope, 2))
        if form == 1 and depth < 2:
            return "not %s" % self.cond(scope, 2)
        if form == 2:
            return "%s %% 2 == %d" % (self.atom(scope), rng.randint(0, 1))
        return "%s %s %s" % (self.atom(scope), rng.choice(["<", "<=", ">", ">=", "==", "!="]), self.atom(scope))

    def small(self, scope, n):
        """A scalar expression in [0, n)."""
        return "(%s %% %d)" % (self.sexpr(scope, 1), n)

    def bound_expr(self, scope):
        """A loop bound: small, so the loops stay short."""
        rng = self.rng
        form = rng.randrange(6)
        if form == 0:
            return str(rng.randint(-1, 4))
        if form == 1:
            return rng.choice(["n0", "n1"])
        if form == 2 and scope.loop_vars:
            return "%s + 1" % rng.choice(scope.loop_vars)
        if form == 3:
            return self.small(scope, 4)
        return rng.choice(["n0", "n1", str(rng.randint(0, 3))])

    # -- tile expressions --
    def tile_expr(self, scope):
        rng, tiles = self.rng, sorted(scope.tiles)
        pick = lambda: rng.choice(tiles)   # noqa: E731
        form = rng.randrange(10)
        if scope.cols and rng.random() < 0.15:
            return "pl.row_expand_%s(%s, %s)" % (rng.choice(["add", "sub", "max", "min", "mul"]), pick(),
                                                 rng.choice(sorted(scope.cols)))
        if form < 4:
            return self.op_text(rng.choice(self.binary), [pick(), pick()])
        if form == 4:
            return self.op_text(rng.choice(self.unary), [pick()])
        if form < 7:
            if scope.floats and rng.random() < 0.3:
                scalar = rng.choice(sorted(scope.floats))
            elif self.dtype != "INT32" and rng.random() < 0.4:
                scalar = rng.choice(FLOAT_LITERALS)
            else:
                scalar = self.sexpr(scope, 1)
            return self.op_text(rng.choice(WITH_SCALAR), [pick(), scalar])
        if form == 7:
            expand, reduce = rng.choice(REDUCE)
            return self.reduce_text(expand % rng.choice(["add", "sub", "max", "min"]), reduce % rng.choice(["max", "min"]),
                                    pick(), pick())
        if form == 8:
            return "(%s if %s else %s)" % (pick(), self.cond(scope, 1), pick())
        if rng.random() < 0.3:   # what a store wrote (or the caller's values)
            return self.load_text("out", "%s * %d" % (self.small(scope, OS), self.r))
        return self.load_text("x", "%s * %d" % (self.small(scope, XS), self.r))

    # how the kernel spells its ops (orch_flow_fuzz.py spells them as kernel calls in an orchestration)
    def op_text(self, op, args):
        return "pl.%s(%s)" % (op, ", ".join(args))

    def reduce_text(self, expand, reduce, a, b):
        return "pl.%s(%s, pl.%s(%s))" % (expand, a, reduce, b)

    def load_text(self, src, row):
        return "pl.load(%s, [%s, 0], [%s, %d])" % (src, row, self.rows, self.c)

    def store_text(self, tile, row):
        return "out = pl.store(%s, [%s, 0], out)" % (tile, row)

    def col_expr(self, scope):
        """An [R, 1] tile: a row reduction of a tile, or an op on earlier columns."""
        rng, cols = self.rng, sorted(scope.cols)
        form = rng.randrange(5) if cols else 0
        if form == 0:
            return "pl.%s(%s)" % (rng.choice(["row_max", "row_min"] + (["row_sum"] if self.dtype == "INT32" else [])),
                                  rng.choice(sorted(scope.tiles)))
        if form == 1:
            return "pl.%s(%s, %s)" % (rng.choice(self.binary), rng.choice(cols), rng.choice(cols))
        if form == 2:
            return "pl.%s(%s, %s)" % (rng.choice(WITH_SCALAR), rng.choice(cols), self.sexpr(scope, 1))
        if form == 3:
            return "pl.%s(%s)" % (rng.choice(self.unary), rng.choice(cols))
        return "(%s if %s else %s)" % (rng.choice(cols), self.cond(scope, 1), rng.choice(cols))

    # -- statements --
    def fexpr(self, scope):
        """An FP32 scalar expression (float dtypes): small values, rounded to FP32 by every op."""
        rng, floats = self.rng, sorted(scope.floats)
        form = rng.randrange(3) if floats else 0
        if form == 0:
            return "pl.cast(%s, pl.FP32) * %s" % (self.sexpr(scope, 1), rng.choice(["0.5", "-1.5", "0.25", "3.0"]))
        if form == 1:
            return "%s * 0.5 + pl.cast(%s, pl.FP32)" % (rng.choice(floats), self.sexpr(scope, 1))
        return "%s - %s" % (rng.choice(floats), rng.choice(floats))

    def scalar_expr(self, scope):
        return "(%s) %% %d" % (self.sexpr(scope), self.rng.choice([7, 13, 100, 1000]))

    def bind(self, scope, indent, prefix, name=None):
        """`name = <expr>` of the kind `prefix` names: t tile, c column, s INDEX, b BOOL, f FP32 (a name
        already visible, else a fresh one)."""
        names = scope.names(prefix)
        if name is None:
            name = rng_choice_or_fresh(self.rng, names - {"n0", "n1"}, lambda: self.fresh(prefix))
        expr = {"t": self.tile_expr, "c": self.col_expr, "s": self.scalar_expr, "b": self.cond, "f": self.fexpr}[prefix]
        self.emit(indent, "%s = %s" % (name, expr(scope)))
        if prefix in "sbf":
            self.scalar_names.add(name)
        names.add(name)
        scope.bound.add(name)

    def statement(self, scope, indent, depth):
        rng = self.rng
        self.budget -= 1
        kind = rng.choices(["tile", "scalar", "bool", "float", "col", "swap", "store", "write", "loop", "if"],
                           [8, 4, 1, 0 if self.dtype == "INT32" else 1, 2 if self.columns else 0, 1, 2, 1,
                            0 if depth >= MAX_DEPTH else 3, 0 if depth >= MAX_DEPTH else 2])[0]
        if kind in ("tile", "scalar", "bool", "float", "col"):
            self.bind(scope, indent, {"tile": "t", "scalar": "s", "bool": "b", "float": "f", "col": "c"}[kind])
        elif kind == "swap" and len(scope.tiles) >= 2:
            a, b = rng.sample(sorted(scope.tiles), 2)
            second = a if rng.random() < 0.5 else self.op_text(rng.choice(self.binary), [a, b])
            self.emit(indent, "%s, %s = %s, %s" % (a, b, b, second))
            scope.bound |= {a, b}
        elif kind == "store":
            self.emit(indent, self.store_text(rng.choice(sorted(scope.tiles)), "%s * %d" % (self.small(scope, OS), self.r)))
        elif kind == "write":
            self.emit(indent, "pl.tensor.write(os, [0, %s], pl.cast(%s, pl.INT64))" % (
                self.small(scope, NW), self.sexpr(scope)))
        elif kind == "loop":
            self.loop(scope, indent, depth)
        elif kind == "if":
            self.branch(scope, indent, depth)
        else:
            self.bind(scope, indent, "t")

    def block(self, scope, indent, depth, n):
        start = len(self.lines)
        for _ in range(n):
            if self.budget <= 0:
                break
            self.statement(scope, indent, depth)
        if not any(i == indent for i, _ in self.lines[start:]):
            self.bind(scope, indent, "t")   # a body is never empty

    def loop(self, scope, indent, depth):
        rng = self.rng
        var = self.fresh("i")
        form = rng.randrange(7)
        if form == 0:
            lo = rng.randint(-1, 2)
            header = "pl.unroll(%d, %d)" % (lo, lo + rng.randint(0, 3)) if rng.random() < 0.5 else \
                "pl.unroll(%d)" % rng.randint(0, 3)
        else:
            fn = {1: "range", 2: "pl.parallel"}.get(form, "pl.range")
            args = rng.randrange(3)
            a, b = self.bound_expr(scope), self.bound_expr(scope)
            if args == 0:
                header = "%s(%s)" % (fn, a)
            elif args == 1:
                header = "%s(%s, %s)" % (fn, a, b)
            else:
                step = rng.choice([1, 2, -1, -2])
                header = "%s(%s, %s, %d)" % (fn, b if step < 0 else a, a if step < 0 else b, step)
        self.emit(indent, "for %s in %s:" % (var, header))
        body = scope.child(var)
        self.block(body, indent + 1, depth + 1, rng.randint(1, 5))
        # carried: names bound before the loop keep being visible; a scalar first bound at the
        # body's top level is read after the loop too (seeded with 0 for zero trips)
        scope.bound |= body.bound & (scope.tiles | scope.cols | scope.values())
        for name in body.values() - scope.values():
            if name in body.bound:
                scope.names(name[0]).add(name)
                scope.bound.add(name)

    def branch(self, scope, indent, depth):
        rng = self.rng
        arms = rng.choice([1, 2, 2, 3])
        has_else = arms > 1 and rng.random() < 0.8
        joined_tile = self.fresh("t") if has_else and rng.random() < 0.5 else None
        joined_scalar = self.fresh(rng.choice("ssb" if self.dtype == "INT32" else "ssbf")) \
            if has_else and rng.random() < 0.5 else None
        bodies = []
        for k in range(arms):
            last = k == arms - 1
            if last and has_else:
                self.emit(indent, "else:")
            else:
                self.emit(indent, "%s %s:" % ("if" if k == 0 else "elif", self.cond(scope)))
            body = scope.child()
            self.block(body, indent + 1, depth + 1, rng.randint(1, 4))
            if joined_tile:
                self.bind(body, indent + 1, "t", joined_tile)
            if joined_scalar:
                self.bind(body, indent + 1, joined_scalar[0], joined_scalar)
            bodies.append(body)
        for body in bodies:
            scope.bound |= body.bound & (scope.tiles | scope.cols | scope.values())
        for name in (joined_tile, joined_scalar):
            if name:
                scope.names(name[0]).add(name)
                scope.bound.add(name)


def rng_choice_or_fresh(rng, names, fresh):
    names = sorted(names)
    return rng.choice(names) if names and rng.random() < 0.55 else fresh()


class Case:
    def __init__(self, seed, dtype, r, c, body, scalar_names, gen=None):
        self.seed, self.dtype, self.r, self.c = seed, dtype, r, c
        self.body, self.scalar_names, self.gen = body, scalar_names, gen


def make_case(seed: int, gen=None) -> Case:
    g = (gen or _Gen)(seed)
    scope = _Scope(["t0", "t1"], ["n0", "n1"], [])
    g.emit(0, "t0 = %s" % g.load_text("x", "0"))
    g.emit(0, "t1 = %s" % g.load_text("x", str(g.r)))
    while g.budget > 0:
        g.statement(scope, 0, 0)
    for k, name in enumerate(sorted(scope.tiles)[-2:]):
        g.emit(0, g.store_text(name, str((OS - 1 - k) * g.r)))
    for k, name in enumerate(sorted(scope.scalars)[-2:] + sorted(scope.bools)[-1:] + sorted(scope.floats)[-1:]):
        g.emit(0, "pl.tensor.write(os, [0, %d], pl.cast(%s, pl.INT64))" % (NW - 1 - k, name))
    body = "\n".join("    " * i + text for i, text in g.lines)
    return Case(seed, g.dtype, g.r, g.c, body, sorted(g.scalar_names), g)


_PROGRAM = '''import pypto.language as pl


@pl.program
class KernelFlow:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[{xr}, {c}], pl.{dtype}], n0: pl.Scalar[pl.INDEX], n1: pl.Scalar[pl.INDEX], nr: pl.Scalar[pl.INDEX],
          out: pl.InOut[pl.Tensor[[{orows}, {c}], pl.{dtype}]],
          os: pl.InOut[pl.Tensor[[1, {nw}], pl.INT64]]) -> pl.Tensor[[{orows}, {c}], pl.{dtype}]:
{body}
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{xr}, {c}], pl.{dtype}], n0: pl.Scalar[pl.INDEX], n1: pl.Scalar[pl.INDEX],
             out: pl.InOut[pl.Tensor[[{orows}, {c}], pl.{dtype}]],
             os: pl.InOut[pl.Tensor[[1, {nw}], pl.INT64]]) -> pl.Tensor[[{orows}, {c}], pl.{dtype}]:
        out = self.k(x, n0, n1, {r}, out, os)
        return out
'''


def program_text(case: Case) -> str:
    body = "\n".join("        " + ln for ln in case.body.splitlines())
    return _PROGRAM.format(xr=XS * case.r, orows=OS * case.r, r=case.r, c=case.c, dtype=case.dtype, nw=NW, body=body)


class _Model:
    """`pl` for the model: the ops on NumPy arrays of the case's dtype."""

    INT64, FP32 = "INT64", "FP32"

    def __init__(self, dtype):
        ops = tf._ops(dtype)
        self.range = self.unroll = self.parallel = range
        self.tensor = self
        for name, (arity, fn) in ops.items():
            if arity in (1, 2, "r", "c", "re", "ce"):
                setattr(self, name, self._op(dtype, fn))
            elif arity == "s":
                setattr(self, name, self._scalar_op(dtype, fn))

    @staticmethod
    def _op(dtype, fn):
        def apply(*args):
            with np.errstate(all="ignore"):
                return tf._as(dtype, fn(*args))
        return apply

    @staticmethod
    def _scalar_op(dtype, fn):
        def apply(a, s):
            with np.errstate(all="ignore"):
                return tf._as(dtype, fn(a, tf._scalar_value(dtype, s)))
        return apply

    @staticmethod
    def load(x, offsets, shape):
        (r0, c0), (h, w) = offsets, shape
        assert 0 <= r0 and r0 + h <= x.shape[0], "the generator keeps loads inside x"
        return x[r0:r0 + h, c0:c0 + w].copy()

    @staticmethod
    def store(t, offsets, out):
        r0, c0 = offsets
        assert 0 <= r0 and r0 + t.shape[0] <= out.shape[0], "the generator keeps stores inside out"
        out[r0:r0 + t.shape[0], c0:c0 + t.shape[1]] = t
        return out

    @staticmethod
    def write(os, index, value):
        os[index[0], index[1]] = value

    @staticmethod
    def cast(value, dtype):
        return np.float32(value) if dtype == "FP32" else int(value)   # toward zero, as the DSL's cast


def model_function(case: Case):
    """The kernel's statements as a Python function (pl, x, n0, n1, out, os) -> None."""
    seeds = "".join("    %s = 0\n" % name for name in case.scalar_names) + "    nr = %d\n" % case.r
    body = "\n".join("    " + ln for ln in case.body.splitlines())
    src = "def model(pl, x, n0, n1, out, os):\n%s%s\n" % (seeds, body)
    namespace = {}
    exec(compile(src, "<kernel_flow model %d>" % case.seed, "exec"), namespace)
    return namespace["model"]


def draw(case: Case, k: int):
    """Draw k: (x, n0, n1, out, os). Draw 1 passes n0 = n1 = 0 (loops on them run no iteration)."""
    rng = np.random.default_rng(case.seed * 7 + k)
    x = tf.inputs(case.seed * 7 + k, (XS * case.r, case.c), case.dtype)[0]
    n0, n1 = (0, 0) if k == 1 else (int(v) for v in rng.integers(-2, 6, 2))
    out = tf._as(case.dtype, rng.integers(-9, 9, (OS * case.r, case.c)))
    os = np.full((1, NW), -7, np.int64)
    return x, n0, n1, out, os


def _bits(a):
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def _same(got, want):
    same = _bits(got) == _bits(want)
    if got.dtype.kind == "f":
        same |= np.isnan(got) & np.isnan(want)
    return same


def parse(text: str, name: str, seed: int):
    """The program of `text`; seeds 3, 7, 11, ... take its printed form (ir.python_print) parsed
    again instead, so the printer's explicit carries, yields and seeds run against the model too."""
    import pypto.language as pl
    from pypto import ir
    program = pl.parse_program(text, name)
    return pl.parse_program(ir.python_print(program), name) if seed % 4 == 3 else program


def check(seed: int):
    """Builds case `seed`, runs it on three draws and returns the disagreements with the model."""
    import pypto
    case = make_case(seed)
    prog = pypto.compile(parse(program_text(case), "kernel_flow_%d.py" % seed, seed))
    model = model_function(case)
    findings = []
    for k in range(3):
        x, n0, n1, out, os = draw(case, k)
        want_out, want_os = out.copy(), os.copy()
        model(_Model(case.dtype), x, n0, n1, want_out, want_os)
        prog(x, n0, n1, out, os)
        findings += compare(case, k, n0, n1, [("out", out, want_out), ("os", os, want_os)])
    return findings


def compare(case: Case, k, n0, n1, results):
    """The disagreements in `results`, (what, got, model) triples, of draw k."""
    findings = []
    for what, got, want in results:
        ok = _same(got, want)
        if not ok.all():
            i = tuple(int(v) for v in np.argwhere(~ok)[0])
            findings.append("seed %d (%s) draw %d (n0=%d, n1=%d): %s: %d element(s) differ, first at %s: "
                            "got %r, model %r" % (case.seed, case.dtype, k, n0, n1, what, int((~ok).sum()), i,
                                                  got[i], want[i]))
    return findings
