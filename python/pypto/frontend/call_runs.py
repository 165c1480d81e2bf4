"""Straight-line runs of kernel calls, parsed without Python's ``ast`` (the parser's fast path).

A generated orchestration is mostly lines like ``t3 = self.k3(t2, b, 3, t3)``: tens of
thousands of them, and Python's own parser spends about 15 us on each (tokenizing, the PEG
parser, building ~15 ``ast`` objects), more than all the rest of the compiler. So before the
text is handed to ``ast.parse``, every run of at least ``MIN_RUN`` consecutive such lines (same
indentation, names and integer literals as arguments, nothing else on the line) is masked: its
first line becomes ``pass`` and the others blank lines. The ``pass`` node carries the run (an
``ir.CallRun``), and ``parse_body`` has C++ build each statement's IR from the line text, one
call per run (src/bindings/bind_call_runs.cpp).

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

from pypto._core import ir
from pypto.frontend import registry
from pypto.frontend.calls import _WRITES
from pypto.frontend.context import _MISSING
from pypto.frontend.stmts import run_stmt

MIN_RUN = 4          # shorter runs are left to ast: masking them would not pay for itself


def mask_call_runs(lines: list, min_run: int | None = None, first_line: int = 1):
    """Mask runs of simple kernel-call lines in `lines` (the text's lines, newlines kept;
    `lines[0]` is line `first_line` of what ast.parse reads). Returns (masked text, {first line
    of a run: ir.CallRun}), or (None, {}) when no run is long enough. The masked text has the
    same lines, so every other node keeps its position. The scan is C++ (bind_call_runs.cpp):

        mask_call_runs(["    x = self.k(a, 1)\n"] * 4)  ->  ("    pass\n\n\n\n", {1: <CallRun>})
    """
    return ir.scan_call_runs(lines, first_line, MIN_RUN if min_run is None else min_run)


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
                if run is not None and in_fn and s.col_offset == run.indent:
                    s.pypto_calls = run
                    found += 1
                    _restore_end(s, run, open_nodes)
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


def _restore_end(placeholder, run, open_nodes: list) -> None:
    """The statements that end where the `pass` of a run ends (a body whose last statement is
    the run) end, in the unmasked text, at the run's last line: give them that end back."""
    end = (placeholder.end_lineno, placeholder.end_col_offset)
    for n in [placeholder] + open_nodes:
        if (getattr(n, "end_lineno", None), getattr(n, "end_col_offset", None)) == end:
            n.end_lineno, n.end_col_offset = run.line(len(run) - 1), run.last_end


def _statement_ast(ctx, line: int):
    """The ``ast`` statement of text line `line`, positioned as ast.parse of the whole text places it."""
    text = ctx.src.lines[line - 1 + ctx.src.line_offset]
    node = ast.parse("if 1:\n" + text.rstrip("\n")).body[0].body[0]
    ast.increment_lineno(node, line - 2)
    return node


def _sig_info(ctx) -> dict:
    """callee name -> (param types, [param written (Out/InOut)], result type or None, the
    callee's checked_tensor_args), what CallRun.build reads; None for a Group callee (its calls
    are checked for loops and branches: the ast path does that). Kept on the FnCtx."""
    info = getattr(ctx, "_call_run_sigs", None)
    if info is None:
        info = {}
        for name, sig in ctx.prog.sigs.items():
            if sig.ftype == ir.FunctionType.Group:
                info[name] = None
                continue
            result = sig.return_types[0] if len(sig.return_types) == 1 else None
            info[name] = (list(sig.param_types), [d in _WRITES for d in sig.directions], result,
                          sig.checked_tensor_args)
        ctx._call_run_sigs = info
    return info


@registry.handles("call_run")
def parse_call_run(ctx, st: ast.Pass):
    """The statements of a masked run, in order: built in C++ (CallRun.build) while they are
    the common case, the others parsed from their lines by the ordinary statement parser. When
    `self` names a value (a local, or a Python name of the program's scope), nothing is built:
    returns the run's ast statements for parse_body to parse as usual (else None)."""
    run = st.pypto_calls
    if ctx.lookup("self") is not None or ctx.resolve_py("self") is not _MISSING \
            or ctx.sig.ftype == ir.FunctionType.Group:
        return [_statement_ast(ctx, run.line(i)) for i in range(len(run))]
    src, sig = ctx.src, ctx.sig
    own = [(p, d == ir.ParamDirection.In) for p, d in zip(sig.params, sig.directions)]
    sigs = _sig_info(ctx)
    i, n = 0, len(run)
    while i < n:
        if not ctx.returned:
            i = run.build(i, src.file, src.lines, src.line_offset, [f.vars for f in ctx.frames], ctx.stmts[-1],
                          ctx.hidden, ctx.defs, sigs, sig.name, ctx.is_orchestration, ctx.dump_tags, own)
            if i == n:
                break
        run_stmt(ctx, _statement_ast(ctx, run.line(i)))
        i += 1
    return None
