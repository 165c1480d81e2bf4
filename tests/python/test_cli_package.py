"""The ``pypto`` CLI package (python/pypto/cli/): one module per command, ``--version``."""
import subprocess
import sys

import pytest

import pypto
from pypto import cli


def test_version_flag_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == "pypto %s" % pypto.__version__


def test_python_dash_m_pypto_cli_runs_the_command_line():
    cp = subprocess.run([sys.executable, "-m", "pypto.cli", "--version"], capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.startswith("pypto ")


def test_command_modules_do_not_import_each_other():
    # Each command lives in its own module and shares pieces through helper modules only.
    import ast
    import pathlib
    pkg = pathlib.Path(cli.__file__).parent
    for path in pkg.glob("*.py"):
        if path.name in ("__init__.py", "__main__.py", "common.py"):
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pypto.cli"):
                assert node.module in ("pypto.cli.common", "pypto.cli.arrays"), "%s imports %s" % (path.name, node.module)
