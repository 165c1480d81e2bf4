"""A failed run's message in the terms of the DSL program (``CompiledProgram`` and
``HostProgram`` apply ``explain_failure`` to the runtime's text; the error path only, nothing
is computed while runs succeed).

- An orchestration element access out of range at a DSL line names the DSL op
  (``t.py:11: pl.tensor.write: index 16 ...``), not the runtime's ``set_tensor_data``.
- An argument range error of a ``pl.Scalar[pl.INDEX]`` parameter names ``pl.INDEX``: the runtime
  has no INDEX dtype (``pto2_int_arg`` checks it as INT64, the same range) and said ``pl.INT64``.
- A kernel's failed tensor access (``load of tensor 'a' out of bounds on axis 0: ...``, a dtype or
  rank mismatch, ``mscatter of tensor 'o': index 48 is outside [0, 48)``), and a tile op's index
  outside its tile (``gather from tile 'ta' with indices from tile 'ti': flat index 32 is outside
  [0, 32)``, likewise ``scatter into`` and ``scatter_update of``), and a tile op's block outside its
  tile (``tile.slice of tile 'ta': a [4, 8] block at (14, 0) is outside the [16, 8] tile``, likewise
  ``tile.extract of`` and ``tile.assemble into``), is located at the DSL line of the access (``t.py:9: load of tensor 'a' ...``):
  the kernel only knows the tensor's name, and the message named the line that submitted the task.
  A tile's run-time valid extent outside its dims is located at the op that made the tile (``t.py:10:
  tile 's': valid extent 12 ...``; a nested op's result is ``a computed tile``, not the kernel's 'tmp').
  The kernel's IR gives the line; the generated kernels carry no source lines, so an edit that
  moves a kernel's lines does not recompile it (the object cache is keyed by the source).

    message = explain_failure(message, compiled.program)
"""

from __future__ import annotations

import os
import re
from typing import List, Tuple

__all__ = ["explain_failure", "explain_and_locate", "failure_location", "index_params", "name_index_params",
           "locate_kernel_accesses", "locate_tile_index_failures", "locate_tile_block_failures",
           "locate_valid_extent_failures"]


def index_params(program) -> frozenset:
    """``{(function, parameter)}`` of the ``pl.Scalar[pl.INDEX]`` parameters of ``program`` (an
    ``ir.Program``): the callees whose argument range check names pl.INT64 (see name_index_params)."""
    from pypto._core import ir
    found = set()
    for f in getattr(program, "functions", None) or ():
        for v in f.params:
            if isinstance(v.type, ir.ScalarType) and v.type.dtype == ir.DataType.INDEX:
                found.add((f.name, v.name))
    return frozenset(found)


_ARG_RANGE = re.compile(r"argument '([^']*)' of '([^']*)' = (\S+) does not fit pl\.INT64 ")


def name_index_params(message: str, params: frozenset) -> str:
    """``message`` with the runtime's range check of an argument passed to a ``pl.INDEX``
    parameter (one of ``params``, from index_params) naming pl.INDEX, the type the user wrote:
    the runtime has no INDEX dtype (it is INT64 there, the same range), so its message said
    ``does not fit pl.INT64``."""
    if not params or "does not fit pl.INT64" not in message:
        return message
    return _ARG_RANGE.sub(lambda m: m.group(0).replace("pl.INT64", "pl.INDEX")
                          if (m.group(2), m.group(1)) in params else m.group(0), message)


# The kernel helpers' access failures (pypto_kernel_prelude.h check_box, pypto_kernel_ops.h
# mscatter_index_fail for an mscatter index outside the tensor): "<what> of tensor '<name>'",
# after the runtime's "kernel '<kernel>' ... failed: ".
_ACCESS_FAILURE = re.compile(r"kernel '(?P<kernel>[^']+)'[^\n]*? failed: (?P<failure>(?P<what>load|store|mscatter|gather_row) "
                             r"of tensor '(?P<tensor>[^']+)'(?P<rest>[^\n]*))")
_SIZE = re.compile(r" out of bounds on axis (\d+): offset -?\d+ \+ size (-?\d+) ")
# The kernel IR ops each helper serves.
_OPS = {"load": ("tile.load",), "store": ("tile.store", "tile.write", "tensor.write"),
        "mscatter": ("tile.mscatter",), "gather_row": ("tile.gather_row",)}


def _calls(node, out: List) -> List:
    """Every ir.Call under ``node`` (statements, expressions), in source order."""
    from pypto._core import ir
    if isinstance(node, ir.Call):
        out.append(node)
    for name in dir(node):
        if name.startswith("_") or name in ("type", "span"):
            continue
        try:
            value = getattr(node, name)
        except Exception:  # noqa: BLE001 - a property that does not apply to this node kind
            continue
        for child in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(child, ir.Node) and not isinstance(child, (ir.Var, ir.Span)):
                _calls(child, out)
    return out


def _const_size(call, axis: int):
    """The constant extent on ``axis`` of a tile.load's box (its shapes argument) or a
    tile.store's (the stored tile's shape); None when it is not a constant."""
    from pypto._core import ir
    if call.callee == "tile.load" and len(call.args) > 2:
        elems = getattr(call.args[2], "elements", None) or ()
    elif call.callee == "tile.store" and call.args:
        elems = getattr(call.args[0].type, "shape", None) or ()
        axis -= len(call.args[1].elements) - len(elems) if hasattr(call.args[1], "elements") else 0
    else:
        return None
    if 0 <= axis < len(elems) and isinstance(elems[axis], ir.ConstInt):
        return elems[axis].value
    return None


def kernel_access_sites(program, kernel: str, what: str, tensor: str, axis: int = -1, size=None) -> List[str]:
    """``file:line`` of each access of kernel ``kernel`` that the helper ``what`` serves on tensor
    parameter ``tensor`` (with ``axis`` / ``size``: only loads whose box may have that extent)."""
    from pypto._core import ir
    func = next((f for f in getattr(program, "functions", None) or () if f.name == kernel), None)
    if func is None:
        return []
    found = []
    for call in _calls(func.body, []):
        if call.callee not in _OPS.get(what, ()) or not any(isinstance(a, ir.Var) and a.name == tensor
                                                            for a in call.args):
            continue
        if size is not None and _const_size(call, axis) not in (None, size):
            continue
        site = "%s:%d" % (os.path.basename(call.span.file), call.span.line)
        if call.span.line > 0 and site not in found:
            found.append(site)
    return found


# The index-checked tile helpers (pypto_kernel_ops.h gather / scatter / scatter_update and their
# _valid forms): "<op> <operand> with indices from <operand>", each operand "tile 'x'" (a tile
# Var), "tensor 'a'" (a nested load of that tensor), "a new tile" (a nested pl.create_tensor /
# pl.full) or "a computed tile".
_OPERAND = r"(?:tile '[^']*'|tensor '[^']*'|a new tile|a computed tile)"
_INDEX_FAILURE = re.compile(r"kernel '(?P<kernel>[^']+)'[^\n]*? failed: (?P<failure>(?P<what>gather from|scatter into|"
                            r"scatter_update of) (?P<indexed>" + _OPERAND + r") with indices from (?P<indices>" +
                            _OPERAND + r")[^\n]*)")
_INDEX_OPS = {"gather from": "tile.gather", "scatter into": "tile.scatter", "scatter_update of": "tile.scatter_update"}


def _operand_matches(arg, label: str) -> bool:
    """Whether the IR operand ``arg`` is the one ``label`` (see _OPERAND) names."""
    from pypto._core import ir
    name = label.split("'")[1] if "'" in label else None
    if label.startswith("tile '"):
        return isinstance(arg, ir.Var) and arg.name == name
    if label.startswith("tensor '"):
        return (isinstance(arg, ir.Call) and arg.callee == "tile.load" and bool(arg.args) and
                isinstance(arg.args[0], ir.Var) and arg.args[0].name == name)
    return not isinstance(arg, ir.Var)


def _call_sites(program, kernel: str, accept) -> List[str]:
    """``file:line`` of each call of kernel ``kernel`` that ``accept(call)`` takes, in order."""
    func = next((f for f in getattr(program, "functions", None) or () if f.name == kernel), None)
    found = []
    for call in _calls(func.body, []) if func is not None else ():
        site = "%s:%d" % (os.path.basename(call.span.file), call.span.line)
        if accept(call) and call.span.line > 0 and site not in found:
            found.append(site)
    return found


def tile_index_sites(program, kernel: str, what: str, indexed: str, indices: str) -> List[str]:
    """``file:line`` of each tile op of kernel ``kernel`` that an index failure ``what`` (``gather
    from`` ...) with operands labelled ``indexed`` and ``indices`` may come from."""
    op = _INDEX_OPS.get(what)
    if op is None:
        return []
    at = {"tile.gather": (0, 1), "tile.scatter": (0, 2), "tile.scatter_update": (0, 1)}[op]   # (indexed, indices)
    return _call_sites(program, kernel, lambda call: (
        call.callee == op and len(call.args) > max(at) and _operand_matches(call.args[at[0]], indexed) and
        _operand_matches(call.args[at[1]], indices)))


# The block-checked tile helpers (pypto_kernel_ops.h extract_block, assemble): "tile.slice of
# <operand>", "tile.extract of <operand>", "tile.assemble into <operand>" (the operand as above).
_BLOCK_FAILURE = re.compile(r"kernel '(?P<kernel>[^']+)'[^\n]*? failed: (?P<failure>(?P<op>tile\.(?:slice|extract) of|"
                            r"tile\.assemble into) (?P<operand>" + _OPERAND + r")[^\n]*)")


def tile_block_sites(program, kernel: str, op: str, operand: str) -> List[str]:
    """``file:line`` of each ``op`` (``tile.slice`` ...) of kernel ``kernel`` on the operand
    labelled ``operand`` that a block failure may come from."""
    return _call_sites(program, kernel, lambda call: (
        call.callee == op and bool(call.args) and _operand_matches(call.args[0], operand)))


_BLOCK_SHAPE = re.compile(r": a \[([\d, ]+)\] block at ")


def _constant_shape(arg):
    """The integers of a literal shape list argument (``[3, 8]``), or None."""
    from pypto._core import ir
    if not isinstance(arg, ir.MakeTuple) or not all(isinstance(e, ir.ConstInt) for e in arg.elements):
        return None
    return [e.value for e in arg.elements]


def _narrow_by_block_shape(program, kernel: str, op: str, sites: List[str], failure: str) -> List[str]:
    """``sites`` narrowed to the ``tile.slice`` / ``tile.extract`` calls whose literal shape is the
    failure's block (``a [3, 8] block at (4, 0)``), when that leaves any: several slices of one
    tile were all named (``k.py:10 or k.py:11``) though only one has that shape."""
    shape = _BLOCK_SHAPE.search(failure)
    at = {"tile.slice": 1, "tile.extract": 3}.get(op)
    if len(sites) < 2 or shape is None or at is None:
        return sites
    want = [int(v) for v in shape.group(1).split(",")]
    narrowed = [site for site in _call_sites(program, kernel, lambda call: (
        call.callee == op and len(call.args) > at and _constant_shape(call.args[at]) == want)) if site in sites]
    return narrowed or sites


def locate_tile_block_failures(message: str, program) -> str:
    """``message`` with a tile op's block outside its tile prefixed by its DSL line(s): ``t.py:12:
    tile.slice of tile 'ta': a [4, 8] block at (14, 0) is outside the [16, 8] tile``."""
    def locate(m):
        op = m.group("op").split()[0]
        sites = tile_block_sites(program, m.group("kernel"), op, m.group("operand"))
        return _located(m, _narrow_by_block_shape(program, m.group("kernel"), op, sites, m.group("failure")))
    if "tile.slice of" not in message and "tile.extract of" not in message and "tile.assemble into" not in message:
        return message
    return _BLOCK_FAILURE.sub(locate, message)


def _located(m, sites) -> str:
    """The text of match ``m`` with its ``failure`` group prefixed by ``sites`` (``t.py:9`` or
    ``t.py:9 or t.py:14``); unchanged when no site was found."""
    if not sites:
        return m.group(0)
    start = m.start("failure") - m.start(0)
    return m.group(0)[:start] + " or ".join(sites) + ": " + m.group(0)[start:]


def locate_tile_index_failures(message: str, program) -> str:
    """``message`` with a tile op's index failure prefixed by its DSL line(s): ``t.py:12: gather
    from tile 'ta' with indices from tile 'ti': flat index 32 is outside [0, 32)``."""
    def locate(m):
        sites = tile_index_sites(program, m.group("kernel"), m.group("what"), m.group("indexed"), m.group("indices"))
        return _located(m, sites)
    if " with indices from " not in message:
        return message
    return _INDEX_FAILURE.sub(locate, message)


def locate_kernel_accesses(message: str, program) -> str:
    """``message`` with each kernel access failure prefixed by its DSL line(s): ``t.py:9: load
    of tensor 'a' out of bounds ...`` (``t.py:9 or t.py:14: ...`` when the kernel has several
    such accesses the message cannot tell apart)."""
    def locate(m):
        size = _SIZE.match(m.group("rest"))
        sites = kernel_access_sites(program, m.group("kernel"), m.group("what"), m.group("tensor"),
                                    int(size.group(1)) if size else -1, int(size.group(2)) if size else None)
        if not sites and size:   # no constant matched: every access of that kind
            sites = kernel_access_sites(program, m.group("kernel"), m.group("what"), m.group("tensor"))
        return _located(m, sites)
    if " of tensor '" not in message:
        return message
    return _ACCESS_FAILURE.sub(locate, message)


# An orchestration element access that failed at a DSL line (PTO2_ELEMENT_SITE): the runtime names
# its API, the user wrote pl.tensor.read (x[i]) or pl.tensor.write.
_ELEMENT_API = re.compile(r"(%s:\d+: )(get|set)_tensor_data: " % r"[^\s:]+\.py")


def name_element_access(message: str) -> str:
    """``message`` with a located ``get_tensor_data`` / ``set_tensor_data`` failure naming the DSL
    op: ``t.py:11: pl.tensor.write: index 16 out of range on axis 0 (extent 16)``."""
    return _ELEMENT_API.sub(lambda m: m.group(1) + ("pl.tensor.read" if m.group(2) == "get" else "pl.tensor.write")
                            + ": ", message)


# A kernel tile's run-time valid shape outside its dims (pypto_kernel_valid.h check_valid), or its
# run-time shape negative or too large (tile_elements): the kernel names the tile by its C++ name
# (a nested op's result is 'tmp') and knows no line.
_VALID_FAILURE = re.compile(r"kernel '(?P<kernel>[^']+)'[^\n]*? failed: (?P<failure>tile '(?P<name>[^']*)'"
                            r"(?P<rest>: (?P<kind>valid extent|extent|run-time shape) [^\n]*))")


def _assignments(node, out: List) -> List:
    """Every ir.AssignStmt under ``node``, in source order."""
    from pypto._core import ir
    if isinstance(node, ir.AssignStmt):
        out.append(node)
    for name in ("stmts", "body", "then_body", "else_body"):
        child = getattr(node, name, None)
        for c in child if isinstance(child, (list, tuple)) else (child,):
            if isinstance(c, ir.Node):
                _assignments(c, out)
    return out


def _runtime_valid(call, field: str = "valid_shape") -> bool:
    """Whether ``call`` makes a tile whose valid shape (``field="shape"``: shape) is known only at
    run time."""
    from pypto._core import ir
    dims = getattr(call.type, field, None) if isinstance(call.type, ir.TileType) else None
    return bool(dims) and any(not isinstance(d, ir.ConstInt) for d in dims)


def locate_valid_extent_failures(message: str, program) -> str:
    """``message`` with a tile's run-time valid extent outside its dims located at the op that
    made the tile: ``t.py:10: tile 's': valid extent 12 ...``; a tile no name holds (a nested
    op's result, 'tmp' in the kernel) is called ``a computed tile``."""
    from pypto._core import ir

    def locate(m):
        func = next((f for f in getattr(program, "functions", None) or () if f.name == m.group("kernel")), None)
        if func is None:
            return m.group(0)
        field = "valid_shape" if m.group("kind") == "valid extent" else "shape"
        named = [a.value.span for a in _assignments(func.body, [])
                 if a.var.name == m.group("name") and isinstance(a.value, ir.Call) and _runtime_valid(a.value, field)]
        spans = named or [c.span for c in _calls(func.body, []) if _runtime_valid(c, field)]
        sites = []
        for sp in spans:
            site = "%s:%d" % (os.path.basename(sp.file), sp.line)
            if sp.line > 0 and site not in sites:
                sites.append(site)
        label = "tile '%s'" % m.group("name") if named else "a computed tile"
        start = m.start("failure") - m.start(0)
        return m.group(0)[:start] + (" or ".join(sites) + ": " if sites else "") + label + m.group("rest")
    if "': valid extent " not in message and "': extent " not in message and "': run-time shape " not in message:
        return message
    return _VALID_FAILURE.sub(locate, message)


def explain_failure(message: str, program) -> str:
    """A failed run's ``message`` in the terms of ``program`` (the module docstring's rewrites)."""
    try:
        message = name_element_access(message)
        message = name_index_params(message, index_params(program))
        message = locate_tile_index_failures(locate_kernel_accesses(message, program), program)
        message = locate_valid_extent_failures(message, program)
        return locate_tile_block_failures(message, program)
    except Exception:  # noqa: BLE001 - an explanation must never hide the failure itself
        return message


# A DSL site in a run's message: "t.py:9: " (a check that names its own line: an orchestration
# check, a kernel access located above, a submission check) or "submitted at t.py:16" (the task
# that failed). A site in a list ("t.py:9 or t.py:14: ") names no single line.
_ANY_FILE = r"[\w.+-]+\.py"


def _site_patterns(program):
    """The colon-site and submitted-at patterns: ``program``'s source files by their basenames
    literally (a name with a space or a bracket is found whole), then any ``name.py``."""
    bases = sorted({os.path.basename(f.span.file) for f in getattr(program, "functions", None) or ()
                    if getattr(f, "span", None) is not None and f.span.file}, key=len, reverse=True)
    name = "|".join([re.escape(b) for b in bases] + [_ANY_FILE])
    return (re.compile(r"(?:^|(?<=[\s(]))(?<! or )(%s):(\d+): " % name),
            re.compile(r"submitted at (%s):(\d+)\b" % name))


def _call_at(program, base: str, line: int):
    """The outermost IR call of ``program`` on line ``line`` of the file named ``base`` (a
    kernel's load or store, an orchestration's call), or None."""
    for f in getattr(program, "functions", None) or ():
        fs = f.span   # only the function whose lines hold it is walked
        if fs.line and not (fs.line <= line <= max(fs.end_line, fs.line) and os.path.basename(fs.file) == base):
            continue
        for call in _calls(f.body, []):   # parents before their arguments
            span = call.span
            if span.line == line and os.path.basename(span.file) == base:
                return call
    return None


def _line_location(program, base: str, line: int) -> dict:
    """A site on a line that holds no call (``c = a // b``, a loop header): the function's file by
    its full path and the whole line under the caret, or just ``base`` and the line when no
    function of ``program`` spans it or its file cannot be read."""
    import linecache
    for f in getattr(program, "functions", None) or ():
        fs = f.span
        if not (fs.file and os.path.basename(fs.file) == base and fs.line <= line <= max(fs.end_line, fs.line)):
            continue
        text = linecache.getline(fs.file, line).rstrip("\n")
        if not text.strip():
            return dict(file=fs.file, line=line)
        col = len(text) - len(text.lstrip()) + 1
        return dict(file=fs.file, line=line, col=col, end_col=len(text.rstrip()) + 1, source_line=text)
    return dict(file=base, line=line)


def failure_location(message: str, program) -> dict:
    """PyptoError keyword arguments (``file``, ``line``, ``col``, ``end_col``, ``source_line``)
    locating a failed run's ``message`` at its most specific DSL site: the innermost single
    ``t.py:N: `` site, else the failing task's ``submitted at t.py:N``; {} when the message names
    none. The message carries basenames: the file, the columns and the source line are those of
    ``program``'s call on that line (the caret under the call), else just the name and line.

        failure_location("... submitted at t.py:16 block 0/1 ...", program)
        # -> {"file": "/src/t.py", "line": 16, "col": 13, "end_col": 40, "source_line": "        c = ..."}
    """
    colon_site, submitted_at = _site_patterns(program)
    sites = list(colon_site.finditer(message))
    site = sites[-1] if sites else submitted_at.search(message)
    if site is None:
        return {}
    base, line = site.group(1), int(site.group(2))
    call = _call_at(program, base, line)
    if call is None:
        return _line_location(program, base, line)
    span = call.span
    end_col = span.end_col if span.end_line == span.line else len(span.source_line) + 1
    return dict(file=span.file, line=line, col=span.col, end_col=end_col, source_line=span.source_line)


def explain_and_locate(message: str, program) -> Tuple[str, dict]:
    """explain_failure's message and its failure_location (``CompiledProgram`` and
    ``HostProgram`` raise their ``RunError`` with both: ``err.file`` / ``err.line`` name the DSL
    line, and ``err.render()`` shows it)."""
    message = explain_failure(message, program)
    try:
        return message, failure_location(message, program)
    except Exception:  # noqa: BLE001 - a location must never hide the failure itself
        return message, {}
