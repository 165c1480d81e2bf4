"""NameCallResults: in an Orchestration function of 64 task statements or more (the ones the L2
generator chunks), a kernel call written as a statement without a result gets one, named after
the callee, so that StampCallOperands can name it among the calls a chunk may not end after
(Function.open_calls) or must end after (Function.cut_calls). DSL Before / Expected, written as
text: the programs need 64 calls."""

import pypto.language as pl
from pypto import codegen
from pypto.ir import passes

from pass_test_util import assert_pass
from test_pass_stamp_call_operands import program


def before_expected(before_body, expected_body, filler=64):
    """(Before, Expected) programs of the two bodies, with the stamps NameCallResults requires
    (and StampAllocationBatches', which StampCallOperands, run after it here, requires)."""
    prepare = lambda body: passes.StampAllocationBatches()(passes.CountTaskStatements()(passes.StampReturnedParams()(
        pl.parse_program(program(body, None, filler)))))
    return prepare(before_body), prepare(expected_body)


def test_call_statements_without_a_result_get_one():
    before = ["s = pl.tensor.slice(a, [8, 8], [0, 0])",
              "self.add(s, b, t)",
              "for i in pl.range(2):",
              "    self.add(t, b, t)",                      # in a loop body too
              "u = self.add(s, b, t)"]                      # named already: unchanged
    expected = ["s = pl.tensor.slice(a, [8, 8], [0, 0])",
                "add_out = self.add(s, b, t)",
                "for i in pl.range(2):",
                "    add_out_in_loop = self.add(t, b, t)",   # (a loop-local: no carry)
                "u = self.add(s, b, t)"]
    after = assert_pass(passes.NameCallResults(), *before_expected(before, expected))
    assert passes.verify_property(passes.IRProperty.CallResultsNamed, after) == []


def test_functions_the_generator_does_not_chunk_are_left_alone():
    body = ["s = pl.tensor.slice(a, [8, 8], [0, 0])", "self.add(s, b, t)"]
    before, expected = before_expected(body, body, filler=10)   # 11 task statements
    after = assert_pass(passes.NameCallResults(), before, expected)
    assert after is before or after.get("main") is before.get("main")
    assert passes.verify_property(passes.IRProperty.CallResultsNamed, after) == []


def test_a_named_chain_is_stamped_with_cuts_and_carried_values():
    # A halo chain written with call statements: each call reads its own slice and the previous
    # one. Once named, the 64th call of the run is a cut carrying the slice read across it.
    before, expected = ["s0 = pl.tensor.slice(a, [8, 8], [0, 0])", "self.add(s0, b, t)"], \
                       ["s0 = pl.tensor.slice(a, [8, 8], [0, 0])", "add_out = self.add(s0, b, t)"]
    for n in range(1, 8):
        before += ["s%d = pl.tensor.slice(a, [8, 8], [0, %d])" % (n, 8 * n), "self.add(s%d, s%d, t)" % (n, n - 1)]
        expected += ["s%d = pl.tensor.slice(a, [8, 8], [0, %d])" % (n, 8 * n), "add_out = self.add(s%d, s%d, t)" % (n, n - 1)]
    b, e = before_expected(before, expected, filler=60)
    assert passes.verify_property(passes.IRProperty.CallResultsNamed, b) != []
    after = assert_pass(passes.NameCallResults(), b, e)
    stamped = passes.StampCallOperands()(after).get("main")
    assert [v.name for v in stamped.carried_operands] == ["s3"]
    assert len(stamped.cut_calls) == 1 and len(stamped.open_calls) == 7
    # unnamed, no call can be named open: every slice but the last (read by the last call only)
    # is far, handed on by its chunk wherever that ends
    unnamed = passes.StampCallOperands()(b).get("main")
    assert [v.name for v in unnamed.call_operands] == ["s%d" % k for k in range(8)]
    assert [v.name for v in unnamed.carried_operands] == ["s%d" % k for k in range(7)]
    assert len(unnamed.open_calls) == 0 and len(unnamed.cut_calls) == 0


def test_the_pipeline_chunks_a_chain_of_call_statements():
    # 300 calls without results, each reading its own slice and the previous one: before the
    # pass, 299 one-call chunks with every slice in the optimised function; now about 5.
    lines = ["s0 = pl.tensor.slice(a, [8, 8], [0, 0])", "self.add(s0, b, t)"]
    for n in range(1, 300):
        lines += ["s%d = pl.tensor.slice(a, [8, 8], [0, %d])" % (n, 8 * (n % 60)), "self.add(s%d, s%d, t)" % (n, n - 1)]
    code = codegen.generate_orchestration(pl.parse_program(program(lines, None, 0)), "main").code
    assert code.count("rt_submit_aiv_task") == 300
    assert code.count("[&]() PYPTO_CALL_CHUNK {") <= 6
    assert code.count("return handed_on{") >= 3
