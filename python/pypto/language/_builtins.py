"""The callable spellings of the DSL (``pl.range``, ``pl.submit``, ``pl.add``, ...).

They are markers: the parser recognises them by identity when it resolves ``pl.<name>`` in
the decorated class's scope, and never calls them. Calling one at Python runtime raises a
TypeError that says so. Ops map to registered IR ops (``tile.add``, ``tensor.create``, ...);
``OpSpec`` says which parameters are expressions and which become Call attrs (dtype, memory).
"""

from __future__ import annotations


class Builtin:
    """A DSL construct recognised by the parser. ``kind`` selects its parser handler."""

    __slots__ = ("pl_name", "kind", "spec")

    def __init__(self, pl_name: str, kind: str, spec: "OpSpec | None" = None):
        self.pl_name, self.kind, self.spec = pl_name, kind, spec

    def __call__(self, *args, **kwargs):
        raise TypeError(f"pl.{self.pl_name} is DSL syntax: it is only meaningful inside a @pl.function "
                        f"method of a @pl.program class, which is parsed, not executed")

    def __repr__(self) -> str:
        return f"<pl.{self.pl_name}>"


class OpSpec:
    """How ``pl.<x>(...)`` maps to an IR op call.

    ``params`` are the positional parameter names in order; those in ``attrs`` become Call
    attributes (a dtype -> "FP32", a memory space -> "Left", Python bools/ints as is); the
    rest are expression arguments (a list literal becomes a MakeTuple). Extra keywords named
    in ``attrs`` are accepted too.
    """

    __slots__ = ("op", "params", "attrs")

    def __init__(self, op: str, params=(), attrs=()):
        self.op, self.params, self.attrs = op, tuple(params), frozenset(attrs)


def op(pl_name: str, op_name: str, params=(), attrs=()) -> Builtin:
    return Builtin(pl_name, "op", OpSpec(op_name, params, attrs))


class Namespace:
    """``pl.tensor`` / ``pl.tile`` / ``pl.system`` / ``pl.array``: ``pl.<ns>.<name>`` is the op
    ``<ns>.<name>``; ops listed explicitly get a signature, any other name is a generic op
    (all positional args are expressions, keywords are attrs) checked against the registry."""

    def __init__(self, ns: str, entries: dict):
        self._ns = ns
        self.__dict__.update(entries)

    def __getattr__(self, name: str) -> Builtin:
        if name.startswith("__"):
            raise AttributeError(name)
        return Builtin(f"{self._ns}.{name}", "op", OpSpec(f"{self._ns}.{name}", (), ()))


_BINARY = ("add", "sub", "mul", "div", "maximum", "minimum")
_UNARY = ("exp", "log", "sqrt", "rsqrt", "recip", "neg", "abs", "relu", "row_max", "row_sum", "row_min")
_ROW_EXPAND = ("row_expand_add", "row_expand_sub", "row_expand_mul", "row_expand_div")


def _tile_ops(prefix: str) -> dict:
    d = {
        "load": op(prefix + "load", "tile.load", ("tensor", "offsets", "shapes", "valid_shapes", "target_memory",
                                                  "transpose", "drop_dims", "pad_value"),
                   ("target_memory", "transpose", "drop_dims", "pad_value")),
        # shapes=: the reference's extent of the stored block (the frontend slices the tile to it)
        "store": op(prefix + "store", "tile.store", ("tile", "offsets", "tensor", "shapes", "atomic"), ("atomic",)),
        "matmul": op(prefix + "matmul", "tile.matmul", ("a", "b")),
        "matmul_acc": op(prefix + "matmul_acc", "tile.matmul_acc", ("acc", "a", "b")),
        # blayout= / slayout=: the reference's fractal-layout hints, checked and dropped (reference_ops.md §2)
        "move": op(prefix + "move", "tile.move", ("tile", "target_memory", "blayout", "slayout"),
                   ("target_memory", "blayout", "slayout")),
        "full": op(prefix + "full", "tile.full", ("shape", "dtype", "value", "target_memory"), ("dtype", "target_memory")),
        "get_block_idx": op(prefix + "get_block_idx", "tile.get_block_idx"),
        "get_block_num": op(prefix + "get_block_num", "tile.get_block_num"),
    }
    for n in _BINARY:
        d[n] = op(prefix + n, "tile." + n, ("a", "b"))
    for n in _UNARY:   # rsqrt's optional tmp selects a hardware sequence; checked and dropped (reference_ops.md §2)
        d[n] = op(prefix + n, "tile." + n, ("a", "tmp") if n == "rsqrt" else ("a",))
    for n in _ROW_EXPAND:
        d[n] = op(prefix + n, "tile." + n, ("a", "row"))
    return d


def _tensor_ops(prefix: str) -> dict:
    return {
        "create": op(prefix + "create", "tensor.create", ("shape", "dtype", "manual_dep", "layout", "init_value"),
                     ("dtype", "manual_dep", "layout", "init_value")),
        "read": op(prefix + "read", "tensor.read", ("tensor", "indices")),
        "write": op(prefix + "write", "tensor.write", ("tensor", "indices", "value")),
        "slice": op(prefix + "slice", "tensor.slice", ("tensor", "shapes", "offsets", "valid_shape", "drop_dims",
                                                       "pad_value"), ("drop_dims", "pad_value")),
        "transpose": op(prefix + "transpose", "tensor.transpose", ("tensor", "axis1", "axis2")),
        "dim": Builtin(prefix + "dim", "dim", OpSpec("tensor.dim", ("tensor", "axis"))),
        "assemble": op(prefix + "assemble", "tensor.assemble", ("target", "source", "offsets")),
        "reshape": op(prefix + "reshape", "tensor.reshape", ("tensor", "shape")),
    }


# -- control flow and scopes -------------------------------------------------------------
range = Builtin("range", "range")            # noqa: A001 - DSL spelling
parallel = Builtin("parallel", "parallel")
unroll = Builtin("unroll", "unroll")        # anchor_features §12: expanded by UnrollLoops
yield_ = Builtin("yield_", "yield")
manual_scope = Builtin("manual_scope", "manual_scope")
scope = Builtin("scope", "scope")
at = Builtin("at", "at")
spmd = Builtin("spmd", "spmd")
cluster = Builtin("cluster", "cluster")

# -- dependencies --------------------------------------------------------------------------
submit = Builtin("submit", "submit")
spmd_submit = Builtin("spmd_submit", "spmd_submit")
no_dep = Builtin("no_dep", "no_dep")
dump_tag = Builtin("dump_tag", "dump_tag")   # pl.dump_tag(x): selective tensor dump (anchor_features §6)

# -- ops -----------------------------------------------------------------------------------
cast = Builtin("cast", "cast")
const = Builtin("const", "const")       # pl.const(1, pl.INT32): a typed literal (reference_ops.md §10)
_tensor = _tensor_ops("tensor.")
create_tensor = op("create_tensor", "tensor.create", ("shape", "dtype", "manual_dep", "layout", "init_value"),
                   ("dtype", "manual_dep", "layout", "init_value"))
read = _tensor_ops("")["read"]
write = Builtin("write", "write")            # pl.write(t, [i, j], v): tensor.write or tile.write by t
slice = _tensor_ops("")["slice"]             # noqa: A001
transpose = _tensor_ops("")["transpose"]
assemble = _tensor_ops("")["assemble"]
_tile = _tile_ops("tile.")
_tile["cast"] = Builtin("tile.cast", "cast")

tensor = Namespace("tensor", _tensor)
tile = Namespace("tile", _tile)
system = Namespace("system", {
    "reserve_buffer": Builtin("system.reserve_buffer", "pipe_buffer"),        # anchor_features §8
    "import_peer_buffer": Builtin("system.import_peer_buffer", "pipe_buffer"),
    "aic_initialize_pipe": Builtin("system.aic_initialize_pipe", "initialize_pipe"),
    "aiv_initialize_pipe": Builtin("system.aiv_initialize_pipe", "initialize_pipe"),
    "task_dummy": Builtin("system.task_dummy", "task_dummy"),
    "task_invalid": op("system.task_invalid", "system.task_invalid"),
})
array = Namespace("array", {
    "create": op("array.create", "array.create", ("size", "dtype"), ("size", "dtype")),
    "get_element": op("array.get_element", "array.get_element", ("array", "index")),
    "update_element": op("array.update_element", "array.update_element", ("array", "index", "value")),
})

TOP_LEVEL_TILE_OPS = _tile_ops("")

# -- reference tile ops (docs/kernels.md, spec/reference_ops.md) ---------------------------
# IR names `tile.and` / `tile.or` / `tile.not` are spelled and_ / or_ / not_ in Python; every
# other op keeps its IR name. `pl.tile.<name>` resolves any registered tile op by itself.
_REF_TILE_TILE = ("rem", "xor", "part_add", "part_mul", "part_max", "part_min")
_REF_TILE_SCALAR = ("adds", "subs", "muls", "divs", "maximums", "minimums", "rems", "ands", "ors", "xors",
                    "shls", "shrs", "lrelu")


def _reference_tile_ops(prefix: str) -> dict:
    d = {
        "and_": op(prefix + "and_", "tile.and", ("lhs", "rhs")),
        "or_": op(prefix + "or_", "tile.or", ("lhs", "rhs")),
        "not_": op(prefix + "not_", "tile.not", ("tile",)),
        "shl": op(prefix + "shl", "tile.shl", ("lhs", "rhs")),
        "shr": op(prefix + "shr", "tile.shr", ("lhs", "rhs")),
        "addc": op(prefix + "addc", "tile.addc", ("lhs", "rhs", "rhs2")),
        "subc": op(prefix + "subc", "tile.subc", ("lhs", "rhs", "rhs2")),
        "addsc": op(prefix + "addsc", "tile.addsc", ("lhs", "rhs", "rhs2")),
        "subsc": op(prefix + "subsc", "tile.subsc", ("lhs", "rhs", "rhs2")),
        "prelu": op(prefix + "prelu", "tile.prelu", ("tile", "slope", "tmp")),
        "expands": op(prefix + "expands", "tile.expands", ("target", "scalar")),
        "cmp": op(prefix + "cmp", "tile.cmp", ("lhs", "rhs", "cmp_type"), ("cmp_type",)),
        "cmps": op(prefix + "cmps", "tile.cmps", ("lhs", "rhs", "cmp_type"), ("cmp_type",)),
        "sel": op(prefix + "sel", "tile.sel", ("mask", "lhs", "rhs", "tmp")),
        "sels": op(prefix + "sels", "tile.sels", ("lhs", "rhs", "select_mode")),
        "row_prod": op(prefix + "row_prod", "tile.row_prod", ("tile", "tmp_tile")),
        "col_sum": op(prefix + "col_sum", "tile.col_sum", ("tile", "tmp_tile")),
        "col_max": op(prefix + "col_max", "tile.col_max", ("tile",)),
        "col_min": op(prefix + "col_min", "tile.col_min", ("tile",)),
        "col_prod": op(prefix + "col_prod", "tile.col_prod", ("tile",)),
        "sum": op(prefix + "sum", "tile.sum", ("tile", "axis", "keepdim"), ("axis", "keepdim")),
        "max": op(prefix + "max", "tile.max", ("tile", "axis", "keepdim"), ("axis", "keepdim")),
        "min": op(prefix + "min", "tile.min", ("tile", "axis", "keepdim"), ("axis", "keepdim")),
        "concat": op(prefix + "concat", "tile.concat", ("src0", "src1")),
        "fillpad": op(prefix + "fillpad", "tile.fillpad", ("tile", "pad_value"), ("pad_value",)),
        "set_validshape": op(prefix + "set_validshape", "tile.set_validshape", ("tile", "valid_rows", "valid_cols")),
        "create_tile": op(prefix + "create_tile", "tile.create", ("shape", "dtype", "target_memory"),
                          ("dtype", "target_memory")),
        "matmul_bias": op(prefix + "matmul_bias", "tile.matmul_bias", ("lhs", "rhs", "bias")),
        "gemv": op(prefix + "gemv", "tile.gemv", ("lhs", "rhs")),
        "gemv_acc": op(prefix + "gemv_acc", "tile.gemv_acc", ("acc", "lhs", "rhs")),
        "gemv_bias": op(prefix + "gemv_bias", "tile.gemv_bias", ("lhs", "rhs", "bias")),
        "batch_matmul": op(prefix + "batch_matmul", "tile.batch_matmul", ("lhs", "rhs")),
        "mscatter": op(prefix + "mscatter", "tile.mscatter", ("src", "idx", "output_tensor")),
    }
    if prefix == "tile.":   # pl.tile.fillpad_inplace only (reference_ops.md §9)
        d["fillpad_inplace"] = op(prefix + "fillpad_inplace", "tile.fillpad_inplace", ("tile", "pad_value"),
                                  ("pad_value",))
    for n in _REF_TILE_TILE:
        d[n] = op(prefix + n, "tile." + n, ("lhs", "rhs", "tmp") if n in ("rem", "xor") else ("lhs", "rhs"))
    for n in _REF_TILE_SCALAR:
        d[n] = op(prefix + n, "tile." + n, ("lhs", "rhs", "tmp") if n in ("rems", "xors") else ("lhs", "rhs"))
    for n in ("row_expand", "row_expand_max", "row_expand_min", "row_expand_expdif"):
        d[n] = op(prefix + n, "tile." + n, ("tile", "row_vec"))
    for n in ("col_expand", "col_expand_add", "col_expand_sub", "col_expand_mul", "col_expand_div",
              "col_expand_max", "col_expand_min", "col_expand_expdif"):
        d[n] = op(prefix + n, "tile." + n, ("tile", "col_vec"))
    return d


# The reference's optional scratch operand of the row reductions: pl.row_sum(t) or pl.row_sum(t, tmp).
for _n in ("row_max", "row_sum", "row_min"):
    _tile[_n] = op("tile." + _n, "tile." + _n, ("a", "tmp"))
    TOP_LEVEL_TILE_OPS[_n] = op(_n, "tile." + _n, ("a", "tmp"))
_tile.update(_reference_tile_ops("tile."))
tile.__dict__.update(_reference_tile_ops("tile."))
tile.__dict__.update({n: _tile[n] for n in ("row_max", "row_sum", "row_min")})
TOP_LEVEL_TILE_OPS.update(_reference_tile_ops(""))
# The cross-core pipe FIFOs, spelt `pl.tpush_to_aiv(tile, *, split, id=None)` & co. in the reference
# (reference_ops.md §13): accelerator-only, so the op's type rule refuses them with a located error.
for _n in ("tpush_to_aiv", "tpush_to_aic", "tpop_from_aic", "tpop_from_aiv"):
    TOP_LEVEL_TILE_OPS[_n] = op(_n, "tile." + _n)

# -- unified ops (spec anchor_features §3, §9): dispatch on the first argument, Tensor or Tile ----
# spec = (tensor spec, tile spec[, "operands"]): with "operands" the other expression arguments
# must be the same kind (or scalars, which pick the scalar variant tensor.adds & co.).
reshape = Builtin("reshape", "unified", (OpSpec("tensor.reshape", ("tensor", "shape")),
                                         OpSpec("tile.reshape", ("tile", "shape"))))
_UNIFIED = _BINARY + _UNARY + _ROW_EXPAND + ("matmul", "matmul_acc")


def _unified(name: str) -> Builtin:
    tile_spec = TOP_LEVEL_TILE_OPS[name].spec
    return Builtin(name, "unified", (OpSpec("tensor." + name, tile_spec.params, tile_spec.attrs), tile_spec,
                                     "operands"))


# The reference's other dispatching names (reference_ops.md §1.1) whose tile op exists here.
_UNIFIED_REFERENCE = ("cmp", "concat", "fillpad", "expands", "row_prod", "col_sum", "col_max", "col_min", "col_prod",
                      "batch_matmul", "row_expand", "row_expand_max", "row_expand_min", "row_expand_expdif", "col_expand",
                      "col_expand_add", "col_expand_sub", "col_expand_mul", "col_expand_div", "col_expand_max",
                      "col_expand_min", "col_expand_expdif", "part_add", "part_mul", "part_max", "part_min",
                      "set_validshape")
UNIFIED_OPS = {n: _unified(n) for n in _UNIFIED + _UNIFIED_REFERENCE}
# The reference's tensor-only names (reference_ops.md §1.1): `pl.sin(x)` is `pl.tensor.sin(x)`, with the
# tile op's parameters; a tile operand is refused (the tile spelling is pl.tile.sin).
TENSOR_ONLY_NAMES = ("sin", "cos", "gather", "scatter", "scatter_update", "gather_row", "arange")
TENSOR_ONLY_OPS = {n: Builtin(n, "tensor_only", OpSpec("tensor." + n)) for n in TENSOR_ONLY_NAMES}
# pl.full(shape, dtype, value) is the reference's tensor-only fill (reference_ops.md §1.1): tensor.full with
# the tile op's parameter order; the tile fill is pl.tile.full.
TENSOR_ONLY_OPS["full"] = Builtin("full", "tensor_only", OpSpec("tensor.full", ("shape", "dtype", "value"), ("dtype",)))
del TOP_LEVEL_TILE_OPS["full"]
# pl.slice / pl.assemble / pl.transpose: tensor views in orchestrations, tile ops in kernels
# (the printer spells tile.slice & co. this way too).
for _n, _tile_params in (("slice", ("tile", "shape", "offset", "valid_shape", "drop_dims", "pad_value")), ("assemble", ("target", "source", "offset")),
                         ("transpose", ("tile", "axis1", "axis2", "tmp_tile"))):
    UNIFIED_OPS[_n] = Builtin(_n, "unified", (_tensor_ops("")[_n].spec,
                                             OpSpec("tile." + _n, _tile_params,
                                                    ("drop_dims", "pad_value") if _n == "slice" else ())))


# -- scope optimizations (spec anchor_features §5, §7): entries of pl.at / pl.spmd optimizations=[...] --
split = Builtin("split", "split")              # pl.split(pl.SplitMode.UP_DOWN, slot_num=4)
auto_chunk = Builtin("auto_chunk", "auto_chunk")
optimizations = Namespace("optimizations", {"split": split, "auto_chunk": auto_chunk})

# -- pipe buffers (spec anchor_features §8): pl.reserve_buffer / pl.import_peer_buffer, base=pl.AUTO --
reserve_buffer = Builtin("reserve_buffer", "pipe_buffer")
import_peer_buffer = Builtin("import_peer_buffer", "pipe_buffer")
aic_initialize_pipe = Builtin("aic_initialize_pipe", "initialize_pipe")   # (dir_mask, slot_size, c2v_buf, v2c_buf)
aiv_initialize_pipe = Builtin("aiv_initialize_pipe", "initialize_pipe")
AUTO = -1


# -- the reference's keyword names (reference_ops.md §2-§7) ---------------------------------
# Where the reference names a parameter differently from our signature, its name is accepted
# as a keyword too: `pl.store(t, [0, 0], output_tensor=y)` is `pl.store(t, [0, 0], y)`,
# `pl.add(lhs=a, rhs=b)` is `pl.add(a, b)`. Keyed by IR op; an alias applies only where the
# op has no parameter of that name (tile.prelu's own `slope` stays itself).
REFERENCE_KEYWORDS: dict = {}


def _reference_keywords(ops, **aliases):
    for o in ops:
        REFERENCE_KEYWORDS.setdefault(o, {}).update(aliases)


def _both(names) -> list:
    return [ns + n for n in names for ns in ("tile.", "tensor.")]


_reference_keywords(_both(_BINARY + ("matmul", "matmul_acc")) + ["tensor." + n + "s" for n in _BINARY[:4]]
                    + ["tensor.maximums", "tensor.minimums"], lhs="a", rhs="b")
_reference_keywords(_both(_UNARY), tile="a", tensor="a")
_reference_keywords(_both(("row_max", "row_sum", "row_min")), tmp_tile="tmp")
_reference_keywords(_both(_ROW_EXPAND), tile="a", tensor="a", target="a", row_vec="row")
_reference_keywords(_both(("row_expand", "row_expand_max", "row_expand_min", "row_expand_expdif")), target="tile")
_reference_keywords(_both(("col_expand", "col_expand_add", "col_expand_sub", "col_expand_mul", "col_expand_div",
                           "col_expand_max", "col_expand_min", "col_expand_expdif")), target="tile")
_reference_keywords(["tile.lrelu"], tile="lhs", slope="rhs")
_reference_keywords(["tile.store"], output_tensor="tensor")
_reference_keywords(["tile.col_sum", "tile.row_prod", "tensor.col_sum", "tensor.row_prod"], tmp="tmp_tile")
_reference_keywords(["tensor.read", "tensor.reshape", "tensor.transpose"], tile="tensor")
_reference_keywords(["tensor.slice"], tile="tensor", shape="shapes", offset="offsets")
_reference_keywords(["tensor.assemble"], offset="offsets")
# pl.read / pl.reshape / pl.transpose / pl.slice / pl.assemble dispatch on their first operand: the
# tensor op's names work on tiles too, as the tile op's work on tensors (above)
_reference_keywords(["tile.read", "tile.reshape", "tile.transpose"], tensor="tile")
_reference_keywords(["tile.slice"], tensor="tile", shapes="shape", offsets="offset")
_reference_keywords(["tile.assemble"], offsets="offset")
