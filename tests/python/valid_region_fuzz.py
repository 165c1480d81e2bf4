"""Differential fuzzing of valid regions in kernels (reference_ops.md §1.5; docs/dsl.md "Valid
shapes in kernels"): random chains of tile ops on tiles whose valid shapes are literals or run-time
scalars, compared with a NumPy model that knows which elements are specified.

Seed k's dtype is DTYPES[k % 3] (FP32, INT32, FP16). The kernel loads [R, C] tiles from
[R + 2, C + 2] inputs at offsets 0..2 with valid shapes [er, ec], each extent a literal (0, the
full extent or between) or a scalar parameter (n0, n1 for rows, m0, m1 for columns: each run
draws them, 0 and the full extent included). Then each statement reads any earlier tile:
- element-wise ops (tile_expr_fuzz's exact ones: unary, tile x scalar, tile x tile with the
  column [R, 1] / row [1, C] broadcasts): the left operand's valid shape, a broadcast axis taking
  the other operand's;
- part_add / part_mul / part_max / part_min: the op where both operands are valid, the valid one
  where one is, the left operand's valid shape;
- row_max / row_min / col_max / col_min (integers: row_sum / col_sum too) over the valid box only,
  the identity for an empty extent (docs/kernels.md);
- row_expand_* / col_expand_*: the target's valid shape;
- pl.fillpad / pl.tile.fillpad_inplace with zero, max or min (the result is fully valid, the pad
  value outside the operand's box), pl.set_validshape, and pl.tile.slice windows (a whole tile, a
  column or a row) with a valid shape;
- pl.tile.gather / pl.tile.scatter with INT32 index tiles loaded (with valid shapes) from ix:
  gather reads only the indices' valid box and takes its valid shape; scatter writes the common
  valid box of src and indices in row-major order, last write wins, and keeps dst's valid shape;
- pl.tile.scatter_update with an [R, 1] row-index tile (from iu) with a valid shape: index k of
  its valid box copies src row k (only below src's valid rows, only its valid columns) to row
  iu[k];
- pl.tile.gather_mask with each mask pattern the columns allow (the selected columns of the valid
  box, packed left: valid columns (vc + stride - 1 - first) // stride), at times through an
  output_dtype bit reinterpretation and back; pl.tile.scatter_mask of such a [R, C / stride] tile
  into a full one (only src's valid box is written; dst keeps its valid shape);
- a fresh load.
Seeds 3, 7, 11, ... with R > 1 load their tiles (index tiles too) with a run-time row count nr
(passed as R): valid shapes on tiles of a dynamic shape; reshape / concat moves and slices of R rows,
which need a constant shape, are left out there. Seeds 7, 15, 23, ... with C > 1 also have a
run-time column count nc (passed as C), without slices, pl.cmp masks and mask gathers / scatters.
Then a pl.range loop and an if / else on a scalar re-assign full tiles through ops that keep the
tile's type (its left operand), and a few tiles are stored, each into its own row block of an
output filled with a sentinel.

The model holds each tile's values and which of them are specified: inside the valid box and
computed from specified operands (a value outside a valid box is unspecified, whatever the buffer
holds, until fillpad writes the pad value there). The check: every specified element stored
equals NumPy's (a NaN matching a NaN, +0 matching -0), and every element outside the stored
boxes keeps the sentinel.

    findings = check(seed=3)      # [] when the kernel agrees with the model

Used by tests/python/test_valid_region_fuzz.py (a seeded smoke) and scripts/fuzz_exprs.py
(--kind valid).
"""
import random

import numpy as np

import tile_expr_fuzz as tf

DTYPES = ["FP32", "INT32", "FP16"]
SHAPES = [(1, 1), (1, 9), (3, 16), (5, 3), (8, 8), (2, 33), (7, 64), (16, 5)]
STATEMENTS = 12
STORED = 4
PAD = 2            # inputs are [R + PAD, C + PAD]: loads at offsets 0..PAD
SENTINEL = -7
PARAMS = ("n0", "n1", "m0", "m1")   # n*: row extents in [0, R], m*: column extents in [0, C]

# element-wise ops of tile_expr_fuzz's tables the model applies (exact in every dtype here)
ELEMENTWISE = {"add", "sub", "mul", "div", "maximum", "minimum", "neg", "abs", "relu", "sqrt", "recip",
               "adds", "subs", "muls", "divs", "maximums", "minimums", "and_", "or_", "xor", "rem"}
PART_OPS = {"part_add": "add", "part_mul": "mul", "part_max": "maximum", "part_min": "minimum"}
EXPANDS = ["%s_expand_%s" % (d, op) for d in ("row", "col") for op in ("add", "sub", "mul", "max", "min")]
# mask pattern -> (stride, first selected column) (reference_ops.md §12)
MASK_PATTERNS = {1: (2, 0), 2: (2, 1), 3: (4, 0), 4: (4, 1), 5: (4, 2), 6: (4, 3), 7: (1, 0)}
# output_dtype of the same bit width, for a reinterpretation round trip
SAME_WIDTH = {"FP32": "INT32", "INT32": "FP32", "FP16": "INT16"}
PADS = {"zero": ["0", "pl.PadValue.zero"], "max": ["pl.PadValue.max"], "min": ["pl.PadValue.min"]}
FLOAT_PAD_SPELLINGS = {"zero": ["0.0"], "max": ["math.inf"], "min": ["-math.inf"]}


class Tile:
    """A tile in the model: its values, which are specified, and its valid extents."""

    def __init__(self, value, known, vr, vc):
        self.value, self.known, self.vr, self.vc = value, known, vr, vc

    def box(self):
        """The valid box as a mask of the tile's shape."""
        m = np.zeros(self.value.shape, bool)
        m[:self.vr, :self.vc] = True
        return m


def _identity(dtype, name):
    if name.endswith("_sum"):
        return 0
    if name.endswith("_prod"):
        return 1
    is_max = name.endswith("_max")
    if dtype == "INT32":
        info = np.iinfo(np.int32)
        return info.min if is_max else info.max
    return -np.inf if is_max else np.inf


def _pad_value(dtype, pad):
    if pad == "zero":
        return 0
    if dtype == "INT32":
        info = np.iinfo(np.int32)
        return info.max if pad == "max" else info.min
    return np.inf if pad == "max" else -np.inf


class _Case:
    """One generated program: its statements (DSL text) and the steps the model replays."""

    def __init__(self, seed):
        self.seed = seed
        self.rng = random.Random(seed)
        self.dtype = DTYPES[seed % len(DTYPES)]
        self.r, self.c = self.rng.choice(SHAPES)
        # a quarter of the seeds load with a run-time row count nr (= R): tiles of a dynamic shape
        # with valid shapes; ops that need a constant shape (reshape, concat, a slice of R rows) are left out
        self.dynamic = dynamic_rows(seed) and self.r > 1
        self.rows = "nr" if self.dynamic else str(self.r)
        # half of those a run-time column count nc (= C) too: then slices, pl.cmp masks and the mask
        # gathers and scatters (which need a constant column count) are left out as well
        self.dynamic_cols = self.dynamic and seed % 8 == 7 and self.c > 1
        self.cols = "nc" if self.dynamic_cols else str(self.c)
        self.ops = {n: v for n, v in tf._ops(self.dtype).items()
                    if n in ELEMENTWISE and v[0] in (1, 2, "s")}
        self.lines, self.steps = [], []
        self.index_tiles = []   # valid extents of i0, i1, ...: index tiles loaded from ix or iu
        self.consumed = set()   # tiles a scatter / scatter_update / scatter_mask wrote into
        self.buffer = []        # per tile: the tile whose buffer it names (itself, or a view's operand)
        self.shapes, self.valids = [], []   # per tile: shape, and valid extents as ("lit", k) / ("p", name)

    # ---- extents -------------------------------------------------------------------------------

    def extent(self, dim, axis):
        """A valid extent for an axis of size `dim`: a literal or (axis of the tile's full size) a parameter."""
        full = self.r if axis == 0 else self.c
        if dim == full and self.rng.random() < 0.5:
            return ("p", self.rng.choice(PARAMS[:2] if axis == 0 else PARAMS[2:]))
        return ("lit", self.rng.choice(sorted({0, dim, self.rng.randint(0, dim)})))

    @staticmethod
    def text(e):
        return str(e[1])

    # ---- statements ----------------------------------------------------------------------------

    def add(self, line, step, shape, valid):
        # a pl.set_validshape view names its operand's buffer (VerifyDestinationReads follows it)
        self.buffer.append(self.buffer[step[1]] if step[0] == "validshape" else len(self.shapes))
        self.lines.append("t%d = %s" % (len(self.shapes), line))
        self.steps.append(step)
        self.shapes.append(shape)
        self.valids.append(valid)

    def load(self):
        src, orow, ocol = self.rng.choice("xy"), self.rng.randint(0, PAD), self.rng.randint(0, PAD)
        er, ec = self.extent(self.r, 0), self.extent(self.c, 1)
        self.add("pl.load(%s, [%d, %d], [%s, %s], [%s, %s])" % (src, orow, ocol, self.rows, self.cols, self.text(er),
                                                                   self.text(ec)),
                 ("load", src, (orow, ocol), (er, ec)), (self.r, self.c), (er, ec))

    def consume(self, a):
        """A scatter wrote into tile a's buffer: a and every view of that buffer are not read again."""
        self.consumed |= {i for i, b in enumerate(self.buffer) if b == self.buffer[a]}

    def tiles(self, pred=lambda i: True):
        """The tiles a statement may read: a scatter's destination is not read again (on the
        accelerator its buffer holds the scatter's result: VerifyDestinationReads refuses it)."""
        return [i for i in range(len(self.shapes)) if i not in self.consumed and pred(i)]

    def full(self):
        return self.tiles(lambda i: self.shapes[i] == (self.r, self.c))

    def broadcast_valid(self, a, b):
        """The left operand's valid extents, an axis where it is broadcast taking the other's."""
        return tuple(self.valids[b][k] if self.shapes[a][k] == 1 and self.shapes[b][k] != 1 else self.valids[a][k]
                     for k in range(2))

    def statement(self):
        rng, t = self.rng, len(self.shapes)
        constant_cols = ["slice", "select", "gather_mask", "scatter_mask"] * (not self.dynamic_cols)
        kind = rng.choice(["elementwise"] * 4 + ["part", "reduce", "expand", "fillpad", "fillpad", "validshape",
                                                 "load", "cast", "assemble", "gather", "scatter",
                                                 "scatter_update"] + constant_cols + ["move"] * (not self.dynamic))
        a = rng.randrange(t)
        if a in self.consumed:
            a = rng.choice(self.tiles())
        if kind == "elementwise":
            name = rng.choice(sorted(self.ops))
            arity = self.ops[name][0]
            if arity == 1:
                self.add("pl.%s(t%d)" % (name, a), ("unary", name, a), self.shapes[a], self.valids[a])
            elif arity == "s":
                v = rng.choice(tf.SHIFT_COUNTS if name in ("shls", "shrs") else
                               tf.INT_SCALARS if self.dtype == "INT32" else tf.FLOAT_SCALARS)
                self.add("pl.%s(t%d, %s)" % (name, a, tf._scalar_text(v)), ("scalar", name, a, v),
                         self.shapes[a], self.valids[a])
            else:
                b = rng.choice(self.tiles(lambda j: all(p == q or p == 1 or q == 1
                                                        for p, q in zip(self.shapes[a], self.shapes[j]))))
                shape = tuple(max(p, q) for p, q in zip(self.shapes[a], self.shapes[b]))
                self.add("pl.%s(t%d, t%d)" % (name, a, b), ("binary", name, a, b), shape, self.broadcast_valid(a, b))
        elif kind == "part":
            name = rng.choice(sorted(PART_OPS))
            b = rng.choice(self.tiles(lambda j: self.shapes[j] == self.shapes[a]))
            self.add("pl.%s(t%d, t%d)" % (name, a, b), ("part", name, a, b), self.shapes[a], self.valids[a])
        elif kind == "reduce":
            a = rng.choice(self.full())
            names = ["row_max", "row_min", "col_max", "col_min"] + (["row_sum", "col_sum"] if self.dtype == "INT32"
                                                                      else [])
            if self.dtype == "INT32":
                names += ["row_prod", "col_prod"]
            name = rng.choice(names)
            row = name.startswith("row")
            er, ec = self.valids[a]
            call = "pl.%s(t%d)" % (name, a)
            if not name.endswith("prod") and rng.random() < 0.3:   # the axis spelling
                call = "pl.tile.%s(t%d, axis=%d, keepdim=True)" % (name[4:], a, 1 if row else 0)
            self.add(call, ("reduce", name, a), (self.r, 1) if row else (1, self.c),
                     (er, ("lit", 1)) if row else (("lit", 1), ec))
        elif kind == "expand":
            name = rng.choice(EXPANDS + ["row_expand", "col_expand"])
            want = (self.r, 1) if name.startswith("row") else (1, self.c)
            vecs = self.tiles(lambda j: self.shapes[j] == want)
            if not vecs:
                return self.statement()
            a, v = rng.choice(self.full()), rng.choice(vecs)
            self.add("pl.%s(t%d, t%d)" % (name, a, v), ("expand", name, a, v), (self.r, self.c), self.valids[a])
        elif kind == "fillpad":
            pad = rng.choice(sorted(PADS))
            spellings = PADS[pad] + (FLOAT_PAD_SPELLINGS[pad] if self.dtype != "INT32" else [])
            fn = rng.choice(["pl.fillpad", "pl.fillpad", "pl.tile.fillpad_inplace"])
            self.add("%s(t%d, %s)" % (fn, a, rng.choice(spellings)), ("fillpad", a, pad), self.shapes[a],
                     (("lit", self.shapes[a][0]), ("lit", self.shapes[a][1])))
        elif kind == "validshape":
            er, ec = self.extent(self.shapes[a][0], 0), self.extent(self.shapes[a][1], 1)
            self.add("pl.set_validshape(t%d, %s, %s)" % (a, self.text(er), self.text(ec)), ("validshape", a, er, ec),
                     self.shapes[a], (er, ec))
        elif kind == "slice":
            a = rng.choice(self.full())
            form = rng.choice(["row"] if self.dynamic else ["whole", "column", "row"])
            h, w = {"whole": (self.r, self.c), "column": (self.r, 1), "row": (1, self.c)}[form]
            o = (0, rng.randrange(self.c)) if form == "column" else (rng.randrange(self.r), 0) if form == "row" else (0, 0)
            er, ec = self.extent(h, 0), self.extent(w, 1)
            self.add("pl.tile.slice(t%d, [%d, %d], [%d, %d], [%s, %s])" % (a, h, w, o[0], o[1], self.text(er),
                                                                           self.text(ec)),
                     ("slice", a, (h, w), o, er, ec), (h, w), (er, ec))
        elif kind == "select":
            like_a = self.tiles(lambda j: self.shapes[j] == self.shapes[a])
            cmp_type, x, y = rng.randrange(len(tf.CMP_FNS)), rng.choice(like_a), rng.choice(like_a)
            if rng.random() < 0.5:
                o = rng.choice(like_a)
                mask = "pl.cmp(t%d, t%d, cmp_type=%d)" % (a, o, cmp_type)
            else:
                o = ("scalar", rng.choice(tf.INT_SCALARS[:9] if self.dtype == "INT32" else tf.FLOAT_SCALARS))
                mask = "pl.cmps(t%d, %s, cmp_type=%d)" % (a, tf._scalar_text(o[1]), cmp_type)
            self.add("pl.sel(%s, t%d, t%d)" % (mask, x, y), ("select", a, o, cmp_type, x, y), self.shapes[a],
                     self.valids[x])   # lhs's valid shape (the mask's columns count bytes)
        elif kind == "cast":
            casts = tf._casts(self.dtype)
            name = rng.choice(sorted(n for n in casts if not (self.dtype == "FP16" and n == "cast_f16")))
            self.add(casts[name][0].format(t="t%d" % a, dt=self.dtype), ("cast", name, a), self.shapes[a],
                     self.valids[a])
        elif kind == "assemble":
            a = rng.choice(self.full())
            src = rng.randrange(t)
            if src in self.consumed:
                src = rng.choice(self.tiles())
            h, w = self.shapes[src]
            o = (rng.randint(0, self.r - h), rng.randint(0, self.c - w))
            self.add("pl.tile.assemble(t%d, t%d, [%d, %d])" % (a, src, o[0], o[1]), ("assemble", a, src, o),
                     (self.r, self.c), (("lit", self.r), ("lit", self.c)))
        elif kind in ("gather", "scatter"):
            # indices: an INT32 tile loaded from ix (flat indices into an [R, C] tile) with a valid shape
            er, ec = self.extent(self.r, 0), self.extent(self.c, 1)
            i = len(self.index_tiles)
            self.index_tiles.append((er, ec))
            load = "pl.load(ix, [0, 0], [%s, %s], [%s, %s])" % (self.rows, self.cols, self.text(er), self.text(ec))
            if kind == "scatter" and self.dtype == "FP16":   # a 2-byte dst takes INT16 indices (§12)
                load = "pl.cast(%s, pl.INT16)" % load
            self.lines.append("i%d = %s" % (i, load))
            a = rng.choice(self.full())
            if kind == "gather":
                self.add("pl.tile.gather(t%d, i%d)" % (a, i), ("gather", a, i), (self.r, self.c), (er, ec))
            else:
                src = rng.choice(self.full())
                self.add("pl.tile.scatter(t%d, t%d, i%d)" % (a, src, i), ("scatter", a, src, i), (self.r, self.c),
                         self.valids[a])
                self.consume(a)
        elif kind == "scatter_update":
            # row indices: an INT32 [R, 1] tile loaded from iu (values in [0, R)) with a valid shape
            er, ec = self.extent(self.r, 0), self.extent(1, 1)
            i = len(self.index_tiles)
            self.index_tiles.append((er, ec))
            self.lines.append("i%d = pl.load(iu, [0, 0], [%s, 1], [%s, %s])" % (i, self.rows, self.text(er),
                                                                                self.text(ec)))
            a, src = rng.choice(self.full()), rng.choice(self.full())
            self.add("pl.tile.scatter_update(t%d, i%d, t%d)" % (a, i, src), ("scatter_update", a, src, i),
                     (self.r, self.c), self.valids[a])
            self.consume(a)
        elif kind == "gather_mask":
            self.gather_mask(rng.choice([p for p, (st, _) in MASK_PATTERNS.items() if self.c % st == 0]))
        elif kind == "scatter_mask":
            pattern = rng.choice([p for p, (st, _) in MASK_PATTERNS.items() if self.c % st == 0])
            want = (self.r, self.c // MASK_PATTERNS[pattern][0])
            srcs = self.tiles(lambda j: self.shapes[j] == want)
            if not srcs:   # make one
                self.gather_mask(pattern)
                srcs = [len(self.shapes) - 1]
            a, src = rng.choice(self.full()), rng.choice(srcs)
            self.add("pl.tile.scatter_mask(t%d, t%d, mask_pattern=%d)" % (a, src, pattern),
                     ("scatter_mask", a, src, pattern), (self.r, self.c), self.valids[a])
            self.consume(a)
        elif kind == "move":
            a, b = rng.choice(self.full()), rng.choice(self.full())
            name, k = rng.choice(sorted(tf.SHAPE_MOVES)), rng.randint(0, self.c)
            text = tf.SHAPE_MOVES[name][1].format(a="t%d" % a, b="t%d" % b, r=self.r, c=self.c, k=k)
            self.add(text, ("move", name, a, b, k), (self.r, self.c), (("lit", self.r), ("lit", self.c)))
        else:
            self.load()

    def gather_mask(self, pattern):
        """tK = the columns `pattern` selects of a full tile, at times bit-reinterpreted there and back."""
        a = self.rng.choice(self.full())
        stride, first = MASK_PATTERNS[pattern]
        call = "pl.tile.gather_mask(t%d, mask_pattern=%d)" % (a, pattern)
        if self.rng.random() < 0.3:   # output_dtype reinterprets the bits; pattern 7 of the result brings them back
            call = ("pl.tile.gather_mask(pl.tile.gather_mask(t%d, %d, output_dtype=pl.%s), 7, output_dtype=pl.%s)"
                    % (a, pattern, SAME_WIDTH[self.dtype], self.dtype))
        er, ec = self.valids[a]
        self.add(call, ("gather_mask", a, pattern), (self.r, self.c // stride), (er, ("mask", ec, stride, first)))

    def reassign(self, indent, carried):
        """`tK = op(tK, ...)`: the type (and valid shape) of a full tile tK stays."""
        rng = self.rng
        target = rng.choice(carried)
        name = rng.choice(sorted(self.ops) + sorted(PART_OPS))
        arity = self.ops[name][0] if name in self.ops else 2
        if arity == 1:
            line, step = "pl.%s(t%d)" % (name, target), ("unary", name, target)
        elif arity == "s":
            v = rng.choice(tf.INT_SCALARS if self.dtype == "INT32" else tf.FLOAT_SCALARS)
            line, step = "pl.%s(t%d, %s)" % (name, target, tf._scalar_text(v)), ("scalar", name, target, v)
        else:
            same = name in PART_OPS
            b = rng.choice(self.tiles(lambda j: self.shapes[j] == (self.r, self.c) or
                                      (not same and self.shapes[j] in ((self.r, 1), (1, self.c)))))
            line = "pl.%s(t%d, t%d)" % (name, target, b)
            step = ("part" if same else "binary", name, target, b)
        self.lines.append(indent + "t%d = %s" % (target, line))
        return target, step


def make_case(seed: int):
    """(DSL program text, (R, C), dtype, reference function of (x, y, params) -> (want, care))."""
    case = _Case(seed)
    case.load()
    case.load()
    for _ in range(STATEMENTS):
        case.statement()
    rng, r, c, dtype = case.rng, case.r, case.c, case.dtype
    full = case.full()
    carried = rng.sample(full, min(len(full), rng.randint(1, 3)))
    trips = rng.choice([0, 1, 2, 3])
    case.lines.append("for i in pl.range(%d):" % trips)
    loop = [case.reassign("    ", carried) for _ in range(rng.randint(1, 3))]
    case.lines.append("if s > 0:")
    then = [case.reassign("    ", carried) for _ in range(rng.randint(1, 2))]
    orelse = []
    if rng.random() < 0.7:
        case.lines.append("else:")
        orelse = [case.reassign("    ", carried) for _ in range(rng.randint(1, 2))]
    stored = sorted(rng.sample(case.tiles(), STORED))
    atomic = [rng.random() < 0.25 for _ in stored]   # atomic=Add: the valid box added to the sentinel
    for i, t in enumerate(stored):
        case.lines.append("out = pl.store(t%d, [%d, 0], out%s)" % (t, i * r, ", atomic=pl.AtomicType.Add" * atomic[i]))
    body = "\n".join("        " + ln for ln in case.lines)
    text = _PROGRAM.format(h=r + PAD, w=c + PAD, r=r, rows=STORED * r, c=c, body=body, dtype=dtype)
    ops = tf._ops(dtype)
    valids = case.valids

    def reference(x, y, ix, iu, params, s):
        def ext(e):
            if e[0] == "mask":   # gather_mask's valid columns of a valid extent
                return (ext(e[1]) + e[2] - 1 - e[3]) // e[2]
            return params[e[1]] if e[0] == "p" else e[1]

        def rnd(v):
            return tf._as(dtype, v)

        def apply(vals, step, t):
            kind = step[0]
            if kind == "load":
                _, src, (orow, ocol), (er, ec) = step
                vr, vc = ext(er), ext(ec)
                value = (x if src == "x" else y)[orow:orow + r, ocol:ocol + c].copy()
                tile = Tile(value, np.ones((r, c), bool), vr, vc)
                tile.known &= tile.box()
                return tile
            if kind in ("unary", "scalar"):
                a = vals[step[2]]
                fn = ops[step[1]][1]
                value = rnd(fn(a.value) if kind == "unary" else fn(a.value, tf._scalar_value(dtype, step[3])))
                tile = Tile(value, a.known.copy(), a.vr, a.vc)
                tile.known &= tile.box()
                return tile
            if kind == "binary":
                a, b = vals[step[2]], vals[step[3]]
                value = rnd(ops[step[1]][1](a.value, b.value))
                known = np.broadcast_to(a.known, value.shape) & np.broadcast_to(b.known, value.shape)
                vr, vc = (ext(e) for e in valids[t])
                tile = Tile(value, known.copy(), vr, vc)
                tile.known &= tile.box()
                return tile
            if kind == "part":
                a, b = vals[step[2]], vals[step[3]]
                both = rnd(ops[PART_OPS[step[1]]][1](a.value, b.value))
                in_b = b.box()
                value = np.where(in_b, both, a.value)
                known = np.where(in_b, a.known & b.known, a.known)
                tile = Tile(value, known, a.vr, a.vc)
                tile.known &= tile.box()
                return tile
            if kind == "reduce":
                name, a = step[1], vals[step[2]]
                row = name.startswith("row")
                box = a.value[:a.vr, :a.vc]
                axis = 1 if row else 0
                if name.endswith("_sum") or name.endswith("_prod"):
                    fold = np.sum if name.endswith("_sum") else np.prod
                    red = tf._wrapping(np.int32, lambda v: fold(v, axis=axis, keepdims=True))(box)
                elif box.shape[axis] == 0:
                    red = np.full((box.shape[0], 1) if row else (1, box.shape[1]), _identity(dtype, name),
                                  tf._NP[dtype])
                else:
                    red = tf._extreme(box, axis, name.endswith("_max"))
                shape = (r, 1) if row else (1, c)
                value = np.zeros(shape, tf._NP[dtype])
                known = np.zeros(shape, bool)
                if row:
                    value[:a.vr] = red
                    known[:a.vr, 0] = a.known[:a.vr, :a.vc].all(axis=1)
                    return Tile(value, known, a.vr, 1)
                value[:, :a.vc] = red
                known[0, :a.vc] = a.known[:a.vr, :a.vc].all(axis=0)
                return Tile(value, known, 1, a.vc)
            if kind == "expand":
                name, a, v = step[1], vals[step[2]], vals[step[3]]
                if name in ("row_expand", "col_expand"):   # the target's values are not read
                    value = np.broadcast_to(v.value, a.value.shape).copy()
                else:
                    op = name.split("_expand_")[1]
                    fn = ops["maximum" if op == "max" else "minimum" if op == "min" else op][1]
                    value = rnd(fn(a.value, v.value))
                known = a.known & np.broadcast_to(v.known, a.value.shape)
                tile = Tile(value, known.copy(), a.vr, a.vc)
                tile.known &= tile.box()
                return tile
            if kind == "fillpad":
                a = vals[step[1]]
                inside = a.box()
                value = np.where(inside, a.value, tf._NP[dtype](_pad_value(dtype, step[2])))
                known = np.where(inside, a.known, True)
                return Tile(value, known, *value.shape)
            if kind == "validshape":
                a = vals[step[1]]
                tile = Tile(a.value, a.known.copy(), ext(step[2]), ext(step[3]))
                tile.known &= tile.box()
                return tile
            if kind == "slice":
                a = vals[step[1]]
                (h, w), (orow, ocol) = step[2], step[3]
                tile = Tile(a.value[orow:orow + h, ocol:ocol + w].copy(), a.known[orow:orow + h, ocol:ocol + w].copy(),
                            ext(step[4]), ext(step[5]))
                tile.known &= tile.box()
                return tile
            if kind == "gather":
                a = vals[step[1]]
                er, ec = case.index_tiles[step[2]]
                vr, vc = ext(er), ext(ec)
                tile = Tile(a.value.reshape(-1)[ix.reshape(-1)].reshape(r, c), a.known.reshape(-1)[ix.reshape(-1)]
                            .reshape(r, c), vr, vc)
                tile.known &= tile.box()
                return tile
            if kind == "scatter":   # the common valid box of src and indices, row-major, last write wins
                dst, src = vals[step[1]], vals[step[2]]
                er, ec = case.index_tiles[step[3]]
                br, bc = min(src.vr, ext(er)), min(src.vc, ext(ec))
                value, known = dst.value.copy().reshape(-1), dst.known.copy().reshape(-1)
                for i in range(br):
                    for j in range(bc):
                        value[ix[i, j]] = src.value[i, j]
                        known[ix[i, j]] = src.known[i, j]
                tile = Tile(value.reshape(r, c), known.reshape(r, c), dst.vr, dst.vc)
                tile.known &= tile.box()
                return tile
            if kind == "scatter_update":   # index (i, j) of its valid box names src row k = i: row iu[i] = src[k]
                dst, src = vals[step[1]], vals[step[2]]
                er, ec = case.index_tiles[step[3]]
                value, known = dst.value.copy(), dst.known.copy()
                for k in range(ext(er) if ext(ec) > 0 else 0):
                    if k < src.vr:
                        value[iu[k, 0], :src.vc] = src.value[k, :src.vc]
                        known[iu[k, 0], :src.vc] = src.known[k, :src.vc]
                tile = Tile(value, known, dst.vr, dst.vc)
                tile.known &= tile.box()
                return tile
            if kind == "gather_mask":
                a = vals[step[1]]
                stride, first = MASK_PATTERNS[step[2]]
                vr, vc = (ext(e) for e in valids[t])
                tile = Tile(a.value[:, first::stride].copy(), a.known[:, first::stride].copy(), vr, vc)
                tile.known &= tile.box()
                return tile
            if kind == "scatter_mask":   # src's valid box goes to the selected columns of dst's rows
                dst, src = vals[step[1]], vals[step[2]]
                stride, first = MASK_PATTERNS[step[3]]
                value, known = dst.value.copy(), dst.known.copy()
                cols = first + stride * np.arange(src.vc)
                value[:src.vr, cols] = src.value[:src.vr, :src.vc]
                known[:src.vr, cols] = src.known[:src.vr, :src.vc]
                tile = Tile(value, known, dst.vr, dst.vc)
                tile.known &= tile.box()
                return tile
            if kind == "select":
                _, a, o, cmp_type, x_, y_ = step
                a, xt, yt = vals[a], vals[x_], vals[y_]
                if isinstance(o, tuple):
                    mask, mknown = tf.CMP_FNS[cmp_type](a.value, tf._scalar_value(dtype, o[1])), a.known
                else:
                    mask, mknown = tf.CMP_FNS[cmp_type](a.value, vals[o].value), a.known & vals[o].known
                value = np.where(mask, xt.value, yt.value)
                known = mknown & np.where(mask, xt.known, yt.known)
                tile = Tile(value, known, xt.vr, xt.vc)
                tile.known &= tile.box()
                return tile
            if kind == "cast":
                a = vals[step[2]]
                tile = Tile(rnd(ops[step[1]][1](a.value)), a.known.copy(), a.vr, a.vc)
                tile.known &= tile.box()
                return tile
            if kind == "assemble":
                _, a, src, (orow, ocol) = step
                a, src = vals[a], vals[src]
                value, known = a.value.copy(), a.known.copy()
                value[orow:orow + src.vr, ocol:ocol + src.vc] = src.value[:src.vr, :src.vc]
                known[orow:orow + src.vr, ocol:ocol + src.vc] = src.known[:src.vr, :src.vc]
                return Tile(value, known, r, c)
            if kind == "move":
                _, name, a, b, k = step
                move = tf.SHAPE_MOVES[name][2]
                value = np.ascontiguousarray(move(vals[a].value, vals[b].value, r, c, k))
                known = np.ascontiguousarray(move(vals[a].known, vals[b].known, r, c, k))
                return Tile(value, known, r, c)
            raise AssertionError(kind)

        vals = []
        with np.errstate(all="ignore"):
            for t, step in enumerate(case.steps):
                vals.append(apply(vals, step, t))
            for _ in range(trips):
                for target, step in loop:
                    vals[target] = apply(vals, step, target)
            for target, step in (then if s > 0 else orelse):
                vals[target] = apply(vals, step, target)
        want = np.full((STORED * r, c), SENTINEL, tf._NP[dtype])
        care = np.ones(want.shape, bool)
        for i, t in enumerate(stored):
            tile = vals[t]
            value = tile.value[:tile.vr, :tile.vc]
            if atomic[i]:
                with np.errstate(all="ignore"):
                    value = ops["add"][1](want[i * r:i * r + tile.vr, :tile.vc], value)
            want[i * r:i * r + tile.vr, :tile.vc] = value
            care[i * r:i * r + tile.vr, :tile.vc] = tile.known[:tile.vr, :tile.vc]
        return want, care
    return text, (r, c), dtype, reference


_PROGRAM = '''
import math
import pypto.language as pl

@pl.program
class ValidRegions:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[{h}, {w}], pl.{dtype}], y: pl.Tensor[[{h}, {w}], pl.{dtype}],
          ix: pl.Tensor[[{r}, {c}], pl.INT32], iu: pl.Tensor[[{r}, 1], pl.INT32], n0: pl.Scalar[pl.INDEX], n1: pl.Scalar[pl.INDEX], m0: pl.Scalar[pl.INDEX], m1: pl.Scalar[pl.INDEX],
          s: pl.Scalar[pl.INT64], nr: pl.Scalar[pl.INDEX], nc: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[{rows}, {c}], pl.{dtype}]]) -> pl.Tensor[[{rows}, {c}], pl.{dtype}]:
{body}
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{h}, {w}], pl.{dtype}], y: pl.Tensor[[{h}, {w}], pl.{dtype}],
             ix: pl.Tensor[[{r}, {c}], pl.INT32], iu: pl.Tensor[[{r}, 1], pl.INT32], n0: pl.Scalar[pl.INDEX], n1: pl.Scalar[pl.INDEX], m0: pl.Scalar[pl.INDEX], m1: pl.Scalar[pl.INDEX],
             s: pl.Scalar[pl.INT64], nr: pl.Scalar[pl.INDEX], nc: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[{rows}, {c}], pl.{dtype}]]) -> pl.Tensor[[{rows}, {c}], pl.{dtype}]:
        out = self.k(x, y, ix, iu, n0, n1, m0, m1, s, nr, nc, out)
        return out
'''


def dynamic_rows(seed: int) -> bool:
    """Seeds 3, 7, 11, ... (those with R > 1) load their tiles with a run-time row count nr = R."""
    return seed % 4 == 3


def draw_params(rng, r, c):
    """Run-time valid extents: 0, the full extent, or between."""
    pick = lambda full: rng.choice([0, full, full, rng.randint(0, full), rng.randint(0, full)])   # noqa: E731
    return {"n0": pick(r), "n1": pick(r), "m0": pick(c), "m1": pick(c)}


def check(seed: int):
    """Builds case `seed`, runs it with two draws of the run-time extents and returns the
    disagreements with the model."""
    import pypto
    import pypto.language as pl
    text, (r, c), dtype, reference = make_case(seed)
    prog = pypto.compile(pl.parse_program(text, "valid_regions_%d.py" % seed))
    rng = random.Random(seed * 7 + 1)
    findings = []
    try:
        for draw in range(2):
            x, y = tf.inputs(seed * 2 + draw, (r + PAD, c + PAD), dtype)
            irng = np.random.default_rng(seed * 2 + draw)
            ix = irng.integers(0, r * c, (r, c)).astype(np.int32)
            iu = irng.integers(0, r, (r, 1)).astype(np.int32)
            params = draw_params(rng, r, c)
            out = np.full((STORED * r, c), SENTINEL, tf._NP[dtype])
            prog(x, y, ix, iu, params["n0"], params["n1"], params["m0"], params["m1"], draw, r, c, out)
            want, care = reference(x, y, ix, iu, params, draw)
            ok = tf.same_values(out, want) | ~care
            if not ok.all():
                i = tuple(int(v) for v in np.argwhere(~ok)[0])
                findings.append("seed %d (%s) draw %d %s: %d element(s) differ, first at %s: got %r, model %r"
                                % (seed, dtype, draw, params, int((~ok).sum()), i, out[i], want[i]))
    finally:
        prog.close()
    return findings
