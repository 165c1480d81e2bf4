"""Diagnostics of call arguments against the callee's parameters (issue 15, silent wrong
results) and of shape annotations. Conventions of test_diagnostics.py: `#!` marks the line
the error must point at, `at=` the text the caret starts at."""

import pytest

from test_diagnostics import body_check, check, program

T = "pl.Tensor[[16, 16], pl.FP32]"
T32 = "pl.Tensor[[32, 16], pl.FP32]"


def test_argument_extent_must_match_the_parameter():
    # A [32, 16] view for a [16, 16] parameter used to run on half of it.
    body_check("x = pl.create_tensor([32, 16], dtype=pl.FP32)\nd = self.kernel_add(x, b, d)  #!\nreturn d",
               "argument 'a' of 'kernel_add' expects shape pl.Tensor[[16, 16], pl.FP32], got "
               "pl.Tensor[[32, 16], pl.FP32] (dimension 0: 32 != 16)", "x, b, d)", help="pl.tensor.slice")


def test_argument_rank_must_match_the_parameter():
    body_check("x = pl.create_tensor([256], dtype=pl.FP32)\nd = self.kernel_add(a, x, d)  #!\nreturn d",
               "argument 'b' of 'kernel_add' expects a rank-2 tensor", "x, d)")


def test_argument_dtype_must_match_the_parameter():
    body_check("d = self.kernel_add(a, b, rc)  #!\nreturn d",
               "argument 'c' of 'kernel_add' expects dtype pl.FP32, got pl.Tensor[[16, 16], pl.INT32]", "rc)")


def test_submit_argument_dtype_is_checked():
    body_check("d, t = pl.submit(self.kernel_add, rc, b, d)  #!\nreturn d",
               "argument 'a' of 'kernel_add' expects dtype pl.FP32", "rc, b")


def test_matching_slice_is_accepted():
    import pypto.language as pl
    pl.parse_program(program("x = pl.tensor.slice(a, [16, 16], [0, 0])\nd = self.kernel_add(x, b, d)\nreturn d"))


# An entry input a kernel writes becomes pl.Out / pl.InOut, as in the reference compiler
# (anchor_features §16 A: the fixed point runs over every non-InCore function); it was refused.
# The parser warns, once per parameter, at the call.
@pytest.mark.parametrize("body, param, at", [
    ("b = self.kernel_add(a, a, b)  #!\nreturn d", "b", "b)"),
    ("v = pl.tensor.slice(a, [16, 16], [0, 0])\nw = v\nw = self.kernel_add(b, b, w)  #!\nreturn d", "a", "w)"),
    ("a, t = pl.submit(self.kernel_add, b, b, a)  #!\nreturn d", "a", "a)"),
])
def test_an_entry_input_a_kernel_writes_is_written_with_a_warning(body, param, at):
    import pypto.language as pl
    from pypto.frontend.diagnostics import PyptoWarning
    src = program(body)
    with pytest.warns(PyptoWarning) as caught:
        prog = pl.parse_program(src, "t.py")
    msgs = [str(w.message) for w in caught if issubclass(w.category, PyptoWarning)]
    assert any(f"'{param}' is declared pl.In in 'main', but 'kernel_add' writes its parameter 'c' (pl.Out)" in m
               and "so the caller's array is written" in m for m in msgs), msgs
    line = next(i for i, text in enumerate(src.splitlines(), 1) if "#!" in text)
    assert any(f"t.py:{line}:" in m for m in msgs), msgs
    from pypto import codegen
    prepared = codegen.run_pipeline(prog)
    main = next(f for f in prepared.functions if f.name == "main")
    index = [p.name for p in main.params].index(param)
    assert main.param_directions[index].name == "Out", main.param_directions


def _with_param(ann):
    return program("return d").replace("n: pl.Scalar[pl.INDEX]) ->", f"n: pl.Scalar[pl.INDEX],\n             e: {ann}  #!\n             ) ->")


def test_negative_extent_is_a_parse_error():
    check(_with_param("pl.Tensor[[-4, 16], pl.FP32]"), "shape entry -4 is negative", "-4")


def test_extent_beyond_int64_is_a_parse_error():
    check(_with_param("pl.Tensor[[9223372036854775808, 16], pl.FP32]"),
          "shape entry 9223372036854775808 is too large: an extent must be below 2^63", "9223372036854775808")


def test_inline_slice_as_a_call_argument_runs():
    import numpy as np
    import pypto
    import pypto.language as pl
    src = program("d = self.kernel_add(pl.tensor.slice(a, [16, 16], [0, 0]), b, d)\nreturn d")
    src = src.replace("def main(self, a: pl.Tensor[[16, 16], pl.FP32]", "def main(self, a: pl.Tensor[[32, 16], pl.FP32]")
    compiled = pypto.compile(pl.parse_program(src))
    rng = np.random.default_rng(1)
    a = rng.standard_normal((32, 16)).astype(np.float32)
    b = rng.standard_normal((16, 16)).astype(np.float32)
    d = np.zeros((16, 16), np.float32)
    rc = np.zeros((16, 16), np.int32)
    compiled(a, b, d, rc, 1)
    np.testing.assert_allclose(d, a[:16] + b, rtol=1e-6)


def test_inline_slice_of_an_entry_input_is_written_with_a_warning():
    import pypto.language as pl
    from pypto.frontend.diagnostics import PyptoWarning
    with pytest.warns(PyptoWarning, match="'a' is declared pl.In in 'main', but 'kernel_add' writes"):
        pl.parse_program(program("d = self.kernel_add(b, b, pl.tensor.slice(a, [16, 16], [0, 0]))\nreturn d"), "t.py")


def test_recursive_kernel_is_refused():
    T2 = f"tuple[{T}, {T}]"
    extra = f'''
    @pl.function(type=pl.FunctionType.InCore)
    def rec(self, a: {T}, c: pl.Out[{T}], e: pl.Out[{T}]) -> {T2}:
        c, e = self.rec(a, c, e)  #!
        return c, e
'''
    check(program("d = self.kernel_add(a, b, d)\nreturn d", extra=extra), "'rec' calls itself", "self.rec")


def test_task_id_carried_through_a_huge_parallel_loop_is_refused():
    body_check("t = None\nfor i in pl.parallel(1000000):  #!\n    d, t = pl.submit(self.kernel_add, a, b, d)\n"
               "d, t2 = pl.submit(self.kernel_add, a, b, d, deps=[t])\nreturn d",
               "needs 1000000 slots, more than the limit of 65536", "pl.parallel(1000000)")


def test_task_id_carried_through_a_parallel_loop_at_the_limit_is_accepted():
    import pypto.language as pl
    pl.parse_program(program("t = None\nfor i in pl.parallel(65536):\n    d, t = pl.submit(self.kernel_add, a, b, d)\n"
                             "d, t2 = pl.submit(self.kernel_add, a, b, d, deps=[t])\nreturn d"))


DYN = 'M = pl.dynamic("M")'
TM = "pl.Tensor[[M, 16], pl.FP32]"


def _dyn_program(body):
    src = program(body, prelude=DYN)
    return src.replace("def main(self, a: pl.Tensor[[16, 16], pl.FP32]", f"def main(self, a: {TM}")


def test_slice_offset_beyond_uint32_is_a_compile_error():
    # With a dynamic extent nothing else catches it: it used to fail the C++ build (-Wnarrowing).
    check(_dyn_program("x = pl.tensor.slice(a, [16, 16], [4294967296, 0])  #!\nd = self.kernel_add(x, b, d)\nreturn d"),
          "pl.tensor.slice offset 4294967296 does not fit the runtime's 32-bit view", "4294967296")


def test_negative_slice_offset_is_a_compile_error():
    check(_dyn_program("x = pl.tensor.slice(a, [16, 16], [-1, 0])  #!\nd = self.kernel_add(x, b, d)\nreturn d"),
          "pl.tensor.slice offset -1 is negative", "-1")


def test_group_call_inside_a_branch_is_refused():
    extra = f'''
    @pl.function(type=pl.FunctionType.Group)
    def grp(self, a: {T}, b: {T}, c: pl.Out[{T}], n: pl.Scalar[pl.INDEX]) -> {T}:
        if n > 0:
            c = self.kernel_add(a, b, c)  #!
        return c
'''
    check(program("d = self.grp(a, b, d, n)\nreturn d", extra=extra),
          "the call to 'kernel_add' in Group function 'grp' is inside a loop or branch", "self.kernel_add(a, b, c)")


def test_group_call_inside_a_loop_is_refused():
    extra = f'''
    @pl.function(type=pl.FunctionType.Group)
    def grp(self, a: {T}, b: {T}, c: pl.Out[{T}]) -> {T}:
        for i in pl.range(2):
            c = self.kernel_add(a, b, c)  #!
        return c
'''
    check(program("d = self.grp(a, b, d)\nreturn d", extra=extra),
          "in Group function 'grp' is inside a loop or branch", "self.kernel_add(a, b, c)")


def test_dtype_mismatch_inside_a_cluster_is_located():
    body_check("with pl.cluster():\n    d = self.kernel_add(a, b, rc)  #!\nreturn d",
               "argument 'c' of 'kernel_add' expects dtype pl.FP32", "rc)")
