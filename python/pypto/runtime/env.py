"""Environment reads on the per-call path (issue 17: the fixed cost of a call).

``os.environ.get`` raises and catches a KeyError for an unset name, about a microsecond per
call; ``getenv`` asks the C library instead (``program_abi.getenv``), which sees every write
made through ``os.environ`` (Python passes them on with putenv/unsetenv).

    getenv("PYPTO_TRACE")   # -> None when unset, else the value as os.environ.get gives it
"""

from __future__ import annotations

import os
from typing import Optional

_c_getenv = None


def getenv(name: str) -> Optional[str]:
    """The value of environment variable ``name``, or None when it is not set."""
    global _c_getenv
    if _c_getenv is None:
        from pypto._core import program_abi
        _c_getenv = program_abi.getenv
    value = _c_getenv(name)
    return None if value is None else os.fsdecode(value)
