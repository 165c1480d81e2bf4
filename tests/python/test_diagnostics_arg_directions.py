"""Diagnostics of the printed pass-output spellings: `arg_directions=[...]` on calls to program
functions and on pl.submit, and `attrs={...}` on @pl.function / calls (docs/dsl.md "Printed
form"). Same conventions as test_diagnostics.py: `#!` marks the line, `at=` the caret start."""

import pypto.language as pl
from pypto._core import ir

from test_diagnostics import body_check, program


def test_direction_list_length_must_match_the_arguments():
    body_check("d = self.kernel_add(a, b, d, arg_directions=[pl.In, pl.Out])  #!\nreturn d",
               "arg_directions= of the call to 'kernel_add' has 2 entries but the call passes 3 argument(s)",
               "[pl.In", help="one direction per argument")


def test_unknown_direction_did_you_mean():
    body_check("d = self.kernel_add(a, b, d, arg_directions=[pl.In, pl.In, pl.Outt])  #!\nreturn d",
               "unknown argument direction 'pl.Outt'", "pl.Outt", help="did you mean 'pl.Out'?")


def test_direction_must_be_a_pl_name():
    body_check("d = self.kernel_add(a, b, d, arg_directions=[pl.In, 1, pl.Out])  #!\nreturn d",
               "unknown argument direction '1'", "1, pl.Out", help="pl.In")


def test_direction_list_must_be_a_list_literal():
    body_check("d = self.kernel_add(a, b, d, arg_directions=pl.In)  #!\nreturn d",
               "arg_directions= of the call to 'kernel_add' must be a list literal", "pl.In)")


def test_submit_direction_list_length():
    body_check("d, t = pl.submit(self.kernel_add, a, b, d, arg_directions=[pl.In])  #!\nreturn d",
               "arg_directions= of pl.submit of 'kernel_add' has 1 entries but the call passes 3 argument(s)",
               "[pl.In]")


def test_no_dep_wrapper_must_agree_with_the_list():
    body_check("d = self.kernel_add(pl.no_dep(a), b, d, arg_directions=[pl.In, pl.In, pl.Out])  #!\nreturn d",
               "argument 0 is wrapped in pl.no_dep but arg_directions= says pl.In", "pl.no_dep(a)",
               help="pl.NoDep")


def test_submit_must_still_be_unpacked_without_arg_directions():
    # Binding a submit to one name is printed pass output only (it carries arg_directions=).
    body_check("d = pl.submit(self.kernel_add, a, b, d)  #!\nreturn d", "pl.submit(...) must be unpacked", "d = ")


def test_attrs_must_be_constants():
    body_check("d = self.kernel_add(a, b, d, attrs={'k': a})  #!\nreturn d",
               "attrs= must be a dict literal of constants", "{'k'")


def test_directions_and_attrs_parse_exactly():
    src = program("""
        d1 = self.kernel_add(a, b, d, arg_directions=[pl.NoDep, pl.In, pl.Out], attrs={"tag": "x", "n": 2})
        t = pl.submit(self.scale, d1, n, d, arg_directions=[pl.In, pl.Scalar, pl.InOut])
        tid = t[1]
        d2 = t[0]
        return d2
    """)
    main = pl.parse_program(src).get("main")
    stmts = main.body.stmts if hasattr(main.body, "stmts") else [main.body]
    call = stmts[0].value
    assert list(call.arg_directions) == [ir.ArgDirection.NoDep, ir.ArgDirection.In, ir.ArgDirection.Out]
    assert dict(call.attrs) == {"tag": "x", "n": 2}
    sub = stmts[1].value
    assert isinstance(sub, ir.Submit)
    assert list(sub.arg_directions) == [ir.ArgDirection.In, ir.ArgDirection.Scalar, ir.ArgDirection.InOut]
    assert isinstance(stmts[2].value, ir.TupleGetItem) and stmts[2].value.index == 1


def test_function_attrs_round_trip():
    src = program("return a").replace(
        "@pl.function(type=pl.FunctionType.Orchestration)",
        '@pl.function(type=pl.FunctionType.Orchestration, attrs={"outlined_from": "m", "k": 3})')
    prog = pl.parse_program(src)
    assert dict(prog.get("main").attrs) == {"outlined_from": "m", "k": 3}
    from pypto import ir as pir
    text = pir.python_print(prog)
    assert 'attrs={"k": 3, "outlined_from": "m"}' in text
    assert pir.structural_equal(pl.parse_program(text), prog)
