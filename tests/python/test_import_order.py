"""Every pypto module imports on its own, as the first import of a fresh interpreter. The
parser's modules import pypto.language._types, and pypto.language imports the parser: entered
from the parser's side (`from pypto.frontend.diagnostics import NoDepInManualScopeWarning`,
which docs/dsl.md names for warning filters), the import failed with a circular ImportError."""
import pkgutil
import subprocess
import sys

import pypto


def test_each_module_imports_first_in_a_fresh_interpreter():
    mods = [m.name for m in pkgutil.walk_packages(pypto.__path__, "pypto.")
            if "_core" not in m.name and not m.name.endswith("__main__")]   # __main__ runs the CLI
    assert "pypto.frontend.diagnostics" in mods and len(mods) > 40
    procs = [(m, subprocess.Popen([sys.executable, "-c", "import " + m], stderr=subprocess.PIPE, text=True))
             for m in mods]
    failed = {m: p.communicate()[1].strip().splitlines()[-1:] for m, p in procs if p.wait() != 0}
    assert failed == {}


def test_a_warning_filter_by_the_documented_class():
    code = ("import warnings\n"
            "from pypto.frontend.diagnostics import NoDepInManualScopeWarning\n"
            "warnings.filterwarnings('ignore', category=NoDepInManualScopeWarning)\n"
            "import pypto.language as pl\n"
            "assert issubclass(NoDepInManualScopeWarning, Warning)\n")
    subprocess.run([sys.executable, "-c", code], check=True)
