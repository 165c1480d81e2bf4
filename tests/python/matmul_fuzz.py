"""Differential fuzzing of the matmul family in kernels: random shapes (the register blocks' edges:
1..13 rows, ragged columns, K across block and chunk sizes), operands loaded from larger tensors at
random offsets (row strides wider than the tile: the kernels' strided and packed paths), compared
exactly with NumPy. Exact because the inputs are small integers: products and their sums stay
integers below 2^24 (an FP16 or INT8 result, matmul_bias's, is the exact value rounded or wrapped).

Each case is one kernel of one of these forms, on FP32, FP16 or INT8 operands, typed as the
reference types them (result_dtype):
- `pl.matmul(a, b)`, `pl.matmul_acc(acc, a, b)` (acc loaded from a tensor of the result dtype),
  `pl.matmul_bias(a, b, bias)` (bias [1, N]), their gemv forms (one row);
- a K-tiled accumulation: `acc = pl.matmul(a0, b0)`, then `acc = pl.matmul_acc(acc, ak, bk)` in a
  `pl.range` loop over K chunks (the loop-carried accumulator the kernel passes update in place);
- on tensors: `pl.matmul` / `pl.matmul_acc` of `pl.tensor.slice`s, `pl.assemble` into the output
  (ConvertTensorToTileOps lowers the slices to loads, anchor_features.md §9);
- `pl.matmul` of operands loaded (or sliced) with valid shapes [vm, vka] and [vkb, vn]: the result's
  valid box [vm, vn] is the product over the common valid K (min(vka, vkb)), and only it is stored;
- batched: `pl.batch_matmul` / `pl.tile.batch_matmul_acc` of rank-3/4 tiles (row blocks of a 2-D
  tensor loaded and reshaped), and `pl.batch_matmul` / `pl.matmul_acc` of rank-3/4 `pl.tensor.slice`s
  at batch offsets; batch dims broadcast as NumPy's (a dim of 1, a rank-2 operand).
The result is stored at a random offset into an output larger than it, prefilled with a sentinel
that must survive outside the stored box. Three cases per program (three kernels, one task each).

    findings = check(seed=3)      # [] when every kernel agrees with NumPy

Used by tests/python/test_matmul_fuzz.py (a seeded smoke) and scripts/fuzz_exprs.py --kind matmul.
"""
import random

import numpy as np

EDGE = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 15, 16, 17, 31, 32, 33, 48, 64, 65]
KINDS = ["matmul", "matmul_acc", "matmul_bias", "gemv", "gemv_acc", "gemv_bias", "k_loop", "tensor_matmul",
         "tensor_matmul_acc", "matmul_valid", "tensor_matmul_valid", "batch_matmul", "batch_matmul_acc",
         "tensor_batch_matmul", "tensor_batch_matmul_acc"]
BATCH = ("batch_matmul", "batch_matmul_acc", "tensor_batch_matmul", "tensor_batch_matmul_acc")
NP = {"FP32": np.float32, "FP16": np.float16, "INT8": np.int8, "INT32": np.int32}
DTYPES = ["FP32", "FP16", "INT8"]   # operand dtypes


def result_dtype(kind: str, dtype: str) -> str:
    """reference_ops.md §2: a product is FP32 for float operands and INT32 for integer ones
    (matmul, gemv, batch_matmul and their K loop); *_acc the accumulator's, which must be that
    dtype; *_bias the operands' (the bias too)."""
    if kind.endswith("_bias"):
        return dtype
    return "FP32" if dtype.startswith("FP") else "INT32"


def e_dtype(c) -> str:
    """The dtype of the tensor e: the accumulator's, or the bias's (the operands')."""
    return c["dtype"] if c["kind"].endswith("_bias") else c["rdt"]
SENTINEL = 77
CASES = 3


def _case(rng: random.Random, idx: int):
    kind = rng.choice(KINDS)
    dtype = rng.choice(DTYPES)
    m = 1 if kind.startswith("gemv") else rng.choice(EDGE)
    k, n = rng.choice(EDGE), rng.choice(EDGE)
    chunks = rng.randint(2, 4) if kind == "k_loop" else 1
    kt = k * chunks                                     # the whole K (k per chunk in k_loop)
    pads = [rng.choice([0, 0, 1, 3, 16, 128]) for _ in range(6)]
    ra, ca, rb, cb, ro, co = [rng.randint(0, p) for p in pads]
    # *_valid: the operands loaded with valid shapes [vm, vka] / [vkb, vn] (0, the whole extent or between)
    vm, vka, vkb, vn = (rng.choice([0, d, d, rng.randint(1, d), rng.randint(1, d)]) for d in (m, kt, kt, n))
    c = dict(idx=idx, kind=kind, valid=(vm, vka, vkb, vn), dtype=dtype, rdt=result_dtype(kind, dtype), m=m, k=k, n=n,
             chunks=chunks, kt=kt, a_batch=(), b_batch=(), batch=(), a_boff=(), b_boff=(), o_boff=(),
             a_shape=(m + ra + pads[0] % 3, kt + ca + pads[1] % 5), a_off=(ra, ca),
             b_shape=(kt + rb + pads[2] % 3, n + cb + pads[3] % 5), b_off=(rb, cb),
             o_shape=(m + ro + pads[4] % 3, n + co + pads[5] % 5), o_off=(ro, co), e_shape=(m, n))
    if kind in BATCH:
        _batch_dims(rng, c)
    return c


def _batch_dims(rng: random.Random, c):
    """Batch dims (rank 3 or 4) for a batch kind: the result's batch shape and each operand's (a
    dim of 1 broadcast, or none: a rank-2 operand). On tiles (kernel loads are 2-D) an operand's
    batch matrices are consecutive row blocks of a 2-D tensor, loaded whole and reshaped; on
    tensors the operands are N-D, sliced at batch offsets."""
    acc = c["kind"].endswith("_acc")
    batch = tuple(rng.choice([1, 2, 3]) for _ in range(rng.choice([1, 2])))
    def operand():
        if not acc and rng.random() < 0.2:
            return ()
        return tuple(d if rng.random() < 0.7 else 1 for d in batch)
    a_b, b_b = operand(), operand()
    if not a_b and not b_b:
        a_b = batch
    batch = tuple(max(p, q) for p, q in zip(a_b or (1,) * len(batch), b_b or (1,) * len(batch)))
    c.update(a_batch=a_b, b_batch=b_b, batch=batch, e_shape=batch + (c["m"], c["n"]))
    if c["kind"].startswith("tensor_"):
        boff = lambda dims: tuple(rng.randint(0, 1) for _ in dims)   # noqa: E731
        c.update(a_boff=boff(a_b), b_boff=boff(b_b), o_boff=boff(batch))
        for name, dims in (("a", a_b), ("b", b_b), ("o", batch)):
            c[name + "_shape"] = tuple(d + o for d, o in zip(dims, c[name + "_boff"])) + c[name + "_shape"]
    else:
        rows = lambda dims: int(np.prod(dims, dtype=np.int64)) if dims else 1   # noqa: E731
        for name, dims, h in (("a", a_b, c["m"]), ("b", b_b, c["kt"]), ("o", batch, c["m"])):
            shape = c[name + "_shape"]
            c[name + "_shape"] = (shape[0] + (rows(dims) - 1) * h, shape[1])
        c["e_shape"] = (rows(batch) * c["m"], c["n"])


def _batch_body(c):
    m, n, kt = c["m"], c["n"], c["kt"]
    (ra, ca), (rb, cb), (ro, co) = c["a_off"], c["b_off"], c["o_off"]
    a_b, b_b, batch = c["a_batch"], c["b_batch"], c["batch"]
    if c["kind"].startswith("tensor_"):   # N-D tensor operands, lowered to per-matrix loads
        body = [f"ta = pl.tensor.slice(a, {list(a_b + (m, kt))}, {list(c['a_boff'] + (ra, ca))})",
                f"tb = pl.tensor.slice(b, {list(b_b + (kt, n))}, {list(c['b_boff'] + (rb, cb))})",
                "acc = pl.matmul_acc(e, ta, tb)" if c["kind"].endswith("_acc") else "acc = pl.batch_matmul(ta, tb)"]
        return body + [f"out = pl.assemble(out, acc, {list(c['o_boff'] + (ro, co))})", "return out"]
    rows = lambda dims, h: h * int(np.prod(dims, dtype=np.int64))   # noqa: E731
    def operand(name, t, dims, h, w, r0, c0):
        load = f"pl.load({t}, [{r0}, {c0}], [{rows(dims, h)}, {w}])"
        return f"{name} = pl.tile.reshape({load}, {list(dims + (h, w))})" if dims else f"{name} = {load}"
    body = [operand("ta", "a", a_b, m, kt, ra, ca), operand("tb", "b", b_b, kt, n, rb, cb)]
    if c["kind"].endswith("_acc"):
        body += [operand("te", "e", batch, m, n, 0, 0), "acc = pl.tile.batch_matmul_acc(te, ta, tb)"]
    else:
        body += ["acc = pl.batch_matmul(ta, tb)"]
    return body + [f"out = pl.store(pl.tile.reshape(acc, [{rows(batch, m)}, {n}]), [{ro}, {co}], out)", "return out"]


def _kernel_text(c):
    i, dt, rdt, edt = c["idx"], c["dtype"], c["rdt"], e_dtype(c)
    m, k, n, kt = c["m"], c["k"], c["n"], c["kt"]
    (ra, ca), (rb, cb), (ro, co) = c["a_off"], c["b_off"], c["o_off"]
    sig = (f"    @pl.function(type=pl.FunctionType.InCore)\n"
           f"    def k{i}(self, a: pl.Tensor[{list(c['a_shape'])}, pl.{dt}], b: pl.Tensor[{list(c['b_shape'])}, pl.{dt}],\n"
           f"            e: pl.Tensor[{list(c['e_shape'])}, pl.{edt}], out: pl.Out[pl.Tensor[{list(c['o_shape'])}, pl.{rdt}]]"
           f") -> pl.Tensor[{list(c['o_shape'])}, pl.{rdt}]:\n")
    body = []
    kind = c["kind"]
    vm, vka, vkb, vn = c["valid"]
    if kind in BATCH:
        body += _batch_body(c)
        return sig + "".join("        " + ln + "\n" for ln in body)
    if kind.startswith("tensor_"):   # on tensors: the slices lowered to loads (anchor_features.md §9)
        va, vb = ((f", valid_shape=[{vm}, {vka}]", f", valid_shape=[{vkb}, {vn}]") if kind.endswith("_valid")
                  else ("", ""))
        body += [f"ta = pl.tensor.slice(a, [{m}, {kt}], [{ra}, {ca}]{va})",
                 f"tb = pl.tensor.slice(b, [{kt}, {n}], [{rb}, {cb}]{vb})"]
        body += (["acc = pl.matmul_acc(e, ta, tb)"] if kind.endswith("_acc") else ["acc = pl.matmul(ta, tb)"])
        body += [f"out = pl.assemble(out, acc, [{ro}, {co}])", "return out"]
        return sig + "".join("        " + ln + "\n" for ln in body)
    if kind == "k_loop":
        body += [f"ta = pl.load(a, [{ra}, {ca}], [{m}, {k}])",
                 f"tb = pl.load(b, [{rb}, {cb}], [{k}, {n}])",
                 "acc = pl.matmul(ta, tb)",
                 f"for j in pl.range(1, {c['chunks']}):",
                 f"    tak = pl.load(a, [{ra}, {ca} + j * {k}], [{m}, {k}])",
                 f"    tbk = pl.load(b, [{rb} + j * {k}, {cb}], [{k}, {n}])",
                 "    acc = pl.matmul_acc(acc, tak, tbk)"]
    elif kind == "matmul_valid":
        body += [f"ta = pl.load(a, [{ra}, {ca}], [{m}, {kt}], [{vm}, {vka}])",
                 f"tb = pl.load(b, [{rb}, {cb}], [{kt}, {n}], [{vkb}, {vn}])",
                 "acc = pl.matmul(ta, tb)"]
    else:
        op = kind
        body += [f"ta = pl.load(a, [{ra}, {ca}], [{m}, {kt}])",
                 f"tb = pl.load(b, [{rb}, {cb}], [{kt}, {n}])"]
        if kind.endswith("_acc"):
            body += [f"te = pl.load(e, [0, 0], [{m}, {n}])", f"acc = pl.{op}(te, ta, tb)"]
        elif kind.endswith("_bias"):
            body += [f"tbias = pl.load(e, [0, 0], [1, {n}])", f"acc = pl.{op}(ta, tb, tbias)"]
        else:
            body += [f"acc = pl.{op}(ta, tb)"]
    body += [f"out = pl.store(acc, [{ro}, {co}], out)", "return out"]
    return sig + "".join("        " + ln + "\n" for ln in body)


def make_program(seed: int):
    """(DSL text, cases) of program `seed`."""
    rng = random.Random(seed)
    cases = [_case(rng, i) for i in range(CASES)]
    kernels = "\n".join(_kernel_text(c) for c in cases)
    params, calls = [], []
    for c in cases:
        i, dt, rdt = c["idx"], c["dtype"], c["rdt"]
        params.append(f"a{i}: pl.Tensor[{list(c['a_shape'])}, pl.{dt}], b{i}: pl.Tensor[{list(c['b_shape'])}, pl.{dt}], "
                      f"e{i}: pl.Tensor[{list(c['e_shape'])}, pl.{e_dtype(c)}], "
                      f"out{i}: pl.Out[pl.Tensor[{list(c['o_shape'])}, pl.{rdt}]]")
        calls.append(f"        out{i} = self.k{i}(a{i}, b{i}, e{i}, out{i})\n")
    rets = ", ".join(f"out{c['idx']}" for c in cases)
    ret_types = ", ".join(f"pl.Tensor[{list(c['o_shape'])}, pl.{c['rdt']}]" for c in cases)
    text = ("import pypto.language as pl\n\n\n@pl.program\nclass Matmuls:\n" + kernels + "\n"
            "    @pl.function(type=pl.FunctionType.Orchestration)\n"
            f"    def main(self, {', '.join(params)}) -> tuple[{ret_types}]:\n" + "".join(calls) +
            f"        return {rets}\n")
    return text, cases


def inputs(c, seed: int):
    """The case's a, b, e (acc or bias source) and prefilled out arrays."""
    rng = np.random.default_rng(seed)
    nt = NP[c["dtype"]]
    a = rng.integers(-3, 4, c["a_shape"]).astype(nt)
    b = rng.integers(-3, 4, c["b_shape"]).astype(nt)
    e = rng.integers(-50, 51, c["e_shape"]).astype(NP[e_dtype(c)])
    out = np.full(c["o_shape"], SENTINEL, NP[c["rdt"]])
    return a, b, e, out


def _batch_reference(c, a, b, e, out):
    m, n, kt = c["m"], c["n"], c["kt"]
    (ra, ca), (rb, cb), (ro, co) = c["a_off"], c["b_off"], c["o_off"]
    tensors = c["kind"].startswith("tensor_")
    def operand(x, boff, dims, r0, c0, h, w):
        if tensors:
            return x[tuple(slice(o, o + d) for o, d in zip(boff, dims)) + (slice(r0, r0 + h), slice(c0, c0 + w))]
        rows = h * int(np.prod(dims, dtype=np.int64))
        return x[r0:r0 + rows, c0:c0 + w].reshape(dims + (h, w))
    prod = np.matmul(operand(a, c["a_boff"], c["a_batch"], ra, ca, m, kt).astype(np.int64),
                     operand(b, c["b_boff"], c["b_batch"], rb, cb, kt, n).astype(np.int64))
    if c["kind"].endswith("_acc"):
        prod = prod + e.reshape(c["batch"] + (m, n)).astype(np.int64)
    prod = np.broadcast_to(prod, c["batch"] + (m, n)).astype(out.dtype)
    want = out.copy()
    if tensors:
        want[tuple(slice(o, o + d) for o, d in zip(c["o_boff"], c["batch"])) + (slice(ro, ro + m), slice(co, co + n))] = prod
    else:
        want[ro:ro + prod.size // n, co:co + n] = prod.reshape(-1, n)
    return want


def reference(c, a, b, e, out):
    if c["kind"] in BATCH:
        return _batch_reference(c, a, b, e, out)
    m, n, kt = c["m"], c["n"], c["kt"]
    (ra, ca), (rb, cb), (ro, co) = c["a_off"], c["b_off"], c["o_off"]
    if c["kind"].endswith("_valid"):   # the valid rows of a and columns of b, over the common valid K
        vm, vka, vkb, vn = c["valid"]
        m, n, kt = vm, vn, min(vka, vkb)
    prod = a[ra:ra + m, ca:ca + kt].astype(np.int64) @ b[rb:rb + kt, cb:cb + n].astype(np.int64)
    if c["kind"].endswith("_acc"):
        prod = prod + e.astype(np.int64)
    elif c["kind"].endswith("_bias"):
        prod = prod + e[:1].astype(np.int64)
    want = out.copy()
    if want.dtype.kind == "i":   # an INT8 matmul_bias is INT8: the exact value wrapped
        info = np.iinfo(want.dtype)
        prod = (prod - int(info.min)) % (1 << info.bits) + int(info.min)
    want[ro:ro + m, co:co + n] = prod.astype(want.dtype)   # FP16: the exact value rounded once
    return want


def check(seed: int):
    """Builds program `seed`, runs it on one draw and returns the disagreements with NumPy."""
    import pypto
    import pypto.language as pl
    text, cases = make_program(seed)
    prog = pypto.compile(pl.parse_program(text, "matmuls_%d.py" % seed))
    args, wants = [], []
    for c in cases:
        a, b, e, out = inputs(c, seed * 10 + c["idx"])
        args += [a, b, e, out]
        wants.append(reference(c, a, b, e, out))
    prog(*args)
    findings = []
    for c, want in zip(cases, wants):
        got = args[4 * c["idx"] + 3]
        bad = got != want
        if bad.any():
            i = tuple(int(v) for v in np.argwhere(bad)[0])
            findings.append("seed %d kernel k%d (%s %s m=%d k=%d n=%d chunks=%d): %d element(s) differ, first at %s: "
                            "got %r, NumPy %r" % (seed, c["idx"], c["kind"], c["dtype"], c["m"], c["kt"], c["n"],
                                                  c["chunks"], int(bad.sum()), i, got[i], want[i]))
    return findings
