"""Handler registry: how a lower parser module reaches a higher one without importing it.

The parser modules form layers (exprs < calls < stmts < deps < scopes < control_flow <
program). A statement parser (stmts) must hand a ``for`` to control_flow and an expression
parser (exprs) must hand a call to calls, but those modules import the lower ones. So the
higher module registers its entry point here under a name, and the lower one looks the name
up when it meets the construct. No module imports a module above it, so the package has no
import cycle (tests/python/test_import_cycles.py checks it).

    from pypto.frontend import registry

    @registry.handles("for")               # in control_flow.py
    def parse_for(ctx, node): ...

    registry.handler("for")(ctx, node)     # in stmts.py

``pypto.frontend.program`` imports every handler module, so all handlers are registered
before any source is parsed.
"""

from __future__ import annotations

from typing import Callable, Dict

_HANDLERS: Dict[str, Callable] = {}


def handles(name: str):
    """Decorator: register ``fn`` as the handler for construct ``name`` (one handler per name).

        @handles("call")
        def parse_call(ctx, node): ...
    """
    def register(fn: Callable) -> Callable:
        if name in _HANDLERS and _HANDLERS[name] is not fn:
            raise RuntimeError(f"pypto.frontend.registry: two handlers for '{name}'")
        _HANDLERS[name] = fn
        return fn
    return register


def handler(name: str) -> Callable:
    """The handler registered for construct ``name``: ``handler("if")(ctx, node)``."""
    try:
        return _HANDLERS[name]
    except KeyError:
        raise RuntimeError(f"pypto.frontend.registry: no handler for '{name}' (its module was not "
                           "imported; pypto.frontend.program imports every handler module)") from None
