"""The DSL parser: Python ``ast`` -> pypto IR (``pypto._core.ir``).

Entry points (normally reached through ``pypto.language``)::

    parse_class(cls, captured_locals)       # @pl.program
    parse_program_text(text, filename)      # pl.parse_program
    parse_function_text(text, filename)     # pl.parse_function

Modules: diagnostics (spans, errors), context (parser state), pyeval (compile-time Python
values), annotations (types), exprs / calls (expressions), stmts / control_flow / scopes
(statements), deps (pl.submit, deps=, predicates), program (driver).
"""

# pypto.language first: it imports the parser, whose modules import pypto.language._types. Entered
# here the other way round (`import pypto.frontend.diagnostics` before pypto.language), the
# parser's modules met a half-initialised pypto.frontend.program: an ImportError.
import pypto.language  # noqa: F401,E402
from pypto.frontend.program import parse_class, parse_function_text, parse_program_text  # noqa: F401
