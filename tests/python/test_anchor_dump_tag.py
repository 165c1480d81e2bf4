"""pl.dump_tag / dumps= (spec anchor_features.md §6): parse, the typed dump_vars field, print and
re-parse, codegen's params_tN.dump(...), a CPU run (Accept / no-op) and a located diagnostic
for each misuse. Golden C++: tests/golden/anchor_dump_tag/.
"""
import os
import sys

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen, ir
from pypto.ir import passes

from codegen_test_util import GOLDEN_DIR, load_single_program
from test_diagnostics import body_check

sys.path.insert(0, os.path.dirname(__file__))


def golden():
    return load_single_program(os.path.join(GOLDEN_DIR, "anchor_dump_tag", "program.py"))


def run_pipeline(program):
    for ps in passes.default_pipeline():
        program = ps(program)
    return program


def tasks(program, name="main"):
    """The Calls / Submits of kernels in `name`, in order."""
    fn = next(f for f in program.functions if f.name == name)
    text = ir.python_print(fn)
    return [ln.strip() for ln in text.splitlines() if "self.scale(" in ln or "pl.submit(" in ln]


def test_dump_tag_is_sticky_by_value_and_dumps_adds_marks():
    lines = tasks(golden())
    assert len(lines) == 4, lines
    assert 'attrs={"dump_vars": [x]}' in lines[0]
    assert "dumps=[x, t_1]" in lines[1]          # tag on x + dumps=[t, t] (duplicate dropped), arg order
    assert "dump_vars" not in lines[2] and "dumps" not in lines[2]   # x was rebound: not covered
    assert "dump_vars" not in lines[3]


def test_dump_vars_field_is_typed():
    fn = next(f for f in golden().functions if f.name == "main")
    marks = [[d.name for d in st.value.dump_vars] for st in fn.body.stmts
             if isinstance(getattr(st, "value", None), (ir.Call, ir.Submit)) and not getattr(st.value, "is_op", False)]
    assert marks == [["x"], ["x", "t"], [], []], marks   # Var names (the printer renames t -> t_1)
    call = next(st.value for st in fn.body.stmts if isinstance(getattr(st, "value", None), ir.Call)
                and not st.value.is_op)
    assert not ir.structural_equal(call, ir.with_dump_vars(call, []))
    with pytest.raises(Exception, match="only tensors can be dumped"):
        ir.with_dump_vars(call, [call.args[1]])      # the scalar


def test_prints_and_reparses():
    p = golden()
    text = ir.python_print(p)
    assert ir.structural_equal(pl.parse_program(text), p)


def test_pipeline_output_prints_and_reparses():
    p = golden()
    for ps in passes.default_pipeline():
        p = ps(p)
    text = ir.python_print(p)
    assert "dumps=[" in text and '"dump_vars": [' in text, text
    assert ir.structural_equal(pl.parse_program(text), p)


def test_codegen_dumps_marked_tensors_after_the_add_lines():
    p = golden()
    code = codegen.generate_orchestration(p, codegen.orchestration_functions(p)[0]).code
    lines = [ln.strip() for ln in code.splitlines()]
    i = lines.index("params_t1.dump(ext_x, t);")
    assert lines[i - 1] == "params_t1.add_scalar(to_u64(3.0f));"
    assert "params_t0.dump(ext_x);" in lines
    assert not any(ln.startswith(("params_t2.dump", "params_t3.dump")) for ln in lines)


def test_dump_is_a_cpu_no_op_e2e():
    compiled = pypto.compile(golden())
    x = np.random.default_rng(3).standard_normal((16, 16)).astype(np.float32)
    y = np.zeros((16, 16), np.float32)
    compiled(x, y)
    np.testing.assert_allclose(y, 1.5 * x, rtol=1e-5, atol=1e-6)


# -- misuse: a located error each ---------------------------------------------------------------
@pytest.mark.parametrize("body,message,at", [
    ("pl.dump_tag(a, b)  #!\nreturn d", "pl.dump_tag takes exactly one positional argument", "pl.dump_tag"),
    ("pl.dump_tag()  #!\nreturn d", "pl.dump_tag takes exactly one positional argument", "pl.dump_tag"),
    ("pl.dump_tag(t=a)  #!\nreturn d", "pl.dump_tag takes exactly one positional argument", "pl.dump_tag"),
    ("pl.dump_tag(a[0:8, 0:8])  #!\nreturn d", "pl.dump_tag needs the bare name of a tensor", "a[0:8"),
    ("pl.dump_tag(zz)  #!\nreturn d", "unknown name 'zz'", "zz"),
    ("pl.dump_tag(n)  #!\nreturn d", "pl.dump_tag needs a tensor, but 'n' is not one", "n)"),
    ("x = pl.dump_tag(a)  #!\nreturn d", "pl.dump_tag(x) is a statement", "pl.dump_tag"),
    ("d, t = pl.submit(self.kernel_add, a, b, d, dumps=a)  #!\nreturn d",
     "dumps= of pl.submit of 'kernel_add' must be a list", "a)"),
    ("d, t = pl.submit(self.kernel_add, a, b, d, dumps=[n])  #!\nreturn d",
     "dumps= entry 'n' is not a tensor", "n])"),
    ("d, t = pl.submit(self.kernel_add, a, a, d, dumps=[b])  #!\nreturn d",
     "dumps= entry 'b' is not an argument of pl.submit of 'kernel_add'", "b])"),
    ("d, t = pl.submit(self.kernel_add, a, b, d, dumps=[a[0:1, 0:1]])  #!\nreturn d",
     "dumps= entries must be tensor names", "a[0:1"),
    ("d = self.kernel_add(a, b, d, dumps=[a])  #!\nreturn d",
     "dumps= is not accepted on a plain call to 'kernel_add'", "[a])"),
])
def test_misuse(body, message, at):
    body_check(body, message, at)


def test_plain_call_dumps_hint():
    body_check("d = self.kernel_add(a, b, d, dumps=[a])  #!\nreturn d",
               "dumps= is not accepted", "[a])", help="pl.dump_tag(x)")


def test_dump_tag_outside_orchestration():
    src = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.dump_tag(a)
        c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
        return c
'''
    with pytest.raises(pypto.errors.PyptoError) as ei:
        pl.parse_program(src, "t.py")
    e = ei.value
    # (not "or Inline": pl.FunctionType.Inline is refused, so that advice led to a second error)
    assert "pl.dump_tag is only allowed in Orchestration functions" in e.message
    assert (e.file, e.line, e.col) == ("t.py", 8, 9)


# -- scope level: pl.at(..., dumps=[...]) and tags reaching outlined scopes -----------------------
def scopes_golden():
    return load_single_program(os.path.join(GOLDEN_DIR, "anchor_dump_scopes", "program.py"))


def test_scope_dump_vars_print_and_reparse():
    p = scopes_golden()
    text = ir.python_print(p)
    # dumps= entries first, then the tags live at scope entry; printed as dumps= on the scopes
    assert "with pl.at(level=pl.Level.CORE_GROUP, dumps=[t, z, x]):" in text
    assert "with pl.at(level=pl.Level.CORE_GROUP, dumps=[t_1, x]) as tid:" in text
    assert "for b in pl.spmd(2, deps=[tid], dumps=[x]):" in text
    assert ir.structural_equal(pl.parse_program(text, "p.py"), p)


def test_outlining_maps_scope_marks_to_the_task():
    main = ir.python_print(next(f for f in run_pipeline(scopes_golden()).functions if f.name == "main"))
    # the outlined pl.at: x (tag) and t kept in argument order, z (not an argument) dropped
    assert 'self.main_incore(x, t, arg_directions=[pl.In, pl.Out], attrs={"dump_vars": [x, t]})' in main
    # a single-call body: the Submit of scale keeps t_1, x is not its argument
    assert "pl.submit(self.scale, t_1, 2.0, y, arg_directions=[pl.In, pl.Scalar, pl.Out], dumps=[t_1])" in main
    assert "core_num=2, deps=[tid], dumps=[x])" in main


def test_scope_dumps_codegen_and_e2e():
    compiled = pypto.compile(scopes_golden())
    code = compiled.files["orchestration/main.cpp"]
    assert "params_t0.dump(ext_x, t);" in code
    assert "params_t1.dump(t);" in code
    assert "params_t2.dump(ext_x);" in code
    rng = np.random.default_rng(6)
    x, z = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    y = np.zeros((16, 16), np.float32)
    compiled(x, z, y)
    np.testing.assert_allclose(y, (x + 1) * 2 + x, rtol=1e-5)


_AT = "with pl.at(level=pl.Level.CORE_GROUP, {})"


@pytest.mark.parametrize("opts,message,at", [
    ("dumps=a", "dumps= of pl.at must be a list literal of tensor names", "a)"),
    ("dumps=(a,)", "dumps= of pl.at must be a list literal of tensor names", "(a,)"),
    ("dumps=[n]", "dumps= entry 'n' is not a tensor", "n]"),
    ("dumps=[zz]", "unknown name 'zz'", "zz"),
    ("dumps=[a[0:1, 0:1]]", "dumps= entries must be tensor names", "a[0:1"),
    ("dumps=[a, b, a]", "dumps= entry 'a' is given twice", "a]"),
])
def test_scope_dumps_misuse(opts, message, at):
    body_check(_AT.format(opts) + ":  #!\n    d = self.kernel_add(a, b, d)\nreturn d", message, at)


def test_scope_dumps_needs_core_group_and_no_cluster():
    body_check("with pl.at(level=pl.Level.HOST, dumps=[a]):  #!\n    d = self.kernel_add(a, b, d)\nreturn d",
               "dumps= on pl.at needs level=pl.Level.CORE_GROUP, got pl.Level.HOST", "[a]")
