"""Long runs of pl.submit are chunked like runs of calls: a submission and the statements right
after it that take its results (`out, tid = pl.submit(...)`: its TaskOutputTensors, then the
tensor and the TaskId) are one unit, which no chunk splits; a TaskId or runtime-allocated
output read after its chunk is handed on. Before, a submission ended its run of calls, so a
chain of submissions was one function: 3,000 of them took 6.8 s and 543 MB to build (g++'s
stack-variable work over 3,000 `TaskOutputTensors` of one block). Each program builds with
-Werror and computes what NumPy computes."""

from __future__ import annotations

import re

import numpy as np
import pytest

from test_orchestration_chunked_operands import K, W, generated, in_chunk, run_against, with_main


def submit_chain_source(steps: int, manual: bool) -> str:
    """A chain of submissions, each waiting on the previous one's TaskId: t += s_n (s_n a slice
    of `a`). `early`, a runtime-allocated output (2b) submitted first, and its TaskId are read
    only by the last submission, `steps` submissions on (far: handed on by their chunk); every
    7th step a second runtime-allocated output `r` is read by the next step (near)."""
    ind = " " * (12 if manual else 8)
    body = ["        t = pl.create_tensor([8, 8], dtype=pl.FP32)"]
    if manual:
        body.append("        with pl.manual_scope():")
    body += [ind + "early, early_tid = pl.submit(self.add, b, b)",
             ind + "t, tid = pl.submit(self.add, b, b, t)"]
    for n in range(1, steps):
        body.append(ind + "s%d = pl.tensor.slice(a, [8, 8], [0, %d])" % (n, 8 * (n % K)))
        if n % 7 == 1 and n > 1:   # r, submitted the step before, is added in
            body.append(ind + "t, tid = pl.submit(self.add, t, r, t, deps=[tid, rtid])")
        body.append(ind + "t, tid = pl.submit(self.add, t, s%d, t, deps=[tid])" % n)
        if n % 7 == 0:
            body.append(ind + "r, rtid = pl.submit(self.add, s%d, s%d, deps=[tid])" % (n, n))
    body += [ind + "o, _ = pl.submit(self.add, t, early, pl.tensor.slice(out, [8, 8], [0, 0]), deps=[tid, early_tid])",
             "        return out"]
    return with_main("Submits", body)


def submit_chain_expected(steps: int, a, b, out):
    t = 2 * b
    for n in range(1, steps):
        s = a[:, 8 * (n % K):8 * (n % K) + 8]
        if n % 7 == 1 and n > 1:
            t = t + 2 * a[:, 8 * ((n - 1) % K):8 * ((n - 1) % K) + 8]
        t = t + s
    out = out.copy()
    out[:, 0:8] = t + 2 * b
    return out


@pytest.mark.parametrize("manual", [False, True])
def test_a_chain_of_submits_is_chunked_handing_task_ids_and_outputs_on(manual, tmp_path, monkeypatch):
    steps = 150
    program, code, calls = generated(submit_chain_source(steps, manual), "submits.py", tmp_path, monkeypatch)
    assert calls == steps + 1 + (steps - 2) // 7 + (steps - 1) // 7 + 1
    chunks = code.count("[&]() PYPTO_CALL_CHUNK {")
    assert 2 <= chunks <= calls // 64 + 1, code
    # every TaskOutputTensors is declared in a chunk (none piles up in the block)
    outs = [m.start() for m in re.finditer(r"TaskOutputTensors task_\d+_outs;", code)]
    assert len(outs) == calls and all(in_chunk(code, p) for p in outs), code
    # the first chunk hands on the far output (a Tensor copied out of its TaskOutputTensors), its
    # TaskId and the chain's TaskId at the cut
    first = code[code.index("struct handed_on {"):]
    members = first[:first.index("};")]
    assert "Tensor v0; PTO2TaskId v1; PTO2TaskId v2;" in members, members
    assert re.search(r"\[\[maybe_unused\]\] auto& early = chunk\.v0;", code), code
    run_against(program, lambda a, b, out: submit_chain_expected(steps, a, b, out), seed=11)


def hoisted_source(per_scope: int) -> str:
    """Two MANUAL scopes in a loop, each a chain of `per_scope` submissions t += b; the last
    TaskId of a scope is carried into the next iteration (declared before the PTO2_SCOPE and
    assigned in a chunk), and `mid`, the first, is read by the last submission of the scope."""
    body = ["        t = pl.create_tensor([8, 8], dtype=pl.FP32)",
            "        t, prev = pl.submit(self.add, b, b, t)",
            "        for i in pl.range(2):",
            "            with pl.manual_scope():",
            "                t, mid = pl.submit(self.add, t, b, t, deps=[prev])",
            "                t, tid = pl.submit(self.add, t, b, t, deps=[mid])"]
    body += ["                t, tid = pl.submit(self.add, t, b, t, deps=[tid])"] * (per_scope - 3)
    body += ["                t, prev = pl.submit(self.add, t, b, t, deps=[tid, mid])",
             "        o, _ = pl.submit(self.add, t, b, pl.tensor.slice(out, [8, 8], [0, 0]), deps=[prev])",
             "        return out"]
    return with_main("Hoisted", body)


def test_a_task_id_carried_out_of_a_long_scope_is_assigned_in_a_chunk(tmp_path, monkeypatch):
    per_scope = 140
    program, code, calls = generated(hoisted_source(per_scope), "hoisted.py", tmp_path, monkeypatch)
    assert calls == 2 + per_scope
    assert code.count("[&]() PYPTO_CALL_CHUNK {") >= 2, code
    hoisted = re.search(r"PTO2TaskId (prev_\w+) = PTO2TaskId::invalid\(\);", code)
    assert hoisted, code
    assign = code.index("%s = task_" % hoisted.group(1))
    assert in_chunk(code, assign), code

    def want(a, b, out):
        out = out.copy()
        out[:, 0:8] = 2 * b + 2 * per_scope * b + b
        return out
    run_against(program, want, seed=12)
