"""A Python model of the call's fast path (pypto.runtime.fast_args, C++ CallPlan), written from
its contract, for the differential test in test_fast_args.py: ``reference_marshal(params, args)``
is None when the call is not the common one, else ``(tensors, scalars)`` as
``MarshalledCall.tensors`` / ``.scalars`` give them: (address, dtype code, shape list) per tensor
slot and uint64 bit patterns per scalar slot. (This was the fast path itself before issue 17 moved
it into C++.)"""

from __future__ import annotations

import struct
from typing import Any, Optional, Sequence

import numpy as np

from pypto.runtime.args import ParamSpec, _accepted_dtypes, runtime_dtype_code

_INT_BITS = {"INT8": 8, "INT16": 16, "INT32": 32, "UINT8": 8, "UINT16": 16, "UINT32": 32}


def _int_range(dtype: str):
    bits = _INT_BITS.get(dtype, 64)
    if dtype.startswith("UINT"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def reference_marshal(params: Sequence[ParamSpec], args: Sequence[Any]) -> Optional[tuple]:
    if len(args) != len(params):
        return None
    n_tensors = sum(1 for p in params if p.kind == "tensor")
    tensors: list = [None] * n_tensors
    scalars: list = [0] * (len(params) - n_tensors)
    dims: dict = {}
    spans = []
    for p, v in zip(params, args):
        if p.kind == "tensor":
            if type(v) is not np.ndarray or v.dtype not in _accepted_dtypes(p.dtype):
                return None
            if v.ndim != len(p.shape):
                return None
            for want, got in zip(p.shape, v.shape):
                if isinstance(want, int):
                    if want != got:
                        return None
                elif dims.setdefault(want, got) != got or got >= 1 << 32:
                    return None
            written = p.direction != "In"
            if not v.flags.c_contiguous or not v.flags.aligned or (written and not v.flags.writeable):
                return None
            tensors[p.slot] = (v.ctypes.data, runtime_dtype_code(p.dtype), list(v.shape))
            if v.nbytes:
                spans.append((v.ctypes.data, v.ctypes.data + v.nbytes, written))
            continue
        t = type(v)
        if p.dtype in ("FP32", "FP16", "BF16"):
            if t is not float and t is not int:
                return None
            try:
                scalars[p.slot] = struct.unpack("<I", struct.pack("<f", float(v)))[0]
            except OverflowError:
                return None
        elif p.dtype == "BOOL":
            if (t is not bool and t is not int) or not 0 <= v <= 1:
                return None
            scalars[p.slot] = 1 if v else 0
        else:
            lo, hi = _int_range(p.dtype)
            if t is not int or not lo <= v <= hi:
                return None
            scalars[p.slot] = v & 0xFFFFFFFFFFFFFFFF
    for i, (lo, hi, w) in enumerate(spans):   # an overlap with a written array: the full checker decides
        for lo2, hi2, w2 in spans[i + 1:]:
            if lo < hi2 and lo2 < hi and (w or w2):
                return None
    return tensors, scalars
