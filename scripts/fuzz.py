"""The program fuzzer: mutate the example and spec programs at the Python AST level and run each
mutant through parse, codegen, build and a run, classifying every outcome.

    python scripts/fuzz.py --count 2000 --seed 1            # what `make fuzz` runs
    python scripts/fuzz.py --seed 1 --only 137               # reproduce mutant 137 of seed 1
    python scripts/fuzz.py --count 200 --run-every 10        # the test suite's smoke

Outcomes: ran / located (a PyptoError with file:line) are fine; unlocated (a PyptoError without a
line), internal (InternalCompilerError, "internal ... error", or any raw Python exception),
crash (the worker process died), hang (no answer within --timeout), bad-cxx (the generated C++
did not compile; with --werror, also: it warned) and wrong (a semantics-preserving mutant computed something else than its
original on the same inputs) and refused (an int_as_arith or keyword_args mutant, a literal written as
arithmetic of literals with the same value or arguments passed by keyword, refused where its original
is accepted) are findings: the exit
status is 1 when there is any.

Mutants are made from a seeded random.Random(seed * 1_000_003 + index), so a mutant is
reproducible from (seed, index) alone. Each finding is printed with its mutation and a minimal
reproducer: the mutated program's text diffed against the original (changed lines only).

Cost split: every mutant is parsed and code-generated (cheap; one worker process runs many);
every --run-every-th mutant, and every --compare-every-th semantics-preserving one (about 10% of
the mutants are), is also built and run on small seeded random inputs (builds are cached by content hash, so unchanged kernels cost nothing).

    python scripts/fuzz.py --seed 3 --count 300 --family cxx_name   # one mutation operator only

Operators (Mutator.MUTATING / PRESERVING): constants, dtypes, directions, shapes, loop steps,
names, nesting, call arguments, deps=, deleted statements; C++-hostile names in every role
(cxx_name), integers at the 32/64-bit edges by position (edge_int), ranks 0/1/8/9 (shape_rank),
loops that run no iteration (empty_range), 5 to 120 levels of nesting (deep_nesting), a statement
repeated (dup_stmt), two neighbouring statements swapped (swap_stmt), float literals at the
FP32 / FP64 edges (float_edge); and,
semantics-preserving, renamed locals, loops in scopes, runs of statements in scopes (scope_run),
other call layouts, a statement
under up to 19 levels of one-iteration loops / true branches / scopes (deep_wrap), and an integer
literal written as arithmetic of literals (int_as_arith), an op call's arguments passed by
keyword under our or the reference's parameter names (keyword_args), and Python spellings
(python_idioms: a literal as a compile-time conditional expression, pl.tensor.dim as .shape[k],
pl.range as range, an assert of a true condition).
"""

from __future__ import annotations

import argparse
import ast
import copy
import difflib
import json
import os
import random
import re
import select
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "tests/python/spec_programs").glob("*.py"))
FINE = ("ran", "located")
OUTCOMES = ("ran", "located", "unlocated", "internal", "crash", "hang", "bad-cxx", "wrong", "refused")

# -- the programs ------------------------------------------------------------------------------


def program_text(path: Path) -> str | None:
    """The part of a file pl.parse_program reads: everything up to the end of the @pl.program
    class (module constants, imports, pl.dynamic symbols). None if the file has no program."""
    text = path.read_text()
    mod = ast.parse(text)
    classes = [st for st in mod.body if isinstance(st, ast.ClassDef) and any(
        "program" in ast.unparse(d) for d in st.decorator_list)]
    if len(classes) != 1:
        return None
    lines = text.splitlines(keepends=True)
    return "".join(lines[:classes[0].end_lineno])


def load_programs():
    out = []
    for p in SOURCES:
        t = program_text(p)
        if t is not None:
            out.append((str(p.relative_to(ROOT)), t))
    return out


# -- mutations ---------------------------------------------------------------------------------

DTYPES = ["FP32", "FP16", "BF16", "INT32", "INT64", "INT8", "UINT8", "BOOL", "INDEX", "TASK_ID", "FP64"]
NAMES = ["thread_local", "constexpr", "decltype", "noexcept", "export", "mutable", "NULL", "errno",
         "INT64_MIN", "INFINITY", "count", "table", "main", "std", "Tensor", "ctx", "orch_args", "EOF",
         "k" * 300, "x_2", "__x", "_"]
# cxx_name: C++ keywords Python allows as names, names C++ reserves for the implementation by
# their form (macros __LINE__ / __cplusplus, keywords __thread / _Pragma / __int128, a mangled
# symbol), GNU spellings, library functions, runtime and generated-code names, a non-ASCII
# letter whose UTF-8 bytes spell underscores in C++ (éLINE__ -> __LINE__), a long name of
# multi-byte letters (its file name's stem is cut by bytes, not characters).
CXX_NAMES = ["int", "new", "delete", "this", "auto", "template", "operator", "typename", "union", "struct",
             "namespace", "private", "signed", "goto", "asm", "typeof", "bitand", "xor_eq", "nullptr", "true",
             "__LINE__", "__FILE__", "__cplusplus", "__COUNTER__", "__func__", "__thread", "_Pragma", "__int128",
             "__attribute__", "__restrict", "_Complex", "_Z3addv", "_Exit", "__x", "_X", "unix", "linux", "i386",
             "abort", "exit", "printf", "malloc", "memcpy", "sqrt", "exp", "min", "max", "I",
             "pypto_kernel", "pypto_kernel_main", "ext_a", "params_t0", "task_0_outs", "k", "tmp", "off",
             "pto2_slice_u32", "rt_submit_aiv_task", "host_orchestration_entry", "submit_next_level",
             "éLINE__", "ñ", "Ω", "x" * 1000, "核" * 120]
# Integer literals at the edges of the types they reach (32-bit runtime views, 64-bit scalars).
EDGE_INTS = [0, -1, 1, (1 << 31) - 1, 1 << 31, -(1 << 31), (1 << 32) - 1, 1 << 32, (1 << 63) - 1, -(1 << 63),
             1 << 63, 1 << 64]
# float_edge: FP32 and FP64 edges (1e39 is infinite in FP32 only, 1e309 in both).
FLOAT_EDGES = [0.0, -0.0, 1e-45, -1e-45, 1.1754943508222875e-38, 3.4028234663852886e+38, -3.4028234663852886e+38,
               1e39, 1e309, -1e309, 5e-324, 1.7976931348623157e+308, 0.5, -1.5]
LAYOUTS = ["strided", "fortran", "reversed", "readonly"]
INTS = [0, 1, -1, 2, 3, 7, 16, 17, 255, 1 << 31, (1 << 32) + 1, (1 << 63), -(1 << 63), 10 ** 6]
DIRECTIONS = ["Out", "InOut", "In"]


def _class(tree):
    return next(st for st in tree.body if isinstance(st, ast.ClassDef) and any(
        "program" in ast.unparse(d) for d in st.decorator_list))


def _nodes(cls, kind):
    return [n for n in ast.walk(cls) if isinstance(n, kind)]


def _rename_local(f, old: str, new: str) -> bool:
    """Renames parameter or local `old` of function `f` to `new`; False (nothing changed) when
    `new` is already a name in `f`."""
    if new in {n.id for n in _nodes(f, ast.Name)} | {a.arg for a in f.args.args}:
        return False
    for n in _nodes(f, ast.Name):
        if n.id == old:
            n.id = new
    for a in f.args.args:
        if a.arg == old:
            a.arg = new
    return True


_CUSTOM_PARAMETERS = {"cast": ("tile", "target_type", "mode"), "write": ("tile", "indices", "value"),
                      "dim": ("tensor", "axis")}


def _op_parameters(func):
    """(parameter names, {reference alias: parameter}) of a `pl.<op>` / `pl.tile.<op>` callee as the
    parser binds them, or None for anything else (loops, submits, self calls, ...)."""
    if not isinstance(func, ast.Attribute):
        return None
    path = []
    node = func
    while isinstance(node, ast.Attribute):
        path.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id != "pl":
        return None
    import pypto.language as pl                      # the parent process needs pypto only here
    from pypto import ir
    from pypto.language._builtins import REFERENCE_KEYWORDS
    b = pl
    for name in path:
        b = getattr(b, name, None)
    kind = getattr(b, "kind", None)
    if kind in _CUSTOM_PARAMETERS:
        return _CUSTOM_PARAMETERS[kind], {}, 0
    spec = b.spec[1] if kind == "unified" else getattr(b, "spec", None)
    if kind not in ("op", "unified", "tensor_only") or spec is None or spec.op in ("tile.max", "tile.min"):
        return None
    params = list(spec.params)
    if not params:
        info = ir.op_info(spec.op)
        if info is None:
            return None
        params = list(info.arg_names) + list(info.attr_names)
    aliases = {a: p for a, p in REFERENCE_KEYWORDS.get(spec.op, {}).items() if a not in params and p in params}
    return params, aliases, 0


_CALL_OPTIONS = ("deps", "attrs", "dumps", "arg_directions", "compiler_manual_dep_edges", "allow_early_resolve",
                 "timing_slot", "predicate", "core_num", "sync_start")


def _kernel_parameters(call, kernels):
    """(parameter names, {}, leading arguments that are not parameters) of `self.k(...)` and
    `pl.submit(self.k, ...)` / `pl.spmd_submit`, or None; None too when a parameter is named like a
    call option (such a keyword means the option)."""
    f, fixed = call.func, 0
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "pl" \
            and f.attr in ("submit", "spmd_submit"):
        f, fixed = call.args[0], 1
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"):
        return None
    params = kernels.get(f.attr)
    if params is None or any(p in _CALL_OPTIONS for p in params):
        return None
    return params, {}, fixed


def _is_docstring(stmt):
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _parent_map(cls):
    parents = {}
    for n in ast.walk(cls):
        for c in ast.iter_child_nodes(n):
            parents[c] = n
    return parents


def _replace(parents, old, new):
    """Puts node `new` where `old` is in its parent (a field or a list entry)."""
    p = parents.get(old)
    for field, value in ast.iter_fields(p):
        if value is old:
            setattr(p, field, new)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if item is old:
                    value[i] = new


class Mutator:
    """One random mutation of a program's class (an ast.Module): returns a description, or None
    when the chosen operator does not apply. `preserving` operators keep the program's meaning."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.variant = None   # how call_variant calls the program (None: the plain call)
        self.tree = None      # the whole module (edge_int's module-level constants)

    def int_constant(self, cls):
        ns = [n for n in _nodes(cls, ast.Constant) if type(n.value) is int]
        if not ns:
            return None
        n = self.rng.choice(ns)
        old = n.value
        n.value = self.rng.choice(INTS + [old * 2, old + 1, old - 1, -old])
        return f"int constant {old} -> {n.value} (line {n.lineno})"

    def dtype(self, cls):
        ns = [n for n in _nodes(cls, ast.Attribute) if n.attr in DTYPES and isinstance(n.value, ast.Name)]
        if not ns:
            return None
        n = self.rng.choice(ns)
        old = n.attr
        n.attr = self.rng.choice([d for d in DTYPES if d != old])
        return f"dtype pl.{old} -> pl.{n.attr} (line {n.lineno})"

    def direction(self, cls):
        ns = [n for n in _nodes(cls, ast.Subscript) if isinstance(n.value, ast.Attribute)
              and n.value.attr in ("Out", "InOut")]
        plain = [a for a in _nodes(cls, ast.arg) if a.annotation is not None and isinstance(a.annotation, ast.Subscript)
                 and isinstance(a.annotation.value, ast.Attribute) and a.annotation.value.attr == "Tensor"]
        if ns and (not plain or self.rng.random() < 0.6):
            n = self.rng.choice(ns)
            old = n.value.attr
            new = self.rng.choice([d for d in DIRECTIONS if d != old])
            if new == "In":      # drop the wrapper: the parameter becomes an input
                parents = _parent_map(cls)
                p = parents.get(n)
                if isinstance(p, ast.arg):
                    p.annotation = n.slice
                    return f"direction pl.{old}[...] -> input (line {n.lineno})"
                return None
            n.value.attr = new
            return f"direction pl.{old} -> pl.{new} (line {n.lineno})"
        if not plain:
            return None
        a = self.rng.choice(plain)
        d = self.rng.choice(["Out", "InOut"])
        a.annotation = ast.Subscript(ast.Attribute(ast.Name("pl", ast.Load()), d, ast.Load()), a.annotation, ast.Load())
        return f"parameter '{a.arg}' -> pl.{d}[...] (line {a.lineno})"

    def shape(self, cls):
        ns = [n for n in _nodes(cls, ast.Subscript) if isinstance(n.value, ast.Attribute)
              and n.value.attr in ("Tensor", "Tile") and isinstance(n.slice, ast.Tuple)
              and isinstance(n.slice.elts[0], ast.List)]
        if not ns:
            return None
        n = self.rng.choice(ns)
        shape = n.slice.elts[0]
        op = self.rng.randrange(3)
        if op == 0 and shape.elts:
            k = self.rng.randrange(len(shape.elts))
            shape.elts[k] = ast.Constant(self.rng.choice([0, 1, -4, 8, 32, 1 << 40]))
            return f"shape entry {k} changed (line {n.lineno})"
        if op == 1 and len(shape.elts) > 1:
            shape.elts.pop(self.rng.randrange(len(shape.elts)))
            return f"shape rank reduced (line {n.lineno})"
        shape.elts.append(ast.Constant(self.rng.choice([1, 2, 16])))
        return f"shape rank increased (line {n.lineno})"

    def range_step(self, cls):
        ns = [n for n in _nodes(cls, ast.Call) if isinstance(n.func, ast.Attribute)
              and n.func.attr in ("range", "parallel")]
        if not ns:
            return None
        n = self.rng.choice(ns)
        if len(n.args) == 1:
            n.args = [ast.Constant(0), n.args[0]]
        step = self.rng.choice([0, -1, 2, 3, -2, 1 << 32])
        if len(n.args) >= 3:
            n.args[2] = ast.Constant(step)
        else:
            n.args.append(ast.Constant(step))
        return f"pl.{n.func.attr} step -> {step} (line {n.lineno})"

    def rename(self, cls):
        """Rename one function, parameter or local everywhere it appears (to a C++-hostile name)."""
        fns = [f for f in cls.body if isinstance(f, ast.FunctionDef)]
        if not fns:
            return None
        new = self.rng.choice(NAMES)
        if self.rng.random() < 0.4:
            f = self.rng.choice(fns)
            old = f.name
            if any(g.name == new for g in fns):
                return None
            f.name = new
            for n in _nodes(cls, ast.Attribute):
                if isinstance(n.value, ast.Name) and n.value.id == "self" and n.attr == old:
                    n.attr = new
            return f"function '{old}' renamed '{new[:40]}'"
        f = self.rng.choice(fns)
        names = sorted({a.arg for a in f.args.args[1:]} | {n.id for n in _nodes(f, ast.Name)
                                                             if isinstance(n.ctx, ast.Store)})
        if not names:
            return None
        old = self.rng.choice(names)
        if not _rename_local(f, old, new):
            return None
        return f"name '{old}' in '{f.name}' renamed '{new[:40]}'"

    def nesting(self, cls):
        """Wrap a statement of a function body in a scope, loop or branch."""
        bodies = [n.body for n in _nodes(cls, (ast.FunctionDef, ast.For, ast.With, ast.If)) if n.body]
        bodies = [b for b in bodies if any(not isinstance(s, (ast.Return, ast.Expr)) for s in b)]
        if not bodies:
            return None
        body = self.rng.choice(bodies)
        idx = [i for i, s in enumerate(body) if not isinstance(s, (ast.Return, ast.Expr))]
        i = self.rng.choice(idx)
        wrapper = self.rng.choice(["with pl.scope():", "with pl.manual_scope():", "with pl.cluster():",
                                   "for _fz in pl.range(2):", "for _fz in pl.parallel(3):", "if 1 > 0:",
                                   "with pl.at(level=pl.Level.CORE_GROUP):"])
        w = ast.parse(wrapper + "\n    pass").body[0]
        w.body = [body[i]]
        body[i] = w
        return f"statement at line {getattr(w.body[0], 'lineno', '?')} wrapped in `{wrapper}`"

    def call_args(self, cls):
        ns = [n for n in _nodes(cls, ast.Call) if len(n.args) >= 2]
        if not ns:
            return None
        n = self.rng.choice(ns)
        op = self.rng.randrange(3)
        if op == 0:
            i, j = self.rng.sample(range(len(n.args)), 2)
            n.args[i], n.args[j] = n.args[j], n.args[i]
            return f"arguments {i} and {j} swapped (line {n.lineno})"
        if op == 1:
            n.args.pop(self.rng.randrange(len(n.args)))
            return f"an argument dropped (line {n.lineno})"
        n.args.insert(self.rng.randrange(len(n.args)), copy.deepcopy(self.rng.choice(n.args)))
        return f"an argument duplicated (line {n.lineno})"

    def deps(self, cls):
        kws = [k for n in _nodes(cls, ast.Call) for k in n.keywords if k.arg == "deps"]
        if not kws:
            return None
        k = self.rng.choice(kws)
        if isinstance(k.value, ast.List) and k.value.elts and self.rng.random() < 0.5:
            k.value.elts.pop(self.rng.randrange(len(k.value.elts)))
            return f"a deps= entry dropped (line {k.value.lineno})"
        extra = self.rng.choice([ast.Constant(None), ast.Constant(3), ast.Name("a", ast.Load())])
        if isinstance(k.value, ast.List):
            k.value.elts.append(extra)
        else:
            k.value = ast.List([k.value, extra], ast.Load())
        return f"deps= entry {ast.unparse(extra)} added (line {k.value.lineno})"

    def delete_stmt(self, cls):
        bodies = [n.body for n in _nodes(cls, (ast.FunctionDef, ast.For, ast.With, ast.If)) if len(n.body) > 1]
        if not bodies:
            return None
        body = self.rng.choice(bodies)
        st = body.pop(self.rng.randrange(len(body)))
        return f"statement at line {st.lineno} deleted"

    # Semantics-preserving mutations: the result must equal the original's.
    def rename_fresh(self, cls):
        fns = [f for f in cls.body if isinstance(f, ast.FunctionDef)]
        f = self.rng.choice(fns)
        params = {a.arg for a in f.args.args}   # a parameter reassigned in the body is not a local
        names = sorted({n.id for n in _nodes(f, ast.Name) if isinstance(n.ctx, ast.Store)} - params)
        if not names:
            return None
        old = self.rng.choice(names)
        new = self.rng.choice(["thread_local", "register", "NULL", "INFINITY", "fz_" + old, old + "_2"])
        if new in {n.id for n in _nodes(f, ast.Name)} | {a.arg for a in f.args.args}:
            return None
        for n in _nodes(f, ast.Name):
            if n.id == old:
                n.id = new
        return f"[preserving] local '{old}' in '{f.name}' renamed '{new}'"

    def wrap_scope(self, cls):
        orch = [f for f in cls.body if isinstance(f, ast.FunctionDef) and "Orchestration" in ast.unparse(f.decorator_list)]
        if not orch:
            return None
        f = self.rng.choice(orch)
        body = f.body
        idx = [i for i, s in enumerate(body) if isinstance(s, ast.For)]
        if not idx:
            return None
        i = self.rng.choice(idx)
        w = ast.parse("with pl.scope():\n    pass").body[0]
        w.body = [body[i]]
        body[i] = w
        return f"[preserving] loop at line {w.body[0].lineno} wrapped in `with pl.scope():`"

    def scope_run(self, cls):
        """[preserving] A run of 1 to 4 neighbouring orchestration statements (any kind, in any
        block but a pl.at / pl.spmd / pl.cluster / pl.manual_scope body; the function's return
        too) wrapped in `with pl.scope():`. A runtime scope does not scope names: the values the
        run assigns are read after it as before (a tensor the runtime allocates in it cannot leave
        it: a located refusal, not a finding)."""
        orch = [f for f in cls.body if isinstance(f, ast.FunctionDef) and "Orchestration" in ast.unparse(f.decorator_list)]
        if not orch:
            return None
        f = self.rng.choice(orch)
        # not into kernel blocks, nor a pl.manual_scope() (the runtime refuses pl.scope() there)
        closed = ("pl.at", "pl.spmd", "pl.cluster", "pl.incore", "pl.manual_scope")
        bodies = []

        def collect(stmts):
            bodies.append(stmts)
            for n in stmts:
                if isinstance(n, ast.With) and ast.unparse(n.items[0].context_expr).startswith(closed):
                    continue
                for block in (getattr(n, "body", None), getattr(n, "orelse", None)):
                    if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                        collect(block)
        collect(f.body)
        body = self.rng.choice(bodies)
        first = 1 if _is_docstring(body[0]) else 0
        stop = len(body)   # a run may end with the function's return (the scope then ends the function)
        if first >= stop:
            return None
        i = self.rng.randrange(first, stop)
        run = body[i:min(stop, i + self.rng.randint(1, 4))]
        w = ast.parse("with pl.scope():\n    pass").body[0]
        w.body = run
        body[i:i + len(run)] = [w]
        return f"[preserving] {len(run)} statement(s) from line {run[0].lineno} wrapped in `with pl.scope():`"

    def call_variant(self, cls):
        """The program unchanged, called differently: its In arrays laid out otherwise (strided,
        Fortran-order, negative-stride or read-only views of the same values), other worker
        counts, the race checker on (a race-free original must pass it). The outputs must equal
        the plain call's; the text mutations never varied the call."""
        self.variant = {"layout": self.rng.choice(LAYOUTS), "workers": self.rng.choice([(1, 1), (1, 3), (3, 1)]),
                        "race_check": self.rng.random() < 0.5}
        return "[preserving] called with In arrays %s, %d AIC + %d AIV workers%s" % (
            self.variant["layout"], *self.variant["workers"], ", race check on" if self.variant["race_check"] else "")

    # -- fuzz28 families: C++-hostile names in every role, edge integers by position, ranks,
    # empty ranges, deep nesting.

    def cxx_name(self, cls):
        """Rename a kernel, an orchestration function, a parameter, a local, a loop variable or
        the program class to a name C++ (or the generated code) holds (CXX_NAMES)."""
        new = self.rng.choice(CXX_NAMES)
        role = self.rng.choice(["function", "param", "local", "loop_var", "program"])
        fns = [f for f in cls.body if isinstance(f, ast.FunctionDef)]
        if role == "program":
            old, cls.name = cls.name, new
            return f"program class '{old}' renamed '{new[:40]}'"
        if not fns:
            return None
        f = self.rng.choice(fns)
        if role == "function":
            if any(g.name == new for g in fns):
                return None
            old, f.name = f.name, new
            for n in _nodes(cls, ast.Attribute):
                if isinstance(n.value, ast.Name) and n.value.id == "self" and n.attr == old:
                    n.attr = new
            return f"function '{old}' renamed '{new[:40]}'"
        if role == "param":
            names = [a.arg for a in f.args.args[1:]]
        elif role == "loop_var":
            names = [n.target.id for n in _nodes(f, ast.For) if isinstance(n.target, ast.Name)]
        else:
            params = {a.arg for a in f.args.args}
            names = sorted({n.id for n in _nodes(f, ast.Name) if isinstance(n.ctx, ast.Store)} - params)
        if not names:
            return None
        old = self.rng.choice(sorted(set(names)))
        if not _rename_local(f, old, new):
            return None
        return f"{role.replace('_', ' ')} '{old}' in '{f.name}' renamed '{new[:40]}'"

    def _int_slots(self, tree, cls, where):
        """(container list, index) of each expression at a position kind: shape entries of
        annotations, offsets / shapes of slices, loads and stores, loop bounds, scalar arguments
        of calls, module-level integer constants (shapes and bounds in many places at once)."""
        slots = []
        if where == "module":
            for st in tree.body:
                if isinstance(st, ast.Assign) and isinstance(st.value, ast.Constant) and type(st.value.value) is int:
                    slots.append((st, "value"))
            return slots
        for n in ast.walk(cls):
            if where == "shape" and isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) \
                    and n.value.attr in ("Tensor", "Tile") and isinstance(n.slice, ast.Tuple) \
                    and n.slice.elts and isinstance(n.slice.elts[0], ast.List):
                slots += [(n.slice.elts[0].elts, k) for k in range(len(n.slice.elts[0].elts))]
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                if where == "offset" and n.func.attr in ("slice", "load", "store", "view", "assemble", "read", "write"):
                    for a in n.args:
                        if isinstance(a, ast.List):
                            slots += [(a.elts, k) for k in range(len(a.elts))]
                elif where == "bound" and n.func.attr in ("range", "parallel"):
                    slots += [(n.args, k) for k in range(min(2, len(n.args)))]
                elif where == "scalar_arg" and (isinstance(n.func.value, ast.Name) and n.func.value.id == "self"
                                                or n.func.attr == "submit"):
                    slots += [(n.args, k) for k, a in enumerate(n.args)
                              if isinstance(a, ast.Constant) and type(a.value) in (int, float)
                              or isinstance(a, (ast.BinOp, ast.UnaryOp))]
        return slots

    def dup_stmt(self, cls):
        """A statement repeated right after itself (a second submission of the same call, a
        tensor created or a loop run twice, a return after a return)."""
        bodies = [n.body for n in _nodes(cls, (ast.FunctionDef, ast.For, ast.With, ast.If))]
        bodies = [b for b in bodies if b]
        if not bodies:
            return None
        body = self.rng.choice(bodies)
        i = self.rng.randrange(len(body))
        body.insert(i + 1, copy.deepcopy(body[i]))
        return f"statement at line {getattr(body[i], 'lineno', '?')} repeated"

    def swap_stmt(self, cls):
        """Two neighbouring statements of a body swapped (a use before its definition, a
        submission before the one it depends on, a return before the code it ends)."""
        bodies = [n.body for n in _nodes(cls, (ast.FunctionDef, ast.For, ast.With, ast.If)) if len(n.body) > 1]
        if not bodies:
            return None
        body = self.rng.choice(bodies)
        i = self.rng.randrange(len(body) - 1)
        body[i], body[i + 1] = body[i + 1], body[i]
        return f"statements at lines {getattr(body[i + 1], 'lineno', '?')} and {getattr(body[i], 'lineno', '?')} swapped"

    def float_edge(self, cls):
        """A float literal of the program (a scale, a fill value, a bound) at an edge of FP32 and
        FP64 (FLOAT_EDGES): signed zero, the smallest subnormals, the largest finite values, and
        literals that overflow to infinity."""
        consts = [n for n in _nodes(cls, ast.Constant) if isinstance(n.value, float)]
        if not consts:
            return None
        n = self.rng.choice(consts)
        old, n.value = n.value, self.rng.choice(FLOAT_EDGES)
        return f"float {old!r} -> {n.value!r} (line {getattr(n, 'lineno', '?')})"

    def edge_int(self, cls):
        """An integer at an edge (EDGE_INTS) in one position kind: a shape entry, a slice / load
        offset or extent, a loop bound, a scalar call argument, or a module-level constant."""
        where = self.rng.choice(["shape", "offset", "bound", "scalar_arg", "module"])
        slots = self._int_slots(self.tree, cls, where)
        if not slots:
            return None
        container, key = self.rng.choice(slots)
        v = self.rng.choice(EDGE_INTS)
        if where in ("bound", "module") and abs(v) > 1 << 16:
            # Up to 2^63 loop iterations or tasks is a long program, not a hang: such a mutant is
            # parsed and code-generated only (seed 2811 mutant 152: ITERS = 2^31 - 1 tasks).
            self.variant = {"parse_only": True}
        if isinstance(key, str):
            old = ast.unparse(getattr(container, key))
            setattr(container, key, ast.Constant(v))
            return f"module constant {ast.unparse(container.targets[0])} = {old} -> {v}"
        old = ast.unparse(container[key])
        line = getattr(container[key], "lineno", "?")
        container[key] = ast.Constant(v)
        return f"{where.replace('_', ' ')} {old} -> {v} (line {line})"

    def shape_rank(self, cls):
        """A tensor or tile annotation, or a pl.create_tensor shape, of rank 0, 1, 8 or 9 (its
        extents kept, padded with 1s). An annotation mostly meets a rank mismatch first; a created
        tensor nobody reads reaches the runtime (rank 9: the runtime has 8 dims)."""
        ns = [n.slice.elts[0] for n in _nodes(cls, ast.Subscript) if isinstance(n.value, ast.Attribute)
              and n.value.attr in ("Tensor", "Tile") and isinstance(n.slice, ast.Tuple)
              and n.slice.elts and isinstance(n.slice.elts[0], ast.List)]
        ns += [n.args[0] for n in _nodes(cls, ast.Call) if isinstance(n.func, ast.Attribute)
               and n.func.attr == "create_tensor" and n.args and isinstance(n.args[0], ast.List)]
        if not ns:
            return None
        n = shape = self.rng.choice(ns)
        rank = self.rng.choice([0, 1, 8, 9])
        old = len(shape.elts)
        if rank == 1 and shape.elts:   # the whole extent as one axis
            prod = shape.elts[0]
            for e in shape.elts[1:]:
                prod = ast.BinOp(prod, ast.Mult(), e)
            shape.elts = [prod]
        elif rank >= old:
            shape.elts = [ast.Constant(1) for _ in range(rank - old)] + shape.elts
        else:
            shape.elts = shape.elts[old - rank:] if rank else []
        return f"shape rank {old} -> {rank} (line {n.lineno})"

    def empty_range(self, cls):
        """A loop that runs no iteration: range(0), range(5, 5), range(5, 0), range(0, 4, -1), or
        a dynamic bound equal to the start."""
        ns = [n for n in _nodes(cls, ast.Call) if isinstance(n.func, ast.Attribute)
              and n.func.attr in ("range", "parallel")]
        if not ns:
            return None
        n = self.rng.choice(ns)
        old = ast.unparse(n)
        form = self.rng.choice([[0], [5, 5], [5, 0], [0, 4, -1], [(1 << 31) + 1, 1 << 31]])
        if n.args and self.rng.random() < 0.3:    # stop = start, whatever the start is
            start = n.args[0] if len(n.args) > 1 else ast.Constant(0)
            n.args = [copy.deepcopy(start), copy.deepcopy(start)]
        else:
            n.args = [ast.Constant(v) for v in form]
        return f"empty loop {old} -> {ast.unparse(n)} (line {n.lineno})"

    DEEP_WRAPPERS = ["for _fz{k} in pl.range(1):", "for _fz{k} in pl.parallel(1):", "if 1 > 0:",
                     "with pl.scope():", "for _fz{k} in pl.range(2):", "if 0 > 1:"]

    def deep_nesting(self, cls):
        """Wrap a statement in 5 to 120 levels of loops / branches / scopes (Python allows 20
        nested loop and with blocks: deeper ones are a SyntaxError the parser must locate)."""
        bodies = [n.body for n in _nodes(cls, (ast.FunctionDef, ast.For, ast.With, ast.If)) if n.body]
        bodies = [b for b in bodies if any(not isinstance(s, (ast.Return, ast.Expr)) for s in b)]
        if not bodies:
            return None
        body = self.rng.choice(bodies)
        i = self.rng.choice([i for i, s in enumerate(body) if not isinstance(s, (ast.Return, ast.Expr))])
        depth = self.rng.choice([5, 12, 19, 21, 40, 120])
        kinds = self.rng.sample(self.DEEP_WRAPPERS, self.rng.randint(1, 3))
        if depth > 12 and any("range(2)" in k for k in kinds):
            # Up to 2^120 iterations: a long program, not a hang (seed 2818 mutant 129 of
            # two_chips, 21 levels: 8M HOST tasks); parsed and code-generated only.
            self.variant = {"parse_only": True}
        line = getattr(body[i], "lineno", "?")
        inner = [body[i]]
        for k in range(depth):
            w = ast.parse(self.rng.choice(kinds).format(k=k) + "\n    pass").body[0]
            w.body = inner
            inner = [w]
        body[i] = inner[0]
        return f"statement at line {line} nested {depth} deep in {kinds}"

    def deep_wrap(self, cls):
        """[preserving] An orchestration statement run inside 3 to 19 levels of one-iteration
        loops, true branches (with an else) and scopes: the same tasks, the same result."""
        orch = [f for f in cls.body if isinstance(f, ast.FunctionDef) and "Orchestration" in ast.unparse(f.decorator_list)]
        if not orch:
            return None
        f = self.rng.choice(orch)
        bodies = [n.body for n in [f] + _nodes(f, (ast.For, ast.With, ast.If))]
        bodies = [b for b in bodies if any(isinstance(s, (ast.Assign, ast.For)) for s in b)]
        if not bodies:
            return None
        body = self.rng.choice(bodies)
        i = self.rng.choice([i for i, s in enumerate(body) if isinstance(s, (ast.Assign, ast.For))])
        depth = self.rng.choice([3, 7, 19])
        line = getattr(body[i], "lineno", "?")
        inner = [body[i]]
        for k in range(depth):
            kind = self.rng.choice(["for _fz{k} in pl.range(1):\n    pass", "if 1 > 0:\n    pass\nelse:\n    pass",
                                    "with pl.scope():\n    pass"])
            w = ast.parse(kind.format(k=k)).body[0]
            w.body = inner
            inner = [w]
        body[i] = inner[0]
        return f"[preserving] statement at line {line} nested {depth} deep"

    def int_as_arith(self, cls):
        """[preserving] An integer literal anywhere in the program (a shape, an offset, a bound, an
        annotation, an attribute, an index) written as arithmetic of literals with its value
        (`16` -> `(19 - 3)`, `4 * 4`, `(33 // 2)`): the DSL must take it as the literal it equals,
        so a refusal of the mutant where the original was accepted is a finding too (STRICT)."""
        ns = [n for n in _nodes(cls, ast.Constant) if type(n.value) is int and 0 <= n.value < (1 << 31)]
        if not ns:
            return None
        n = self.rng.choice(ns)
        v, k = n.value, self.rng.randint(1, 9)
        form = self.rng.choice(["({a} - {k})", "({b} + {k})", "({v} * 1)", "(({v} * {k}) // {k})",
                                "(({v} * {k} + {r}) // {k})", "({v} + {k} * 0)"])
        text = form.format(a=v + k, b=v - k, k=k, v=v, r=self.rng.randrange(k))
        _replace(_parent_map(cls), n, ast.parse(text, mode="eval").body)
        self.variant = {"strict": True}   # (the call itself is the plain one)
        return f"[preserving] int {v} (line {n.lineno}) written {text}"

    def keyword_args(self, cls):
        """[preserving] A `pl.<op>(...)` call's trailing positional arguments passed by keyword, under
        our parameter names or the reference's (pypto.language._builtins.REFERENCE_KEYWORDS), in a
        random order: `pl.store(t, [0, 0], y)` -> `pl.store(t, output_tensor=y, offsets=[0, 0])`.
        The DSL binds keywords as Python does, so a refusal is a finding too (STRICT)."""
        kernels = {f.name: [a.arg for a in f.args.args[1:]] for f in cls.body if isinstance(f, ast.FunctionDef)}
        calls = [(c, params) for c in _nodes(cls, ast.Call) if c.args and not c.keywords
                 and not any(isinstance(a, ast.Starred) for a in c.args)
                 for params in [_op_parameters(c.func) or _kernel_parameters(c, kernels)]
                 if params and len(c.args) - params[2] <= len(params[0])]
        if not calls:
            return None
        call, (params, aliases, fixed) = self.rng.choice(calls)
        if len(call.args) <= fixed:
            return None
        params = [None] * fixed + list(params)         # pl.submit's kernel is not an argument of it
        k = self.rng.randint(1, len(call.args) - fixed)
        moved = []
        for i in range(len(call.args) - k, len(call.args)):
            names = [params[i]] + [a for a, p in aliases.items() if p == params[i]]
            moved.append(ast.keyword(arg=self.rng.choice(names), value=call.args[i]))
        self.rng.shuffle(moved)
        call.args, call.keywords = call.args[:len(call.args) - k], moved
        self.variant = {"strict": True}
        return f"[preserving] call at line {call.lineno} by keyword: {ast.unparse(call)[:120]}"

    def python_idioms(self, cls):
        """[preserving] Python spellings the DSL takes as the ones they stand for: an integer literal
        written as a compile-time conditional expression (`16` -> `(16 if 1 else 0)`), a
        `pl.tensor.dim(x, k)` as `x.shape[k]`, a `pl.range(...)` without keywords as Python's
        `range(...)`, or an `assert` of a true condition before a statement. Each must be accepted wherever the original is, with the same outputs (STRICT)."""
        self.variant = {"strict": True}
        dims = [c for c in _nodes(cls, ast.Call) if ast.unparse(c.func) == "pl.tensor.dim" and len(c.args) == 2
                and isinstance(c.args[0], ast.Name) and not c.keywords]
        loops = [f.iter for f in _nodes(cls, ast.For) if isinstance(f.iter, ast.Call)
                 and ast.unparse(f.iter.func) == "pl.range" and not f.iter.keywords]
        kind = self.rng.choice(["ifexp", "assert"] + ["shape"] * bool(dims) + ["range"] * bool(loops))
        if kind == "range":
            c = self.rng.choice(loops)
            c.func = ast.Name(id="range", ctx=ast.Load())
            return f"[preserving] line {c.lineno}: pl.range written {ast.unparse(c)}"
        if kind == "shape":
            c = self.rng.choice(dims)
            new = ast.parse(f"{c.args[0].id}.shape[{ast.unparse(c.args[1])}]", mode="eval").body
            _replace(_parent_map(cls), c, new)
            return f"[preserving] line {c.lineno}: {ast.unparse(c)} written {ast.unparse(new)}"
        if kind == "ifexp":
            ns = [n for n in _nodes(cls, ast.Constant) if type(n.value) is int and 0 <= n.value < (1 << 31)]
            if not ns:
                return None
            n = self.rng.choice(ns)
            text = self.rng.choice(["({v} if 1 else 0)", "(0 if not 1 else {v})", "({v} if 3 > 2 and 1 else {v} + 1)"])
            new = ast.parse(text.format(v=n.value), mode="eval").body
            _replace(_parent_map(cls), n, new)
            return f"[preserving] int {n.value} (line {n.lineno}) written {ast.unparse(new)}"
        # not in a `with` or a `for ... in pl.spmd` block: one holding a kernel call is the
        # single-call form, which must hold only that call (a located error otherwise)
        funcs = [f for f in cls.body if isinstance(f, ast.FunctionDef)]
        bodies = [b for f in funcs for b in [f.body] + [n.body for n in _nodes(f, (ast.For, ast.If))
                                                        if "spmd" not in ast.unparse(n.iter if isinstance(n, ast.For) else n.test)]]
        body = self.rng.choice(bodies)
        i = self.rng.randrange(len(body))
        if i == 0 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            i = 1                                   # after a docstring
        body.insert(i, ast.parse('assert 2 > 1, "fuzz: always true"').body[0])
        return f"[preserving] assert inserted at line {getattr(body[min(i + 1, len(body) - 1)], 'lineno', '?')}"

    MUTATING = ("int_constant", "dtype", "direction", "shape", "range_step", "rename", "nesting", "call_args",
                "deps", "delete_stmt", "cxx_name", "edge_int", "shape_rank", "empty_range", "deep_nesting",
                "dup_stmt", "swap_stmt", "float_edge")
    PRESERVING = ("rename_fresh", "wrap_scope", "scope_run", "call_variant", "deep_wrap", "int_as_arith",
                  "keyword_args", "python_idioms")


def make_mutant(programs, seed: int, index: int, family=None):
    """(source name, original text, mutated text, description, preserving, call variant) of
    mutant `index`; the variant (call_variant's; else None) says how to call it. `family` (a
    Mutator operator name) makes every mutant with that operator (a second one may follow)."""
    rng = random.Random(seed * 1_000_003 + index)
    name, text = programs[rng.randrange(len(programs))]
    m = Mutator(rng)
    preserving = rng.random() < 0.1
    only_op = family
    if family is not None:
        preserving = family in Mutator.PRESERVING
    for _ in range(20):
        tree = ast.parse(text)
        cls = _class(tree)
        m.tree = tree
        op = only_op or rng.choice(Mutator.PRESERVING if preserving else Mutator.MUTATING)
        desc = getattr(m, op)(cls)
        if desc is None:
            if family is not None:   # the operator does not apply to this program: another one
                name, text = programs[rng.randrange(len(programs))]
            continue
        ast.fix_missing_locations(tree)     # nodes the mutation made: the second one reads their lineno
        if not preserving and rng.random() < 0.25:      # sometimes a second mutation
            op2 = rng.choice(Mutator.MUTATING)
            d2 = getattr(m, op2)(cls)
            if d2:
                desc += "; " + d2
        try:
            return name, text, ast.unparse(tree) + "\n", desc, preserving, m.variant
        except Exception:  # noqa: BLE001 - an unprintable tree: try another mutation
            continue
    return name, text, text, "(no mutation applied)", False, None


# -- the worker: runs in a subprocess, one JSON line in, one JSON line out ----------------------

def _classify_exception(e) -> tuple[str, str]:
    from pypto.errors import InternalCompilerError, PyptoError
    msg = f"{type(e).__name__}: {getattr(e, 'message', None) or e}"
    if isinstance(e, InternalCompilerError) or "internal" in msg.split("\n")[0].lower():
        return "internal", msg
    if type(e).__name__ == "BuildError":
        return "bad-cxx", msg
    if isinstance(e, PyptoError):
        # A RunError is located at the DSL line its message names (pypto.runtime.dsl_terms.
        # failure_location: the task's "submitted at prog.py:16", the orchestration's own check
        # "prog.py:44: argument 'row' ..."), so one whose line is 0 named none, or was missed.
        # A race report names two tasks' lines in its message and is not located at either.
        if getattr(e, "line", 0) or (type(e).__name__ == "RaceError"
                                     and re.search(r"(?:^| )[^ :]+\.py:\d+[: ]", msg)):
            return "located", msg
        return "unlocated", msg
    return "internal", msg


def relayout(a, how: str):
    """The values of array `a` in another memory layout (call_variant): a view of every other
    element of a buffer twice as wide ("strided"), a Fortran-order copy, a negative-stride view
    of a reversed copy ("reversed"), or a read-only copy. Scalars and 0-d arrays are unchanged."""
    import numpy as np
    if not isinstance(a, np.ndarray) or a.ndim == 0:
        return a
    if how == "strided":
        wide = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,), a.dtype)
        wide[..., ::2] = a
        return wide[..., ::2]
    if how == "fortran":
        return np.asfortranarray(a)
    if how == "reversed":
        return np.ascontiguousarray(a[::-1])[::-1]
    ro = a.copy()
    ro.setflags(write=False)
    return ro


def _digest(arrays) -> list:
    import numpy as np
    return [np.asarray(a, dtype=np.float64).round(4).ravel().tolist()[:4096] if hasattr(a, "shape") else a
            for a in arrays]


def _phase(name: str) -> None:
    """Tell the driver which phase starts: a build gets the (long) build timeout, a run --timeout."""
    if _RESULTS is not None:
        _RESULTS.write(json.dumps({"phase": name}) + "\n")
        _RESULTS.flush()


def work_one(job) -> dict:
    import warnings
    import numpy as np
    import pypto
    import pypto.language as pl
    from pypto import codegen
    warnings.simplefilter("ignore")
    try:
        prog = pl.parse_program(job["text"], job["file"])
        from pypto import host
        host_fns = set(host.host_functions(prog))
        for fn in codegen.orchestration_functions(prog):
            # A HOST-level function has its own generator: the L2 one refused every HOST program
            # (located), so two_chips.py and its mutants were never built nor run (fuzz28).
            if fn in host_fns:
                host.generate_host_orchestration(prog, fn)
            else:
                codegen.generate_orchestration(prog, fn)
        if not job["run"]:
            return {"outcome": "ran", "detail": "parse+codegen"}
        _phase("build")
        c = pypto.compile(prog)      # a HostProgram for a program with a HOST function (2 chips)
        params = c.signature if host_fns else c.params
        dims = {}
        for p in params:
            for d in getattr(p, "shape", None) or []:
                if isinstance(d, str) and not d.isdigit():
                    dims[d] = 16
        args = c.random_inputs(seed=job["input_seed"], dims=dims)
        variant = job.get("variant") or {}
        if variant.get("layout"):
            args = [relayout(a, variant["layout"]) if getattr(p, "direction", "In") == "In" else a
                    for a, p in zip(args, params)]
        aic, aiv = variant.get("workers", (2, 4))
        _phase("run")
        checks = {} if host_fns else {"race_check": bool(variant.get("race_check"))}   # L2 only
        c(*args, aic_workers=aic, aiv_workers=aiv, **checks)
        c.close() if hasattr(c, "close") else None
        outs = [a for a, p in zip(args, params) if getattr(p, "direction", "In") in ("Out", "InOut")]
        return {"outcome": "ran", "detail": "ran", "digest": _digest(outs)}
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - every outcome is classified
        if isinstance(e, RecursionError):
            return {"outcome": "internal", "detail": "RecursionError"}
        outcome, msg = _classify_exception(e)
        return {"outcome": outcome, "detail": msg[:2000]}


_RESULTS = None     # the worker's result channel (its original stdout)


def worker_main():
    global _RESULTS
    # Results go to the original stdout; anything else the program or the runtime prints
    # (C-level output included) goes to stderr, so it cannot corrupt the result lines.
    _RESULTS = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    for line in sys.stdin:
        job = json.loads(line)
        res = work_one(job)
        _RESULTS.write(json.dumps(res) + "\n")
        _RESULTS.flush()


class Worker:
    """A subprocess running worker_main; restarted after a crash or a hang."""

    def __init__(self, py: str, build_timeout: float = 900.0, werror: bool = False):
        self.py = py
        self.build_timeout = build_timeout
        self.env = dict(os.environ)
        if werror:   # every generated file must build -Wall -Werror (the project's standard)
            self.env["PYPTO_CXXFLAGS"] = (self.env.get("PYPTO_CXXFLAGS", "") + " -Werror").strip()
        self.proc = None
        self._buf = b""

    def _start(self):
        self._buf = b""
        self.proc = subprocess.Popen([self.py, "-u", __file__, "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=str(ROOT),
                                     env=self.env)

    def run(self, job, timeout: float) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        try:
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._died()
        phase, limit = "parse", timeout
        while True:
            line = self._readline(limit)
            if line == "":
                self.stop()
                return {"outcome": "hang", "detail": f"no result within {limit:.0f} s (phase: {phase})"}
            if line is None:
                return self._died()
            msg = json.loads(line)
            if "phase" not in msg:
                return msg
            # C++ builds on a loaded machine are slow but not hangs: they get their own limit.
            phase = msg["phase"]
            limit = self.build_timeout if phase == "build" else timeout

    def _readline(self, limit: float):
        """The worker's next output line; "" after `limit` seconds without one, None at EOF.
        Reads the pipe unbuffered so that select() sees every line."""
        fd = self.proc.stdout.fileno()
        deadline = time.time() + limit
        while b"\n" not in self._buf:
            left = deadline - time.time()
            ready, _, _ = select.select([fd], [], [], max(left, 0))
            if not ready:
                return ""
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode()

    def _died(self):
        rc = self.proc.wait()
        self.proc = None
        return {"outcome": "crash", "detail": f"worker exited with status {rc}"}

    def stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


# -- the driver ---------------------------------------------------------------------------------

def reproducer(original: str, mutated: str) -> str:
    diff = difflib.unified_diff(ast.unparse(ast.parse(original)).splitlines(), mutated.splitlines(),
                                "original", "mutant", n=1, lineterm="")
    return "\n".join(list(diff)[2:])


# Programs whose outputs depend on the schedule, on purpose: a semantics-preserving mutant of
# one is not compared with it (either outcome is right).
SCHEDULE_DEPENDENT = {
    "cluster_spmd.py": "its two SPMD blocks write all of `out` unordered (the spec's example); the "
                       "predicate then truncates out[0, 0] to 0 and skips the task that would overwrite it",
}


def original_varies(worker, ref_job, ref_digest, timeout, reruns: int = 5) -> bool:
    """Whether the original program's outputs change from run to run (a mutant's differing
    outputs are then no evidence). Only the original is rerun: a mutant that differs only
    sometimes (a lost dependency) is still a finding."""
    for _ in range(reruns):
        again = worker.run(ref_job, timeout)
        if again.get("outcome") == "ran" and again.get("digest") != ref_digest:
            return True
    return False


def fuzz(count: int, seed: int, run_every: int, timeout: float, only=None, py=sys.executable, verbose=False,
         out=sys.stdout, compare_every: int = 1, family=None, werror: bool = False, source=None) -> dict:
    """Run `count` mutants (or just index `only`); returns {outcome: n, "findings": [...]}.
    `source`: mutate only the programs whose file name contains it."""
    programs = [p for p in load_programs() if source is None or source in p[0]]
    worker = Worker(py, werror=werror)
    counts = {o: 0 for o in OUTCOMES}
    findings = []
    indices = [only] if only is not None else range(count)
    t0 = time.time()
    try:
        for i in indices:
            name, text, mutated, desc, preserving, variant = make_mutant(programs, seed, i, family)
            preserving = preserving and os.path.basename(name) not in SCHEDULE_DEPENDENT   # nothing to compare with
            compare = preserving and compare_every > 0 and i % compare_every == 0
            run = (compare or (run_every > 0 and i % run_every == 0) or only is not None) \
                and not (variant or {}).get("parse_only")
            job = {"text": mutated, "file": f"mutant_{seed}_{i}.py", "run": run, "input_seed": i, "variant": variant}
            res = worker.run(job, timeout)
            outcome = res["outcome"]
            if preserving and (variant or {}).get("strict") and outcome == "located":
                # A strict mutant must be accepted wherever its original is.
                ref = worker.run({"text": text, "file": name, "run": run, "input_seed": i}, timeout)
                if ref.get("outcome") == "ran":
                    outcome, res["detail"] = "refused", ("the original program runs; the same program written "
                                                         "another way is refused: " + res.get("detail", ""))
            if (compare or (preserving and only is not None)) and outcome == "ran" and "digest" in res:
                # Same inputs: the original is re-run with this mutant's input seed.
                ref_job = {"text": text, "file": name, "run": True, "input_seed": i}
                ref = worker.run(ref_job, timeout)
                if ref.get("outcome") == "ran" and ref.get("digest") != res["digest"] \
                        and not original_varies(worker, ref_job, ref["digest"], timeout):
                    outcome, res["detail"] = "wrong", ("outputs differ from the original program's (which gave "
                                                       "the same outputs in 5 reruns)")
            counts[outcome] += 1
            if outcome not in FINE:
                f = {"index": i, "seed": seed, "source": name, "mutation": desc, "outcome": outcome,
                     "detail": res.get("detail", ""), "reproducer": reproducer(text, mutated)}
                findings.append(f)
                print(f"\n=== finding: {outcome} in mutant {i} of {name}: {desc}\n"
                      f"    reproduce: python scripts/fuzz.py --seed {seed} --only {i}"
                      f"{' --family ' + family if family else ''}{' --source ' + source if source else ''}\n"
                      f"    {f['detail'].splitlines()[0] if f['detail'] else ''}\n"
                      + "\n".join("    " + ln for ln in f["reproducer"].splitlines()), file=out)
            elif verbose:
                print(f"{i}: {outcome}: {desc}: {res.get('detail', '')[:120]}", file=out)
            done = sum(counts.values())
            if only is None and done % 100 == 0:
                print(f"fuzz: {done}/{count} mutants, {time.time() - t0:.0f} s, {len(findings)} finding(s)",
                      file=sys.stderr, flush=True)
    finally:
        worker.stop()
    counts["findings"] = findings
    counts["seconds"] = round(time.time() - t0, 1)
    return counts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--run-every", type=int, default=10,
                    help="build and run every N-th mutant (the others: parse + codegen); 0: never")
    ap.add_argument("--compare-every", type=int, default=1,
                    help="build, run and compare every N-th semantics-preserving mutant with its original")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per mutant before it counts as a hang")
    ap.add_argument("--only", type=int, default=None, help="run only this mutant index (reproduce a finding)")
    ap.add_argument("--show", action="store_true", help="with --only: print the mutant's full text")
    ap.add_argument("--family", choices=Mutator.MUTATING + Mutator.PRESERVING, default=None,
                    help="make every mutant with this mutation operator (the default: a random one each)")
    ap.add_argument("--source", default=None,
                    help="mutate only the programs whose file name contains this (e.g. two_chips)")
    ap.add_argument("--werror", action="store_true",
                    help="build with -Werror added (PYPTO_CXXFLAGS): a warning in generated C++ is a bad-cxx finding")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        worker_main()
        return 0
    if a.count < 1 or a.run_every < 0 or a.compare_every < 0 or a.timeout <= 0 or (a.only is not None and a.only < 0):
        ap.error("--count must be >= 1, --run-every, --compare-every and --only >= 0 (0: never), --timeout > 0")
    if a.source is not None and not any(a.source in p[0] for p in load_programs()):
        ap.error("--source %r names no program (the examples and spec programs fuzz.py mutates)" % a.source)
    if a.only is not None and a.show:
        print(make_mutant([p for p in load_programs() if a.source is None or a.source in p[0]], a.seed, a.only,
                          a.family)[2])
    res = fuzz(a.count, a.seed, a.run_every, a.timeout, a.only, verbose=a.verbose, compare_every=a.compare_every,
               family=a.family, werror=a.werror, source=a.source)
    summary = ", ".join(f"{o} {res[o]}" for o in OUTCOMES)
    n = 1 if a.only is not None else a.count
    print(f"\nfuzz: {n} mutants (seed {a.seed}) in {res['seconds']} s: {summary}")
    return 1 if res["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
