"""Random straight-line programs for the chunking of calls with the values between them
(StampCallOperands, emit_statements.cpp): 70-160 kernel calls (not counting those in loops)
over views of the inputs, with values read at every distance — by the next call, by calls far
later, by a later loop; in half the programs mostly by the next few calls, so that chunks end at
cut calls and hand values on; some calls have no result — copies, index expressions, tiled writes into the output assembled in
place and read back, tensors created right before the call that writes them, submissions (into
an accumulator or a runtime-allocated output) waiting on earlier TaskIds. Each program is generated with a NumPy model of what it computes.

    source, model = random_program(seed)
    out = model(a, b, out0)      # what the compiled program must leave in `out`

Used by tests/python/test_chunked_operands_fuzz.py (a seeded smoke) and
scripts/fuzz_chunked_operands.py (`make fuzz`)."""

from __future__ import annotations

import random

import numpy as np

from test_orchestration_many_calls import program_head

K = 6   # 8-column blocks of `a`
S = 6   # 8-column blocks of `out` (block 0 takes the end's result)


def random_program(seed: int):
    """(source, model) of program `seed`: ``model(a, b, out)`` returns the expected `out`."""
    rng = random.Random(seed)
    # Half the programs read mostly the last few values (a halo: spans overlap, so the chunks
    # end at cut calls and hand values on); the others read at every distance.
    near, loops = (0.97, 0.0) if rng.random() < 0.5 else (0.75, 0.03)
    body, steps = [], []   # steps: the model, one closure per statement, run in order
    pool = []              # values a call may read: (name, eval(state) -> array)
    tids = []              # TaskIds a submission may wait on: (name, None)
    counter = [0]

    def fresh(prefix):
        counter[0] += 1
        return "%s%d" % (prefix, counter[0])

    def pick():
        """A value to read: mostly a recent one, sometimes an old one, an accumulator or b."""
        r = rng.random()
        if r < 0.15 or not pool:
            name = rng.choice(["t0", "t1", "b"])
            return name, (lambda st, n=name: st[n])
        if r < near:
            return pool[-1 - min(len(pool) - 1, int(rng.expovariate(1.0)))]
        return rng.choice(pool)

    def pick_id():
        """A TaskId to wait on: mostly a recent one, sometimes any."""
        if rng.random() < near:
            return tids[-1 - min(len(tids) - 1, int(rng.expovariate(1.0)))]
        return rng.choice(tids)

    def call(dst, x, y, indent="        "):
        # One call in ten without a result (it writes `dst` in place all the same): the pipeline
        # names it (NameCallResults), so values stay live across it inside a chunk.
        named = "" if rng.random() < 0.1 else "%s = " % dst
        body.append("%s%sself.add(%s, %s, %s)" % (indent, named, x[0], y[0], dst))
        steps.append(lambda st, d=dst, fx=x[1], fy=y[1]: st.__setitem__(d, fx(st) + fy(st)))

    calls, target = 0, rng.randint(70, 160)
    while calls < target:
        r = rng.random()
        if r < 0.35:   # a slice of `a`, its column literal or an index expression
            k = rng.randrange(K)
            name = fresh("s")
            if rng.random() < 0.4:
                c = fresh("c")
                body.append("        %s = (%d %% %d) * 8" % (c, k + K * rng.randrange(3), K))
                col = c
            else:
                col = str(8 * k)
            body.append("        %s = pl.tensor.slice(a, [8, 8], [0, %s])" % (name, col))
            pool.append((name, lambda st, k=k: st["a"][:, 8 * k:8 * k + 8]))
        elif r < 0.42 and pool:   # a copy
            src = rng.choice(pool)
            name = fresh("y")
            body.append("        %s = %s" % (name, src[0]))
            pool.append((name, src[1]))
        elif r < 0.52:   # a tiled write into out, assembled in place; the tile stays readable
            k = rng.randrange(1, S)
            name = fresh("w")
            x, y = pick(), pick()
            body.append("        %s = pl.tensor.slice(out, [8, 8], [0, %d])" % (name, 8 * k))
            body.append("        %s = self.add(%s, %s, %s)" % (name, x[0], y[0], name))
            body.append("        out = pl.tensor.assemble(out, %s, [0, %d])" % (name, 8 * k))

            def write(st, k=k, fx=x[1], fy=y[1]):
                st["out"][:, 8 * k:8 * k + 8] = fx(st) + fy(st)
            steps.append(write)
            pool.append((name, lambda st, k=k: st["out"][:, 8 * k:8 * k + 8].copy()))
            calls += 1
        elif r < 0.52 + loops:   # a loop of two calls
            body.append("        for i in pl.range(2):")
            dst, x = rng.choice(["t0", "t1"]), pick()
            for _ in range(2):
                call(dst, (dst, lambda st, d=dst: st[d]), x, indent="            ")
            del body[-1]   # one statement in the source, run twice by the model
            # (not counted: the generator chunks a block of 64 calls or more, its own calls)
        elif r < 0.60 + loops:   # a tensor created for the call that writes it (batched: the
            name = fresh("n")    # create prints nothing where it stands), readable later
            x, y = pick(), pick()
            body.append("        %s = pl.create_tensor([8, 8], dtype=pl.FP32)" % name)
            body.append("        %s = self.add(%s, %s, %s)" % (name, x[0], y[0], name))
            steps.append(lambda st, n=name, fx=x[1], fy=y[1]: st.__setitem__(n, fx(st) + fy(st)))
            pool.append((name, lambda st, n=name: st[n]))
            calls += 1
        elif r < 0.68 + loops:   # a submission: into an accumulator or a runtime-allocated
            x, y = pick(), pick()    # output, waiting on an earlier one's TaskId (any distance)
            tid = fresh("id")
            deps = ", deps=[%s]" % pick_id()[0] if tids and rng.random() < 0.7 else ""
            if rng.random() < 0.5:
                dst = rng.choice(["t0", "t1"])
                body.append("        %s, %s = pl.submit(self.add, %s, %s, %s%s)" % (dst, tid, x[0], y[0], dst, deps))
                steps.append(lambda st, d=dst, fx=x[1], fy=y[1]: st.__setitem__(d, fx(st) + fy(st)))
            else:
                dst = fresh("r")
                body.append("        %s, %s = pl.submit(self.add, %s, %s%s)" % (dst, tid, x[0], y[0], deps))
                steps.append(lambda st, d=dst, fx=x[1], fy=y[1]: st.__setitem__(d, fx(st) + fy(st)))
                pool.append((dst, lambda st, d=dst: st[d]))
            tids.append((tid, None))
            calls += 1
        else:
            call(rng.choice(["t0", "t1"]), pick(), pick())
            calls += 1
    if tids:   # the last submission waits on an early TaskId too
        body.append("        o, _ = pl.submit(self.add, t0, b, pl.tensor.slice(out, [8, 8], [0, 8]), deps=[%s])" % tids[0][0])
        steps.append(lambda st: st["out"].__setitem__((slice(None), slice(8, 16)), st["t0"] + st["b"]))
    body.append("        o = self.add(t0, t1, pl.tensor.slice(out, [8, 8], [0, 0]))")
    steps.append(lambda st: st["out"].__setitem__((slice(None), slice(0, 8)), st["t0"] + st["t1"]))
    body.append("        return out")
    head = program_head("ChunkFuzz%d" % seed) + [
        "    @pl.function(type=pl.FunctionType.Orchestration)",
        "    def main(self, a: pl.Tensor[[8, %d], pl.FP32], b: pl.Tensor[[8, 8], pl.FP32]," % (8 * K),
        "             out: pl.InOut[pl.Tensor[[8, %d], pl.FP32]]) -> pl.Tensor[[8, %d], pl.FP32]:" % (8 * S, 8 * S),
        "        t0 = pl.create_tensor([8, 8], dtype=pl.FP32)",
        "        t1 = pl.create_tensor([8, 8], dtype=pl.FP32)",
        "        t0 = self.add(b, b, t0)",
        "        t1 = self.add(b, t0, t1)",
    ]
    steps[:0] = [lambda st: st.__setitem__("t0", st["b"] + st["b"]),
                 lambda st: st.__setitem__("t1", st["b"] + st["t0"])]

    def model(a, b, out):
        st = {"a": a, "b": b, "out": out.copy()}
        for step in steps:
            step(st)
        return st["out"]

    return "\n".join(head + body) + "\n", model


def check(seed: int) -> str:
    """Compiles and runs program `seed` (-Werror) on random inputs and compares with its model;
    returns a one-line summary (raises AssertionError on a mismatch)."""
    import pypto
    import pypto.language as pl
    from pypto import codegen
    source, model = random_program(seed)
    program = pl.parse_program(source, "chunk_fuzz_%d.py" % seed)
    code = codegen.generate_orchestration(program, "main").code
    chunks = code.count("[&]() PYPTO_CALL_CHUNK {")
    assert chunks > 0, "program %d: no chunk\n%s" % (seed, source)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((8, 8 * K)).astype(np.float32)
    b = rng.standard_normal((8, 8)).astype(np.float32)
    out = rng.standard_normal((8, 8 * S)).astype(np.float32)
    want = model(a, b, out)
    compiled = pypto.compile(program)
    try:
        compiled(a, b, out)
    finally:
        compiled.close()
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3, err_msg="program %d:\n%s" % (seed, source))
    return "program %d: %d calls, %d chunks, %d handing values on" % (
        seed, code.count("rt_submit_aiv_task"), chunks, code.count("return handed_on{"))
