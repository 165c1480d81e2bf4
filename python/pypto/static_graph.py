"""The task graph of a chip-level orchestration read from the IR, without running it
(``CompiledProgram.task_graph(static=True)``, ``pypto graph prog.py --static``).

    dot = pypto.compile(TiledMatmul).task_graph(static=True)    # DOT text, nothing runs

The analysis is C++ (src/transforms/static_task_graph.cpp, ``pypto._core.passes.
static_task_graph``): it interprets the orchestration after the compiler's passes as the
runtime executes it and records what the runtime's race checker records for the executed
graph: one node per task (an SPMD or cluster submission is one task), barriers
(``pl.system.task_dummy``), get_tensor_data waits (``tensor.read`` / ``tensor.write``);
automatic edges from overlapping regions (views, transposes, assembled slices) outside MANUAL
scopes, explicit edges from ``deps=`` and from the compiler's derived edges, wait edges.

Values known only at run time (scalar parameters not given in ``scalars``, dynamic dimensions
not given in ``dims``, a value read by ``tensor.read``) may flow into kernel arguments; when one
decides a loop bound, an ``if``, a shape or a view offset, there is no static graph and
StaticGraphError says where and why.
"""

from __future__ import annotations

import numbers
import struct
from typing import Dict, Optional, Tuple

import numpy as np

from pypto.errors import PyptoError
from pypto.runtime.args import scalar_bits

__all__ = ["StaticGraphError", "static_task_graph", "program_task_graph"]


_INT64_MAX = 2 ** 63 - 1


class StaticGraphError(PyptoError, ValueError):
    """The program has no static task graph (data-dependent control flow, or a construct the
    analysis does not model); the diagnostic says where and why."""


def static_task_graph(prepared_program, entry: str, dims: Optional[Dict[str, int]] = None,
                      scalars: Optional[Dict[str, object]] = None) -> str:
    """DOT text of the task graph of orchestration ``entry`` in ``prepared_program`` (after
    ``codegen.run_pipeline``), without running it: the executed graph's node and edge
    attributes (``kind="task"``, ``task=N``, ``source=``; edges ``kind="auto"`` / ``"explicit"``
    / ``"wait"``), plus ``graph [static=true]`` and ``predicated=true`` on predicated tasks.
    Raises StaticGraphError when there is no static graph.

        dot = static_task_graph(codegen.run_pipeline(Prog), "main", dims={"N": 256})
    """
    from pypto._core import passes as _passes
    _check_scalar_names(prepared_program, entry, scalars or {})
    ints, floats = {}, {}
    for name, value in (dims or {}).items():   # the binding's int64: a larger one was a TypeError traceback
        if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)) or \
                not 0 <= value <= _INT64_MAX:
            raise StaticGraphError("dim %s=%r: an extent is an integer in 0..%d" % (name, value, _INT64_MAX))
    known = sorted(v.name for v in getattr(prepared_program, "dynamic_dims", None) or ())
    for name in sorted(dims or {}):   # a misspelt name was ignored, then its dimension asked for
        if name not in known:
            raise StaticGraphError("dim %s=%r: program %s has no dynamic dimension %s (%s)"
                                   % (name, dims[name], prepared_program.name, name,
                                      "its dynamic dimensions: " + ", ".join(known) if known else "it has none"),
                                   help="give dims= the names of pl.dynamic(...) dimensions, as declared")
    # Python or NumPy numbers, checked as a call checks them (pypto.runtime.args.scalar_bits: the
    # same rule and text): 1.5, NaN or inf for an integer parameter drew a graph no run can have
    # (the C++ side truncated it: 1.5 -> 1 task, inf -> 0 tasks) while the call refused it.
    specs = _scalar_specs(prepared_program, entry)
    for name, value in (scalars or {}).items():
        spec = specs.get(name)
        if spec is None:   # an entry the C++ side reports as unknown
            _legacy_scalar(name, value, ints, floats)
            continue
        bits = scalar_bits(spec, value, "argument '%s' of %s" % (name, specs[None]))
        if spec.dtype in ("FP32", "FP16", "BF16"):
            floats[name] = struct.unpack("<f", struct.pack("<I", bits))[0]   # the float32 a run computes with
        else:   # the slot's 64 bits as the int64 the analysis takes
            ints[name] = bits - (1 << 64) if bits > _INT64_MAX else bits
    try:
        return _passes.static_task_graph(prepared_program, entry, {k: int(v) for k, v in (dims or {}).items()},
                                         ints, floats)
    except StaticGraphError:
        raise
    except PyptoError as e:
        raise StaticGraphError(e.message, file=e.file, line=e.line, col=e.col, end_col=e.end_col,
                               source_line=e.source_line, help=e.help, end_line=e.end_line) from None


def _scalar_specs(prepared_program, entry: str) -> Dict[object, object]:
    """``{name: ParamSpec}`` of the scalar parameters of ``entry`` (and ``None``: its signature
    text, "main(n, x)", as a call's messages name it); {} when there is no such function."""
    from pypto.runtime.args import ParamSpec
    func = next((f for f in prepared_program.functions if f.name == entry), None)
    if func is None:
        return {}
    specs: Dict[object, object] = {None: "%s(%s)" % (entry, ", ".join(p.name for p in func.params))}
    for slot, p in enumerate(p for p in func.params if type(p.type).__name__ == "ScalarType"):
        specs[p.name] = ParamSpec(p.name, "scalar", str(p.type.dtype).rsplit(".", 1)[-1], (), "In", slot)
    return specs


def _legacy_scalar(name: str, value, ints: Dict[str, int], floats: Dict[str, float]) -> None:
    """A value for a parameter whose type is not known here: passed on as it is typed."""
    if isinstance(value, (numbers.Integral, np.bool_)):
        value = int(value)
        if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
            raise StaticGraphError("scalar %s=%d: an integer scalar's value is in %d..%d (int64)"
                                   % (name, value, -_INT64_MAX - 1, _INT64_MAX))
        ints[name] = value
    elif isinstance(value, numbers.Real):
        floats[name] = float(value)
    else:
        raise StaticGraphError("scalar %s=%r: a scalar parameter's value is an int, bool or float, not %s"
                               % (name, value, type(value).__name__))


def _check_scalar_names(prepared_program, entry: str, scalars: Dict[str, object]) -> None:
    """A value for a name that is not a scalar parameter of ``entry`` would be ignored silently
    (a typo, or a tensor's name): refuse it, listing the entry's scalar parameters."""
    func = next((f for f in prepared_program.functions if f.name == entry), None)
    if func is None:
        return   # the C++ side reports the unknown entry
    known = [p.name for p in func.params if type(p.type).__name__ == "ScalarType"]
    for name in sorted(scalars):
        if name not in known:
            raise StaticGraphError("scalar %s=%r: %s has no scalar parameter %s (%s)"
                                   % (name, scalars[name], entry, name,
                                      "its scalar parameters: " + ", ".join(known) if known else "it has none"))


def program_task_graph(program, entry: Optional[str] = None, dims: Optional[Dict[str, int]] = None,
                       scalars: Optional[Dict[str, object]] = None,
                       analyze_auto_scopes_for_deps: bool = False) -> Tuple[str, str]:
    """``(entry, DOT text)`` of a parsed program's orchestration ``entry`` (default: its HOST
    orchestration, else its only chip-level one), straight from the IR: runs the pass pipeline but builds and runs
    nothing (what ``pypto graph --static`` uses). ``analyze_auto_scopes_for_deps`` as for
    ``pypto.compile``.

        entry, dot = program_task_graph(TiledMatmul)
    """
    from pypto import codegen
    prepared = codegen.run_pipeline(program, analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps)
    if entry is None:   # the HOST entry of a HOST program, else the only chip-level orchestration
        orchestrations = [f for f in prepared.functions if f.type.name == "Orchestration"]
        names = [f.name for f in orchestrations if f.level.name == "HOST"] or [f.name for f in orchestrations]
        if len(names) != 1:
            raise StaticGraphError("name the orchestration to draw: the program has %d (%s)"
                                   % (len(names), ", ".join(names) or "none"))
        entry = names[0]
    return entry, static_task_graph(prepared, entry, dims=dims, scalars=scalars)
