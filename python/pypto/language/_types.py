"""Type spellings of the DSL: dtypes, enums, and annotation markers.

These objects only *name* things; the parser (pypto.frontend) reads them from the AST and
builds IR types. They are also evaluable at class-definition time, because Python evaluates
annotations of the decorated methods::

    a: pl.Tensor[[16, 16], pl.FP32]          # -> TensorSpec (never used at runtime)
    M = pl.dynamic("M")                      # a dynamic dimension symbol
"""

from __future__ import annotations

import enum

from pypto.language._unknown import DSLEnumMeta


class DataType:
    """A scalar element type, spelled ``pl.FP32`` etc.; ``name`` is the IR DataType name."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"pl.{self.name}"


DTYPE_NAMES = ("BOOL", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64",
               "FP16", "BF16", "FP32", "INDEX", "TASK_ID")
DTYPES = {n: DataType(n) for n in DTYPE_NAMES}


class FunctionType(enum.Enum, metaclass=DSLEnumMeta):
    """``pl.FunctionType.*``: what kind of function a ``@pl.function`` method is."""
    Opaque = "Opaque"
    Orchestration = "Orchestration"
    InCore = "InCore"
    AIC = "AIC"
    AIV = "AIV"
    Group = "Group"
    Spmd = "Spmd"
    Inline = "Inline"


class Level(enum.Enum, metaclass=DSLEnumMeta):
    """``pl.Level.*``: where a function or a ``pl.at`` scope runs."""
    AIC = "AIC"
    AIV = "AIV"
    CORE_GROUP = "CORE_GROUP"
    CHIP = "CHIP"
    HOST = "HOST"
    CLUSTER = "CLUSTER"


class CoreType(enum.Enum, metaclass=DSLEnumMeta):
    """``pl.CoreType.*``: the cores a kernel runs on. A pass result (InferKernelCoreTypes)
    that printed IR shows as ``@pl.function(..., core_type=pl.CoreType.AIV)``."""
    AIC = "AIC"
    AIV = "AIV"
    MIXED = "MIXED"


class ScopeMode(enum.Enum, metaclass=DSLEnumMeta):
    """``pl.ScopeMode.*``: the mode of ``with pl.scope(mode=...)`` (reference DSL, anchor_features §4);
    MANUAL is ``pl.manual_scope()``."""
    AUTO = 0
    MANUAL = 1


class SplitMode(enum.Enum, metaclass=DSLEnumMeta):
    """``pl.SplitMode.*`` (reference DSL, anchor_features §5): how the reference cuts a mixed
    cube/vector kernel for the two vector sub-cores. Kept in the IR; a no-op on the CPU."""
    NONE = 0
    UP_DOWN = 1
    LEFT_RIGHT = 2


class Role(enum.Enum, metaclass=DSLEnumMeta):
    """``pl.Role.*``."""
    Orchestrator = "Orchestrator"
    Worker = "Worker"


class MemorySpace(enum.Enum, metaclass=DSLEnumMeta):
    """``pl.MemorySpace.*``: on-chip memory of a tile."""
    Vec = "Vec"
    Mat = "Mat"
    Left = "Left"
    Right = "Right"
    Acc = "Acc"


class PadValue(enum.Enum, metaclass=DSLEnumMeta):
    """``pl.PadValue.*`` (anchor_features §10): the pad mode of a slice's elements outside its valid
    shape (``pad_value=`` of ``slice``, recorded), and the value ``pl.tile.fillpad`` writes there:
    zero -> 0, max -> +inf (the integer maximum), min -> -inf (the integer minimum)."""
    null = "null"
    zero = "zero"
    max = "max"
    min = "min"


class AtomicType(enum.Enum, metaclass=DSLEnumMeta):
    """``pl.AtomicType.*``: ``pl.store(..., atomic=pl.AtomicType.Add)`` adds into the tensor."""
    None_ = "None_"
    Add = "Add"


class Layout(enum.Enum, metaclass=DSLEnumMeta):
    """``pl.Layout.*``: tensor layout (ND default, DN = column-major view)."""
    ND = "ND"
    DN = "DN"


class DynamicDim:
    """A dynamic dimension symbol: ``M = pl.dynamic("M")``; one IR Var per name per program."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"pl.dynamic needs an identifier name, got {name!r}")
        self.name = name

    def __repr__(self) -> str:
        return f"pl.dynamic({self.name!r})"


def dynamic(name: str) -> DynamicDim:
    """Declare a dynamic dimension symbol, e.g. ``M = pl.dynamic("M")`` at module level."""
    return DynamicDim(name)


class _DSLClass(type):
    """Metaclass of the DSL's annotation classes: ``repr(pl.Tensor)`` is ``pl.Tensor``, as spelt in
    the DSL (messages quote annotations rebuilt from a type alias)."""

    def __repr__(cls) -> str:
        return f"pl.{cls.__name__}"


class _AnnotationMarker(metaclass=_DSLClass):
    """Base of ``pl.Tensor`` & co: subscriptable so Python can evaluate annotations."""

    kind = ""

    def __class_getitem__(cls, item):
        return _Spec(cls.kind, item)


class _Spec:
    """What Python makes of ``pl.Tensor[[16, 16], pl.FP32]``: the marker's kind and the subscript's
    value. The parser reads annotations from the source; it reads a _Spec back only for a type
    alias (``X = pl.Tensor[...]`` at module level, then ``x: X``)."""

    __slots__ = ("kind", "item")

    def __init__(self, kind, item):
        self.kind, self.item = kind, item

    def __repr__(self) -> str:
        return f"pl.{self.kind}[{self.item!r}]"


class Tensor(_AnnotationMarker):
    """``pl.Tensor[[d0, d1], dtype(, pl.Layout.DN)]``: a tensor in global memory."""
    kind = "Tensor"


class UnknownType(metaclass=_DSLClass):
    """``x: pl.UnknownType = e``: an annotation that names no type (anchor_features §14): the
    checker skips it and ``x`` takes ``e``'s type, as for a string annotation."""


class TileView(metaclass=_DSLClass):
    """``pl.TileView(valid_shape=[r, c], stride=[s0, s1], start_offset=k)``: a view annotation item of
    ``pl.Tile[...]`` (anchor_features §14). The parser checks it from the source; on the CPU it is a
    no-op (the tile's type is unchanged)."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class MemRef(metaclass=_DSLClass):
    """``pl.MemRef(addr, size[, id])`` (or with a leading ``pl.Mem.<space>``): the on-chip address of a
    tile, an annotation item of ``pl.Tile[...]`` that needs an explicit memory space (§14). CPU: no-op."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class TileLayoutMarker:
    """``pl.NZ``: a fractal layout marker of the reference's user guide; its parser refuses it in
    annotations, and so does ours (anchor_features §14)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"pl.{self.name}"


NZ = TileLayoutMarker("NZ")


class Tile(_AnnotationMarker):
    """``pl.Tile[[d0, d1], dtype(, pl.MemorySpace.X)]``: an on-chip tile (kernel locals)."""
    kind = "Tile"


class Scalar(_AnnotationMarker):
    """``pl.Scalar[dtype]``: a scalar value."""
    kind = "Scalar"


class Array(_AnnotationMarker):
    """``pl.Array[N, dtype]``: a fixed-size array of scalars (e.g. ``pl.Array[4, pl.TASK_ID]``)."""
    kind = "Array"


class Out(_AnnotationMarker):
    """``pl.Out[pl.Tensor[...]]``: a parameter the function writes (ParamDirection Out)."""
    kind = "Out"


class InOut(_AnnotationMarker):
    """``pl.InOut[pl.Tensor[...]]``: a parameter the function reads and writes."""
    kind = "InOut"


class LoopCarry:
    """How a loop carry is materialised: a pass result (ClassifyIterArgCarry) that printed IR
    shows as ``pl.range(..., carries=(pl.alias, pl.rebind, pl.slots(4)))``.

    ``pl.alias``: another name for the init's storage; ``pl.rebind``: a variable the yield
    re-assigns; ``pl.slots(N)``: a TaskId carried as an array of N slots."""

    def __init__(self, rebind: bool, slots: int = 0):
        self.rebind, self.slots = rebind, slots

    def to_ir(self):
        from pypto._core import ir
        c = ir.LoopCarry()
        c.rebind, c.slots = self.rebind, self.slots
        return c

    def __repr__(self):
        return "pl.alias" if not self.rebind else (f"pl.slots({self.slots})" if self.slots else "pl.rebind")


alias = LoopCarry(False)
rebind = LoopCarry(True)


def slots(n: int) -> LoopCarry:
    """``pl.slots(4)``: a TaskId loop carry held in 4 slots (one per pl.parallel iteration)."""
    return LoopCarry(True, int(n))


class TaskIdFacts:
    """What ResolveTaskIds decided about one TaskId value: a pass result that printed IR shows
    as the @pl.function option ``task_ids={"t": pl.task_id(fresh=True, read=True)}``.

    ``slots``: 0 for one TaskId, N when the value names an array of N TaskId slots; ``fresh``:
    always valid (no is_valid() guard); ``read``: a statement names it; ``at_submit``: the
    TaskId a ``pl.submit`` returns, unpacked right there (``out, t = pl.submit(...)``), so HOST
    code declares its handle at the submission."""

    def __init__(self, slots: int = 0, fresh: bool = False, read: bool = False, at_submit: bool = False):
        self.slots, self.fresh, self.read, self.at_submit = int(slots), bool(fresh), bool(read), bool(at_submit)

    def __repr__(self):
        facts = [f"slots={self.slots}"] if self.slots else []
        facts += ["fresh=True"] if self.fresh else []
        facts += ["read=True"] if self.read else []
        facts += ["at_submit=True"] if self.at_submit else []
        return f"pl.task_id({', '.join(facts)})"


def task_id(slots: int = 0, fresh: bool = False, read: bool = False, at_submit: bool = False) -> TaskIdFacts:
    """``pl.task_id(slots=4)``: one entry of the printed ResolveTaskIds result (task_ids=)."""
    return TaskIdFacts(slots, fresh, read, at_submit)
