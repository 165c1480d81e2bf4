"""The ``pypto`` command line. One function per subcommand (``cmd_<name>``), registered in
``_SUBCOMMANDS``; add a subcommand by writing ``add_<name>_parser`` + ``cmd_<name>`` (in a module of
this package, importing only ``pypto.cli.common``) and listing them there.

    pypto compile prog.py -o out/                  # writes out/orchestration/<func>.cpp, ...
    pypto compile prog.py -o out/ --program Name   # when prog.py defines several programs
    pypto compile prog.py -o out/ --func orch      # one Orchestration function only
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, List, Optional, Tuple

from pypto.errors import PyptoError
from pypto.cli.common import CliError, load_programs, select_program
from pypto.cli.compile import add_compile_parser, cmd_compile
from pypto.cli.graph import add_graph_parser, cmd_graph
from pypto.cli.run import add_run_parser, cmd_run
from pypto.cli.trace import add_trace_parser, cmd_trace

__all__ = ["main", "build_parser", "load_programs", "select_program", "cmd_compile"]


_SUBCOMMANDS: List[Tuple[str, Callable, Callable]] = [
    ("compile", add_compile_parser, cmd_compile),
    ("run", add_run_parser, cmd_run),                  # pypto/cli/run.py (e2e)
    ("trace", add_trace_parser, cmd_trace),            # pypto/cli/trace.py
    ("graph", add_graph_parser, cmd_graph),            # pypto/cli/graph.py
]


def _version() -> str:
    """The package version ``pypto --version`` prints."""
    from pypto import __version__
    return __version__


def build_parser() -> argparse.ArgumentParser:
    """The ``pypto`` argument parser with every subcommand (docs/cli.md lists its flags;
    tests/python/test_cli_docs.py compares the two)."""
    parser = argparse.ArgumentParser(prog="pypto", description="pypto: Python DSL -> PTO2 orchestration C++")
    parser.add_argument("--version", action="version", version="pypto " + _version())
    # metavar: a missing command is named by its choices, not by the internal dest ("command")
    sub = parser.add_subparsers(dest="command", required=True,
                                metavar="{%s}" % ",".join(name for name, _, _ in _SUBCOMMANDS))
    for _name, add_parser, _handler in _SUBCOMMANDS:
        add_parser(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of the ``pypto`` console script; returns the exit status."""
    handlers = {name: handler for name, _, handler in _SUBCOMMANDS}
    args = build_parser().parse_args(argv)
    try:
        return handlers[args.command](args)
    except CliError as e:
        print("pypto: error: %s" % e, file=sys.stderr)
        return 2
    except PyptoError as e:
        print(str(e), file=sys.stderr)
        return 1
    except KeyboardInterrupt:   # Ctrl-C: the run was cancelled (libpto2's SIGINT hook); no traceback of ours
        print("pypto: interrupted", file=sys.stderr)
        return 130   # 128 + SIGINT, as a shell reports it
    except BrokenPipeError:   # `pypto trace summary t.json | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
