"""StampCallOperands: in an Orchestration function of 64 task statements or more, the values
computed between kernel calls (slices, views, index expressions, copies, in-place assembles)
followed by a call of their run get stamped in Function.call_operands (with the batched creates
between them, which print nothing), and the calls a near value stays live across in
Function.open_calls; the run's every 64th call that a value is live across in
Function.cut_calls, and the values live across a cut, read far on or after their run in
Function.carried_operands. The L2 generator prints the values inside its unoptimised chunks of
calls, ends no chunk after an open call unless it is a cut, and hands carried values on
(tests/python/test_orchestration_chunked_operands.py runs such programs). DSL Before /
Expected, written as text: the programs need 64 calls."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir import passes

from pass_test_util import assert_pass

KERNEL = """import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def add(self, x: pl.Tensor[[8, 8], pl.FP32], y: pl.Tensor[[8, 8], pl.FP32],
            z: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        z2 = pl.store(pl.add(pl.load(x, [0, 0], [8, 8]), pl.load(y, [0, 0], [8, 8])), [0, 0], z)
        return z

"""
HEAD = KERNEL + """    @pl.function(type=pl.FunctionType.Orchestration{options})
    def main(self, a: pl.Tensor[[8, 512], pl.FP32], b: pl.Tensor[[8, 8], pl.FP32],
             out: pl.InOut[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        t = pl.create_tensor([8, 8], dtype=pl.FP32)
"""
FILLER = 64   # calls of plain `t = self.add(t, b, t)` that make the function big enough


def program(body, stamped=None, filler=FILLER, open_calls=(), cut_calls=(), carried=()):
    """The program text: `body` (lines of main, 8 spaces in) after `filler` plain calls; with
    `stamped`, the Expected form (call_operands= naming them, open_calls= / cut_calls= the calls
    named, carried_operands= the values named)."""
    quoted = lambda names: ", ".join('"%s"' % n for n in names)
    options = "" if stamped is None else ", call_operands=[%s]" % quoted(stamped)
    for keyword, names in (("open_calls", open_calls), ("cut_calls", cut_calls), ("carried_operands", carried)):
        options += ", %s=[%s]" % (keyword, quoted(names)) if names else ""
    lines = ["        t = self.add(t, b, t)"] * filler + ["        " + l for l in body] + ["        return out"]
    return HEAD.format(options=options) + "\n".join(lines) + "\n"


def before_expected(body, stamped, filler=FILLER, open_calls=(), cut_calls=(), carried=()):
    """(Before, Expected) of `body`: Expected stamps the values named `stamped`, the calls named
    `open_calls` and `cut_calls`, and the values named `carried`. Both have StampReturnedParams'
    and CountTaskStatements' and StampAllocationBatches' stamps (StampCallOperands requires them)."""
    prepare = lambda text: passes.StampAllocationBatches()(
        passes.CountTaskStatements()(passes.StampReturnedParams()(pl.parse_program(text))))
    return (prepare(program(body, None, filler)), prepare(program(body, stamped, filler, open_calls, cut_calls, carried)))


def test_a_slice_per_call_is_stamped_and_compares_as_expected():
    body = []
    for n in range(4):
        body += ["s%d = pl.tensor.slice(a, [8, 8], [0, %d])" % (n, 8 * n), "t = self.add(s%d, b, t)" % n]
    before, expected = before_expected(body, ["s0", "s1", "s2", "s3"])
    after = assert_pass(passes.StampCallOperands(), before, expected)
    assert [v.name for v in after.get("main").call_operands] == ["s0", "s1", "s2", "s3"]
    assert passes.verify_property(passes.IRProperty.CallOperandsStamped, after) == []
    assert passes.verify_property(passes.IRProperty.CallOperandsStamped, before) != []
    assert after.get("add").call_operands == []


def test_index_expressions_views_and_copies_dead_by_their_call():
    body = ["c = 3 * 8",
            "s = pl.tensor.slice(a, [8, 64], [0, c])",
            "r = pl.tensor.reshape(s, [64, 8])",
            "v = pl.tensor.slice(r, [8, 8], [0, 0])",
            "w = v",
            "t = self.add(w, b, t)"]
    assert_pass(passes.StampCallOperands(), *before_expected(body, ["c", "s", "r", "v", "w"]))


def test_a_value_read_by_later_calls_keeps_the_calls_between_open():
    body = ["c = 8",                                      # read by `shared` only
            "shared = pl.tensor.slice(a, [8, 8], [0, c])",   # read by two calls: u stays open
            "x = pl.tensor.slice(a, [8, 8], [0, 16])",
            "u = self.add(shared, x, t)",
            "v = self.add(shared, b, u)",
            "y = pl.tensor.slice(a, [8, 8], [0, 24])",    # read by the last call: w stays open
            "w = self.add(v, b, v)",
            "z = pl.tensor.slice(a, [8, 8], [0, 32])",
            "r = self.add(z, y, w)"]
    assert_pass(passes.StampCallOperands(), *before_expected(body, ["c", "shared", "x", "y", "z"], open_calls=["u", "w"]))


def test_values_read_after_their_run_or_far_on_are_carried_and_one_after_the_last_call_is_not():
    far = ["f%d = self.add(t, b, t)" % k for k in range(64)]
    body = (["c = 8",
             "mid = pl.tensor.slice(a, [8, 8], [0, c])",  # read after a loop: far, carried
             "x = pl.tensor.slice(a, [8, 8], [0, 16])",   # read by the next call: near
             "u = self.add(mid, x, t)",
             "z = pl.tensor.slice(a, [8, 8], [0, 24])",   # after its run's last call: not stamped
             "for i in pl.range(2):",
             "    t = self.add(mid, z, t)",
             "g = pl.tensor.slice(a, [8, 8], [0, 8])"]    # read 65 calls on: far, carried (no
            + far + ["h = self.add(g, b, t)"])           # call held open)
    assert_pass(passes.StampCallOperands(), *before_expected(body, ["c", "mid", "x", "g"], carried=["mid", "g"]))


def test_a_value_read_after_the_run_in_a_chains_middle_is_far():
    # A halo chain with `m`, read after the run, in its middle: `m` is far (its chunk hands it
    # on), and the chain around it stays stamped, its calls open. (In session 31 `m` printed
    # between chunks and the failure cascaded back through every slice before it; in session
    # 32 the slice live across it was carried over it.)
    body = ["s0 = pl.tensor.slice(a, [8, 8], [0, 0])", "c0 = self.add(s0, b, t)"]
    for n in range(1, 6):
        if n == 3:
            body.append("m = pl.tensor.slice(a, [8, 8], [0, 128])")
        body += ["s%d = pl.tensor.slice(a, [8, 8], [0, %d])" % (n, 8 * n), "c%d = self.add(s%d, s%d, t)" % (n, n, n - 1)]
    body += ["for i in pl.range(2):", "    t = self.add(m, b, t)"]
    after = assert_pass(passes.StampCallOperands(),
                        *before_expected(body, ["s0", "s1", "s2", "m", "s3", "s4", "s5"],
                                         open_calls=["c0", "c1", "c2", "c3", "c4"], carried=["m"]))
    assert after.get("main").cut_calls == []


def test_a_value_live_across_every_64th_call_is_carried_over_the_cut():
    # The filler's 64 calls and these are one run: its 128th call (u128) is a forced cut. `g`,
    # read by its 127th and 130th, is live across it: u128 is a cut call (a chunk ends there) and
    # `g` is carried to the next chunk. `f` dies at the 127th, `h` is read across the 131st.
    body = ["u%d = self.add(t, b, t)" % k for k in range(65, 127)]
    body += ["f = pl.tensor.slice(a, [8, 8], [0, 0])",
             "g = pl.tensor.slice(a, [8, 8], [0, 8])",
             "u127 = self.add(f, g, t)",
             "u128 = self.add(t, b, t)",
             "u129 = self.add(t, b, t)",
             "u130 = self.add(g, b, t)",
             "h = pl.tensor.slice(a, [8, 8], [0, 16])",
             "u131 = self.add(h, b, t)",
             "u132 = self.add(h, b, t)"]
    after = assert_pass(passes.StampCallOperands(),
                        *before_expected(body, ["f", "g", "h"], open_calls=["u127", "u128", "u129", "u131"],
                                         cut_calls=["u128"], carried=["g"]))
    assert [v.name for v in after.get("main").cut_calls] == ["u128"]
    assert [v.name for v in after.get("main").carried_operands] == ["g"]


def test_a_chain_of_overlapping_spans_is_cut_every_64th_call():
    # Each call reads its own slice and the previous call's: every call is open, and the run's
    # 64th and 128th calls are cuts carrying the slice read across them.
    body = ["s0 = pl.tensor.slice(a, [8, 8], [0, 0])", "c0 = self.add(s0, b, t)"]
    for n in range(1, 70):
        body += ["s%d = pl.tensor.slice(a, [8, 8], [0, %d])" % (n, 8 * (n % 64)), "c%d = self.add(s%d, s%d, t)" % (n, n, n - 1)]
    after = assert_pass(passes.StampCallOperands(),
                        *before_expected(body, ["s%d" % n for n in range(70)], filler=60,
                                         open_calls=["c%d" % n for n in range(69)], cut_calls=["c3", "c67"],
                                         carried=["s3", "s67"]))
    assert passes.verify_property(passes.IRProperty.CallOperandsStamped, after) == []


def test_a_value_read_across_a_call_without_a_result_is_far():
    body = ["s = pl.tensor.slice(a, [8, 8], [0, 8])",
            "self.add(s, b, t)",                          # no name for open_calls: `s` is carried
            "u = self.add(s, b, t)",
            "y = pl.tensor.slice(a, [8, 8], [0, 16])",
            "v = self.add(y, b, t)"]
    assert_pass(passes.StampCallOperands(), *before_expected(body, ["s", "y"], carried=["s"]))


def test_a_tiled_write_and_its_in_place_assemble():
    body = ["o = pl.tensor.slice(out, [8, 8], [0, 8])",  # written by the call, assembled in place
            "o = self.add(t, b, o)",
            "out2 = pl.tensor.assemble(out, o, [0, 8])",  # bound to `out`: stamped with the next call
            "t = self.add(t, b, t)",
            "p = pl.tensor.slice(out2, [8, 8], [0, 16])",  # written, then read by the next call
            "p2 = self.add(t, b, p)",                     # (bound to p's text: p2 stays open)
            "t = self.add(p2, b, t)",
            "q = pl.tensor.slice(out2, [8, 8], [0, 24])",  # written, then read after a loop (as
            "q2 = self.add(t, b, q)",                      # q2, bound to q's text): far, carried
            "for i in pl.range(2):",
            "    t = self.add(q2, b, t)"]
    assert_pass(passes.StampCallOperands(),
                *before_expected(body, ["o", "out2", "p", "q"], open_calls=["p2"], carried=["q"]))


def test_values_without_a_call_after_them_and_small_functions_are_not_stamped():
    body = ["s = pl.tensor.slice(a, [8, 8], [0, 0])",   # a loop follows: no call of its own
            "for i in pl.range(2):",
            "    u = pl.tensor.slice(a, [8, 8], [0, 8])",   # inside a loop body: stamped
            "    t = self.add(u, s, t)",
            "v = pl.tensor.slice(a, [8, 8], [0, 16])"]   # the block ends
    assert_pass(passes.StampCallOperands(), *before_expected(body, ["u"]))
    small = ["s = pl.tensor.slice(a, [8, 8], [0, 0])", "t = self.add(s, b, t)"]
    assert_pass(passes.StampCallOperands(), *before_expected(small, [], filler=10))


def test_printed_stamp_round_trips_and_unknown_names_are_refused():
    body = ["s = pl.tensor.slice(a, [8, 8], [0, 0])", "t = self.add(s, b, t)"]
    after = passes.StampCallOperands()(before_expected(body, [])[0])
    text = ir.python_print(after)
    assert 'call_operands=["s"]' in text
    again = pl.parse_program(text)
    assert ir.structural_equal(again, after)
    with pytest.raises(Exception, match="call_operands=: 'nope' is not a Var the function body assigns"):
        pl.parse_program(text.replace('call_operands=["s"]', 'call_operands=["nope"]'))


def test_printed_cuts_and_carried_values_round_trip_and_misuse_is_located():
    body = ["s0 = pl.tensor.slice(a, [8, 8], [0, 0])", "c0 = self.add(s0, b, t)"]
    for n in range(1, 8):
        body += ["s%d = pl.tensor.slice(a, [8, 8], [0, %d])" % (n, 8 * n), "c%d = self.add(s%d, s%d, t)" % (n, n, n - 1)]
    after = passes.StampCallOperands()(before_expected(body, [], filler=60)[0])
    text = ir.python_print(after)
    assert 'cut_calls=["c3"]' in text and 'carried_operands=["s3"]' in text
    again = pl.parse_program(text)
    assert ir.structural_equal(again, after)
    # a stamp that parses but names the wrong value differs structurally and fails the property
    wrong = pl.parse_program(text.replace('carried_operands=["s3"]', 'carried_operands=["s4"]'))
    assert not ir.structural_equal(wrong, after)
    assert passes.verify_property(passes.IRProperty.CallOperandsStamped, wrong) != []
    with pytest.raises(Exception, match="cut_calls=: 'nope' is not a Var the function body assigns"):
        pl.parse_program(text.replace('cut_calls=["c3"]', 'cut_calls=["nope"]'))
    with pytest.raises(Exception, match="carried_operands.*list"):
        pl.parse_program(text.replace('carried_operands=["s3"]', 'carried_operands=5'))


def test_batched_creates_between_calls_keep_one_run():
    # `t = pl.create_tensor(...); t = self.add(..., t)` per step: the creates are allocated at the
    # block's entry (Function::batched_creates) and print nothing where they stand, so the calls
    # and slices around them stay one run (before, each call was a run of its own: 1,000 such
    # steps got 999 one-call chunks and took 3.4 s and 295 MB to build).
    body = []
    for n in range(3):   # s0 is read by the first call and the last: the calls between stay open
        body += ["c%d = pl.create_tensor([8, 8], dtype=pl.FP32)" % n,
                 "s%d = pl.tensor.slice(a, [8, 8], [0, %d])" % (n, 8 * n),
                 "u%d = self.add(s%d, %s, c%d)" % (n, n, "s0" if n == 2 else "b", n)]
    before, expected = before_expected(body, ["s0", "s1", "s2"], open_calls=["u0", "u1"])
    assert_pass(passes.StampCallOperands(), before, expected)
    created = [v.name for v in before.get("main").batched_creates]
    assert created == ["t", "c0", "c1", "c2"], created   # (were each create a run's end, s0
                                                         # would be far: carried, no call open)


def test_a_value_copied_after_its_runs_last_call_is_far():
    # `y = s` stands after the run's last call: no call marks the death of s's group, so s is far
    # (carried); `y` itself prints between chunks (bound to s's name, which the block declares).
    # Before, s failed inside its run and the chunk ended before it, stranding the values around
    # it (the chunking fuzzer's program 2046: "'s154' is used outside the block that declares it").
    body = ["s = pl.tensor.slice(a, [8, 8], [0, 8])",
            "p = pl.tensor.slice(a, [8, 8], [0, 16])",
            "u = self.add(s, b, t)",
            "v = self.add(p, b, u)",       # p is read across u: u stays open
            "y = s",
            "for i in pl.range(2):",
            "    t = self.add(y, b, t)"]
    assert_pass(passes.StampCallOperands(), *before_expected(body, ["s", "p"], open_calls=["u"], carried=["s"]))


def test_a_submit_and_its_elements_are_one_unit_held_open_while_an_element_lives():
    # `u, tid = pl.submit(...)` binds a tuple (stamped: the chunk holds the submission) and takes
    # its elements right after it; no chunk ends between them (the elements read the submission's
    # TaskOutputTensors), so an element read later keeps its own submission open: `e`, a
    # runtime-allocated output read by the last call, holds every submission up to it. Before,
    # a submission ended its run: 3,000 chained submits were one function (6.8 s and 543 MB to
    # build).
    body = ["e, etid = pl.submit(self.add, b, b)",
            "u, tid = pl.submit(self.add, t, b, t)",
            "s = pl.tensor.slice(a, [8, 8], [0, 8])",
            "v, tid2 = pl.submit(self.add, s, b, u, deps=[tid])",
            "w = self.add(e, b, v)"]
    stamped = ["e", "etid", "u", "tid", "s", "v", "tid2"]   # a unit's task is named by its first element
    before, expected = before_expected(body, stamped, open_calls=["e", "u", "v"])
    assert_pass(passes.StampCallOperands(), before, expected)


def test_a_chain_of_submits_is_cut_every_64th_call_handing_its_task_id_on():
    # Each submission waits on the previous one's TaskId: every submission is open (its TaskId
    # lives past its unit), and the chunks end at the run's every 64th call, handing the TaskId
    # on (a fresh TaskId declares a name; `out` is bound to the argument it writes back).
    body = ["o, t0 = pl.submit(self.add, b, b, t)"]
    body += ["o, t%d = pl.submit(self.add, o, b, o, deps=[t%d])" % (n, n - 1) for n in range(1, 70)]
    before, _ = before_expected(body, [], filler=0)
    after = passes.StampCallOperands()(before)
    main = after.get("main")
    names = lambda vs: [v.name for v in vs]
    elements = names(main.call_operands)
    assert elements == [x for n in range(70) for x in ("o", "t%d" % n)], elements
    assert main.cut_calls[0].same_as(main.call_operands[2 * 63]) and len(main.cut_calls) == 1
    assert names(main.carried_operands) == ["t63"], names(main.carried_operands)
    assert len(main.open_calls) == 69 and not main.open_calls[-1].same_as(main.call_operands[-2])
    # (the last TaskId is read by nothing: its submission is not held open)
    text = ir.python_print(after)
    assert ir.structural_equal(after, pl.parse_program(text)), text   # the stamps round-trip


def test_a_task_id_declared_before_its_scope_declares_nothing_and_is_not_carried():
    # The last TaskId of a MANUAL scope that a loop's yield carries out is declared before the
    # PTO2_SCOPE (RuntimeScopeStmt::carried_task_ids): its element assigns that name. Read after
    # the scope, it holds no submission open and is not handed on; `mid`, a fresh TaskId read 65
    # submissions on, is far: carried, nothing held open.
    text = KERNEL + """    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, b: pl.Tensor[[8, 8], pl.FP32],
             out: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        prev = None
        for n in pl.range(2):
            with pl.manual_scope():
                out, mid = pl.submit(self.add, out, b, out, deps=[prev])
%s
                out, prev = pl.submit(self.add, out, b, out, deps=[mid])
        return out
""" % "\n".join(["                out, _ = pl.submit(self.add, out, b, out)"] * 64)
    from pypto import codegen
    prepared = codegen.run_pipeline(pl.parse_program(text))
    main = prepared.get("main")
    names = lambda vs: [v.name for v in vs]
    hoisted = [l for l in ir.python_print(prepared).split("\n") if "carried_task_ids" in l]
    assert hoisted and '"prev_2"' in hoisted[0], hoisted
    assert names(main.call_operands) == ["out", "mid"] + ["out", "_"] * 64 + ["out", "prev"]
    assert names(main.carried_operands) == ["mid"], names(main.carried_operands)
    assert main.open_calls == [] and main.cut_calls == [], names(main.open_calls)
