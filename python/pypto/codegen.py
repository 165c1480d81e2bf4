"""Orchestration code generation (spec "Python API").

    from pypto import codegen, backend
    backend.set_backend_type(backend.BackendType.Ascend910B)
    result = codegen.generate_orchestration(MyProgram, "orch_basic")   # or MyProgram.orch_basic
    result.code                                     # the C++ file
    result.files["orchestration/orch_basic.cpp"]    # same text, by output path
    result.kernel_ids                               # {"kernel_add": 0}
    result.core_types                               # {"kernel_add": "AIV"}
    result.signature                                # [ParamSignature(a: tensor FP32 [16, 16] In, slot 0), ...]

``generate_orchestration`` runs the default pass pipeline (``run_pipeline``) first; with
``PYPTO_DUMP_IR=<dir>`` in the environment the printed IR after each pass is written to
``<dir>/<NN>_<PassName>.py``. Errors in the program raise ``pypto.PyptoError``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Union

from pypto import backend as _backend
from pypto._core import codegen as _cg
from pypto.errors import PyptoError

__all__ = ["OrchestrationResult", "generate_orchestration", "run_pipeline", "pass_names",
           "orchestration_functions"]


@dataclass
class OrchestrationResult:
    """What ``generate_orchestration`` returns; ``files`` maps output paths to file contents."""

    func_name: str
    code: str
    files: Dict[str, str]
    kernel_ids: Dict[str, int]
    core_types: Dict[str, str]
    signature: List[object] = field(default_factory=list)   # pypto._core.codegen.ParamSignature
    func_name_to_id: Dict[str, int] = field(default_factory=dict)              # = kernel_ids
    func_name_to_core_type: Dict[str, str] = field(default_factory=dict)       # kernel -> "AIC" / "AIV"
    func_name_to_signature: Dict[str, List[str]] = field(default_factory=dict)  # kernel -> ["IN", "OUT", ...]
    backend: _backend.BackendType = _backend.BackendType.CPU


def run_pipeline(program, dump_dir: Optional[str] = None, verify: bool = True,
                 analyze_auto_scopes_for_deps: bool = False):
    """Runs the default pass pipeline and returns the transformed Program.

    ``dump_dir`` (default ``$PYPTO_DUMP_IR``) receives the printed IR after each pass.
    ``analyze_auto_scopes_for_deps=True`` adds AutoDeriveTaskDependencies (compiler-derived
    task edges in AUTO regions; docs/auto_dependencies.md).
    """
    _check_options("run_pipeline", verify=verify, analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps)
    if dump_dir is not None and not isinstance(dump_dir, (str, os.PathLike)):
        raise PyptoError("run_pipeline(): dump_dir= is a directory path (str or os.PathLike), got %s"
                         % type(dump_dir).__name__, help="e.g. dump_dir=\"ir_dumps\"")
    dump_dir = os.fsdecode(os.fspath(dump_dir)) if dump_dir is not None else None
    _check_dump_dir(dump_dir if dump_dir is not None else os.environ.get("PYPTO_DUMP_IR"))
    return _cg.run_pipeline(program, dump_dir, bool(verify), bool(analyze_auto_scopes_for_deps))


def _check_options(func: str, **flags) -> None:
    """A PyptoError naming the option for a flag that is not a bool (run_pipeline(flag="yes") was
    nanobind's "incompatible function arguments" signature dump)."""
    import numpy as np
    for name, value in flags.items():
        if not isinstance(value, (bool, np.bool_)):
            raise PyptoError("%s(): %s= is True or False, got %r (%s)" % (func, name, value, type(value).__name__),
                             help="pass %s=True to turn it on" % name)


def _check_dump_dir(path: Optional[str]) -> None:
    """A dump directory that cannot be created is an error before any pass runs (the C++ side
    would fail with a bare filesystem error after the first pass)."""
    if not path:
        return
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise PyptoError("cannot write the IR dumps to %s: %s" % (path, e.strerror or e),
                         help="give a directory that can be created (--dump-ir DIR / PYPTO_DUMP_IR)") from None


def pass_names(analyze_auto_scopes_for_deps: bool = False) -> List[str]:
    """The default pipeline's passes, in order."""
    return list(_cg.pass_names(analyze_auto_scopes_for_deps))


def orchestration_functions(program) -> List[str]:
    """Names of the program's Orchestration functions, in definition order."""
    from pypto._core import ir
    return [f.name for f in program.functions if f.type == ir.FunctionType.Orchestration]


def _func_name(func: Union[str, object]) -> str:
    if isinstance(func, str):
        return func
    name = getattr(func, "name", None)
    if isinstance(name, str):
        return name
    raise TypeError("generate_orchestration: func must be a function name or an IR Function, got %r" % (func,))


def _require_program(program, what: str) -> None:
    """A located error (at the class) when `program` is not an IR Program, e.g. a class that
    is not decorated with @pl.program."""
    from pypto._core import ir
    if not isinstance(program, ir.Program):
        from pypto.errors import PyptoError, located_at
        raise PyptoError("%s expects a program (a class decorated with @pl.program), got %s %r"
                         % (what, "class" if isinstance(program, type) else type(program).__name__,
                            getattr(program, "__name__", program)),
                         help="decorate the class with @pl.program", **located_at(program))


def generate_orchestration(program, func: Union[str, object], run_passes: bool = True,
                           analyze_auto_scopes_for_deps: bool = False) -> OrchestrationResult:
    """Generates ``orchestration/<func>.cpp`` for Orchestration function ``func`` of ``program``.

    ``func`` is the function's name or the Function object (``MyProgram.orch_basic``).
    ``run_passes=False`` skips the pipeline (the program must already be prepared).
    ``analyze_auto_scopes_for_deps=True``: compiler-derived task edges (see ``run_pipeline``).
    """
    _require_program(program, "generate_orchestration")
    prepared = run_pipeline(program, analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps) \
        if run_passes else program
    r = _cg.generate_orchestration(prepared, _func_name(func))
    return OrchestrationResult(func_name=r.func_name, code=r.code, files=dict(r.files),
                               kernel_ids=dict(r.kernel_ids), core_types=dict(r.core_types),
                               signature=list(r.signature), func_name_to_id=dict(r.func_name_to_id),
                               func_name_to_core_type=dict(r.func_name_to_core_type),
                               func_name_to_signature={k: list(v) for k, v in r.func_name_to_signature.items()},
                               backend=_backend.get_backend_type())
