"""The ``pypto`` logger: what the compiler and runtime decide, for users who want to see it.

pypto logs through Python's standard ``logging`` under the logger named ``pypto`` (silent by
default: a ``NullHandler``). INFO: build cache hits and misses, runtime creation with its worker
counts. DEBUG: every compiler command run.

    import logging
    logging.basicConfig()
    logging.getLogger("pypto").setLevel(logging.DEBUG)
"""

import logging

__all__ = ["logger"]

logger = logging.getLogger("pypto")
logger.addHandler(logging.NullHandler())
