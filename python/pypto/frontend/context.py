"""Parser state: the program being parsed (signatures, dynamic symbols, Python scope) and
the function being parsed (SSA name frames, emitted statements, enclosing scopes, the
best-effort predicate producer table).

Names are bound SSA-style: each assignment binds the name to a new IR Var in the innermost
frame; loop and branch frames are closed by control_flow.py, which turns rebound names into
iter_args / return_vars.
"""

from __future__ import annotations

import ast
import builtins
import operator
from dataclasses import dataclass, field

from pypto._core import ir
from pypto.frontend.diagnostics import Source, did_you_mean


@dataclass
class FunctionSig:
    """A function's signature, collected before any body is parsed (calls may reference a
    function defined later in the class)."""
    name: str
    node: ast.FunctionDef
    ftype: object                      # ir.FunctionType
    level: object                      # ir.Level
    role: object                       # ir.Role
    params: list                       # [ir.Var]
    directions: list                   # [ir.ParamDirection]
    return_types: list                 # [ir type]
    py_env: dict                       # closure values of the method
    attrs: dict = field(default_factory=dict)   # @pl.function(attrs={...}): pass-stamped facts
    core_type: object = None                    # ir.CoreType (core_type=pl.CoreType.X: a pass result)
    group_sync: dict = field(default_factory=dict)   # param_slots= (KernelParamSlots), group_waits= / _signals= (KernelGroupSync), ...
    param_types: list = field(init=False)       # [p.type for p in params], read for every call argument
    # (param index, id(arg type)) -> arg type whose dtype/shape check against the param passed
    checked_tensor_args: dict = field(init=False)

    def __post_init__(self):
        self.param_types = [p.type for p in self.params]
        self.checked_tensor_args = {}

    def call_result_type(self):
        if len(self.return_types) == 1:
            return self.return_types[0]
        return ir.TupleType.make(list(self.return_types))


_MISSING = object()
_UNRESOLVED = object()
_BUILTINS = vars(builtins)


def plain_number(v):
    """A NumPy scalar (`np.int64(64)`, `np.float32(2.5)`, `np.bool_(True)`: what `arr.size`,
    `np.prod(shape)` or `arr.sum()` give) as the Python int / float / bool it holds, exactly, so
    a module constant folds whatever made it; any other value as it is."""
    if type(v).__module__ != "numpy":
        return v
    import numpy as np
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer):
        return operator.index(v)
    if isinstance(v, np.floating):
        return float(v)
    return v


class ProgramCtx:
    """Program-wide state: source, Python scope for non-IR names, signatures, dynamic dims."""

    def __init__(self, source: Source, py_env: dict):
        self.source = source
        self.py_env = py_env
        self.sigs: dict[str, FunctionSig] = {}
        self.dyn_vars: dict[str, object] = {}

    def dynamic_var(self, name: str, span=None):
        """The one IR Var (Scalar[INDEX]) of dynamic symbol `name` in this program."""
        v = self.dyn_vars.get(name)
        if v is None:
            v = ir.Var.make(name, ir.ScalarType.make(ir.DataType.INDEX), span or ir.Span(self.source.file))
            self.dyn_vars[name] = v
        return v

    def resolve_py(self, name: str, fn_env: dict | None = None):
        """A non-IR name: closure value of the method, then the defining scope, then builtins.
        Returns _MISSING when unknown."""
        if fn_env and name in fn_env:
            return plain_number(fn_env[name])
        v = self.py_env.get(name, _MISSING)
        if v is _MISSING:
            # The builtins module's dict, not getattr: a failed getattr builds an AttributeError,
            # and `self` of every `self.kernel(...)` call is looked up here. Only dunder names
            # (__class__, ...) are module attributes outside that dict.
            v = _BUILTINS.get(name, _MISSING)
            if v is _MISSING and name.startswith("__"):
                v = getattr(builtins, name, _MISSING)
        return plain_number(v)


class Frame:
    """One level of name bindings. kind: function | loop | branch | scope (transparent)."""

    def __init__(self, kind: str, node=None):
        self.kind = kind
        self.vars: dict[str, object] = {}
        self.node = node      # an implicit loop's ast.For
        # names an inner loop's implicit carry made this loop carry (loop_escapes.enclosing_loop_carry):
        # name -> (seed Var, IterArg), the seed assigned before this loop once its body is parsed
        self.pending: dict[str, tuple] = {}


@dataclass
class ScopeInfo:
    """An enclosing `with` construct, for nesting checks: kind is manual | auto | at | spmd | cluster."""
    kind: str
    level: str = ""
    auto_chunk: bool = False      # a pl.at(..., optimizations=[pl.auto_chunk]) (anchor_features §7)


@dataclass
class Hidden:
    """A name that was bound only inside a loop body / one branch, now out of scope."""
    where: str       # "inside the loop body", "in one branch of the if"
    line: int
    help: str


class FnCtx:
    """Per-function parser state."""

    def __init__(self, prog: ProgramCtx, sig: FunctionSig):
        self.prog = prog
        self.sig = sig
        self.src = prog.source
        self.span = prog.source.span   # span(node) -> ir.Span (bound directly: called for every IR node)
        self.frames: list[Frame] = [Frame("function")]
        self.stmts: list[list] = [[]]
        self.scopes: list[ScopeInfo] = []
        self.hidden: dict[str, Hidden] = {}
        # Best-effort predicate producer check: tensor Var -> producer TaskId Var.
        self.producers: dict = {}
        # pl.system.task_dummy results -> their deps, so a barrier in deps= covers its inputs.
        self.barriers: dict = {}
        self.defs: dict = {}           # Var -> its assigned value (view roots for write checks)
        self.dump_tags: list = []      # Vars tagged by pl.dump_tag (anchor_features §6)
        self.returned = False          # a top-level return was parsed (it must be last)
        self.rest: list = []           # (body, start) of the statements after each enclosing compound one
        self._py_names: dict = {}      # resolve_py results

    # -- names ---------------------------------------------------------------------------
    def lookup(self, name: str):
        for f in reversed(self.frames):
            if name in f.vars:
                return f.vars[name]
        return None

    def bind(self, name: str, value) -> None:
        self.frames[-1].vars[name] = value
        self.hidden.pop(name, None)

    def visible_names(self) -> list[str]:
        names = set()
        for f in self.frames:
            names.update(f.vars)
        names.update(k for k in self.prog.py_env if not k.startswith("__"))
        names.update(self.sig.py_env)
        return sorted(names)

    def resolve_py(self, name: str):
        # Memoized: the Python scope does not change while the program is parsed, and names
        # like `self` and `pl` are resolved for nearly every statement.
        v = self._py_names.get(name, _UNRESOLVED)
        if v is _UNRESOLVED:
            v = self._py_names[name] = self.prog.resolve_py(name, self.sig.py_env)
        return v

    def new_var(self, name: str, type_, node: ast.AST):
        return ir.Var.make(name, type_, self.span(node))

    # -- statements ----------------------------------------------------------------------
    def emit(self, stmt) -> None:
        self.stmts[-1].append(stmt)

    def push_block(self) -> None:
        self.stmts.append([])

    def pop_block(self) -> list:
        return self.stmts.pop()

    # -- diagnostics ---------------------------------------------------------------------
    def error(self, node, message: str, help: str = ""):  # noqa: A002
        return self.src.error(node, message, help)

    def unknown_name_error(self, node: ast.Name):
        h = self.hidden.get(node.id)
        if h is not None:
            return self.error(node, f"'{node.id}' is not defined here: it is only bound {h.where} (line {h.line})",
                              help=h.help)
        return self.error(node, f"unknown name '{node.id}'", help=did_you_mean(node.id, self.visible_names()))

    # -- function-kind queries -----------------------------------------------------------
    @property
    def is_orchestration(self) -> bool:
        return self.sig.ftype == ir.FunctionType.Orchestration

    def in_manual_scope(self) -> bool:
        return any(s.kind == "manual" for s in self.scopes)
