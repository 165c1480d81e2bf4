"""Differential fuzzing of `with pl.at(level=pl.Level.CORE_GROUP):` scopes (docs/dsl.md, "Tensor-level
ops inside kernels and pl.at bodies"): kernel_flow_fuzz's random statement trees written in an
orchestration on tensors, every compute op inside a pl.at scope, compared with the same statements
run as Python on NumPy arrays.

The orchestration spells kernel_flow_fuzz's statements with tensor ops (`pl.add(a, b)`, `pl.add(a, s)`
for a tile x scalar op, `pl.row_max(a)`, `pl.slice(x, [R, C], [row, 0])` for a load,
`out = pl.assemble(out, t, [row, 0])` for a store). Then each statement list is cut into scopes at
random: a run of tensor statements, and loops and branches holding nothing but tensor statements,
go into one `pl.at` scope (some `pl.at(...) as tid`, a Submit rather than a call, and some
`pl.spmd(1)`, and, around loops, some `pl.at(..., optimizations=[pl.auto_chunk])` with the
loops chunked, `chunk=C`, some `chunk_policy="leading_full"`); a scope ends at random too. On INT32 seeds some scalars read a tensor element
(`pl.tensor.read`): in a scope the kernel's read, outside it the orchestration's. Then runs of
statements of any kind whose values nothing reads after them go into `with pl.scope():` blocks
(runtime scopes: their allocations end with them). A statement that computes is always inside
one; one that only assembles or picks a tensor (`(ta if c else tb)`, `ta, tb = tb, ta`) may stay
outside. Scalar statements stay outside (a scalar computed in a scope cannot be used after it).

So OutlineIncoreScopes (which values a scope reads, writes and hands on), ConvertTensorToTileOps
(tensor ops to tile ops, the returned values' storage: anchor_features §9 rule 5), and the
orchestration's carries of the scopes' results through loops and branches are checked against
Python's meaning of the program, bit for bit, on three draws (the second race-checked); odd seeds
with the dependencies the compiler derives, seeds 3, 7, 11, ... from the printed form.

Loads are always inside a scope, where a slice is a copy (a tile load): every tensor name holds a
value of its own, never a view, so Python's reading of the statements is the program's.

    findings = check(seed=3)      # [] when the orchestration agrees with the model

Used by tests/python/test_at_flow_fuzz.py (a seeded smoke) and scripts/fuzz_exprs.py --kind at.
"""
import ast
import contextlib
import itertools
import random
import re

import numpy as np

import kernel_flow_fuzz as kf
import orch_flow_fuzz as of

# kernel_flow_fuzz's tile x scalar ops: on tensors the binary op with a scalar operand
SCALAR_OPS = {"adds": "add", "subs": "sub", "muls": "mul", "maximums": "maximum", "minimums": "minimum"}
# calls a statement outside a scope may make (host-side tensor ops and scalar helpers)
HOST_CALLS = {"pl.assemble", "pl.tensor.read", "pl.cast", "pl.tensor.write", "min", "max", "abs", "range",
              "pl.range", "pl.parallel", "pl.unroll"}
AT = "pl.at(level=pl.Level.CORE_GROUP)"
SPMD = "pl.spmd(1)"
AUTO_CHUNK = "pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk])"


class _AtGen(kf._Gen):
    """kernel_flow_fuzz's generator, spelling loads and stores on tensors (static row counts)."""

    def __init__(self, seed):
        super().__init__(seed)
        self.rows = str(self.r)
        # xor, and_ and relu are tile-only names (reference_ops.md §1.1): no tensor form
        self.binary = [op for op in self.binary if op not in ("xor", "and_")]
        self.unary = [op for op in self.unary if op != "relu"]

    def atom(self, scope):
        """INT32 seeds read tensor elements too (in a scope: the kernel's read; outside: the
        orchestration's, which waits for the scopes that write the tensor)."""
        return of.read_atom(self, scope) or super().atom(scope)

    def load_text(self, src, row):
        return "pl.slice(%s, [%d, %d], [%s, 0])" % (src, self.r, self.c, row)

    def store_text(self, tile, row):
        return "out = pl.assemble(out, %s, [%s, 0])" % (tile, row)


def _targets(st):
    names = []
    for t in st.targets if isinstance(st, ast.Assign) else []:
        names += [e.id for e in t.elts] if isinstance(t, ast.Tuple) else [t.id]
    return names


def _calls(node):
    return {ast.unparse(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}


def _is_write(st):
    return isinstance(st, ast.Expr) and _calls(st) and ast.unparse(st.value.func) == "pl.tensor.write"


def _scopable(st) -> bool:
    """A tensor statement (tile, column, swap, store), a write into os, or a loop or branch of these."""
    if isinstance(st, (ast.For, ast.If)):
        return all(_scopable(s) for s in st.body + st.orelse)
    if _is_write(st):
        return True
    names = _targets(st)
    return bool(names) and all(n[0] in "tc" or n == "out" for n in names)


def _computes(st) -> bool:
    """A statement that must be inside a scope: it calls a compute op (or a slice, a load)."""
    return isinstance(st, ast.Assign) and bool(_calls(st.value) - HOST_CALLS)


def _at_scope(body, rng, counter):
    """A scope around `body`: mostly `pl.at`, some `pl.at ... as tid` (a Submit instead of a call),
    some `pl.spmd(1)` (the pl.spmd outlining, one block); a body with a loop some
    `pl.at(..., optimizations=[pl.auto_chunk])`, its pl.range / pl.parallel / pl.unroll loops
    chunked (`chunk=C`, some `chunk_policy="leading_full"`)."""
    form = rng.random()
    loops = [n for st in body for n in ast.walk(st) if isinstance(n, ast.For)
             and ast.unparse(n.iter.func) in ("pl.range", "pl.parallel", "pl.unroll")]
    if loops and form < 0.3:
        for loop in loops:
            loop.iter.keywords.append(ast.keyword(arg="chunk", value=ast.Constant(rng.randint(1, 4))))
            if rng.random() < 0.4:
                loop.iter.keywords.append(ast.keyword(arg="chunk_policy", value=ast.Constant("leading_full")))
        header, tid = AUTO_CHUNK, None
    else:
        header, tid = (AT, None) if form < 0.7 else (AT, "tid%d" % next(counter)) if form < 0.85 else (SPMD, None)
    item = ast.withitem(context_expr=ast.parse(header, mode="eval").body,
                        optional_vars=ast.Name(id=tid, ctx=ast.Store()) if tid else None)
    return ast.With(items=[item], body=body)


def cut_into_scopes(stmts, rng, counter=None):
    """`stmts` with runs of scopable statements in pl.at scopes (every computing one in one)."""
    out, run = [], []
    counter = counter if counter is not None else itertools.count()

    def close():
        if run:
            out.append(_at_scope(list(run), rng, counter))
            run.clear()
    for st in stmts:
        whole = _scopable(st) and (not isinstance(st, (ast.For, ast.If)) or rng.random() < 0.5)
        if whole and (_computes(st) or isinstance(st, (ast.For, ast.If)) or rng.random() < 0.5):
            if run and rng.random() < 0.3:
                close()
            run.append(st)
            continue
        close()
        if isinstance(st, (ast.For, ast.If)):
            st.body = cut_into_scopes(st.body, rng, counter)
            st.orelse = cut_into_scopes(st.orelse, rng, counter) if st.orelse else []
        out.append(st)
    close()
    return out


# names a runtime scope may rebind and code after it read: a write or an assemble into them is
# the tensor itself; numbers (s*, f*, b*) leave through exit slots. The kernels' tensors (t*, c*)
# are the runtime's allocations, reclaimed at the end of the scope.
THROUGH_SCOPES = {"out", "os"}


def _leaves_scopes(name):
    return name in THROUGH_SCOPES or re.fullmatch(r"[sfb]\d+", name) is not None


def _stored(nodes):
    """The names `nodes` bind, a `pl.tensor.write(t, ...)` statement binding t (it rebinds it)."""
    names = set()
    for n in (n for st in nodes for n in ast.walk(st)):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        elif isinstance(n, ast.Expr) and _is_write(n) and isinstance(n.value.args[0], ast.Name):
            names.add(n.value.args[0].id)
    return names


def name_lines(tree):
    """name -> the lines it is read or bound on."""
    lines = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            lines.setdefault(n.id, []).append(n.lineno)
    return lines


def wrap_runtime_scopes(stmts, rng, mentioned):
    """Runs of statements (any kind) in `with pl.scope():` blocks where every tensor name they
    bind but `out` / `os` is bound and read nowhere else (a tensor the runtime allocates in a scope
    does not leave it: not to code after it, nor around a loop's back edge, nor as a branch's or
    loop's result); numbers may leave."""
    for st in stmts:
        if isinstance(st, (ast.For, ast.If)):   # (not into pl.at bodies: kernels have no runtime scopes)
            wrap_runtime_scopes(st.body, rng, mentioned)
            wrap_runtime_scopes(st.orelse, rng, mentioned)
    if not stmts or rng.random() < 0.5:
        return
    k = rng.randrange(len(stmts))
    run = stmts[k:k + rng.randint(1, 3)]
    first, last = run[0].lineno, run[-1].end_lineno
    if any(not first <= line <= last for name in _stored(run) if not _leaves_scopes(name)
           for line in mentioned.get(name, [])):
        return
    stmts[k:k + len(run)] = [ast.With(items=[ast.withitem(context_expr=ast.parse("pl.scope()", mode="eval").body)],
                                      body=run)]


def make_case(seed: int) -> kf.Case:
    case = kf.make_case(seed, _AtGen)
    text = re.sub(r"pl\.(%s)\(" % "|".join(SCALAR_OPS), lambda m: "pl.%s(" % SCALAR_OPS[m.group(1)], case.body)
    tree = ast.parse(text)
    rng = random.Random(seed * 31 + 7)
    tree.body = cut_into_scopes(tree.body, rng)
    tree = ast.parse(ast.unparse(ast.fix_missing_locations(tree)))   # line numbers of the final text
    wrap_runtime_scopes(tree.body, rng, name_lines(tree))
    case.body = ast.unparse(ast.fix_missing_locations(tree))
    return case


_PROGRAM = '''import pypto.language as pl


@pl.program
class AtFlow:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{xr}, {c}], pl.{dtype}], n0: pl.Scalar[pl.INDEX], n1: pl.Scalar[pl.INDEX],
             out: pl.InOut[pl.Tensor[[{orows}, {c}], pl.{dtype}]],
             os: pl.InOut[pl.Tensor[[1, {nw}], pl.INT64]]) -> pl.Tensor[[{orows}, {c}], pl.{dtype}]:
{body}
        return out
'''


def program_text(case: kf.Case) -> str:
    body = "\n".join("        " + ln for ln in case.body.splitlines())
    return _PROGRAM.format(xr=kf.XS * case.r, orows=kf.OS * case.r, c=case.c, dtype=case.dtype, nw=kf.NW,
                           body=body)


class _AtModel(of._OrchModel):
    """`pl` for the model: tensor ops dispatching on a scalar operand, slices that copy, pl.at a no-op."""

    class Level:
        CORE_GROUP = "CORE_GROUP"

    auto_chunk = "auto_chunk"

    def __init__(self, dtype):
        super().__init__(dtype)
        self.range = self.parallel = self.unroll = lambda *bounds, chunk=None, chunk_policy=None: range(*bounds)
        for binary, scalar in ((b, s) for s, b in SCALAR_OPS.items()):
            setattr(self, binary, self._dispatch(getattr(self, binary), getattr(self, scalar)))

    @staticmethod
    def _dispatch(on_tensors, on_scalar):
        return lambda a, b: on_tensors(a, b) if isinstance(b, np.ndarray) else on_scalar(a, b)

    @staticmethod
    def slice(x, shape, offsets):
        return of._OrchModel.slice(x, shape, offsets).copy()

    @staticmethod
    def at(level, optimizations=()):
        return contextlib.nullcontext()

    @staticmethod
    def spmd(blocks):
        return contextlib.nullcontext()

    @staticmethod
    def scope():
        return contextlib.nullcontext()


def check(seed: int):
    """Builds case `seed`, runs it on three draws (the second race-checked) and returns the
    disagreements with the model."""
    import pypto
    case = make_case(seed)
    prog = pypto.compile(kf.parse(program_text(case), "at_flow_%d.py" % seed, seed),
                         analyze_auto_scopes_for_deps=of.derives_dependencies(seed))
    run_model = of.model_function(case, "at_flow")
    findings = []
    for k in range(3):
        x, n0, n1, out, os = kf.draw(case, k)
        want_out, want_os = out.copy(), os.copy()
        run_model(None, _AtModel(case.dtype), x, n0, n1, want_out, want_os)
        prog(x, n0, n1, out, os, race_check=(k == 1))
        findings += kf.compare(case, k, n0, n1, [("out", out, want_out), ("os", os, want_os)])
    return findings
