"""Long runs of calls with values computed between them are chunked (StampCallOperands stamps
the values, emit_statements.cpp prints them): each chunk, an unoptimised function of its own,
holds its calls and the slices, views and index expressions they read. Before, only runs of
calls alone were chunked: a slice between each two calls left the whole entry one function, and
g++ -O2 took 96 s and 1.2 GB to build 1,000 such calls.

The program below mixes every form: a slice per call, an index expression feeding a slice, a
call writing into a slice of the output that is then assembled in place, a slice read by two
calls, and values read past their run (by the last calls, by a later loop). It builds with
-Werror and computes what NumPy computes."""

from __future__ import annotations

import re

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen

from test_orchestration_many_calls import program_head

K = 7    # slices of `a` the calls cycle through
W = 8 * 5   # columns of `out`: slots 0-1 for the end, 2-4 written by the run's tiled writes


def with_main(name: str, body: list) -> str:
    """Program `name`: the add kernel and main(a, b, out) whose body is `body`."""
    head = program_head(name) + [
        "    @pl.function(type=pl.FunctionType.Orchestration)",
        "    def main(self, a: pl.Tensor[[8, %d], pl.FP32], b: pl.Tensor[[8, 8], pl.FP32]," % (8 * K),
        "             out: pl.InOut[pl.Tensor[[8, %d], pl.FP32]]) -> pl.Tensor[[8, %d], pl.FP32]:" % (W, W),
    ]
    return "\n".join(head + body) + "\n"


def in_chunk(code: str, pos: int) -> bool:
    """True when position `pos` of generated `code` is inside a chunk of calls."""
    return code.rfind("[&]() PYPTO_CALL_CHUNK {", 0, pos) > code.rfind("}();", 0, pos)


def run_against(program, expected_out, seed: int) -> None:
    """Builds `program`, runs it on random inputs and compares `out` with expected_out(a, b, out)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((8, 8 * K)).astype(np.float32)
    b = rng.standard_normal((8, 8)).astype(np.float32)
    out = rng.standard_normal((8, W)).astype(np.float32)
    want = expected_out(a, b, out)
    compiled = pypto.compile(program)
    compiled(a, b, out)
    compiled.close()
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)


def generated(source: str, file: str, tmp_path, monkeypatch):
    """(program, its orchestration C++, the number of calls in it); later builds use -Werror and
    a fresh cache."""
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    program = pl.parse_program(source, file)
    code = codegen.generate_orchestration(program, "main").code
    return program, code, code.count("rt_submit_aiv_task")


def program_source(calls: int) -> str:
    """About ``calls`` calls of add(x, y, z): z = x + y. t0 and t1 take turns accumulating
    slices of `a`. Every 9th step the accumulator is written into a slice of `out` (slot 2 + n%3)
    and assembled back; every 11th step a slice is read by two calls in a row."""
    body = [
        "        t0 = pl.create_tensor([8, 8], dtype=pl.FP32)",
        "        t1 = pl.create_tensor([8, 8], dtype=pl.FP32)",
        "        far = pl.tensor.slice(a, [8, 8], [0, 0])",
        "        t0 = self.add(far, b, t0)",
    ]
    n_calls, n, last = 1, 0, 0
    while n_calls < calls - 4:
        n += 1
        src, dst = (n - 1) % 2, n % 2
        body.append("        c%d = (%d %% %d) * 8" % (n, n, K))
        body.append("        s%d = pl.tensor.slice(a, [8, 8], [0, c%d])" % (n, n))
        body.append("        t%d = self.add(t%d, s%d, t%d)" % (dst, src, n, dst))
        n_calls += 1
        if n % 11 == 0:   # s_n read by a second call
            body.append("        t%d = self.add(t%d, s%d, t%d)" % (dst, dst, n, dst))
            n_calls += 1
        if n % 9 == 0:    # a tiled write: a slice of out, written, assembled in place
            col = 8 * (2 + n % 3)
            body.append("        w%d = pl.tensor.slice(out, [8, 8], [0, %d])" % (n, col))
            body.append("        w%d = self.add(t%d, b, w%d)" % (n, dst, n))
            body.append("        out = pl.tensor.assemble(out, w%d, [0, %d])" % (n, col))
            n_calls += 1
        if n == 5:
            body.append("        mid = pl.tensor.slice(a, [8, 8], [0, 8])")
        last = dst
    body += [
        "        for i in pl.range(2):",
        "            t%d = self.add(t%d, mid, t%d)" % (last, last, last),
        "        o1 = self.add(t%d, far, pl.tensor.slice(out, [8, 8], [0, 0]))" % last,
        "        o2 = self.add(t%d, b, pl.tensor.slice(out, [8, 8], [0, 8]))" % last,
        "        return out",
    ]
    return with_main("SliceCalls", body)


def expected(calls: int, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> np.ndarray:
    """program_source's result, step by step in NumPy."""
    sl = [a[:, 8 * k:8 * k + 8] for k in range(K)]
    t = [sl[0] + b, None]
    out = out.copy()
    n_calls, n, last = 1, 0, 0
    while n_calls < calls - 4:
        n += 1
        src, dst = (n - 1) % 2, n % 2
        t[dst] = t[src] + sl[n % K]
        n_calls += 1
        if n % 11 == 0:
            t[dst] = t[dst] + sl[n % K]
            n_calls += 1
        if n % 9 == 0:
            col = 8 * (2 + n % 3)
            out[:, col:col + 8] = t[dst] + b
            n_calls += 1
        last = dst
    for _ in range(2):
        t[last] = t[last] + sl[1]
    out[:, 0:8] = t[last] + sl[0]
    out[:, 8:16] = t[last] + b
    return out


@pytest.mark.parametrize("calls", [40, 400])
def test_calls_with_values_between_are_chunked_and_compute_the_same(calls, tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    program = pl.parse_program(program_source(calls), "slice_calls.py")
    code = codegen.generate_orchestration(program, "main").code
    submits = code.count("rt_submit_aiv_task")
    chunks = code.count("[&]() PYPTO_CALL_CHUNK {")
    if calls < 64:
        assert chunks == 0   # small functions keep the spec's form
    else:
        assert submits >= calls - 2
        # the values between calls no longer keep the calls out of chunks
        assert chunks >= submits // 64 - 1, code
        # every value is declared in a chunk: those read after their run (by the loop, by the
        # last calls) are handed on to the block
        for name in ("far", "mid"):
            assert in_chunk(code, code.index("Tensor %s = " % name)), name
            assert re.search(r"\[\[maybe_unused\]\] auto& %s = chunk(_\d+)?\.v\d+;" % name, code), name
        for name in ("s11", "s22", "s100", "c100", "w99"):
            assert in_chunk(code, code.index(" %s = " % name)), name
    run_against(program, lambda a, b, out: expected(calls, a, b, out), seed=calls)


def chain_source(steps: int, named: bool = True, kept: int = 0) -> str:
    """A halo chain: step n computes an offset c_n, a slice s_n at the previous step's offset,
    h = s_n + s_{n-1} and an accumulator t += h. Every slice and every offset is read across
    the next step's calls, so every call is open and the chunks end at cut calls, each handing
    its live slice and offset to the next chunk. named=False: the h calls are written without a
    result (NameCallResults names them). kept=k: a slice `m` computed before step k is read after
    the run (by a loop): far, its chunk hands it on as well."""
    body = [
        "        t0 = pl.create_tensor([8, 8], dtype=pl.FP32)",
        "        t1 = pl.create_tensor([8, 8], dtype=pl.FP32)",
        "        h = pl.create_tensor([8, 8], dtype=pl.FP32)",
        "        c0 = (0 % 7) * 8",
        "        s0 = pl.tensor.slice(a, [8, 8], [0, 0])",
        "        t0 = self.add(s0, b, t0)",
    ]
    for n in range(1, steps + 1):
        src, dst = (n - 1) % 2, n % 2
        if n == kept:
            body.append("        m = pl.tensor.slice(a, [8, 8], [0, 8])")
        body += ["        c%d = (%d %% %d) * 8" % (n, n, K),
                 "        s%d = pl.tensor.slice(a, [8, 8], [0, c%d])" % (n, n - 1),
                 "        %sself.add(s%d, s%d, h)" % ("h = " if named else "", n, n - 1),
                 "        t%d = self.add(t%d, h, t%d)" % (dst, src, dst)]
    if kept:
        body += ["        for i in pl.range(1):",
                 "            o2 = self.add(m, b, pl.tensor.slice(out, [8, 8], [0, 8]))"]
    body += ["        o = self.add(t%d, b, pl.tensor.slice(out, [8, 8], [0, 0]))" % (steps % 2), "        return out"]
    return with_main("HaloChain", body)


def chain_expected(steps: int, a: np.ndarray, b: np.ndarray, out: np.ndarray, kept: int = 0) -> np.ndarray:
    """chain_source's result in NumPy."""
    sl = lambda n: a[:, 0:8] if n == 0 else a[:, 8 * ((n - 1) % K):8 * ((n - 1) % K) + 8]
    t = [sl(0) + b, None]
    for n in range(1, steps + 1):
        t[n % 2] = t[(n - 1) % 2] + (sl(n) + sl(n - 1))
    out = out.copy()
    out[:, 0:8] = t[steps % 2] + b
    if kept:
        out[:, 8:16] = a[:, 8:16] + b
    return out


@pytest.mark.parametrize("named, kept", [(True, 0), (False, 0), (True, 100)])
def test_a_halo_chain_is_chunked_at_cut_calls_handing_values_on(named, kept, tmp_path, monkeypatch):
    # Before cut_calls / carried_operands, a value live across every 64th call could not be held
    # in a chunk, and the failure cascaded back the chain: one-call chunks (1,000 calls: 9.3 s
    # and 409 MB to build, against 2.1 s and 158 MB now).
    steps = 150
    program, code, calls = generated(chain_source(steps, named, kept), "halo_chain.py", tmp_path, monkeypatch)
    assert calls == 2 * steps + 2 + (1 if kept else 0)
    chunks = code.count("[&]() PYPTO_CALL_CHUNK {")
    # about 64 calls each; kept: the last call, after the loop, in a chunk of its own
    assert 2 <= chunks <= calls // 64 + 1 + (1 if kept else 0), code
    handoffs = code.count("return handed_on{")
    # every chunk hands values on but the last of the chain (and the one after the loop)
    assert handoffs == chunks - (2 if kept else 1), code
    if kept:
        assert in_chunk(code, code.index("Tensor m = ")) and re.search(r"auto& m = chunk(_\d+)?\.v\d+;", code), code
    # each hands on the offset and the slice the next step reads, declared there as references
    first = code.index("return handed_on{")
    carried = code[first:code.index("};", first)].split("{", 1)[1].split(", ")
    assert len(carried) == 2 and carried[0].startswith("c") and carried[1].startswith("s"), carried
    assert "struct handed_on { int64_t v0; Tensor v1; };" in code   # members typed as the values
    assert "auto& %s = chunk.v1;" % carried[1] in code
    run_against(program, lambda a, b, out: chain_expected(steps, a, b, out, kept), seed=7)


def two_phase_source(steps: int) -> str:
    """An unrolled program in two phases: the first computes a slice s_n of `a` per step and adds
    it to an accumulator; the second adds every slice again, `steps` calls after it was read
    first (farther than a chunk's 64 calls: each slice is handed on by its chunk)."""
    body = [
        "        t0 = pl.create_tensor([8, 8], dtype=pl.FP32)",
        "        t1 = pl.create_tensor([8, 8], dtype=pl.FP32)",
        "        t0 = self.add(b, b, t0)",
    ]
    step = 0
    for phase in range(2):
        for n in range(steps):
            src, dst = step % 2, (step + 1) % 2
            if phase == 0:
                body += ["        c%d = (%d %% %d) * 8" % (n, n, K),
                         "        s%d = pl.tensor.slice(a, [8, 8], [0, c%d])" % (n, n)]
            body.append("        t%d = self.add(t%d, s%d, t%d)" % (dst, src, n, dst))
            step += 1
    body += ["        o = self.add(t%d, b, pl.tensor.slice(out, [8, 8], [0, 0]))" % (step % 2), "        return out"]
    return with_main("TwoPhase", body)


def test_slices_read_again_far_on_are_handed_on_by_their_chunks(tmp_path, monkeypatch):
    # Each slice is read by a call of the first phase and again 100 calls later. Before far
    # values, each printed between chunks in the -O2 function, and the calls between them got
    # one-call chunks: 3,000 such calls took 18 s and 847 MB to build (4.9 s and 273 MB now).
    steps = 100
    program, code, calls = generated(two_phase_source(steps), "two_phase.py", tmp_path, monkeypatch)
    assert calls == 2 * steps + 2
    assert code.count("[&]() PYPTO_CALL_CHUNK {") <= calls // 64 + 2, code
    for n in (0, 37, 63, 64, 99):
        assert in_chunk(code, code.index("Tensor s%d = " % n)), n
        assert re.search(r"\[\[maybe_unused\]\] auto& s%d = chunk(_\d+)?\.v\d+;" % n, code), n

    def want(a, b, out):
        t = 2 * b + 2 * sum(a[:, 8 * (n % K):8 * (n % K) + 8] for n in range(steps))
        out = out.copy()
        out[:, 0:8] = t + b
        return out
    run_against(program, want, seed=11)


def created_source(steps: int) -> str:
    """Each step writes a fresh tensor: `c_n = pl.create_tensor(...)`, then `c_n = c_{n-1} + s_n`
    into it (s_n a slice of `a`); the last is added into `out`."""
    body = ["        c0 = pl.create_tensor([8, 8], dtype=pl.FP32)", "        c0 = self.add(b, b, c0)"]
    for n in range(1, steps):
        body += ["        c%d = pl.create_tensor([8, 8], dtype=pl.FP32)" % n,
                 "        s%d = pl.tensor.slice(a, [8, 8], [0, %d])" % (n, 8 * (n % K)),
                 "        c%d = self.add(c%d, s%d, c%d)" % (n, n - 1, n, n)]
    body += ["        o = self.add(c%d, b, pl.tensor.slice(out, [8, 8], [0, 0]))" % (steps - 1), "        return out"]
    return with_main("Created", body)


def test_a_create_per_step_keeps_the_run_and_allocates_in_groups(tmp_path, monkeypatch):
    # The creates are allocated at the block's entry and print nothing where they stand: they no
    # longer end the runs of calls (1,000 such steps got 999 one-call chunks), and they are
    # allocated 64 to an alloc_tensors call (one call of 1,008 arguments cost g++ 2 s to build).
    steps = 150
    program, code, calls = generated(created_source(steps), "created.py", tmp_path, monkeypatch)
    assert calls == steps + 1
    assert code.count("[&]() PYPTO_CALL_CHUNK {") <= calls // 64 + 1, code
    assert code.count("= alloc_tensors(") == (steps + 63) // 64, code
    # each group's create infos in a block of their own (6,000 infos live together in one
    # function: 16 s to build, 6 s so): `TaskOutputTensors alloc_K; { infos; alloc_K = ... }`
    groups = re.findall(r"TaskOutputTensors (alloc_\d+);\n\s*\{\n(.*?)\n\s*(alloc_\d+) = alloc_tensors\(", code, re.S)
    assert [g[0] for g in groups] == [g[2] for g in groups] and len(groups) == (steps + 63) // 64, code
    assert sum(g[1].count("TensorCreateInfo ") for g in groups) == code.count("TensorCreateInfo ") == steps
    assert "const Tensor& c149 = " in code and ".get_ref(63);" in code and ".get_ref(64);" not in code

    def want(a, b, out):
        c = 2 * b + sum(a[:, 8 * (n % K):8 * (n % K) + 8] for n in range(1, steps))
        out = out.copy()
        out[:, 0:8] = c + b
        return out
    run_against(program, want, seed=5)
