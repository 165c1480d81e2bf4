"""Backend selection (spec "Python API").

    from pypto import backend
    backend.set_backend_type(backend.BackendType.Ascend910B)
    backend.get_backend_type()      # BackendType.Ascend910B

The backend type is a *label*: it does not change what code generation emits. The
orchestration and kernel C++ are the same for every backend (they target the PTO2 runtime API,
which libpto2 implements on CPU threads, and the CPU kernel prelude); the label is recorded on
code generation results (``result.backend``) for a build step that consumes them. The default is
``BackendType.CPU``, the only backend this project builds and runs.
"""

from __future__ import annotations

import enum

__all__ = ["BackendType", "set_backend_type", "get_backend_type"]


class BackendType(enum.Enum):
    """Targets a generated program can be built for."""

    CPU = "cpu"                 # libpto2, the PTO2 runtime on CPU threads (this project)
    Ascend910B = "ascend910b"   # Ascend 910B (A2/A3) AICPU orchestration
    Ascend950 = "ascend950"     # Ascend 950


_current = BackendType.CPU


def set_backend_type(backend_type: BackendType) -> None:
    """Sets the backend label recorded on subsequent code generation results (``result.backend``);
    the generated code is the same for every label. Raises TypeError for a non-BackendType."""
    global _current
    if not isinstance(backend_type, BackendType):
        raise TypeError("set_backend_type expects a pypto.backend.BackendType, got %r" % (backend_type,))
    _current = backend_type


def get_backend_type() -> BackendType:
    """The backend selected by set_backend_type (default BackendType.CPU)."""
    return _current
