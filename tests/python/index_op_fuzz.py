"""Differential fuzzing of the index ops in kernels (reference_ops.md §12; docs/kernels.md "gather /
scatter", docs/dsl.md "pl.mscatter", "pl.tile.gather_row"): random chains of data movement by
index, compared bit for bit with a NumPy model, and bad indices that must fail the run at the
right DSL line without writing outside a tensor.

Seed k's dtype is DTYPES[k % 6] (FP32, INT32, FP16, INT16, INT8, BF16) and its tiles are [R, C]
(SHAPES). The kernel loads a source tile ta = a [RA, CA] and data tiles from x / y, then each
statement reads earlier tiles:
- t = pl.tile.gather(src, idx): src is ta or a work tile (FP32 / INT32 / FP16 / INT16 only);
- t = pl.tile.scatter(dst, src, idx): INT16 indices (a pl.cast) for a 1- or 2-byte dtype;
- t = pl.tile.scatter_update(dst, rows, src) with a [R, 1] or [1, R] row-index tile;
- o = pl.mscatter(src, idx, o) into an InOut tensor o that the orchestration passes as a window
  of a larger tensor (strided rows, an offset; FP32 / INT32 / FP16 / INT16 only);
- t = pl.tile.gather_row(dst, a, [do0, do1], [so0, so1], [r, c], transpose=) with constant or
  run-time offsets (q0..q3); dst is updated in place as well (docs/dsl.md);
- a fresh load of x or y.
An index operand is built from the INT32 input ix, one [R, C] block per use: loaded as it is (the
caller draws it in range), through pl.tile.rems(block, n) (the caller draws it in [-3n, 3n]),
or through a gather of one index tile by another. A tile that a scatter wrote in place is not read
again (its buffer is the scatter's). A few tiles are stored into row blocks of out.

Seeds 1, 5, 9, ... run a third draw in which one index that an op reads as it is, or one run-time
gather_row offset, is out of range: the run must fail, naming that op's DSL line, the bad value
and the range; o's enclosing tensor must hold what the mscatters before that op wrote (a failing
mscatter writes nothing), and out its caller's values (the stores come last).

    findings = check(seed=3)      # [] when the kernel agrees with the model

Used by tests/python/test_index_op_fuzz.py (a seeded smoke) and scripts/fuzz_exprs.py
(--kind index).
"""
import random
import re

import numpy as np

DTYPES = ["FP32", "INT32", "FP16", "INT16", "INT8", "BF16"]
_BITS = {"FP32": np.uint32, "INT32": np.uint32, "FP16": np.uint16, "INT16": np.uint16, "INT8": np.uint8,
         "BF16": np.uint16}
# What a program takes for each dtype (BF16: its bits as uint16).
_ARRAY = {"FP32": np.float32, "INT32": np.int32, "FP16": np.float16, "INT16": np.int16, "INT8": np.int8,
          "BF16": np.uint16}
# (exponent mask, mantissa mask) of the float dtypes: a NaN may come back with another payload.
_NAN_MASKS = {"FP32": (0x7F800000, 0x007FFFFF), "FP16": (0x7C00, 0x03FF), "BF16": (0x7F80, 0x007F)}
GATHERABLE = {"FP32", "INT32", "FP16", "INT16"}   # gather sources and mscatter tiles
SHAPES = [(1, 1), (1, 8), (2, 5), (4, 4), (3, 16), (8, 3), (5, 7), (6, 1)]
A_SHAPES = [(1, 3), (2, 2), (3, 8), (5, 5), (7, 2), (4, 17)]
STATEMENTS = 9
STORED = 3
O_PAD = (2, 3)   # o is a window of an [RO + 2, CO + 3] tensor at offset (1, 2)
BAD_SEED = 4     # seeds k with k % BAD_SEED == 1 run the draw with a bad index


class Case:
    """A generated program: its text, the shapes and the steps the model replays."""

    def __init__(self, seed):
        self.seed = seed
        self.dtype = DTYPES[seed % len(DTYPES)]
        rng = random.Random(seed)
        self.rng = rng
        self.r, self.c = rng.choice(SHAPES)
        self.ra, self.ca = rng.choice(A_SHAPES)
        self.ro, self.co = rng.choice(A_SHAPES)
        self.blocks = []     # per index block: ("raw", n) ix values in [0, n), ("any", n) ix values in
        #                      [-3n, 3n], ("rows", R) iu values in [0, R)
        self.q = []          # per run-time offset: (lo, hi) its in-range values
        self.steps = []      # model steps, one per statement
        self.lines = []      # kernel body lines
        self.injectable = []  # (kind, index, statement): a raw block or run-time offset an op reads as it is


def _new_block(case, kind, n):
    case.blocks.append((kind, n))
    return len(case.blocks) - 1


def _index_expr(case, n, stmt, depth=0):
    """An INT32 [R, C] index tile with values in [0, n): (text, step tree)."""
    r, c = case.r, case.c
    pick = case.rng.random()
    if depth == 0 and pick < 0.2:
        inner_text, inner = _index_expr(case, n, stmt, 1)
        perm_text, perm = _index_expr(case, r * c, stmt, 1)
        return "pl.tile.gather(%s, %s)" % (inner_text, perm_text), ("gather", inner, perm, r * c)
    if pick < 0.6:
        b = _new_block(case, "raw", n)
        case.injectable.append(("block", b, stmt, n))
        return "pl.load(ix, [%d, 0], [%d, %d])" % (b * r, r, c), ("block", b)
    b = _new_block(case, "any", n)
    return "pl.tile.rems(pl.load(ix, [%d, 0], [%d, %d]), %d)" % (b * r, r, c, n), ("rems", b, n)


def _row_index_expr(case, stmt):
    """A [R, 1] or [1, R] INT32 row-index tile of rows in [0, R), from the iu input."""
    b = _new_block(case, "rows", case.r)
    case.injectable.append(("block", b, stmt, case.r))
    return "pl.load(iu, [%d, 0], [%d, 1])" % (b * case.r, case.r), ("rows", b)


def _offset(case, lo, hi, stmt):
    """A gather_row offset in [lo, hi]: a literal, or a run-time scalar (q0..q3) at times."""
    if len(case.q) < 4 and case.rng.random() < 0.4:
        case.q.append((lo, hi))
        k = len(case.q) - 1
        case.injectable.append(("q", k, stmt, None))
        return "q%d" % k, ("q", k)
    v = case.rng.randint(lo, hi)
    return str(v), ("lit", v)


def _narrow(dtype):
    """A 1- or 2-byte dtype: scatter takes INT16 indices."""
    return np.dtype(_BITS[dtype]).itemsize <= 2


def make_case(seed: int) -> Case:
    case = Case(seed)
    rng, r, c, dtype = case.rng, case.r, case.c, case.dtype
    narrow = _narrow(dtype)
    live = []          # work tiles that may be read: index into steps
    case.lines.append("ta = pl.load(a, [0, 0], [%d, %d])" % (case.ra, case.ca))
    for k in range(2):
        case.lines.append("t%d = pl.load(%s, [0, 0], [%d, %d])" % (k, "xy"[k], r, c))
        case.steps.append(("load", k))
        live.append(k)
    has_mscatter = False
    for _ in range(STATEMENTS):
        t = len(case.steps)
        stmt = len(case.lines)
        kinds = ["scatter", "scatter_update", "gather_row", "load"]
        if dtype in GATHERABLE:
            kinds += ["gather", "gather", "mscatter"]
        kind = rng.choice(kinds)
        if kind == "gather":
            src = rng.choice(["a"] + live)
            n = case.ra * case.ca if src == "a" else r * c
            text, idx = _index_expr(case, n, stmt)
            name = "ta" if src == "a" else "t%d" % src
            case.lines.append("t%d = pl.tile.gather(%s, %s)" % (t, name, text))
            case.steps.append(("gather", src, idx))
        elif kind == "scatter":
            dst, src = rng.choice(live), rng.choice(live)
            text, idx = _index_expr(case, r * c, stmt)
            if narrow:
                text = "pl.cast(%s, pl.INT16)" % text
            case.lines.append("t%d = pl.tile.scatter(t%d, t%d, %s)" % (t, dst, src, text))
            case.steps.append(("scatter", dst, src, idx))
            live.remove(dst)
        elif kind == "scatter_update":
            dst, src = rng.choice(live), rng.choice(live)
            text, idx = _row_index_expr(case, stmt)
            if rng.random() < 0.5 and r > 1:   # the same rows as a [1, R] tile
                text = "pl.tile.reshape(%s, [1, %d])" % (text, r)
            case.lines.append("t%d = pl.tile.scatter_update(t%d, %s, t%d)" % (t, dst, text, src))
            case.steps.append(("scatter_update", dst, src, idx))
            live.remove(dst)
        elif kind == "mscatter":
            src = rng.choice(live)
            text, idx = _index_expr(case, case.ro * case.co, stmt)
            case.lines.append("o = pl.mscatter(t%d, %s, o)" % (src, text))
            case.steps.append(("mscatter", src, idx))
            has_mscatter = True
            continue
        elif kind == "gather_row":
            dst = rng.choice(live)
            transpose = rng.random() < 0.3
            br = rng.randint(1, min(case.ra, c if transpose else r))
            bc = rng.randint(1, min(case.ca, r if transpose else c))
            pr, pc = (bc, br) if transpose else (br, bc)
            d0, d0s = _offset(case, 0, r - pr, stmt)
            d1, d1s = _offset(case, 0, c - pc, stmt)
            s0, s0s = _offset(case, 0, case.ra - br, stmt)
            s1, s1s = _offset(case, 0, case.ca - bc, stmt)
            case.lines.append("t%d = pl.tile.gather_row(t%d, a, [%s, %s], [%s, %s], [%d, %d]%s)"
                              % (t, dst, d0, d1, s0, s1, br, bc, ", transpose=True" if transpose else ""))
            case.steps.append(("gather_row", dst, (d0s, d1s, s0s, s1s), (br, bc), transpose))
        else:
            which = rng.randint(0, 1)
            case.lines.append("t%d = pl.load(%s, [0, 0], [%d, %d])" % (t, "xy"[which], r, c))
            case.steps.append(("load", which))
        live.append(t)
    stored = [rng.choice(live) for _ in range(STORED)]
    for i, t in enumerate(stored):
        case.lines.append("out = pl.store(t%d, [%d, 0], out)" % (t, i * r))
    case.stored = stored
    case.has_mscatter = has_mscatter
    return case


_PROGRAM = '''import pypto.language as pl

@pl.program
class IndexOps:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[{ra}, {ca}], pl.{dtype}], x: pl.Tensor[[{r}, {c}], pl.{dtype}],
          y: pl.Tensor[[{r}, {c}], pl.{dtype}], ix: pl.Tensor[[{nix}, {c}], pl.INT32],
          iu: pl.Tensor[[{niu}, 1], pl.INT32], q0: pl.Scalar[pl.INDEX], q1: pl.Scalar[pl.INDEX],
          q2: pl.Scalar[pl.INDEX], q3: pl.Scalar[pl.INDEX], o: pl.InOut[pl.Tensor[[{ro}, {co}], pl.{dtype}]],
          out: pl.Out[pl.Tensor[[{rows}, {c}], pl.{dtype}]]) -> pl.Tensor[[{rows}, {c}], pl.{dtype}]:
{body}
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{ra}, {ca}], pl.{dtype}], x: pl.Tensor[[{r}, {c}], pl.{dtype}],
             y: pl.Tensor[[{r}, {c}], pl.{dtype}], ix: pl.Tensor[[{nix}, {c}], pl.INT32],
             iu: pl.Tensor[[{niu}, 1], pl.INT32], q0: pl.Scalar[pl.INDEX], q1: pl.Scalar[pl.INDEX],
             q2: pl.Scalar[pl.INDEX], q3: pl.Scalar[pl.INDEX], ob: pl.InOut[pl.Tensor[[{hob}, {wob}], pl.{dtype}]],
             out: pl.Out[pl.Tensor[[{rows}, {c}], pl.{dtype}]]) -> pl.Tensor[[{rows}, {c}], pl.{dtype}]:
        out = self.k(a, x, y, ix, iu, q0, q1, q2, q3, pl.slice(ob, [{ro}, {co}], [1, 2]), out)
        return out
'''
FIRST_BODY_LINE = 11   # the line of the kernel body's first statement in _PROGRAM


def program_text(case: Case) -> str:
    nb = max(1, len(case.blocks))
    return _PROGRAM.format(ra=case.ra, ca=case.ca, r=case.r, c=case.c, dtype=case.dtype, nix=nb * case.r,
                           niu=nb * case.r, ro=case.ro, co=case.co, hob=case.ro + O_PAD[0],
                           wob=case.co + O_PAD[1], rows=STORED * case.r,
                           body="\n".join("        " + line for line in case.lines))


def draw_inputs(case: Case, draw: int):
    """The inputs of one run, as bits (the model's view) and the run-time offsets."""
    rng = np.random.default_rng(case.seed * 3 + draw)
    bits = _BITS[case.dtype]
    width = 8 * np.dtype(bits).itemsize
    data = lambda shape: rng.integers(0, 1 << width, shape, dtype=np.uint64).astype(bits)   # noqa: E731
    r, c = case.r, case.c
    nb = max(1, len(case.blocks))
    ix = np.zeros((nb * r, c), np.int32)
    iu = np.zeros((nb * r, 1), np.int32)
    for b, (kind, n) in enumerate(case.blocks):
        if kind == "rows":
            iu[b * r:(b + 1) * r] = rng.integers(0, n, (r, 1))
        else:
            lo, hi = (0, n) if kind == "raw" else (-3 * n, 3 * n + 1)
            ix[b * r:(b + 1) * r] = rng.integers(lo, hi, (r, c))
    q = [int(rng.integers(lo, hi + 1)) for lo, hi in case.q] + [0] * (4 - len(case.q))
    return {"a": data((case.ra, case.ca)), "x": data((r, c)), "y": data((r, c)), "ix": ix, "iu": iu, "q": q,
            "ob": data((case.ro + O_PAD[0], case.co + O_PAD[1])), "out": data((STORED * r, c))}


class BadIndex(Exception):
    """The model's run failure: an index or offset out of range at a statement."""

    def __init__(self, stmt, value, bound):
        super().__init__(stmt, value, bound)
        self.stmt, self.value, self.bound = stmt, value, bound


def _eval_index(case, tree, inp, stmt):
    r, c = case.r, case.c
    kind = tree[0]
    if kind in ("block", "rows"):
        src = inp["ix"] if kind == "block" else inp["iu"]
        return src[tree[1] * r:(tree[1] + 1) * r].astype(np.int64)
    if kind == "rems":
        return np.mod(inp["ix"][tree[1] * r:(tree[1] + 1) * r].astype(np.int64), tree[2])
    _, inner, perm, n = tree
    values, flat = _eval_index(case, inner, inp, stmt), _eval_index(case, perm, inp, stmt)
    _check(flat, n, stmt)
    return values.reshape(-1)[flat]


def _check(idx, n, stmt):
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        raise BadIndex(stmt, int(idx.reshape(-1)[np.argmax(bad.reshape(-1))]), n)


def run_model(case: Case, inp):
    """(out, ob) after the kernel, as bits; raises BadIndex where the run must fail, its `ob` what
    the tensor holds then (the mscatters before the failing op wrote, the failing one did not)."""
    ob = inp["ob"].copy()
    try:
        return _replay(case, inp, ob), ob
    except BadIndex as e:
        e.ob = ob
        raise


def _replay(case: Case, inp, ob):
    vals = {}
    ta = inp["a"]
    o = ob[1:1 + case.ro, 2:2 + case.co]
    for t, step in enumerate(case.steps):
        stmt = t + 1   # step t is case.lines[t + 1] (line 0 loads ta)
        kind = step[0]
        if kind == "load":
            vals[t] = inp["xy"[step[1]]].copy()
        elif kind == "gather":
            src = ta if step[1] == "a" else vals[step[1]]
            idx = _eval_index(case, step[2], inp, stmt)
            _check(idx, src.size, stmt)
            vals[t] = src.reshape(-1)[idx].reshape(case.r, case.c)
        elif kind == "scatter":
            _, dst, src, tree = step
            idx = _eval_index(case, tree, inp, stmt)
            if _narrow(case.dtype):   # the indices went through pl.cast(..., pl.INT16): they wrap
                idx = idx.astype(np.int16).astype(np.int64)
            _check(idx, case.r * case.c, stmt)
            res = vals[dst].copy().reshape(-1)
            for k, i in enumerate(idx.reshape(-1)):
                res[i] = vals[src].reshape(-1)[k]
            vals[t] = res.reshape(case.r, case.c)
        elif kind == "scatter_update":
            _, dst, src, tree = step
            rows = _eval_index(case, tree, inp, stmt).reshape(-1)
            _check(rows, case.r, stmt)
            res = vals[dst].copy()
            for k, i in enumerate(rows):
                res[i] = vals[src][k]
            vals[t] = res
        elif kind == "mscatter":
            _, src, tree = step
            idx = _eval_index(case, tree, inp, stmt)
            _check(idx, case.ro * case.co, stmt)
            flat = o.reshape(-1).copy()
            for k, i in enumerate(idx.reshape(-1)):
                flat[i] = vals[src].reshape(-1)[k]
            o[...] = flat.reshape(case.ro, case.co)
        elif kind == "gather_row":
            _, dst, offs, (br, bc), transpose = step
            d0, d1, s0, s1 = [v if how == "lit" else inp["q"][v] for how, v in offs]
            pr, pc = (bc, br) if transpose else (br, bc)
            if not (0 <= s0 <= case.ra - br and 0 <= s1 <= case.ca - bc):
                raise BadIndex(stmt, None, None)
            if not (0 <= d0 <= case.r - pr and 0 <= d1 <= case.c - pc):
                raise BadIndex(stmt, None, None)
            block = ta[s0:s0 + br, s1:s1 + bc]
            vals[dst][d0:d0 + pr, d1:d1 + pc] = block.T if transpose else block   # in place
            vals[t] = vals[dst].copy()
    out = inp["out"].copy()
    for i, t in enumerate(case.stored):
        out[i * case.r:(i + 1) * case.r] = vals[t]
    return out


def _needed_steps(case: Case):
    """The steps whose effect reaches a stored tile or o: only there must a bad index fail the run
    (a kernel may drop a value nothing reads)."""
    needed, steps = set(case.stored), set()
    for t in range(len(case.steps) - 1, -1, -1):
        step = case.steps[t]
        kind = step[0]
        reads = [] if kind == "load" else [step[1], step[2]] if kind in ("scatter", "scatter_update") else [step[1]]
        if kind == "mscatter" or t in needed or (kind == "gather_row" and step[1] in needed):
            steps.add(t)
            needed |= {v for v in reads if v != "a"}
        needed.discard(t)
    return steps


def inject_bad(case: Case, inp, rng):
    """Puts one out-of-range index or offset into inp where a needed op reads it as it is; returns
    a description, or None when no needed op reads one."""
    needed = _needed_steps(case)
    choices = [j for j in case.injectable if j[2] - 1 in needed]
    if not choices:
        return None
    kind, k, stmt, n = rng.choice(choices)
    if kind == "q":
        lo, hi = case.q[k]
        inp["q"][k] = rng.choice([lo - 1, hi + 1, 2 ** 62, -2 ** 62, hi + 1000])
        return "q%d = %d" % (k, inp["q"][k])
    bad = rng.choice([n, n + 1, -1, -n, 32767, -32768] if _narrow(case.dtype) else
                     [n, n + 1, -1, -n, 2 ** 31 - 1, -2 ** 31])
    target = inp["iu"] if case.blocks[k][0] == "rows" else inp["ix"]
    i = rng.randrange(case.r)
    j = rng.randrange(target.shape[1])
    target[k * case.r + i, j] = bad
    return "block %d [%d, %d] = %d" % (k, i, j, bad)


def _same_bits(dtype, got, want):
    """Element-wise: the same bits, or both NaN (a float op may quiet a NaN)."""
    same = got == want
    if dtype in _NAN_MASKS:
        exp, man = _NAN_MASKS[dtype]
        nan = lambda b: ((b & exp) == exp) & ((b & man) != 0)   # noqa: E731
        same |= nan(got) & nan(want)
    return same


def _first_difference(what, dtype, got, want):
    ok = _same_bits(dtype, got, want)
    if ok.all():
        return None
    i = tuple(int(v) for v in np.argwhere(~ok)[0])
    return "%s: %d element(s) differ, first at %s: got bits %#x, model %#x" % (
        what, int((~ok).sum()), i, int(got[i]), int(want[i]))


def check(seed: int):
    """Builds case `seed`, runs it on two input draws (and, for a bad-index seed, a third that must
    fail) and returns the disagreements with the model."""
    import pypto
    import pypto.language as pl
    from pypto.runtime.loader import RunError
    case = make_case(seed)
    name = "index_ops_%d.py" % seed
    prog = pypto.compile(pl.parse_program(program_text(case), name))
    arr = _ARRAY[case.dtype]
    findings = []
    try:
        for draw in range(3 if seed % BAD_SEED == 1 else 2):
            inp = draw_inputs(case, draw)
            bad = inject_bad(case, inp, random.Random(seed * 5 + draw)) if draw == 2 else None
            if draw == 2 and bad is None:
                break
            try:
                want_out, want_ob = run_model(case, inp)
                failure = None
            except BadIndex as e:
                failure = e
            out, ob = inp["out"].copy(), inp["ob"].copy()
            where = "seed %d (%s) draw %d%s" % (seed, case.dtype, draw, " (%s)" % bad if bad else "")
            try:
                prog(inp["a"].view(arr), inp["x"].view(arr), inp["y"].view(arr), inp["ix"], inp["iu"], *inp["q"],
                     ob.view(arr), out.view(arr))
            except RunError as e:
                line = "%s:%d" % (name, FIRST_BODY_LINE + failure.stmt) if failure else None
                # the failure names its line, or a list of lines with it ("k.py:14 or k.py:16: ...")
                # when the kernel has several such accesses that the message cannot tell apart
                if failure is None:
                    findings.append("%s: the run failed, the model did not: %s" % (where, e))
                elif not re.search(re.escape(line) + "(: | or )", str(e)) or (failure.value is not None and (
                        "%d is outside [0, %d)" % (failure.value, failure.bound)) not in str(e)):
                    findings.append("%s: the run failed with %r, the model expected %s%s" % (
                        where, str(e), line, "" if failure.value is None else
                        " index %d outside [0, %d)" % (failure.value, failure.bound)))
                if failure is not None:   # the failing op wrote nothing; the stores did not run
                    for what, got, want in (("ob after the failure", ob, failure.ob),
                                            ("out after the failure", out, inp["out"])):
                        diff = _first_difference(where + ": " + what, case.dtype, got, want)
                        findings += [diff] if diff else []
                continue
            if failure is not None:
                findings.append("%s: the run succeeded, the model failed at line %d"
                                % (where, FIRST_BODY_LINE + failure.stmt))
                continue
            for what, got, want in (("out", out, want_out), ("ob", ob, want_ob)):
                diff = _first_difference(where + ": " + what, case.dtype, got, want)
                findings += [diff] if diff else []
    finally:
        prog.close()
    return findings
