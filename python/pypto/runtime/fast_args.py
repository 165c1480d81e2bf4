"""The per-call fast path of argument checking (issue 17: the fixed cost of a call).

``fast_marshaller(params)`` does the per-program work once (dtype tables, ranges, slots) and
returns a function that marshals the common call -- every parameter passed positionally, tensors
as C-contiguous NumPy arrays of the declared dtype and shape, scalars as Python numbers that fit
-- straight into the tuples of the ``program_abi`` binding. For anything else (keywords, omitted
pl.Out, torch, a wrong argument...) it returns None and the caller runs the full checker
(``args.bind_and_check``), which accepts or rejects with its located messages: the fast path
only ever accepts calls the full checker accepts, with the same slots.

    marshal = fast_marshaller(compiled.params)
    fast = marshal(args)      # (tensor tuples by slot, scalar bits by slot, arrays to keep) or None
"""

from __future__ import annotations

import struct
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from pypto.runtime.args import ParamSpec, _accepted_dtypes, _check_overlaps, runtime_dtype_code

__all__ = ["fast_marshaller"]

_FLOAT_BITS = struct.Struct("<f")
_INT_BITS = {"INT8": 8, "INT16": 16, "INT32": 32, "UINT8": 8, "UINT16": 16, "UINT32": 32}


def _scalar_plan(p: ParamSpec) -> Tuple[str, int, int]:
    """(kind, lo, hi) of a scalar parameter: "float", "bool" or "int" with its range."""
    if p.dtype in ("FP32", "FP16", "BF16"):
        return "float", 0, 0
    if p.dtype == "BOOL":
        return "bool", 0, 1
    bits = _INT_BITS.get(p.dtype, 64)
    if p.dtype.startswith("UINT"):
        return "int", 0, (1 << bits) - 1
    return "int", -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def fast_marshaller(params: Sequence[ParamSpec], sig: str) -> Callable[[Sequence[Any]], Optional[tuple]]:
    """The fast marshalling function of a signature (see module doc); ``sig`` names the call in
    the overlap error, which the fast path raises itself (it is the only check left; an input that
    is an output's very memory goes to the full checker, which passes a copy of it)."""
    params = list(params)
    n = len(params)
    n_tensors = sum(1 for p in params if p.kind == "tensor")
    n_scalars = n - n_tensors
    plan: List[tuple] = []
    for i, p in enumerate(params):
        if p.kind == "tensor":
            static = all(isinstance(d, int) for d in p.shape)
            plan.append((i, True, p.slot, tuple(_accepted_dtypes(p.dtype)), runtime_dtype_code(p.dtype),
                         p.shape, len(p.shape), static, p.direction != "In", p))
        else:
            kind, lo, hi = _scalar_plan(p)
            plan.append((i, False, p.slot, kind, lo, hi))
    written_flags = [e[8] for e in plan if e[1]]
    from pypto._core.program_abi import buffers_overlap
    pack, unpack = _FLOAT_BITS.pack, struct.Struct("<I").unpack
    ndarray = np.ndarray

    def marshal(args: Sequence[Any]) -> Optional[tuple]:
        if len(args) != n:
            return None
        tensors: List[Any] = [None] * n_tensors
        scalars: List[int] = [0] * n_scalars
        keep: List[Any] = []
        dims = None
        for entry in plan:
            v = args[entry[0]]
            if entry[1]:
                _, _, slot, accepted, code, shape, rank, static, written, _p = entry
                if type(v) is not ndarray or v.dtype not in accepted:
                    return None
                got = v.shape
                if static:
                    if got != shape:
                        return None
                else:
                    if len(got) != rank:
                        return None
                    if dims is None:
                        dims = {}
                    for want, g in zip(shape, got):
                        if isinstance(want, int):
                            if want != g:
                                return None
                        elif dims.setdefault(want, g) != g or g >= 1 << 32:
                            return None
                flags = v.flags
                if not flags.c_contiguous or not flags.aligned or (written and not flags.writeable):
                    return None
                keep.append(v)
                tensors[slot] = (v, code, got, None)  # the binding reads v's address, takes any sequence
            else:
                _, _, slot, kind, lo, hi = entry
                t = type(v)
                if kind == "int":
                    if t is not int or not lo <= v <= hi:
                        return None
                    scalars[slot] = v & 0xFFFFFFFFFFFFFFFF
                elif kind == "float":
                    if t is not float and t is not int:
                        return None
                    try:
                        scalars[slot] = unpack(pack(float(v)))[0]
                    except OverflowError:   # beyond float32: the full checker says so, located
                        return None
                else:
                    if (t is not bool and t is not int) or not 0 <= v <= 1:   # 2 for a bool: the checker refuses it
                        return None
                    scalars[slot] = 1 if v else 0
        # Overlapping arrays are rare: the C++ look first (keep holds the tensors in plan order),
        # the located check (its errors, or the In arguments to pass as copies) only then.
        if len(keep) > 1 and buffers_overlap(keep, written_flags) and \
                _check_overlaps([(e[9], args[e[0]]) for e in plan if e[1]], sig):
            return None   # an input that is an output's memory: the full checker passes a copy
        return tensors, scalars, keep

    return marshal
