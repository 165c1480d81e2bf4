"""A task's site is the DSL file's name without its directories, split at '/' only: on Linux a
'\\' is part of a file name. The generated code (the runtime's sites), the kernel's run-time
checks and the static graph cut `v"c\\add.py` to `add.py`, where Python's messages kept it whole."""
import os
import shutil

import pytest

from pypto import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ODD = 'v"c\\add.py'   # a quote (escaped in C++ and DOT) and a backslash


@pytest.fixture
def odd_example(tmp_path):
    path = tmp_path / ODD
    shutil.copy(os.path.join(ROOT, "examples", "vector_add.py"), path)
    return path


def _graph(path, *flags):
    out = path.parent / "g.dot"
    assert cli.main(["graph", str(path), "-o", str(out), *flags]) == 0
    return out.read_text()


@pytest.mark.parametrize("flags", [(), ("--static",)], ids=["executed", "static"])
def test_a_file_name_with_a_backslash_is_the_whole_site(odd_example, flags):
    dot = _graph(odd_example, *flags)
    line = next(i for i, text in enumerate(open(odd_example), 1) if "self.add_chunk(" in text)
    # DOT escapes the quote and the backslash; the executed graph's site comes from the runtime
    # (PTO2_SOURCE_SITE in the generated C++), the static one from the IR.
    assert 'source="v\\"c\\\\add.py:%d"' % line in dot, dot[:600]
    assert 'source="add.py:' not in dot

