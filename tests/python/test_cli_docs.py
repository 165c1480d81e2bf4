"""docs/cli.md lists every flag of every `pypto` subcommand under its command, and nothing the
parser does not have (the parser is pypto.cli.build_parser, the one `pypto` runs)."""
import argparse
import os
import re

import pytest

from pypto.cli import build_parser

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs", "cli.md")


def _commands():
    """'compile' -> its parser, ..., 'trace summary' -> the nested one."""
    out = {}

    def walk(parser, prefix):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, (prefix + " " + name).strip())
                return
        out[prefix] = parser

    walk(build_parser(), "")
    return out


def _sections():
    """'compile' -> the text of '## `pypto compile FILE`' up to the next heading."""
    text = open(DOC).read()
    parts = re.split(r"^## `pypto ([a-z ]+?) FILE`$", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def _flags(parser):
    return {s for a in parser._actions for s in a.option_strings if s not in ("-h", "--help")}


def test_every_subcommand_has_a_section():
    assert sorted(_sections()) == sorted(_commands())


@pytest.mark.parametrize("command", sorted(_commands()))
def test_the_section_lists_exactly_the_parsers_flags(command):
    section = _sections()[command]
    rows = [line for line in section.splitlines() if line.startswith("| `-")]
    documented = {m for row in rows for m in re.findall(r"`(--?[a-z][a-z0-9-]*)", row.split("|")[1])}
    assert documented == _flags(_commands()[command]), command
