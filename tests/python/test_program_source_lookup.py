"""@pl.program finds its class's source through the methods' code when inspect cannot
(docs/dsl.md): a module loaded with importlib.util.module_from_spec + exec_module and no
sys.modules entry, or another module registered under the same name. When the source cannot be
found reliably the error says so and points at pl.parse_program."""
import importlib.util
import sys
import textwrap

import numpy as np
import pytest

import pypto
from pypto.errors import PyptoError

PROG = textwrap.dedent('''
    import pypto.language as pl

    ROWS = 16
    M = pl.dynamic("M")


    @pl.program
    class Scale:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[ROWS, 8], pl.FP32],
              y: pl.Out[pl.Tensor[[ROWS, 8], pl.FP32]]) -> pl.Tensor[[ROWS, 8], pl.FP32]:
            y = pl.store(pl.mul(pl.load(x, [0, 0], [ROWS, 8]), FACTOR), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[ROWS, 8], pl.FP32],
                 y: pl.Out[pl.Tensor[[ROWS, 8], pl.FP32]]) -> pl.Tensor[[ROWS, 8], pl.FP32]:
            y = self.k(x, y)
            return y
''')


def _load_unregistered(path, name):
    """The module at ``path`` as importlib's recipe loads it, without a sys.modules entry."""
    spec = importlib.util.spec_from_file_location(name, str(path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_module_without_sys_modules_entry(tmp_path):
    path = tmp_path / "scale_unregistered.py"
    path.write_text(PROG.replace("FACTOR", "3.0"))
    assert "scale_unregistered" not in sys.modules
    mod = _load_unregistered(path, "scale_unregistered")
    assert "scale_unregistered" not in sys.modules
    prog = mod.Scale
    assert prog.name == "Scale"
    # Spans are the file's own lines: main's decorator is line 17 of the file.
    main = prog.get("main")
    assert main.span.file == str(path) and main.span.line == 17
    x = np.arange(128, dtype=np.float32).reshape(16, 8)
    y = pypto.compile(prog)(x)
    np.testing.assert_array_equal(y, 3 * x)


def test_module_globals_resolve_names(tmp_path):
    """Names of the class body resolve in the module's own globals (ROWS, a function's value)."""
    path = tmp_path / "scale_globals.py"
    path.write_text(PROG.replace("FACTOR", "2.0").replace("ROWS = 16", "ROWS = 32"))
    prog = _load_unregistered(path, "scale_globals").Scale
    assert "[32, 8]" in str(prog.get("k").params[0].type)


def test_another_module_of_the_same_name_is_not_read(tmp_path, monkeypatch):
    """sys.modules holds a different module under the name: inspect would read its file."""
    decoy = tmp_path / "decoy.py"
    decoy.write_text("# not the program\n\n\nclass Scale:\n    pass\n")
    monkeypatch.setitem(sys.modules, "scale_twin", _load_unregistered(decoy, "scale_twin"))
    path = tmp_path / "scale_twin.py"
    path.write_text(PROG.replace("FACTOR", "5.0"))
    prog = _load_unregistered(path, "scale_twin").Scale
    assert prog.get("main").span.file == str(path)
    x = np.ones((16, 8), np.float32)
    np.testing.assert_array_equal(pypto.compile(prog)(x), 5 * x)


def test_source_that_cannot_be_read_is_a_clear_error(tmp_path):
    code = compile(PROG.replace("FACTOR", "2.0"), str(tmp_path / "gone.py"), "exec")   # no such file
    with pytest.raises(PyptoError, match=r"cannot read the source of class 'Scale'.*its file .*gone.py cannot be "
                                         r"read") as e:
        exec(code, {"__name__": "ghost_module"})
    assert "pl.parse_program" in e.value.help


def test_file_edited_since_it_was_compiled_is_not_parsed(tmp_path):
    path = tmp_path / "edited.py"
    path.write_text("\n\n" + PROG.replace("FACTOR", "2.0"))   # two lines more than the code was compiled from
    code = compile(PROG.replace("FACTOR", "2.0"), str(path), "exec")
    with pytest.raises(PyptoError, match=r"no class 'Scale' of .*edited.py has its methods at the lines they were "
                                         r"compiled from \(was the file edited since it was loaded\?\)") as e:
        exec(code, {"__name__": "edited_module"})
    assert "pl.parse_program" in e.value.help


def test_two_matching_classes_are_not_guessed_between(tmp_path):
    """Two identical 'class Scale' statements at different lines: each method's line picks one."""
    path = tmp_path / "two.py"
    text = PROG.replace("FACTOR", "2.0")
    body = text[text.index("@pl.program"):]
    path.write_text(text + "\n\n" + body.replace("2.0", "7.0"))
    mod = _load_unregistered(path, "two_scales")
    x = np.ones((16, 8), np.float32)
    np.testing.assert_array_equal(pypto.compile(mod.Scale)(x), 7 * x)   # the second binding of the name
