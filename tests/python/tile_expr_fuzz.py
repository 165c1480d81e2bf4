"""Differential fuzzing of kernels: random chains of exactly rounded FP32 tile ops, where each
statement reads any earlier tile (so values are read again after later statements could have
reused their buffers: the kernel passes' in-place and shared-buffer decisions), compared with
NumPy float32 on inputs holding edge values (±0, ±inf, NaN, subnormals, the largest finite).

The ops are the IEEE-exact ones (add sub mul div maximum minimum neg abs relu sqrt recip rsqrt,
their scalar forms, row_max / row_min / col_max / col_min, and the binary ops broadcasting a
column [R, 1] or a row [1, C] against a tile), so the generated kernel must give NumPy's values exactly (a NaN matching a
NaN, +0 matching -0). A handful of temporaries is stored, each into its own row block of the
output. docs/running.md, "Fuzzing".

    findings = check(seed=3)      # [] when the kernel agrees with NumPy

Used by tests/python/test_tile_expr_fuzz.py (a seeded smoke) and scripts/fuzz_tile_exprs.py.
"""
import random

import numpy as np

STATEMENTS = 14
STORED = 4
SHAPES = [(1, 1), (1, 7), (3, 16), (2, 33), (4, 8), (5, 3), (8, 64), (1, 100)]
EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.4028235e38, -3.4028235e38, 1.0, -1.0, 0.5]
SCALARS = [0.0, -0.0, 2.0, -3.5, 1e-45, 3.4028235e38, np.inf, -np.inf, np.nan]

f32 = np.float32


def _relu(x):
    return np.where(np.isnan(x) | (x > 0), x, f32(0))


# name -> (arity: 1 unary, 2 binary, "s" tile x scalar; NumPy reference)
OPS = {
    "add": (2, np.add), "sub": (2, np.subtract), "mul": (2, np.multiply), "div": (2, np.divide),
    "maximum": (2, np.maximum), "minimum": (2, np.minimum),
    "neg": (1, np.negative), "abs": (1, np.abs), "relu": (1, _relu), "sqrt": (1, np.sqrt),
    "recip": (1, lambda x: f32(1) / x), "rsqrt": (1, lambda x: f32(1) / np.sqrt(x)),
    "adds": ("s", np.add), "subs": ("s", np.subtract), "muls": ("s", np.multiply), "divs": ("s", np.divide),
    "maximums": ("s", np.maximum), "minimums": ("s", np.minimum),
    # reductions of a full tile to a column [R, 1] or a row [1, C] (NaN propagates, as np.max)
    "row_max": ("r", lambda x: np.max(x, axis=1, keepdims=True)),
    "row_min": ("r", lambda x: np.min(x, axis=1, keepdims=True)),
    "col_max": ("c", lambda x: np.max(x, axis=0, keepdims=True)),
    "col_min": ("c", lambda x: np.min(x, axis=0, keepdims=True)),
}


def _scalar_text(v):
    if np.isnan(v):
        return "math.nan"
    if np.isinf(v):
        return "math.inf" if v > 0 else "-math.inf"
    return repr(float(v))


def make_case(seed: int):
    """(DSL program text, shape, reference function of (x, y) -> stacked stored tiles)."""
    rng = random.Random(seed)
    r, c = rng.choice(SHAPES)
    lines, steps = [], []
    shapes = [(r, c), (r, c)]   # of t0, t1, ...: full tiles, columns [r, 1] and rows [1, c]

    def broadcastable(i, j):
        return all(a == b or a == 1 or b == 1 for a, b in zip(shapes[i], shapes[j]))
    for k in range(STATEMENTS):
        t = k + 2
        name = rng.choice(sorted(OPS))
        arity, _ = OPS[name]
        full = [i for i in range(t) if shapes[i] == (r, c)]
        a = rng.randrange(t)   # t0 = load(x), t1 = load(y), then t2 .. : any earlier tile
        if arity in ("r", "c"):
            a = rng.choice(full)
            lines.append("t%d = pl.%s(t%d)" % (t, name, a))
            shapes.append((r, 1) if arity == "r" else (1, c))
            steps.append((name, a, None))
        elif arity == 2:
            b = rng.choice([j for j in range(t) if broadcastable(a, j)])
            lines.append("t%d = pl.%s(t%d, t%d)" % (t, name, a, b))
            shapes.append(tuple(max(x, y) for x, y in zip(shapes[a], shapes[b])))
            steps.append((name, a, b))
        elif arity == 1:
            lines.append("t%d = pl.%s(t%d)" % (t, name, a))
            shapes.append(shapes[a])
            steps.append((name, a, None))
        else:
            v = rng.choice(SCALARS)
            lines.append("t%d = pl.%s(t%d, %s)" % (t, name, a, _scalar_text(v)))
            shapes.append(shapes[a])
            steps.append((name, a, v))
    full = [i for i in range(2, STATEMENTS + 2) if shapes[i] == (r, c)]
    stored = sorted(rng.sample(full, min(STORED, len(full))))
    for i, t in enumerate(stored):
        lines.append("out = pl.store(t%d, [%d, 0], out)" % (t, i * r))
    body = "\n".join("        " + ln for ln in lines)
    text = _PROGRAM.format(r=r, c=c, rows=STORED * r, body=body)

    def reference(x, y):
        vals = [x, y]
        with np.errstate(all="ignore"):
            for name, a, b in steps:
                arity, fn = OPS[name]
                if arity == 2:
                    vals.append(fn(vals[a], vals[b]).astype(f32))
                elif arity in (1, "r", "c"):
                    vals.append(fn(vals[a]).astype(f32))
                else:
                    vals.append(fn(vals[a], f32(b)).astype(f32))
        out = np.zeros((STORED * r, c), f32)   # rows of no stored tile stay 0
        for i, t in enumerate(stored):
            out[i * r:(i + 1) * r] = vals[t]
        return out
    return text, (r, c), reference


_PROGRAM = '''
import math
import pypto.language as pl

@pl.program
class TileExprs:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[{r}, {c}], pl.FP32], y: pl.Tensor[[{r}, {c}], pl.FP32],
          out: pl.Out[pl.Tensor[[{rows}, {c}], pl.FP32]]) -> pl.Tensor[[{rows}, {c}], pl.FP32]:
        t0 = pl.load(x, [0, 0], [{r}, {c}])
        t1 = pl.load(y, [0, 0], [{r}, {c}])
{body}
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{r}, {c}], pl.FP32], y: pl.Tensor[[{r}, {c}], pl.FP32],
             out: pl.Out[pl.Tensor[[{rows}, {c}], pl.FP32]]) -> pl.Tensor[[{rows}, {c}], pl.FP32]:
        out = self.k(x, y, out)
        return out
'''


def inputs(seed: int, shape):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(f32) * f32(rng.choice([1.0, 1e-38, 1e30]))
    y = rng.standard_normal(shape).astype(f32)
    for arr in (x, y):
        mask = rng.random(shape) < 0.3
        arr[mask] = rng.choice(np.array(EDGES, f32), size=int(mask.sum()))
    return x, y


def same_values(got, want):
    """Element-wise: equal (+0 == -0) or both NaN."""
    return (got == want) | (np.isnan(got) & np.isnan(want))


def check(seed: int):
    """Builds case `seed`, runs it on two input draws and returns the disagreements with NumPy."""
    import pypto
    import pypto.language as pl
    text, shape, reference = make_case(seed)
    prog = pypto.compile(pl.parse_program(text, "tile_exprs_%d.py" % seed))
    findings = []
    for draw in range(2):
        x, y = inputs(seed * 2 + draw, shape)
        out = np.zeros((STORED * shape[0], shape[1]), f32)
        prog(x, y, out)
        want = reference(x, y)
        ok = same_values(out, want)
        if not ok.all():
            i = tuple(int(v) for v in np.argwhere(~ok)[0])
            findings.append("seed %d draw %d: %d element(s) differ, first at %s: got %r, NumPy %r"
                            % (seed, draw, int((~ok).sum()), i, out[i], want[i]))
    return findings
