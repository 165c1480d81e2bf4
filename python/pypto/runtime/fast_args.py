"""The per-call fast path of argument checking (issue 17: the fixed cost of a call).

``fast_marshaller(params)`` does the per-program work once (accepted dtypes, shapes with their
dynamic symbols, scalar ranges, slots) and returns the ``marshal`` of a C++ ``CallPlan``
(``src/bindings/call_plan.h``). It checks the common call -- every parameter passed
positionally, tensors as C-contiguous, aligned NumPy arrays of the declared dtype and shape
(written ones writeable), scalars as Python numbers that fit, no overlap with a written array --
and returns a ``MarshalledCall`` that ``Runtime.run_marshalled`` runs. For anything else
(keywords, omitted pl.Out, torch, a wrong argument, overlapping arrays...) it returns None and
the caller runs the full checker (``args.bind_and_check``), which accepts or rejects with its
located messages: the fast path only ever accepts calls the full checker accepts, with the same
slots (``tests/python/test_fast_args.py`` compares the two, and the Python model of the plan in
``tests/python/fast_args_reference.py``, on random calls).

    marshal = fast_marshaller(compiled.params)
    call = marshal((x, out))      # MarshalledCall, or None
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from pypto.runtime.args import ParamSpec, _accepted_dtypes, runtime_dtype_code

__all__ = ["fast_marshaller", "call_plan_entries"]

_INT_BITS = {"INT8": 8, "INT16": 16, "INT32": 32, "UINT8": 8, "UINT16": 16, "UINT32": 32}


def _scalar_plan(p: ParamSpec) -> tuple:
    """(kind, lo, hi) of a scalar parameter: "float", "bool" or "int" with its range."""
    if p.dtype in ("FP32", "FP16", "BF16"):
        return "float", 0, 0
    if p.dtype == "BOOL":
        return "bool", 0, 1
    bits = _INT_BITS.get(p.dtype, 64)
    if p.dtype.startswith("UINT"):
        return "int", 0, (1 << bits) - 1
    return "int", -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def call_plan_entries(params: Sequence[ParamSpec]) -> tuple:
    """``(entries, n_tensors, n_scalars, n_symbols)`` of a signature, as ``CallPlan`` takes them:
    a dynamic dimension's name becomes -(k + 1), k its symbol's number in order of appearance.

        call_plan_entries([ParamSpec("x", "tensor", "FP32", (4, "N"), "In", 0)])
        # -> ([("tensor", 0, [dtype('float32')], 0, 4, [4, -1], False)], 1, 0, 1)
    """
    symbols: dict = {}
    entries = []
    for p in params:
        if p.kind == "tensor":
            accepted = _accepted_dtypes(p.dtype)
            shape = [d if isinstance(d, int) else -(symbols.setdefault(d, len(symbols)) + 1) for d in p.shape]
            entries.append(("tensor", p.slot, accepted, runtime_dtype_code(p.dtype), accepted[0].itemsize, shape,
                            p.direction != "In"))
        else:
            entries.append(("scalar", p.slot) + _scalar_plan(p))
    n_tensors = sum(1 for p in params if p.kind == "tensor")
    return entries, n_tensors, len(params) - n_tensors, len(symbols)


def fast_marshaller(params: Sequence[ParamSpec]) -> Callable[[Sequence[Any]], Optional[Any]]:
    """The fast marshalling function of a signature (see module doc)."""
    from pypto._core.program_abi import CallPlan
    entries, n_tensors, n_scalars, n_symbols = call_plan_entries(params)
    return CallPlan(np.ndarray, entries, n_tensors, n_scalars, n_symbols).marshal
