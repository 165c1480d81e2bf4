"""Straight-line runs of kernel calls, parsed without Python's ``ast`` (the parser's fast path).

A generated orchestration is mostly lines like ``t3 = self.k3(t2, b, 3, t3)``: tens of
thousands of them, and Python's own parser spends about 15 us on each (tokenizing, the PEG
parser, building ~15 ``ast`` objects), more than all the rest of the compiler. So before the
text is handed to ``ast.parse``, every run of at least ``MIN_RUN`` consecutive such lines (same
indentation, names and integer literals as arguments, nothing else on the line) is masked: its
first line becomes ``pass`` and the others blank lines. The ``pass`` node carries the run, and
``parse_body`` builds each statement's IR directly from the line text.

Behaviour stays that of the ``ast`` path, statement by statement: a statement the fast path does
not fully check (an unknown name, an argument of the wrong kind, a tensor whose shape check has
not passed before for that parameter, a function calling itself, ...) is parsed from its own
line with ``ast`` and handed to the normal statement parser, so every diagnostic is the one the
``ast`` path gives. A run whose ``pass`` does not come out of ``ast.parse`` as a statement of a
function body (the lines were inside a string or brackets) makes the whole text parse the
ordinary way.

    text2, runs = mask_call_runs(lines)          # None, {} when there is nothing to mask
    mod = ast.parse(text2)
    if not attach_runs(mod, runs): mod = ast.parse(text)
"""

from __future__ import annotations

import ast
import keyword
import re

from pypto._core import ir
from pypto.frontend import registry
from pypto.frontend.calls import _WRITES, view_root
from pypto.frontend.context import _MISSING
from pypto.frontend.dumps import with_tags
from pypto.frontend.stmts import run_stmt

MIN_RUN = 4          # shorter runs are left to ast: masking them would not pay for itself

# `    <target> = self.<callee>(<args>)`: spaces-only indentation, ASCII, nothing after the ')'.
_LINE = re.compile(r"( +)([A-Za-z_][A-Za-z0-9_]*) = self\.([A-Za-z_][A-Za-z0-9_]*)\(([A-Za-z0-9_, ]*)\)\n?\Z")
_ARG = re.compile(r" *(?:([A-Za-z_][A-Za-z0-9_]*)|(0|[1-9][0-9]*)) *\Z")
_INDEX = ir.DataType.INDEX
_TASK_ID = ir.DataType.TASK_ID
_TensorType, _ScalarType, _Var = ir.TensorType, ir.ScalarType, ir.Var
_INT64_MAX = (1 << 63) - 1


class CallLine:
    """One masked statement ``target = self.callee(args)`` at 1-based text line ``line``:
    ``args`` are (name or None, int value or None, start col, end col), columns 0-based."""

    __slots__ = ("line", "indent", "target", "callee", "args", "end")

    def __init__(self, line, indent, target, callee, args, end):
        self.line, self.indent, self.target, self.callee, self.args, self.end = \
            line, indent, target, callee, args, end


def _call_line(text: str, line: int):
    """The CallLine of `text` (text line `line`), or None when it is not that simple form."""
    m = _LINE.match(text)
    if m is None:
        return None
    target, callee = m.group(2), m.group(3)
    if keyword.iskeyword(target) or keyword.iskeyword(callee) or target == "self":
        return None
    inner, pos = m.group(4), m.start(4)
    args = []
    if inner.strip():
        for piece in inner.split(","):
            a = _ARG.match(piece)
            if a is None:
                return None
            name, num = a.group(1), a.group(2)
            if name is not None:
                if keyword.iskeyword(name):
                    return None                   # None / True / False are constants, not names
                args.append((name, None, pos + a.start(1), pos + a.end(1)))
            else:
                value = int(num)
                if value > _INT64_MAX:
                    return None
                args.append((None, value, pos + a.start(2), pos + a.end(2)))
            pos += len(piece) + 1
    elif inner:
        return None
    return CallLine(line, len(m.group(1)), target, callee, args, m.end(4) + 1)


def mask_call_runs(lines: list, min_run: int | None = None, first_line: int = 1):
    """Mask runs of simple kernel-call lines in `lines` (the text's lines, newlines kept;
    `lines[0]` is line `first_line` of what ast.parse reads). Returns (masked text, {first line
    of a run: [CallLine]}), or (None, {}) when no run is long enough. The masked text has the
    same lines, so every other node keeps its position."""
    min_run = MIN_RUN if min_run is None else min_run
    runs, cur = {}, []

    def close():
        if len(cur) >= min_run:
            runs[cur[0].line] = list(cur)
        cur.clear()

    for i, text in enumerate(lines):
        c = _call_line(text, i + first_line) if "= self." in text else None
        if c is None:
            close()
            continue
        if cur and c.indent != cur[0].indent:
            close()
        cur.append(c)
    close()
    if not runs or sum(t.endswith("\n") for t in lines) < len(lines) - 1:
        return None, {}     # (the second: str.splitlines also splits at \r, \x0c, ...: ast does not)
    out = list(lines)
    for first, run in runs.items():
        out[first - first_line] = " " * run[0].indent + "pass\n"
        for c in run[1:]:
            out[c.line - first_line] = "\n"
    return "".join(out), runs


_BODIES = ("body", "orelse", "finalbody")


def attach_runs(mod: ast.Module, runs: dict) -> bool:
    """Give each run's `pass` node its statements (attribute ``pypto_calls``). False when a run's
    `pass` is not a statement inside a function: the caller then parses the unmasked text."""
    found = 0
    open_nodes = []        # the statements enclosing the one visited

    def visit(stmts, in_fn):
        nonlocal found
        for s in stmts:
            if type(s) is ast.Pass:
                run = runs.get(s.lineno)
                if run is not None and in_fn and s.col_offset == run[0].indent:
                    s.pypto_calls = run
                    found += 1
                    _restore_end(s, run[-1], open_nodes)
                continue
            inner = in_fn or type(s) is ast.FunctionDef
            open_nodes.append(s)
            for f in _BODIES:
                sub = getattr(s, f, None)
                if sub:
                    visit(sub, inner)
            for h in getattr(s, "handlers", ()) or ():
                open_nodes.append(h)
                visit(h.body, inner)
                open_nodes.pop()
            for c in getattr(s, "cases", ()) or ():
                open_nodes.append(c)
                visit(c.body, inner)
                open_nodes.pop()
            open_nodes.pop()

    visit(mod.body, False)
    return found == len(runs)


def _restore_end(placeholder, last: CallLine, open_nodes: list) -> None:
    """The statements that end where the `pass` of a run ends (a body whose last statement is
    the run) end, in the unmasked text, at the run's last line: give them that end back."""
    end = (placeholder.end_lineno, placeholder.end_col_offset)
    for n in [placeholder] + open_nodes:
        if (getattr(n, "end_lineno", None), getattr(n, "end_col_offset", None)) == end:
            n.end_lineno, n.end_col_offset = last.line, last.end


def assigned_names_of(st) -> list:
    """The names a masked run binds, in order (for loop carries)."""
    return [c.target for c in st.pypto_calls]


def _statement_ast(ctx, c: CallLine):
    """The ``ast`` statement of line `c`, positioned as ast.parse of the whole text places it."""
    text = ctx.src.lines[c.line - 1 + ctx.src.line_offset]
    node = ast.parse("if 1:\n" + text.rstrip("\n")).body[0].body[0]
    ast.increment_lineno(node, c.line - 2)
    return node


def _span(ctx, c: CallLine, col: int, end: int):
    line = c.line + ctx.src.line_offset
    return ir.Span(ctx.src.file, line, col + 1, line, end + 1, ctx.src.line_text(line))


def _read_only_root(ctx, e) -> bool:
    """_check_not_read_only would raise: `e` is (a view of) a pl.In parameter of the function."""
    root = view_root(ctx, e)
    for q, qd in zip(ctx.sig.params, ctx.sig.directions):
        if q == root:
            return qd == ir.ParamDirection.In
    return False


def _fast_call(ctx, c: CallLine) -> bool:
    """Emit statement `c` as the ast path would; False (nothing emitted) when it needs that path."""
    if ctx.returned:
        return False
    sig = ctx.prog.sigs.get(c.callee)
    if sig is None or sig.name == ctx.sig.name or sig.ftype == ir.FunctionType.Group:
        return False
    params = sig.params
    if len(c.args) != len(params):
        return False
    is_orch = ctx.is_orchestration
    passed = sig.checked_tensor_args
    args = []
    for k, (name, value, col, end) in enumerate(c.args):
        if name is not None:
            e = ctx.lookup(name)
            if e is None:
                return False
        else:
            e = ir.ConstInt.make(value, _INDEX, _span(ctx, c, col, end))
        et, pt = e.type, sig.param_types[k]
        if type(pt) is not type(et) or (type(et) is _ScalarType and et.dtype == _TASK_ID and pt.dtype != _TASK_ID):
            return False
        if type(et) is _TensorType:
            if not isinstance(e, _Var) and is_orch:
                return False
            if passed.get((k, id(et))) is not et:
                return False
            if sig.directions[k] in _WRITES and is_orch and _read_only_root(ctx, e):
                return False
        args.append(e)
    call = ir.Call.make_func(sig.name, args, sig.call_result_type(), [], _span(ctx, c, c.indent + len(c.target) + 3,
                                                                             c.end), {})
    if ctx.dump_tags:
        call = with_tags(ctx, call)
    v = ir.Var.make(c.target, call.type, _span(ctx, c, c.indent, c.indent + len(c.target)))
    ctx.emit(ir.AssignStmt.make(v, call, _span(ctx, c, c.indent, c.end)))
    ctx.bind(c.target, v)
    ctx.defs[v] = call
    return True


@registry.handles("call_run")
def parse_call_run(ctx, st: ast.Pass):
    """The statements of a masked run, in order: each built directly when it is the common
    case, else parsed from its line by the ordinary statement parser. When `self` names a
    value (a local, or a Python name the program's scope defines), nothing is built: returns
    the run's ast statements for parse_body to parse as usual (else None)."""
    if ctx.lookup("self") is not None or ctx.resolve_py("self") is not _MISSING:
        return [_statement_ast(ctx, c) for c in st.pypto_calls]
    for c in st.pypto_calls:
        if not _fast_call(ctx, c):
            run_stmt(ctx, _statement_ast(ctx, c))
    return None
