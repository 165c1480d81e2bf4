"""Diagnostics of the DSL frontend: each test is a tiny malformed program; it asserts the
message, the help where there is an obvious fix, and the exact line:col the error points at.

The line an error must point at carries a `#!` comment; `at=` is the text the caret
underline must start at on that line.
"""

import textwrap

import pytest

import pypto.language as pl
from pypto.errors import PyptoError

T = "pl.Tensor[[16, 16], pl.FP32]"
RC = "pl.Tensor[[16, 16], pl.INT32]"

KERNELS = f'''
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add(self, a: {T}, b: {T}, c: pl.Out[{T}]) -> {T}:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, a: {T}, s: pl.Scalar[pl.FP32], c: pl.Out[{T}]) -> {T}:
        c = pl.store(pl.mul(pl.load(a, [0, 0], [16, 16]), s), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def gate(self, rc: pl.InOut[{RC}]) -> {RC}:
        rc = pl.store(pl.load(rc, [0, 0], [16, 16]), [0, 0], rc)
        return rc
'''


def program(body: str, prelude: str = "", main_type: str = "Orchestration", extra: str = "") -> str:
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)
    return (f"import pypto.language as pl\n{prelude}\n\n@pl.program\nclass P:{KERNELS}{extra}\n"
            f"    @pl.function(type=pl.FunctionType.{main_type})\n"
            f"    def main(self, a: {T}, b: {T}, d: pl.Out[{T}], rc: pl.InOut[{RC}],\n"
            f"             n: pl.Scalar[pl.INDEX]) -> {T}:\n{body}\n")


def check(src: str, message: str, at: str, help: str | None = None):
    """Parse `src`, expect a PyptoError containing `message` located at `at` on the `#!` line."""
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "t.py")
    e = ei.value
    lines = src.splitlines()
    marked = [i + 1 for i, line in enumerate(lines) if "#!" in line]
    assert len(marked) == 1, "mark exactly one line with #!"
    ln = marked[0]
    col = lines[ln - 1].index(at) + 1
    assert message in e.message, f"\nwant: {message}\ngot:  {e.message}"
    assert (e.file, e.line, e.col) == ("t.py", ln, col), f"\n{e}"
    if help is not None:
        assert help in e.help, f"\nwant help: {help}\ngot:       {e.help}"
    text = str(e)
    assert text.startswith(f"error: {e.message} --> t.py:{ln}:{col}")
    assert lines[ln - 1] in text and "^" in text
    return e


def body_check(body, message, at, help=None, **kw):
    return check(program(body, **kw), message, at, help)


# -- names and calls ------------------------------------------------------------------------
def test_unknown_name():
    body_check("d = self.kernel_add(a, bb, d)  #!\nreturn d", "unknown name 'bb'", "bb, d)",
               help="did you mean 'b'?")


def test_unknown_kernel_did_you_mean():
    body_check("d = self.kernel_ad(a, b, d)  #!\nreturn d", "unknown function 'self.kernel_ad'",
               "self.kernel_ad", help="did you mean 'kernel_add'?")


def test_wrong_argument_count():
    body_check("d = self.kernel_add(a, b)  #!\nreturn d", "'kernel_add' takes 3 arguments (a, b, c), got 2",
               "self.kernel_add(a, b)")


def test_scalar_where_tensor_expected():
    body_check("d = self.kernel_add(a, n, d)  #!\nreturn d",
               "argument 'b' of 'kernel_add' expects a tensor (pl.Tensor[[16, 16], pl.FP32]), got a scalar",
               "n, d)")


def test_tensor_where_scalar_expected():
    body_check("d = self.scale(a, b, d)  #!\nreturn d",
               "argument 's' of 'scale' expects a scalar (pl.Scalar[pl.FP32]), got a tensor", "b, d)")


def test_unknown_dsl_function_did_you_mean():
    body_check("x = pl.ad(a, b)  #!\nreturn d", "unknown DSL function 'pl.ad'", "pl.ad",
               help="did you mean 'add'?")


def test_tensor_arithmetic_suggests_op():
    body_check("x = pl.load(a, [0, 0], [16, 16]) + pl.load(b, [0, 0], [16, 16])  #!\nreturn d",
               "needs scalar operands, got a tile", "pl.load(a", help="use pl.add(a, b) for tiles",
               main_type="InCore")   # tile ops run in a kernel (an orchestration refuses pl.load itself)


def test_op_type_error_from_cpp_is_located():
    # (tile.add promotes mixed dtypes since reference_ops.md §1.3; tile.maximum still refuses them)
    e = body_check("x = pl.maximum(pl.load(a, [0, 0], [16, 16]), pl.load(rc, [0, 0], [16, 16]))  #!\nreturn d",
                   "tile.maximum", "pl.maximum(", main_type="InCore")
    assert type(e) is PyptoError


def test_calling_a_value():
    body_check("x = n(1)  #!\nreturn d", "'n' is a value, not a function", "n(1)")


def test_index_a_scalar():
    body_check("x = n[0]  #!\nreturn d", "cannot index a scalar", "n[0]")


# -- annotations and types ------------------------------------------------------------------
def test_malformed_annotation():
    body_check(f"x: pl.Tensor[16, pl.FP32] = a  #!\nreturn d", "malformed type annotation 'pl.Tensor[16, pl.FP32]'",
               "pl.Tensor[16", help="pl.Tensor[[d0, d1], pl.FP32]")


def test_unknown_dtype():
    body_check(f"x: pl.Tensor[[16, 16], pl.FP33] = a  #!\nreturn d", "unknown dtype 'pl.FP33'", "pl.FP33",
               help="did you mean 'FP32'?")


def test_annotation_type_mismatch():
    body_check("x: pl.Tile[[16, 16], pl.FP32] = a  #!\nreturn d",
               "'x' is annotated pl.Tile[[16, 16], pl.FP32] but the value is a tensor", "pl.Tile")


def test_out_annotation_on_local():
    body_check(f"x: pl.Out[{T}] = a  #!\nreturn d", "pl.Out[...] is only allowed on function parameters",
               "pl.Out[")


def test_parameter_without_annotation():
    src = program("return d", extra="\n    @pl.function(type=pl.FunctionType.InCore)\n"
                  "    def k2(self, x) -> None:  #!\n        pass\n")
    check(src, "parameter 'x' of 'k2' needs a type annotation", "x)")


def test_unknown_function_type():
    src = program("return d", extra="\n    @pl.function(type=pl.FunctionType.Incore)  #!\n"
                  "    def k2(self) -> None:\n        pass\n")
    check(src, "invalid type= 'pl.FunctionType.Incore'", "pl.FunctionType.Incore", help="did you mean 'InCore'?")


def test_method_without_pl_function():
    src = program("return d", extra="\n    def helper(self):  #!\n        pass\n")
    check(src, "method 'helper' of a @pl.program class is not a @pl.function", "def helper",
          help="decorate it with @pl.function")


# -- statements -----------------------------------------------------------------------------
def test_unsupported_while():
    body_check("while n > 0:  #!\n    pass\nreturn d", "unsupported Python statement (while)", "while",
               help="pl.range")


def test_unsupported_try():
    body_check("try:  #!\n    pass\nexcept Exception:\n    pass\nreturn d", "unsupported Python statement (try)",
               "try")


def test_unsupported_import():
    body_check("import math  #!\nreturn d", "unsupported Python statement (import)", "import",
               help="module level")


def test_augmented_assignment_on_tensor():
    body_check("d += a  #!\nreturn d", "augmented assignment on a tensor", "d +=")


# Unsupported syntax names the construct and says what to write instead (comprehensions, set
# literals and the walrus had no help; `a, *b = 1, 2, 3` said "2 names are assigned 3 values").
@pytest.mark.parametrize("stmt, message, at, help", [
    ("k = [i for i in range(3)]", "unsupported Python expression (ListComp)", "[i for", "comprehensions are not"),
    ("k = {i for i in range(3)}", "unsupported Python expression (SetComp)", "{i for", "comprehensions are not"),
    ("k = {i: i for i in range(3)}", "unsupported Python expression (DictComp)", "{i:", "comprehensions are not"),
    ("k = min(n, (i for i in range(3)))", "unsupported Python expression (GeneratorExp)", "(i for", "comprehensions"),
    ("k = {1, 2}", "unsupported Python expression (Set)", "{1, 2}", "set literals are not DSL values"),
    ("k = (m := 3) + 1", "unsupported Python expression (NamedExpr)", "m := 3", "assign on a line of its own"),
    ("k, *m = 1, 2, 3", "starred assignment ('*m') is not supported", "*m", "unpack into one name per value"),
    ("k, m = *n, 1", "unpacking with * ('*n') is not supported", "*n", "write one value per name"),
])
def test_unsupported_syntax_has_a_help(stmt, message, at, help):
    body_check(stmt + "  #!\nreturn d", message, at, help=help)


def test_call_errors_list_the_same_builtins():
    want = "calls are to self.<function>, pl.* functions, and min, max, abs, int, float, bool, len"
    body_check("k = a.reshape([256])  #!\nreturn d", "cannot call 'a.reshape'", "a.reshape", help=want)
    body_check("k = sorted([1, 2])  #!\nreturn d", "cannot call 'sorted'", "sorted", help=want)


@pytest.mark.parametrize("member, at, help", [
    ("    async def f(self):  #!\n        pass\n", "async def", "remove async"),
    ("    class Inner:  #!\n        pass\n", "class Inner", "define the class at module level"),
    ("    K = 4  #!\n", "K = 4", "put constants at module level"),
])
def test_program_class_members_other_than_functions(member, at, help):
    src = program("return d").replace("class P:\n", "class P:\n" + member, 1)
    check(src, "a @pl.program class may only contain @pl.function methods", at, help=help)


def test_unsupported_lambda():
    body_check("f = lambda x: x  #!\nreturn d", "unsupported Python expression (Lambda)", "lambda",
               help="@pl.function")


def test_return_count_mismatch():
    body_check("return d, d  #!", "'main' declares 1 return value(s) but returns 2", "return")


def test_missing_return():
    src = program("return d", extra=f"\n    @pl.function(type=pl.FunctionType.InCore)\n"
                  f"    def k2(self, a: {T}) -> {T}:  #!\n        x = pl.load(a, [0, 0], [16, 16])\n")
    check(src, "'k2' declares return type(s) but does not end with a return statement", "def k2",
          help="add `return <value>`")


def test_return_inside_loop():
    body_check("for i in pl.range(4):\n    return d  #!\nreturn d",
               "return is only allowed at the top level of a function body", "return")


def test_identity_comparison_in_if():
    # (a chain `0 < n < 4` is accepted: tests/python/test_python_idioms.py)
    body_check("if 0 < n is 4:  #!\n    d = self.kernel_add(a, b, d)\nreturn d",
               "unsupported comparison '0 < n is 4'", "0 < n")


def test_if_condition_not_scalar():
    body_check("if a:  #!\n    d = self.kernel_add(a, b, d)\nreturn d", "the if condition must be a scalar, got a tensor",
               "a:")


def test_yield_not_last():
    body_check("for i, (x,) in pl.range(0, 4, 1, init_values=(d,)):\n"
               "    y = pl.yield_(x)  #!\n    x2 = self.kernel_add(a, b, x)\nreturn d",
               "pl.yield_(...) must be the last statement", "y = pl.yield_")


def test_yield_in_one_branch_only():
    body_check("if n > 0:  #!\n    r = pl.yield_(a)\nelse:\n    r = b\nreturn d",
               "when one branch ends with pl.yield_, both if and else must", "if n")


def test_with_two_items():
    body_check("with pl.scope(), pl.scope():  #!\n    pass\nreturn d", "a with statement takes exactly one scope", "with")


def test_no_dep_outside_a_call():
    body_check("x = pl.no_dep(a)  #!\nreturn d", "pl.no_dep(x) is only valid as an argument", "pl.no_dep(a)")


def test_syntax_error_is_located():
    src = "import pypto.language as pl\n\n@pl.program\nclass P:\n    def f(self:  #!\n"
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "t.py")
    assert ei.value.message.startswith("syntax error") and ei.value.file == "t.py" and ei.value.line >= 5


# -- loops ----------------------------------------------------------------------------------
def test_range_without_arguments():
    body_check("for i in pl.range():  #!\n    pass\nreturn d", "pl.range takes 1 to 3 positional arguments, got 0",
               "pl.range()")


def test_range_with_four_arguments():
    body_check("for i in pl.range(0, 4, 1, 1):  #!\n    pass\nreturn d",
               "pl.range takes 1 to 3 positional arguments, got 4", "pl.range(")


def test_range_tensor_argument():
    body_check("for i in pl.range(a):  #!\n    pass\nreturn d", "pl.range arguments must be integer scalars", "a):")


def test_range_float_argument():
    body_check("for i in pl.parallel(2.5):  #!\n    pass\nreturn d",
               "pl.parallel arguments must be integer scalars, got '2.5'", "2.5")


def test_python_range_errors():
    # range() is pl.range without keywords (test_python_range.py); its errors name it as written
    body_check("for i in range(4, init_values=(d,)):  #!\n    pass\nreturn d", "range() takes no keyword arguments",
               "(d,)", help="pl.range keywords")
    body_check("for i in range(2.5):  #!\n    pass\nreturn d", "range arguments must be integer scalars, got '2.5'",
               "2.5")
    body_check("for i in range(0, 4, 0):  #!\n    pass\nreturn d", "range step must not be 0", "0)")
    body_check("n = range(4)  #!\nreturn d", "range(...) is only valid as the iterable of a for statement", "range")


def test_loop_local_name_used_after_loop():
    # A tensor or scalar first bound in the loop is carried out (spec anchor_features §17,
    # test_anchor_escaping_alloc.py); a tile has no seed, so it stays loop-local.
    body_check("for i in pl.range(4):\n    t = pl.load(a, [0, 0], [16, 16])\nd = pl.store(t, [0, 0], d)  #!\nreturn d",
               "'t' is not defined here: it is only bound inside the loop body (line", "t, [0, 0], d)",
               help="assign 't' before the loop", main_type="InCore")


def test_branch_local_name_used_after_if():
    body_check("if n > 0:\n    t = self.kernel_add(a, b, d)\nd = self.kernel_add(t, b, d)  #!\nreturn d",
               "'t' is not defined here: it is only bound in one branch of the if", "t, b, d)")


def test_carried_value_changes_type():
    # read after the loop: x is carried (no iteration may run), and cannot change type
    body_check("x = n\nfor i in pl.range(4):  #!\n    x = 1.5\ny = x + 1\nreturn d", "'x' changes type in the loop",
               "for")


def test_a_scalar_dead_on_entry_and_after_the_loop_may_change_type():
    # Python's meaning: each iteration binds its own x, and nothing reads the INDEX one again
    pl.parse_program(program("x = n\nfor i in pl.range(4):\n    x = 1.5\n    d = self.scale(a, x, d)\nreturn d"),
                     "t.py")


# -- dependencies ---------------------------------------------------------------------------
def test_deps_on_plain_call():
    body_check("d = self.kernel_add(a, b, d, deps=[])  #!\nreturn d",
               "deps= is not accepted on a plain call to 'kernel_add'", "[])",
               help="use pl.submit(self.kernel_add, ..., deps=[...])")


def test_submit_not_unpacked():
    body_check("d = pl.submit(self.kernel_add, a, b, d)  #!\nreturn d", "pl.submit(...) must be unpacked", "d = ",
               help="write 2 names: out, tid")


def test_submit_as_statement():
    body_check("pl.submit(self.kernel_add, a, b, d)  #!\nreturn d", "pl.submit(...) must be unpacked", "pl.submit")


def test_submit_wrong_unpack_count():
    body_check("d, t, u = pl.submit(self.kernel_add, a, b, d)  #!\nreturn d",
               "pl.submit of 'kernel_add' gives 2 values (1 result(s) and the task id), but 3 names", "d, t, u")


def test_submit_missing_non_out_argument():
    body_check("d, t = pl.submit(self.kernel_add, a)  #!\nreturn d", "missing argument 'b' of 'kernel_add'",
               "pl.submit", help="only trailing pl.Out arguments may be omitted")


def test_deps_tensor_entry():
    body_check("d, t = pl.submit(self.kernel_add, a, b, d, deps=[a])  #!\nreturn d",
               "deps= entries must be TaskIds; 'a' is a tensor", "a])", help="deps= takes task ids, not tensors")


def test_deps_expression_entry():
    body_check("d, t = pl.submit(self.kernel_add, a, b, d, deps=[n + 1])  #!\nreturn d",
               "deps= entries must be TaskIds; 'n + 1' is a scalar (pl.Scalar[pl.INDEX])", "n + 1")


def test_deps_not_a_list():
    body_check("d, t = pl.submit(self.kernel_add, a, b, d)\nd, u = pl.submit(self.kernel_add, a, b, d, deps=t)  #!\n"
               "return d", "deps= must be a list literal", "t)")


def test_timing_slot_out_of_range():
    body_check("d, t = pl.submit(self.kernel_add, a, b, d, timing_slot=16)  #!\nreturn d",
               "timing_slot=16 is out of range: it must be in 0..15", "16")


def test_timing_slot_not_literal():
    body_check("d, t = pl.submit(self.kernel_add, a, b, d, timing_slot=n)  #!\nreturn d",
               "timing_slot= must be an integer literal in 0..15, got 'n'", "n)")


def test_spmd_submit_without_core_num():
    body_check("d, t = pl.spmd_submit(self.kernel_add, a, b, d)  #!\nreturn d",
               "pl.spmd_submit needs core_num=", "pl.spmd_submit")


def test_spmd_submit_core_num_not_positive():
    body_check("d, t = pl.spmd_submit(self.kernel_add, a, b, d, core_num=0)  #!\nreturn d",
               "core_num= must be positive, got 0", "0)")


def test_spmd_submit_core_num_above_the_block_limit():
    # found by the fuzzer: a literal the runtime refuses at run time is a located compile error
    body_check("d, t = pl.spmd_submit(self.kernel_add, a, b, d, core_num=2147483648)  #!\nreturn d",
               "core_num= is 2147483648, above the runtime's limit of 2147483647 blocks", "2147483648)")


def test_submit_unknown_keyword():
    body_check("d, t = pl.submit(self.kernel_add, a, b, d, dep=[])  #!\nreturn d", "pl.submit has no keyword 'dep'",
               "[])", help="did you mean 'deps'?")


# -- predicates -----------------------------------------------------------------------------
def pred(p):
    return f"d, t = pl.submit(self.kernel_add, a, b, d, predicate={p})  #!\nreturn d"


def test_predicate_chained():
    body_check(pred("(0 < rc[0, 0] < 8)"), "predicate= cannot be a chained comparison", "0 < rc",
               help="reduce the condition to one gate value")


def test_predicate_arithmetic():
    body_check(pred("(rc[0, 0] % 8 == 0)"), "predicate= cannot use arithmetic", "rc[0, 0] %")


def test_predicate_boolean_combination():
    body_check(pred("(rc[0, 0] > 0 and rc[0, 1] > 0)"), "predicate= cannot combine comparisons with and/or/not",
               "rc[0, 0] > 0 and")


def test_predicate_non_literal_rhs():
    body_check(pred("(rc[0, 0] > rc[0, 1])"), "predicate= must compare with an integer literal, got 'rc[0, 1]'",
               "rc[0, 1]")


def test_predicate_literal_past_int64():
    # (found by make fuzz-programs, seed 2703: an internal parser error from the IR builder)
    body_check(pred("(rc[0, 0] > 9223372036854775808)"), "integer 9223372036854775808 does not fit in 64 bits",
               "9223372036854775808")
    body_check(pred("(-9223372036854775809 < rc[0, 0])"), "integer -9223372036854775809 does not fit in 64 bits",
               "-9223372036854775809")


def test_predicate_non_tensor_operand():
    body_check(pred("(n > 0)"), "predicate= operand must be a tensor element t[i, ...], got 'n'", "n > 0")


def test_predicate_operand_is_not_a_tensor():
    body_check("d, g = pl.submit(self.gate, rc)\n" + pred("(g[0] > 0)"),
               "predicate= operand 'g' must be a tensor, it is a scalar", "g[0]")


def test_predicate_wrong_index_count():
    body_check(pred("(rc[0] > 0)"), "predicate= indexes 'rc' with 1 index, but it has 2 dimensions", "rc[0]",
               help="one integer index per dimension")


def test_predicate_float_index():
    body_check(pred("(rc[0, 1.5] > 0)"), "predicate= indices must be integer constants or integer variables", "1.5")


def test_predicate_bad_operator():
    body_check(pred("(rc[0, 0] is 0)"), "predicate= operator must be one of == != > < >= <=", "rc[0, 0] is")


def test_predicate_producer_not_in_deps():
    body_check("rc, g = pl.submit(self.gate, rc)\n" + pred("(rc[0, 0] > 0)"),
               "the producer of predicate tensor 'rc' (task id 'g') is not in deps=", "rc[0, 0] > 0)",
               help="add deps=[..., g]")


def test_predicate_producer_of_scoped_form_not_in_deps():
    body_check("with pl.spmd(1) as g:\n    rc = self.gate(rc)\n"
               "with pl.spmd(2, predicate=(rc[0, 0] > 0)):  #!\n    d = self.kernel_add(a, b, d)\nreturn d",
               "the producer of predicate tensor 'rc' (task id 'g') is not in deps=", "rc[0, 0] > 0)")


def test_predicate_producer_discarded():
    body_check("rc, _ = pl.submit(self.gate, rc)\n" + pred("(rc[0, 0] > 0)"),
               "the producer of predicate tensor 'rc' is not in deps= (its task id was discarded with '_')",
               "rc[0, 0] > 0)")


# -- scopes ---------------------------------------------------------------------------------
def test_at_predicate_needs_core_group():
    body_check("with pl.at(level=pl.Level.CHIP, predicate=(rc[0, 0] > 0)):  #!\n    pass\nreturn d",
               "predicate= on pl.at needs level=pl.Level.CORE_GROUP, got pl.Level.CHIP", "rc[0, 0]")


def test_at_core_group_inside_cluster():
    body_check("with pl.cluster():\n    with pl.at(level=pl.Level.CORE_GROUP):  #!\n        pass\nreturn d",
               "pl.at(level=pl.Level.CORE_GROUP) cannot be nested inside pl.cluster()", "pl.at(")


def test_at_core_group_inside_spmd():
    body_check("with pl.spmd(2):\n    with pl.at(level=pl.Level.CORE_GROUP):  #!\n        pass\nreturn d",
               "pl.at(level=pl.Level.CORE_GROUP) cannot be nested inside pl.spmd()", "pl.at(")


def test_at_core_group_inside_core_group():
    body_check("with pl.at(level=pl.Level.CORE_GROUP):\n    with pl.at(level=pl.Level.CORE_GROUP):  #!\n"
               "        pass\nreturn d",
               "cannot be nested inside another pl.at(level=pl.Level.CORE_GROUP)", "pl.at(")


@pytest.mark.parametrize("ftype, article", [("Group", "a"), ("InCore", "an"), ("AIC", "an"), ("AIV", "an")])
def test_at_core_group_in_kernel_family_function(ftype, article):   # Spmd functions: test_diagnostics_dead_ends.py
    body_check("with pl.at(level=pl.Level.CORE_GROUP):  #!\n    pass\nreturn d",
               f"pl.at(level=pl.Level.CORE_GROUP) cannot appear in {article} {ftype} function", "pl.at(",
               main_type=ftype)


# A kernel function runs on one core: it calls no function and submits no task. (Calling the
# orchestration function from a kernel used to reach the pass pipeline and fail there with an
# internal error.)
_ENTRY = f'''
    @pl.function(type=pl.FunctionType.Orchestration)
    def entry(self, a: {T}, b: {T}, d: pl.Out[{T}], rc: pl.InOut[{RC}], n: pl.Scalar[pl.INDEX]) -> {T}:
        d = self.main(a, b, d, rc, n)
        return d
'''


@pytest.mark.parametrize("ftype", ["InCore", "AIC", "AIV"])
@pytest.mark.parametrize("stmt, what, at", [
    ("d = self.kernel_add(a, b, d)", "a call to 'kernel_add'", "self.kernel_add"),
    ("d = self.entry(a, b, d, rc, n)", "a call to 'entry'", "self.entry"),
    ("d, t = pl.submit(self.kernel_add, a, b, d)", "pl.submit", "pl.submit"),
    ("d, t = pl.spmd_submit(self.kernel_add, a, b, d, core_num=2)", "pl.spmd_submit", "pl.spmd_submit"),
    ("t = pl.system.task_dummy(deps=[])", "pl.system.task_dummy", "pl.system"),
])
def test_kernel_function_calls_nothing(ftype, stmt, what, at):
    body_check(f"{stmt}  #!\nreturn d", f"{what} in an {ftype} function ('main'): a kernel cannot call functions "
               "or submit tasks", at, help="call or submit it from the orchestration function", main_type=ftype,
               extra=_ENTRY)


@pytest.mark.parametrize("ftype", ["InCore", "AIC", "AIV"])
@pytest.mark.parametrize("scope, spelled, at", [
    ("with pl.cluster():", "pl.cluster()", "pl.cluster"),
    ("with pl.spmd(2):", "pl.spmd()", "pl.spmd"),
    ("for i in pl.spmd(2):", "pl.spmd()", "pl.spmd"),
    ("with pl.at(level=pl.Level.HOST):", "pl.at(level=pl.Level.HOST)", "pl.at"),
])
def test_kernel_function_opens_no_kernel_scope(ftype, scope, spelled, at):
    # Refused at the scope, before its body's call to a kernel is looked at.
    body_check(f"{scope}  #!\n    d = self.kernel_add(a, b, d)\nreturn d",
               f"{spelled} cannot appear in an {ftype} function", at, main_type=ftype)


def test_spmd_predicate_inside_cluster():
    body_check("with pl.cluster():\n    with pl.spmd(2, predicate=(rc[0, 0] > 0)):  #!\n        pass\nreturn d",
               "predicate= is not allowed on a pl.spmd nested inside pl.cluster()", "rc[0, 0]")


def test_spmd_allow_early_resolve_inside_cluster():
    body_check("with pl.cluster():\n    with pl.spmd(2, allow_early_resolve=True):  #!\n        pass\nreturn d",
               "allow_early_resolve= is not allowed on a pl.spmd nested inside pl.cluster()", "True)")


def test_spmd_deps_inside_cluster():
    # The edge would never reach the C++ (the spmd is expanded into the Group function).
    body_check("rc, g = pl.submit(self.gate, rc)\nwith pl.cluster():\n    with pl.spmd(2, deps=[g]):  #!\n"
               "        pass\nreturn d",
               "deps= is not allowed on a pl.spmd nested inside pl.cluster()", "[g])",
               help="move the option to the cluster's caller")


def test_spmd_for_deps_inside_cluster():
    body_check("rc, g = pl.submit(self.gate, rc)\nwith pl.cluster():\n    for i in pl.spmd(2, deps=[g]):  #!\n"
               "        pass\nreturn d",
               "deps= is not allowed on a pl.spmd nested inside pl.cluster()", "[g])")


def test_at_without_level():
    body_check("with pl.at(deps=[]):  #!\n    pass\nreturn d", "pl.at needs level=", "pl.at(")


def test_no_dep_args_not_a_tensor():
    body_check("with pl.at(level=pl.Level.CORE_GROUP, no_dep_args=[n]):  #!\n    pass\nreturn d",
               "no_dep_args= entry 'n' must be a tensor, it is a scalar", "n])")


def test_unsupported_with():
    body_check("with open('x'):  #!\n    pass\nreturn d", "unsupported with statement 'open('x')'", "open(")


def test_statement_after_return():
    body_check("return d\nx = n  #!", "statement after return", "x = n")


def test_loop_variable_used_after_loop():
    body_check("for i in pl.range(4):\n    pass\nx = i  #!\nreturn d", "'i' is not defined here: it is only bound as "
               "the loop variable", "i  #!")


def test_parallel_task_id_carry_needs_static_trip_count():
    body_check("prev = None\nwith pl.manual_scope():\n    for j in pl.parallel(n):  #!\n"
               "        d, prev = pl.submit(self.kernel_add, a, b, d, deps=[prev])\nreturn d",
               "the TaskId 'prev' carried through this pl.parallel loop needs a statically-known trip count",
               "pl.parallel(n)", help="integer literals or module constants")


def test_parallel_task_id_carry_with_constant_trip_count_is_fine():
    pl.parse_program(program("prev = None\nfor j in pl.parallel(4):\n"
                             "    d, prev = pl.submit(self.kernel_add, a, b, d, deps=[prev])\nreturn d"), "t.py")


# -- distributed HOST orchestration (L3): only deps= --------------------------------------
def host_program(body):
    return program(body).replace("    @pl.function(type=pl.FunctionType.Orchestration)\n    def main(",
                                 "    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)\n"
                                 "    def main(")


def test_host_submit_rejects_predicate():
    check(host_program("d, t = pl.submit(self.kernel_add, a, b, d, allow_early_resolve=True)  #!\nreturn d"),
          "allow_early_resolve= is not supported by pl.submit in a HOST-level orchestration", "True)",
          help="only deps=")


def test_host_spmd_submit_unavailable():
    check(host_program("d, t = pl.spmd_submit(self.kernel_add, a, b, d, core_num=2)  #!\nreturn d"),
          "pl.spmd_submit is not available in a HOST-level orchestration", "pl.spmd_submit")


def test_host_submit_must_pass_out_args():
    check(host_program("x, t = pl.submit(self.kernel_add, a, b)  #!\nreturn d"),
          "pl.submit in a HOST-level orchestration must pass every argument of 'kernel_add' (3), got 2",
          "pl.submit", help="pass the pl.Out arguments too")


def test_host_submit_with_deps_is_fine():
    pl.parse_program(host_program("d, t = pl.submit(self.kernel_add, a, b, d)\n"
                                  "d, u = pl.submit(self.kernel_add, a, b, d, deps=[t])\nreturn d"), "t.py")


# -- @pl.program path: names Python evaluates at class definition --------------------------
def _line_of(marker):
    import inspect
    frame_lines, start = inspect.getsourcelines(_decorated_bad_dtype)
    for i, line in enumerate(frame_lines):
        if marker in line:
            return start + i, line
    raise AssertionError(marker)


def _decorated_bad_dtype():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16], pl.FP33]) -> None:  # bad-dtype
            pass


def test_decorator_path_misspelt_dtype_is_located():
    with pytest.raises(PyptoError) as ei:
        _decorated_bad_dtype()
    e = ei.value
    assert isinstance(e, AttributeError)          # hasattr()/getattr(default) keep working
    line, text = _line_of("# bad-dtype")
    assert (e.file, e.line, e.col) == (__file__, line, text.index("pl.FP33") + 1)
    assert e.message == "unknown DSL name 'pl.FP33'" and e.help == "did you mean 'pl.FP32'?"


def test_decorator_path_misspelt_enum_member():
    with pytest.raises(PyptoError) as ei:
        pl.Level.CORE_GRUOP
    assert ei.value.message == "unknown DSL name 'pl.Level.CORE_GRUOP'"
    assert ei.value.help == "did you mean 'pl.Level.CORE_GROUP'?"
    assert ei.value.file == __file__ and ei.value.line > 0
    assert not hasattr(pl, "no_such_name") and getattr(pl.Level, "NOPE", None) is None


def test_integer_literal_beyond_int64():
    body_check("for i in pl.range(n + 9223372036854775808):  #!\n    d = self.kernel_add(a, b, d)\nreturn d",
               "integer 9223372036854775808 does not fit in 64 bits", "9223372036854775808",
               help="between -2**63 and 2**63 - 1")


def test_module_constant_beyond_int64():
    check(program("for i in pl.range(BIG):  #!\n    d = self.kernel_add(a, b, d)\nreturn d",
                  prelude="BIG = -(2**63) - 1"),
          "integer -9223372036854775809 does not fit in 64 bits", "BIG")


def test_op_attribute_beyond_int64():
    # (found by make fuzz-programs, seed 2312: pl.array.create(N, ...) with N = 2**64 was an
    # internal parser error from the IR builder)
    check(program("with pl.manual_scope():\n    tids = pl.array.create(BIG, pl.TASK_ID)  #!\nreturn d",
                  prelude="BIG = 2**64"),
          "'size=' 18446744073709551616 does not fit in 64 bits", "BIG", help="between -2**63 and 2**63 - 1")


def test_an_array_beyond_its_stack_bound_is_refused_where_it_is_made():
    # 3,000,000 FP32 slots were a C array on the orchestration's stack: SIGSEGV (tester F #9)
    check(program("w = pl.array.create(BIG, pl.FP32)  #!\nreturn d", prelude="BIG = 3000000"),
          "array.create: size 3000000 is more than 65536 slots", "pl.array.create", help="pl.create_tensor")
    pl.parse_program(program("w = pl.array.create(65536, pl.FP32)\nreturn d"), "t.py")


def test_int64_min_literal_is_accepted():
    pl.parse_program(program("for i in pl.range(n + -9223372036854775808):\n    d = self.kernel_add(a, b, d)\nreturn d"),
                     "t.py")


# -- compile-time integer arithmetic is exact (Python's) and must give an int64 -----------------
# (`pl.range((1 << 64) + 2)` ran 2 iterations, `pl.range(N * 4 + 3)` with N = 2**62 ran 3: each
# operation of literals wrapped to int64 at run time)
@pytest.mark.parametrize("expr, at, prelude", [
    ("(1 << 64) + 2", "1 << 64", ""),
    ("N * 4 + 3", "N * 4", "N = 2**62"),
    ("N + N", "N + N", "N = 2**62"),
    ("0 - N - 2", "0 - N - 2", "N = 2**63 - 1"),
    ("-N", "-N", "N = -2**63"),
    ("-(-9223372036854775808)", "-(-", ""),
    ("(N // -1) + 1", "N // -1", "N = -2**63"),
])
def test_compile_time_integer_beyond_int64(expr, at, prelude):
    check(program(f"for i in pl.range({expr}):  #!\n    d = self.kernel_add(a, b, d)\nreturn d", prelude=prelude),
          "does not fit in 64 bits", at, help="each step of compile-time arithmetic must stay between")


@pytest.mark.parametrize("expr, message", [
    ("4 // 0", "'4 // 0' divides by zero"), ("N % 0", "'N % 0' divides by zero"),
    ("N / (N - 4)", "'N / (N - 4)' divides by zero"), ("1 << -1", "'1 << -1' shifts by a negative count")])
def test_compile_time_integer_python_would_raise(expr, message):
    check(program(f"k = {expr}  #!\nreturn d", prelude="N = 4"), message, expr,
          help="compile-time values follow Python")


def test_compile_time_integer_arithmetic_within_int64_is_accepted():
    pl.parse_program(program("for i in pl.range(N * 2 - 1 + (1 << 62) - (1 << 62)):\n"
                             "    d = self.kernel_add(a, b, d)\nk = 1.0 / 0.0\nreturn d",
                             prelude="N = 2**61"), "t.py")


@pytest.mark.parametrize("body, shown, help_", [
    # valid shape differs between the branches: the two printed types were identical
    ("if n > 0:  #!\n    t = pl.load(a, [0, 0], [16, 16], [n, 16])\nelse:\n    t = pl.load(a, [0, 0], [16, 16])\n"
     "d = pl.store(t, [0, 0], d)\nreturn d",
     "pl.Tile[[16, 16], pl.FP32, pl.TileView(valid_shape=[n, 16])] in one branch, pl.Tile[[16, 16], pl.FP32] in the "
     "other", "the valid shapes differ"),
    # ... and across iterations: acc takes t's valid shape on the right of pl.add
    ("acc = pl.tile.full([16, 16], dtype=pl.FP32, value=0.0)\nfor r in pl.range(0, n, 16):  #!\n"
     "    t = pl.load(a, [0, 0], [16, 16], [pl.min(n - r, 16), 16])\n    acc = pl.add(t, acc)\n"
     "d = pl.store(acc, [0, 0], d)\nreturn d",
     "pl.Tile[[16, 16], pl.FP32] before, pl.Tile[[16, 16], pl.FP32, pl.TileView(valid_shape=[", "pl.add(acc, t)"),
])
def test_a_tile_whose_valid_shape_changes_says_what_differs(body, shown, help_):
    body_check(body, shown, "if n" if body.startswith("if") else "for", help=help_, main_type="InCore")
