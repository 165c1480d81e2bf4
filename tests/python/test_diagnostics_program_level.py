"""Program-level diagnostics (issue 15): decorator misuse, the number of @pl.program classes,
no Orchestration function, a plain class handed to the code generator, pl.Array parameters on
orchestration functions, pl.scope inside pl.manual_scope, and very deep expressions. Text
cases use the `#!` / `at=` conventions of test_diagnostics.py."""

import pytest

import pypto
import pypto.language as pl
from pypto import codegen
from pypto.errors import PyptoError

from test_diagnostics import body_check, check, program

BASE = program("d = self.kernel_add(a, b, d)\nreturn d")


def test_function_decorator_twice():
    src = BASE.replace("    @pl.function(type=pl.FunctionType.InCore)\n    def kernel_add",
                       "    @pl.function\n    @pl.function(type=pl.FunctionType.InCore)  #!\n    def kernel_add", 1)
    check(src, "@pl.function is applied twice to 'kernel_add'", "pl.function(type")


def test_function_decorator_positional_option_in_a_class():
    with pytest.raises(PyptoError) as ei:
        @pl.program
        class P:
            @pl.function(pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
                return a
    assert "@pl.function takes keyword options only" in ei.value.message and ei.value.line > 0


def test_function_decorator_twice_in_a_class():
    with pytest.raises(PyptoError) as ei:
        @pl.program
        class P:
            @pl.function
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
                return a
    assert "applied twice" in ei.value.message and ei.value.line > 0


# Misuse that raised raw Python exceptions from inside pypto (AttributeError "'property' object
# has no attribute '__name__'", "vars() argument must have __dict__ attribute", "function() got an
# unexpected keyword argument 'typ'") or passed silently (@pl.program on a def: an empty program).
def _line_of(marker: str) -> int:
    import inspect
    lines, start = inspect.getsourcelines(inspect.currentframe().f_back)
    return start + next(i for i, line in enumerate(lines) if marker in line)


def test_function_decorator_over_property_or_classmethod_in_a_class():
    for other in (property, classmethod, staticmethod):
        with pytest.raises(PyptoError) as ei:
            @pl.program
            class P:
                @pl.function(type=pl.FunctionType.Orchestration)  # at: over
                @other
                def main(self, n: pl.Scalar[pl.INDEX]):
                    pass
        assert ei.value.message == f"@pl.function must decorate a plain method (def), got a {other.__name__}"
        assert ei.value.help.startswith(f"remove @{other.__name__}")
        assert (ei.value.file, ei.value.line) == (__file__, _line_of("# at: over"))


def test_function_decorator_over_a_class():
    with pytest.raises(PyptoError) as ei:
        @pl.function  # at: class
        class C:
            pass
    assert ei.value.message == "@pl.function must decorate a method of a @pl.program class, got class 'C'"
    assert ei.value.line == _line_of("# at: class") and "@pl.program" in ei.value.help


def test_function_decorator_unknown_keyword_has_a_did_you_mean():
    with pytest.raises(PyptoError) as ei:
        @pl.program
        class P:
            @pl.function(typ=pl.FunctionType.Orchestration)  # at: typ
            def main(self, n: pl.Scalar[pl.INDEX]):
                pass
    assert ei.value.message == "@pl.function has no option 'typ'" and ei.value.help == "did you mean 'type='?"
    assert ei.value.line == _line_of("# at: typ")
    src = BASE.replace("@pl.function(type=pl.FunctionType.InCore)\n    def kernel_add",
                       "@pl.function(typ=pl.FunctionType.InCore)  #!\n    def kernel_add", 1)
    check(src, "@pl.function has no option 'typ'", "pl.FunctionType.InCore", help="did you mean 'type='?")


def test_program_decorator_twice():
    with pytest.raises(PyptoError) as ei:
        @pl.program  # at: twice
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, n: pl.Scalar[pl.INDEX]):
                pass
    assert ei.value.message == "@pl.program is applied twice to class 'P'" and ei.value.line == _line_of("# at: twice")
    check(BASE.replace("@pl.program\n", "@pl.program  #!\n@pl.program\n"),
          "@pl.program is applied twice to class 'P'", "pl.program")


def test_program_decorator_on_a_function():
    with pytest.raises(PyptoError) as ei:
        @pl.program  # at: def
        def main(n: pl.Scalar[pl.INDEX]):
            pass
    assert ei.value.message == "@pl.program must decorate a class, got function 'main'"
    assert ei.value.line == _line_of("# at: def") and "class" in ei.value.help
    check("import pypto.language as pl\n\n@pl.program  #!\ndef main(n: pl.Scalar[pl.INDEX]):\n    pass\n",
          "@pl.program must decorate a class, got function 'main'", "pl.program")


def test_function_decorator_over_another_decorator_in_text():
    src = BASE.replace("    @pl.function(type=pl.FunctionType.InCore)\n    def kernel_add",
                       "    @pl.function(type=pl.FunctionType.InCore)\n    @property  #!\n    def kernel_add", 1)
    check(src, "@pl.function must decorate a plain method (def), not one decorated with @property", "property",
          help="remove @property")


def test_program_decorator_with_parentheses_and_printed_attrs_work():
    @pl.program()
    class P:
        @pl.function(type=pl.FunctionType.InCore, attrs={"tag": "x"})
        def k(self, a: pl.Tensor[[16], pl.FP32], b: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
            b = pl.store(pl.load(a, [0], [16]), [0], b)
            return b

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16], pl.FP32], b: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
            b = self.k(a, b)
            return b
    assert P.name == "P"
    assert pl.parse_program(BASE.replace("@pl.program\n", "@pl.program()\n")).name == "P"


def test_two_program_classes_point_at_the_second():
    src = BASE + "\n\n@pl.program\nclass Q:  #!\n    pass\n"
    check(src, "expected exactly one @pl.program class in t.py, found 2 (the first is 'P'", "class Q")


def test_no_program_class_points_at_the_class():
    check("import pypto.language as pl\n\nclass Q:  #!\n    pass\n",
          "expected exactly one @pl.program class in t.py, found 0", "class Q")


def test_no_orchestration_function_is_located():
    # main becomes a kernel (one that computes, since a kernel calls no function).
    src = program("d = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], d)\nreturn d").replace(
        "pl.FunctionType.Orchestration", "pl.FunctionType.InCore")
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(src, "t.py"))
    assert "has no Orchestration function" in ei.value.message
    assert (ei.value.file, ei.value.line) == ("t.py", src.splitlines().index("class P:") + 1)


class NotAProgram:
    pass


def test_plain_class_to_generate_orchestration_is_located():
    with pytest.raises(PyptoError) as ei:
        codegen.generate_orchestration(NotAProgram, "main")
    assert "expects a program" in ei.value.message and "NotAProgram" in ei.value.message
    assert ei.value.file.endswith("test_diagnostics_program_level.py") and ei.value.line > 0


def test_array_parameter_on_an_orchestration_is_refused():
    src = BASE.replace("n: pl.Scalar[pl.INDEX]) ->", "n: pl.Scalar[pl.INDEX],\n             arr: pl.Array[4, pl.TASK_ID]  #!\n             ) ->")
    check(src, "parameter 'arr' of orchestration function 'main' is a pl.Array", "arr:",
          help="arr = pl.array.create(N, dtype)")   # (it suggested pl.array(...), which does not exist)


def test_scope_inside_manual_scope_is_refused():
    body_check("with pl.manual_scope():\n    with pl.scope():  #!\n        d = self.kernel_add(a, b, d)\nreturn d",
               "pl.scope() cannot be nested inside pl.manual_scope()", "pl.scope()")


def test_expression_a_thousand_levels_deep_parses():
    prog = pl.parse_program(program("x = n" + " + 1" * 1000 + "\nd = self.kernel_add(a, b, d)\nreturn d"))
    codegen.generate_orchestration(prog, "main")


def test_expression_beyond_the_python_parser_is_located():
    check(program("x = n" + " + 1" * 200000 + "  #!\nreturn d"), "nested too deeply", "x = n")
