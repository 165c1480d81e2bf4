"""The pypto DSL namespace: ``import pypto.language as pl``.

    import pypto.language as pl

    @pl.program
    class Add:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
            c = pl.store(pl.load(a, [0], [16]), [0], c)
            return c

    # Add is now an IR Program (pypto._core.ir.Program)

See docs/dsl.md for the whole surface.
"""

from pypto.language import _builtins
from pypto.language._builtins import (  # noqa: F401
    Builtin, array, assemble, at, cast, cluster, create_tensor, manual_scope, no_dep, parallel, range,
    read, scope, slice, write, spmd, spmd_submit, submit, system, tensor, tile, transpose, yield_,
)
from pypto.language._builtins import unroll  # noqa: F401  (reference DSL, anchor_features §12)
from pypto.language._builtins import dump_tag  # noqa: F401  (anchor_features §6)
from pypto.language._builtins import const  # noqa: F401  (reference_ops.md §10: pl.const(1, pl.INT32))
from pypto.language._decorators import function  # noqa: F401
from pypto.language._parse import parse_function, parse_program, program  # noqa: F401
from pypto.language._types import (  # noqa: F401
    DTYPES, Array, AtomicType, CoreType, DataType, DynamicDim, FunctionType, InOut, Layout, Level, MemorySpace, Out, Role, Scalar,
    Tensor, Tile, dynamic,
)
from pypto.language._types import ScopeMode, SplitMode  # noqa: F401  (reference DSL, anchor_features §4, §5)
from pypto.language._types import PadValue  # noqa: F401  (slice pad_value=, fillpad; anchor_features §10)
from pypto.language._types import NZ, MemRef, TileView  # noqa: F401  (annotation items, anchor_features §14)
from pypto.language._types import UnknownType  # noqa: F401  (an annotation the checker skips, §14)
from pypto.language._types import MemorySpace as Mem  # noqa: F401  (pl.Mem.Vec == pl.MemorySpace.Vec, §14)
from pypto.language._types import LoopCarry, alias, rebind, slots  # noqa: F401  (printed pass results)
from pypto.language._types import TaskIdFacts, task_id  # noqa: F401  (printed ResolveTaskIds result)

BOOL = DTYPES["BOOL"]
INT8 = DTYPES["INT8"]
INT16 = DTYPES["INT16"]
INT32 = DTYPES["INT32"]
INT64 = DTYPES["INT64"]
UINT8 = DTYPES["UINT8"]
UINT16 = DTYPES["UINT16"]
UINT32 = DTYPES["UINT32"]
UINT64 = DTYPES["UINT64"]
FP16 = DTYPES["FP16"]
BF16 = DTYPES["BF16"]
FP32 = DTYPES["FP32"]
INDEX = DTYPES["INDEX"]
TASK_ID = DTYPES["TASK_ID"]

# Kernel tile ops at top level: pl.load, pl.store, pl.add, ... (also under pl.tile.*).
globals().update(_builtins.TOP_LEVEL_TILE_OPS)

# Unified ops dispatching on Tensor / Tile (reference DSL, spec anchor_features §3).
reshape = _builtins.reshape
split, auto_chunk, optimizations = _builtins.split, _builtins.auto_chunk, _builtins.optimizations
reserve_buffer, import_peer_buffer, AUTO = _builtins.reserve_buffer, _builtins.import_peer_buffer, _builtins.AUTO
aic_initialize_pipe, aiv_initialize_pipe = _builtins.aic_initialize_pipe, _builtins.aiv_initialize_pipe
globals().update(_builtins.UNIFIED_OPS)     # pl.add, pl.slice & co. on tensors and tiles (anchor_features §9)
globals().update(_builtins.TENSOR_ONLY_OPS)  # pl.sin, pl.gather & co. on tensors (reference_ops.md §1.1)


def __getattr__(name):
    """A misspelt ``pl.<name>`` is a located PyptoError (also an AttributeError)."""
    if name.startswith("__"):
        raise AttributeError(name)
    from pypto.language._unknown import unknown
    raise unknown(f"pl.{name}", [n for n in globals() if not n.startswith("_")])
