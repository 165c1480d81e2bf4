"""The task graph of a chip-level orchestration read from the IR, without running it
(``CompiledProgram.task_graph(static=True)``, ``pypto graph prog.py --static``).

    dot = pypto.compile(TiledMatmul).task_graph(static=True)    # DOT text, nothing runs

It walks the orchestration after the compiler's passes (the IR the runtime executes):
``pl.range`` loops are unrolled, ``if`` takes the branch its condition selects, and every
kernel call becomes a task labelled like the executed graph's (kernel, core type, task
number, DSL line). Edges are the automatic dependencies the runtime derives from the
tensors' regions: a task reading a region waits for the last tasks that wrote an
overlapping one, a task writing it also waits for the readers since.

Only programs without data-dependent control flow have a static graph: every loop bound,
``if`` condition and slice offset must follow from constants and the dynamic dimensions
given (``dims=``). Scalar parameters count as unknown unless given in ``scalars=``.
Anything else (a condition on a scalar parameter, ``get_tensor_data``, manual dependencies,
SPMD / cluster submissions, HOST programs) is refused with a located error saying so: use
the executed graph (``task_graph(...)`` with arguments, or ``pypto graph`` without
``--static``) for those.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from pypto.errors import PyptoError

__all__ = ["StaticGraphError", "static_task_graph", "program_task_graph"]


class StaticGraphError(PyptoError, ValueError):
    """The program has no static task graph (data-dependent control flow, or a construct the
    static walk does not model); the message says where and why."""


@dataclass
class _Region:
    """A box of a root tensor (runtime allocation or entry parameter), in elements."""
    root: int
    offsets: List[int]
    shape: List[int]

    def overlaps(self, other: "_Region") -> bool:
        if self.root != other.root or len(self.offsets) != len(other.offsets):
            return self.root == other.root  # different ranks of one root: assume they overlap
        return all(a < b + bs and b < a + as_ for a, as_, b, bs in
                   zip(self.offsets, self.shape, other.offsets, other.shape))

    def covers(self, other: "_Region") -> bool:
        if self.root != other.root or len(self.offsets) != len(other.offsets):
            return False
        return all(a <= b and b + bs <= a + as_ for a, as_, b, bs in
                   zip(self.offsets, self.shape, other.offsets, other.shape))


@dataclass
class _Task:
    number: int
    kernel: str
    core: str
    where: str
    deps: Dict[int, str] = field(default_factory=dict)  # producer number -> edge kind


def _where(span) -> str:
    try:
        if span.known():
            return "%s:%d" % (span.file.rsplit("/", 1)[-1], span.line)
    except (AttributeError, TypeError):
        pass
    return ""


def _located(span, message: str) -> StaticGraphError:
    try:
        if span.known():
            return StaticGraphError("%s:%d:%d: %s" % (span.file, span.line, span.col, message))
    except (AttributeError, TypeError):
        pass
    return StaticGraphError(message)


_NOT_STATIC = "; use the executed graph (task_graph with arguments, or pypto graph without --static)"


class _Walker:
    def __init__(self, program, dims: Dict[str, int], scalars: Dict[str, int]):
        from pypto import ir
        self.ir = ir
        self.program = program
        self.dims = dict(dims)
        self.scalars = dict(scalars)
        self.env: Dict[object, object] = {}   # IR Var -> value
        self.tasks: List[_Task] = []
        self.accesses: Dict[int, List[Tuple[_Region, int, bool]]] = {}  # root -> (region, task, write)
        self.next_root = 0

    # ---- values ----
    def bind(self, var, value) -> None:
        self.env[var] = value  # IR nodes hash and compare by identity

    def lookup(self, var):
        if var in self.env:
            return self.env[var]
        name = getattr(var, "name", "?")
        if name in self.dims:
            return self.dims[name]
        raise _located(var.span, "'%s' is known only when the program runs" % name + _NOT_STATIC)

    def new_root(self, shape: List[int]) -> _Region:
        self.next_root += 1
        return _Region(self.next_root, [0] * len(shape), list(shape))

    def shape_of(self, ty, span) -> List[int]:
        return [self.eval(d) if not isinstance(d, int) else d for d in ty.shape]

    def eval(self, e):
        ir = self.ir
        if isinstance(e, (ir.ConstInt, ir.ConstFloat, ir.ConstBool)):
            return e.value
        if isinstance(e, (ir.Var, ir.IterArg)):
            return self.lookup(e)
        if isinstance(e, ir.BinaryExpr):
            a, b = self.eval(e.a), self.eval(e.b)
            return _BINARY[e.op.name](a, b)
        if isinstance(e, ir.UnaryExpr):
            a = self.eval(e.a)
            return -a if e.op.name == "Neg" else (not a)
        if isinstance(e, ir.Cast):
            return self.eval(e.value)
        if isinstance(e, ir.MakeTuple):
            return tuple(self.eval(x) for x in e.elements)
        if isinstance(e, ir.TupleGetItem):
            return self.eval(e.tuple)[e.index]
        if isinstance(e, ir.Call):
            return self.call(e)
        raise _located(e.span, "the static task graph does not model %s" % type(e).__name__ + _NOT_STATIC)

    # ---- calls ----
    def call(self, c):
        if c.is_op:
            return self.op(c)
        callee = self.program.get(c.callee)
        if callee is None or not (callee.is_kernel() or callee.type.name == "Group"):
            raise _located(c.span, "call of '%s': the static task graph follows kernel calls only" % c.callee
                           + _NOT_STATIC)
        dirs = list(c.arg_directions) or list(callee.param_directions)
        task = _Task(len(self.tasks) + 1, self.kernel_label(callee), _core_name(callee.core_type), _where(c.span))
        self.tasks.append(task)
        outputs = []
        for arg, d in zip(c.args, dirs):
            name = d.name if hasattr(d, "name") else str(d)
            if name == "Scalar":
                continue
            value = self.eval(arg)
            if not isinstance(value, _Region):
                continue
            reads, writes = name in ("In", "InOut"), name in ("Out", "InOut")
            self.access(task, value, reads, writes)
            if writes:
                outputs.append(value)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def kernel_label(self, callee) -> str:
        """A group's label names its kernels ("mm + act"), as the executed graph does."""
        if callee.type.name != "Group":
            return callee.name
        names: List[str] = []

        def visit(node) -> None:
            ir = self.ir
            if isinstance(node, ir.Call) and not node.is_op and node.callee not in names:
                names.append(node.callee)
            for attr in ("stmts", "body", "then_body", "else_body", "value", "expr"):
                child = getattr(node, attr, None) if not isinstance(node, ir.Var) else None
                if isinstance(child, list):
                    for x in child:
                        visit(x)
                elif child is not None and isinstance(child, (ir.Stmt, ir.Expr)):
                    visit(child)
        visit(callee.body)
        return " + ".join(names) or callee.name

    def access(self, task: _Task, region: _Region, reads: bool, writes: bool) -> None:
        records = self.accesses.setdefault(region.root, [])
        for other, producer, was_write in records:
            if producer != task.number and other.overlaps(region) and (was_write or writes):
                task.deps.setdefault(producer, "auto")
        if writes:  # a covering write subsumes what it covers (later accesses wait for it instead)
            records[:] = [r for r in records if not region.covers(r[0])]
        records.append((region, task.number, writes))

    def op(self, c):
        name = c.callee
        args = c.args
        if name == "tensor.read":
            raise _located(c.span, "tensor.read reads a tensor's data while the orchestration runs: the control "
                           "flow may depend on it" + _NOT_STATIC)
        if name == "tensor.create":
            return self.new_root(self.shape_of(c.type, c.span))
        if name in ("tensor.slice", "tensor.view"):
            base = self.eval(args[0])
            shape = list(self.eval(args[1]))
            offsets = list(self.eval(args[2])) if len(args) > 2 else [0] * len(shape)
            if not isinstance(base, _Region) or len(offsets) != len(base.offsets):
                raise _located(c.span, "%s of a different rank: the static task graph does not model it" % name
                               + _NOT_STATIC)
            return _Region(base.root, [b + o for b, o in zip(base.offsets, offsets)], shape)
        if name == "tensor.dim":
            base = self.eval(args[0])
            return base.shape[self.eval(args[1])]
        raise _located(c.span, "operation %s in an orchestration: the static task graph does not model it" % name
                       + _NOT_STATIC)

    # ---- statements ----
    def run(self, stmts) -> Optional[tuple]:
        """Runs statements; returns the values of a YieldStmt when one ends the block."""
        ir = self.ir
        for s in ir.flatten_stmts(stmts):
            if isinstance(s, ir.AssignStmt):
                self.bind(s.var, self.eval(s.value))
            elif isinstance(s, ir.EvalStmt):
                self.eval(s.expr)
            elif isinstance(s, ir.YieldStmt):
                return tuple(self.eval(v) for v in s.values)
            elif isinstance(s, ir.ReturnStmt):
                return None
            elif isinstance(s, ir.ForStmt):
                self.loop(s)
            elif isinstance(s, ir.IfStmt):
                cond = self.eval(s.cond)
                branch = s.then_body if cond else s.else_body
                out = self.run(branch) if branch is not None else None
                for var, val in zip(s.return_vars, out or ()):
                    self.bind(var, val)
            elif isinstance(s, ir.ScopeStmt):
                raise _located(s.span, "a %s scope submits SPMD / cluster tasks: the static task graph does not "
                               "model them" % s.scope_kind.name + _NOT_STATIC)
            elif isinstance(s, ir.RuntimeScopeStmt):
                if s.mode.name != "Auto":
                    raise _located(s.span, "a MANUAL-dependency scope: its edges come from deps= and TaskIds at run "
                                   "time" + _NOT_STATIC)
                out = self.run(s.body)
                if out is not None:
                    return out
            else:
                raise _located(s.span, "the static task graph does not model %s" % type(s).__name__ + _NOT_STATIC)
        return None

    def loop(self, s) -> None:
        start, stop, step = self.eval(s.start), self.eval(s.stop), self.eval(s.step)
        carried = [self.eval(a.init) for a in s.iter_args]
        i = start
        while (step > 0 and i < stop) or (step < 0 and i > stop):
            self.bind(s.loop_var, i)
            for a, v in zip(s.iter_args, carried):
                self.bind(a, v)
            out = self.run(s.body)
            if out is not None and s.iter_args:
                carried = list(out)
            i += step
        for var, val in zip(s.return_vars, carried):
            self.bind(var, val)


_BINARY = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
    "Div": lambda a, b: a // b if isinstance(a, int) and isinstance(b, int) else a / b,
    "FloorDiv": lambda a, b: a // b, "Mod": lambda a, b: a % b, "Min": min, "Max": max,
    "Eq": lambda a, b: a == b, "Ne": lambda a, b: a != b, "Lt": lambda a, b: a < b, "Le": lambda a, b: a <= b,
    "Gt": lambda a, b: a > b, "Ge": lambda a, b: a >= b, "And": lambda a, b: bool(a) and bool(b),
    "Or": lambda a, b: bool(a) or bool(b),
}


def _core_name(core) -> str:
    name = getattr(core, "name", str(core))
    return name if name in ("AIC", "AIV", "MIXED") else "AIV"


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def static_task_graph(prepared_program, entry: str, dims: Optional[Dict[str, int]] = None,
                      scalars: Optional[Dict[str, int]] = None) -> str:
    """DOT text of the task graph of orchestration ``entry`` in ``prepared_program`` (after
    ``codegen.run_pipeline``), without running it. Same node and edge attributes as the
    executed graph (``kind="task"``, ``task=N``, ``source=``; edges ``kind="auto"``), plus
    ``graph [static=true]``. Raises StaticGraphError when there is no static graph.

        dot = static_task_graph(codegen.run_pipeline(Prog), "main", dims={"N": 256})
    """
    func = prepared_program.get(entry)
    if func is None:
        raise StaticGraphError("no function '%s' in the program" % entry)
    if func.level.name == "HOST":
        raise StaticGraphError("'%s' is a HOST-level orchestration: its next-level task graph is in the HOST trace "
                               "(pypto run --trace)" % entry)
    w = _Walker(prepared_program, dims or {}, scalars or {})
    for p in func.params:
        ty = p.type
        if hasattr(ty, "shape"):
            w.bind(p, w.new_root(w.shape_of(ty, p.span)))
        elif p.name in w.scalars:
            w.bind(p, w.scalars[p.name])
    w.run(func.body)
    lines = ["digraph pypto_tasks {", "  graph [static=true];", "  rankdir=TB;",
             '  node [shape=box, style=rounded, fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];']
    for t in w.tasks:
        label = "%s\n%s  #%d" % (t.kernel, t.core, t.number) + ("\n" + t.where if t.where else "")
        src = ', source="%s"' % _dot_escape(t.where) if t.where else ""
        lines.append('  t%d [label="%s", kind="task", task=%d%s];' % (t.number, _dot_escape(label), t.number, src))
    for t in w.tasks:
        for p in sorted(t.deps):
            lines.append('  t%d -> t%d [kind="%s"];' % (p, t.number, t.deps[p]))
    lines.append("}")
    return "\n".join(lines) + "\n"


def program_task_graph(program, entry: Optional[str] = None, dims: Optional[Dict[str, int]] = None,
                       scalars: Optional[Dict[str, int]] = None) -> Tuple[str, str]:
    """``(entry, DOT text)`` of a parsed program's orchestration ``entry`` (default: its only
    chip-level orchestration), straight from the IR: runs the pass pipeline but builds and runs
    nothing (what ``pypto graph --static`` uses).

        entry, dot = program_task_graph(TiledMatmul)
    """
    from pypto import codegen
    prepared = codegen.run_pipeline(program)
    if entry is None:
        names = [f.name for f in prepared.functions
                 if f.type.name == "Orchestration" and f.level.name != "HOST"]
        if len(names) != 1:
            raise StaticGraphError("name the orchestration to draw: the program has %d chip-level ones (%s)"
                                   % (len(names), ", ".join(names) or "none"))
        entry = names[0]
    return entry, static_task_graph(prepared, entry, dims=dims, scalars=scalars)
