"""Differential fuzzing of control flow in orchestrations: kernel_flow_fuzz's random statement trees
written in an orchestration function, its tile ops as kernel calls on tensors, compared with the
same statements run as Python on NumPy arrays.

The orchestration spells kernel_flow_fuzz's statements on [R, C] tensors:
- an op is a call of a one-op kernel into a fresh tensor, `self.k_add(a, b, pl.create_tensor(...))`
  (a row / column reduction broadcast back is one kernel, `self.k_row_expand_add_row_max(a, b, ...)`);
  a tile x scalar op passes the scalar expression as the kernel's INDEX (or FP32) argument;
- a load is a view, `pl.slice(x, [R, C], [row, 0])`, of x or of `out` (what earlier assembles
  wrote: a view reads the tensor it views when its readers run, so a later write into `out` shows
  through it, as a NumPy view does);
- a store is `out = pl.assemble(out, t, [row, 0])`; `pl.tensor.write(os, ...)` writes scalars;
- an accumulation `self.k_acc_add(a, o)` updates its InOut tensor o in place (ACCUMULATE of the
  tile expressions): o may be a view of out or of x (x is InOut, and checked too), or a tensor
  another name holds as well, and a may be o itself;
- on INT32 seeds a tenth of the scalar atoms read a tensor element,
  `pl.cast(pl.tensor.read(t, [i, j]), pl.INDEX) % 100` (in loop bounds, conditions, offsets, kernel
  scalars: the orchestration waits for the element's writers);
- tensors are carried through loops, swapped (`ta, tb = tb, ta`), chosen by conditional
  expressions, and bound in every branch of an `if`; scalars and BOOLs as in the kernels;
- runs of statements whose tensor names appear nowhere else go into `with pl.scope():` blocks.
So the frontend's carries and implicit carries, the runtime scopes (allocations that escape a loop
or branch body), the views and the AUTO dependencies between the tasks are checked against
Python's meaning of the program, bit for bit, on three draws (the second with the race checker on);
odd seeds with the dependencies the compiler derives (analyze_auto_scopes_for_deps=True); seeds 3,
7, 11, ... from the printed form of the parsed program (kernel_flow_fuzz.parse).

    findings = check(seed=3)      # [] when the orchestration agrees with the model

Used by tests/python/test_orch_flow_fuzz.py (a seeded smoke) and scripts/fuzz_exprs.py --kind orch.
"""
import ast
import contextlib
import random

import numpy as np

import kernel_flow_fuzz as kf
import tile_expr_fuzz as tf


ACCUMULATE = 0.12   # the share of tile expressions that are in-place kernel calls
READ = 0.1          # the share of scalar atoms that read a tensor element (INT32 seeds)


class _OrchGen(kf._Gen):
    """kernel_flow_fuzz's generator, spelling ops as kernel calls; records the kernels it calls."""

    def __init__(self, seed):
        super().__init__(seed)
        self.kernels = {}   # name -> (kind, op[, reduce])
        self.columns = False   # its kernels take [R, C] tensors only

    def _fresh_tensor(self):
        return "pl.create_tensor([%d, %d], dtype=pl.%s)" % (self.r, self.c, self.dtype)

    def op_text(self, op, args):
        if op in kf.WITH_SCALAR and args[1] in kf.FLOAT_LITERALS:   # the kernels' scalars are INDEX:
            name = "k_%s_%s" % (op, _literal_name(args[1]))          # the literal goes in the kernel
            self.kernels[name] = ("literal", op, args[1])
            args = args[:1]
        elif op in kf.WITH_SCALAR and args[1][0] == "f":   # an FP32 scalar
            name = "k_%s_f" % op
            self.kernels[name] = ("fscalar", op)
        else:
            name = "k_" + op
            self.kernels[name] = ("scalar" if op in kf.WITH_SCALAR else "binary" if len(args) == 2 else "unary", op)
        return "self.%s(%s, %s)" % (name, ", ".join(args), self._fresh_tensor())

    def atom(self, scope):
        return read_atom(self, scope) or super().atom(scope)

    def tile_expr(self, scope):
        if self.rng.random() < ACCUMULATE:   # o's tensor updated in place (a view of out or x, too)
            op = self.rng.choice(kf.BINARY[self.dtype])
            a, o = self.rng.choice(sorted(scope.tiles)), self.rng.choice(sorted(scope.tiles))
            self.kernels["k_acc_" + op] = ("accumulate", op)
            return "self.k_acc_%s(%s, %s)" % (op, a, o)
        return super().tile_expr(scope)

    def reduce_text(self, expand, reduce, a, b):
        name = "k_%s_%s" % (expand, reduce)
        self.kernels[name] = ("reduce", expand, reduce)
        return "self.%s(%s, %s, %s)" % (name, a, b, self._fresh_tensor())

    def load_text(self, src, row):
        return "pl.slice(%s, [%d, %d], [%s, 0])" % (src, self.r, self.c, row)

    def store_text(self, tile, row):
        return "out = pl.assemble(out, %s, [%s, 0])" % (tile, row)


def read_atom(gen, scope):
    """An INT32 seed's scalar may read an element of a tensor (the orchestration waits for the
    tasks that write it): in loop bounds, conditions, offsets and kernel scalars. None otherwise."""
    if gen.dtype == "INT32" and gen.rng.random() < READ:
        return "(pl.cast(pl.tensor.read(%s, [%d, %d]), pl.INDEX) %% 100)" % (
            gen.rng.choice(sorted(scope.tiles)), gen.rng.randrange(gen.r), gen.rng.randrange(gen.c))
    return None


def _literal_name(lit):
    return lit.replace("-", "m").replace(".", "_")


def _kernel_defs(case):
    """The one-op kernels the orchestration calls."""
    r, c, dt = case.r, case.c, case.dtype
    tensor = "pl.Tensor[[%d, %d], pl.%s]" % (r, c, dt)
    load = "pl.load(%%s, [0, 0], [%d, %d])" % (r, c)
    defs = []
    for name, spec in sorted(case.gen.kernels.items()):
        kind = spec[0]
        if kind == "binary":
            params, expr = "a: T, b: T", "pl.%s(%s, %s)" % (spec[1], load % "a", load % "b")
        elif kind == "unary":
            params, expr = "a: T", "pl.%s(%s)" % (spec[1], load % "a")
        elif kind in ("scalar", "fscalar"):
            params = "a: T, s: pl.Scalar[pl.%s]" % ("INDEX" if kind == "scalar" else "FP32")
            expr = "pl.%s(%s, s)" % (spec[1], load % "a")
        elif kind == "literal":
            params, expr = "a: T", "pl.%s(%s, %s)" % (spec[1], load % "a", spec[2])
        elif kind == "accumulate":
            defs.append(_ACCUMULATE.format(name=name, op=spec[1], t=tensor, load=load % "a", load_o=load % "o"))
            continue
        else:
            params, expr = "a: T, b: T", "pl.%s(%s, pl.%s(%s))" % (spec[1], load % "a", spec[2], load % "b")
        defs.append(_KERNEL.format(name=name, params=params.replace("T", tensor), expr=expr, t=tensor))
    return "".join(defs)


_KERNEL = '''
    @pl.function(type=pl.FunctionType.InCore)
    def {name}(self, {params}, o: pl.Out[{t}]) -> {t}:
        o = pl.store({expr}, [0, 0], o)
        return o
'''

_ACCUMULATE = '''
    @pl.function(type=pl.FunctionType.InCore)
    def {name}(self, a: {t}, o: pl.InOut[{t}]) -> {t}:
        o = pl.store(pl.{op}({load_o}, {load}), [0, 0], o)
        return o
'''

_PROGRAM = '''import pypto.language as pl


@pl.program
class OrchFlow:{kernels}
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.InOut[pl.Tensor[[{xr}, {c}], pl.{dtype}]], n0: pl.Scalar[pl.INDEX], n1: pl.Scalar[pl.INDEX],
             out: pl.InOut[pl.Tensor[[{orows}, {c}], pl.{dtype}]],
             os: pl.InOut[pl.Tensor[[1, {nw}], pl.INT64]]) -> pl.Tensor[[{orows}, {c}], pl.{dtype}]:
{body}
        return out
'''


def make_case(seed: int) -> kf.Case:
    """Case `seed`, some runs of its statements in `with pl.scope():` blocks (at_flow_fuzz's rule:
    the tensors they bind appear nowhere else; numbers may leave)."""
    import at_flow_fuzz
    case = kf.make_case(seed, _OrchGen)
    tree = ast.parse(case.body)
    at_flow_fuzz.wrap_runtime_scopes(tree.body, random.Random(seed * 31 + 11), at_flow_fuzz.name_lines(tree))
    case.body = ast.unparse(ast.fix_missing_locations(tree))
    return case


def program_text(case: kf.Case) -> str:
    body = "\n".join("        " + ln for ln in case.body.splitlines())
    return _PROGRAM.format(kernels=_kernel_defs(case), xr=kf.XS * case.r, orows=kf.OS * case.r, c=case.c,
                           dtype=case.dtype, nw=kf.NW, body=body)


class _Kernels:
    """`self` for the model: each kernel computes its op on NumPy arrays into its output."""

    def __init__(self, case, model):
        for name, spec in case.gen.kernels.items():
            setattr(self, name, self._kernel(spec, model, case.dtype))

    @staticmethod
    def _kernel(spec, model, dtype):
        kind = spec[0]
        if kind == "reduce":
            expand, reduce = getattr(model, spec[1]), getattr(model, spec[2])
            fn = lambda a, b: expand(a, reduce(b))   # noqa: E731
        elif kind == "literal":
            op, lit = getattr(model, spec[1]), float(spec[2])
            fn = lambda a: op(a, lit)   # noqa: E731
        elif kind == "accumulate":
            op = getattr(model, spec[1])

            def accumulate(a, o):
                o[...] = op(o, a)
                return o
            return accumulate
        else:
            fn = getattr(model, spec[1])

        def call(*args):
            *ins, o = args
            o[...] = fn(*ins)
            return o
        return call


class _OrchModel(kf._Model):
    """`pl` for the orchestration model: views and assembles on NumPy arrays."""

    def __init__(self, dtype):
        super().__init__(dtype)
        self.dtype = dtype

    @staticmethod
    def read(t, indices):
        return int(t[indices[0], indices[1]])

    def create_tensor(self, shape, dtype=None):
        return np.zeros(shape, tf._NP[self.dtype])

    @staticmethod
    def slice(x, shape, offsets):
        (h, w), (r0, c0) = shape, offsets
        assert 0 <= r0 and r0 + h <= x.shape[0], "the generator keeps views inside their tensor"
        return x[r0:r0 + h, c0:c0 + w]        # a view, as pl.slice is

    @staticmethod
    def scope():
        return contextlib.nullcontext()

    @staticmethod
    def assemble(out, t, offsets):
        r0, c0 = offsets
        out[r0:r0 + t.shape[0], c0:c0 + t.shape[1]] = t
        return out

    def __getattr__(self, name):   # pl.INT32, pl.FP16, ... as dtype= arguments
        if name.isupper():
            return name
        raise AttributeError(name)


def derives_dependencies(seed: int) -> bool:
    """Odd seeds compile with analyze_auto_scopes_for_deps=True (docs/auto_dependencies.md): the
    compiler's dependencies must give the same values, and the race checker must see no race."""
    return seed % 2 == 1


def model_function(case: kf.Case, label: str):
    """The orchestration's statements as a Python function (self, pl, x, n0, n1, out, os) -> None,
    every scalar first 0 (the DSL's seed of an implicit carry)."""
    src = "def model(self, pl, x, n0, n1, out, os):\n%s%s\n" % (
        "".join("    %s = 0\n" % n for n in case.scalar_names),
        "\n".join("    " + ln for ln in case.body.splitlines()))
    namespace = {}
    exec(compile(src, "<%s model %d>" % (label, case.seed), "exec"), namespace)
    return namespace["model"]


def check(seed: int):
    """Builds case `seed`, runs it on three draws (the second race-checked) and returns the
    disagreements with the model."""
    import pypto
    case = make_case(seed)
    prog = pypto.compile(kf.parse(program_text(case), "orch_flow_%d.py" % seed, seed),
                         analyze_auto_scopes_for_deps=derives_dependencies(seed))
    run_model = model_function(case, "orch_flow")
    findings = []
    for k in range(3):
        x, n0, n1, out, os = kf.draw(case, k)
        want_x, want_out, want_os = x.copy(), out.copy(), os.copy()
        model = _OrchModel(case.dtype)
        run_model(_Kernels(case, model), model, want_x, n0, n1, want_out, want_os)
        prog(x, n0, n1, out, os, race_check=(k == 1))
        findings += kf.compare(case, k, n0, n1, [("out", out, want_out), ("os", os, want_os), ("x", x, want_x)])
    return findings
