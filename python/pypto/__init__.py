"""pypto: a compiler and CPU runtime for task-graph programs on PTO accelerators.

    import pypto
    import pypto.language as pl
    pypto.ir.python_print(program)      # printed IR
    pypto.compile(program)              # (pypto.compiler) build for the CPU runtime

``pypto.PyptoError`` is raised for every mistake in a user's program.
"""

import importlib as _importlib

from pypto.errors import DependencyError, InternalCompilerError, PyptoError

__version__ = "0.1.0"

__all__ = ["__version__", "PyptoError", "DependencyError", "InternalCompilerError", "compile", "ir", "language"]

_LAZY_MODULES = {"ir": "pypto.ir", "language": "pypto.language", "codegen": "pypto.codegen",
                 "backend": "pypto.backend", "runtime": "pypto.runtime"}


def __getattr__(name):
    """Lazy attributes: submodules load on first use; ``compile`` comes from pypto.compiler."""
    if name == "compile":
        return _importlib.import_module("pypto.compiler").compile
    if name in _LAZY_MODULES:
        return _importlib.import_module(_LAZY_MODULES[name])
    raise AttributeError("module 'pypto' has no attribute %r" % name)
