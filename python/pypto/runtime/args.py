"""Call arguments of a compiled program: the one dtype table and the one argument checker that
serve L2 runs (``pypto.compile``) and HOST runs (``pypto.host``).

    specs = param_specs(result.signature)                 # ParamSpec per entry parameter
    call = bind_and_check(specs, "main", (a,), {"b": b})  # raises before anything runs
    call.tensors, call.scalars                            # runtime slots (TensorArg, uint64 bits)
    call.outputs                                          # pl.Out arrays allocated for the caller

Arrays: NumPy arrays, CPU torch tensors (recognised by type, torch is never imported here), and
any object offering ``__dlpack__`` or the buffer protocol (viewed as NumPy without a copy).
Keyword arguments bind by parameter name; omitted ``pl.Out`` parameters are allocated (NumPy
arrays of the declared dtype and shape, torch tensors when the inputs are torch) and returned.
"""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from pypto.errors import PyptoError

__all__ = ["ArgumentTypeError", "ArgumentValueError", "DTYPE_CODES", "ParamSpec", "BoundCall", "param_specs",
           "numpy_dtype", "bfloat16_dtype", "runtime_dtype_code", "bind_and_check", "random_inputs",
           "random_array", "TensorArg", "convert_array", "scalar_bits"]


class ArgumentTypeError(PyptoError, TypeError):
    """A call argument has the wrong kind or dtype, or the argument count is wrong."""


class ArgumentValueError(PyptoError, ValueError):
    """A call argument has the wrong shape, layout or value."""


# ---------------------------------------------------------------------------------------------
# The dtype table: DSL dtype -> (pto2::DataType code, NumPy dtype name, torch dtype name).
# Runtime codes are pto2::DataType (runtime/include/pto2/types.h; stable, passed as int32).

_DTYPES: Dict[str, Tuple[int, str, str]] = {
    "FP32": (0, "float32", "float32"), "FP16": (1, "float16", "float16"), "BF16": (2, "uint16", "bfloat16"),
    "INT8": (3, "int8", "int8"), "INT16": (4, "int16", "int16"), "INT32": (5, "int32", "int32"),
    "INT64": (6, "int64", "int64"), "UINT8": (7, "uint8", "uint8"), "UINT16": (8, "uint16", "uint16"),
    "UINT32": (9, "uint32", "uint32"), "UINT64": (10, "uint64", "uint64"), "BOOL": (11, "bool", "bool"),
    "INDEX": (6, "int64", "int64"),
}

DTYPE_CODES: Dict[str, int] = {k: v[0] for k, v in _DTYPES.items() if k != "INDEX"}


def bfloat16_dtype() -> Optional[np.dtype]:
    """``ml_dtypes.bfloat16`` when ml_dtypes is installed, else None (use uint16 bit patterns)."""
    try:
        import ml_dtypes  # type: ignore
        return np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        return None


def numpy_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of a DSL dtype: FP32 -> float32, BF16 -> ml_dtypes.bfloat16 if installed else
    uint16 (raw bfloat16 bits), INDEX -> int64, ...

        numpy_dtype("FP16")   # dtype('float16')
    """
    if dtype == "BF16":
        return bfloat16_dtype() or np.dtype(np.uint16)
    if dtype not in _DTYPES:
        raise ArgumentTypeError("dtype %s has no NumPy equivalent" % dtype)
    return np.dtype(_DTYPES[dtype][1])


def runtime_dtype_code(dtype: str) -> int:
    """The pto2::DataType code of a DSL dtype: ``runtime_dtype_code("INT32") == 5``."""
    return _DTYPES[dtype][0]


def _accepted_dtypes(dtype: str) -> List[np.dtype]:
    if dtype == "BF16":
        bf = bfloat16_dtype()
        return ([bf] if bf is not None else []) + [np.dtype(np.uint16)]
    return [numpy_dtype(dtype)]


# ---------------------------------------------------------------------------------------------
# The entry signature

@dataclass
class ParamSpec:
    """One parameter of the entry: ``kind`` "tensor" or "scalar"; ``shape`` ints and dynamic
    symbol names; ``direction`` "In" / "Out" / "InOut"; ``slot`` its tensor or scalar slot."""
    name: str
    kind: str
    dtype: str
    shape: Tuple[Any, ...]
    direction: str
    slot: int
    span: Any = None

    def describe(self) -> str:
        if self.kind == "scalar":
            return "pl.Scalar[pl.%s]" % self.dtype
        t = "pl.Tensor[[%s], pl.%s]" % (", ".join(str(d) for d in self.shape), self.dtype)
        return t if self.direction == "In" else "pl.%s[%s]" % (self.direction, t)


def _dim(d):
    if isinstance(d, int):
        return d
    s = str(d)
    return int(s) if s.lstrip("-").isdigit() else s


def param_specs(signature) -> List[ParamSpec]:
    """ParamSpecs of a code generator's signature (``OrchestrationResult.signature`` or a HOST
    result's): ``param_specs(result.signature)[0].name``."""
    return [ParamSpec(p.name, p.kind, p.dtype, tuple(_dim(d) for d in p.shape), p.direction, int(p.slot))
            for p in signature]


@dataclass
class TensorArg:
    """One tensor slot: data pointer, dtype code, shape and (element) strides."""
    data: int
    dtype: int
    shape: Tuple[int, ...]
    strides: Optional[Tuple[int, ...]] = None


# ---------------------------------------------------------------------------------------------
# Arrays of any library, without importing it

def _is_torch(x) -> bool:
    return type(x).__module__.split(".", 1)[0] == "torch"


def _torch_to_numpy(x, err: Callable[..., PyptoError]):
    torch = sys.modules["torch"]  # x is a torch tensor, so torch is loaded
    if x.device.type != "cpu":
        raise err(ArgumentValueError, "torch tensor on device '%s'; the CPU runtime needs CPU tensors" % x.device,
                  "move it with .cpu() (and copy results back)")
    # Tensors torch cannot share as NumPy memory (x.numpy() would raise a bare TypeError or
    # RuntimeError): say which property is in the way and how to get a plain tensor. getattr:
    # torch-like stand-ins may lack these attributes.
    layout = getattr(x, "layout", None)
    if layout is not None and layout != getattr(torch, "strided", layout):
        raise err(ArgumentValueError, "torch tensor with layout %s; the runtime needs a dense (strided) tensor"
                  % layout, "pass x.to_dense()")
    for bit, test, resolve in (("negative", "is_neg", "resolve_neg"), ("conjugate", "is_conj", "resolve_conj")):
        if getattr(x, test, lambda: False)():
            raise err(ArgumentValueError, "torch tensor with its %s bit set (a lazy view without memory of its own)"
                      % bit, "pass x.%s() and read the result from that tensor" % resolve)
    x = x.detach()
    if x.dtype == torch.bfloat16:
        return x.view(torch.int16).numpy().view(np.uint16)
    try:
        return x.numpy()
    except (TypeError, RuntimeError) as e:   # a dtype NumPy has no equivalent of (float8, ...), ...
        raise err(ArgumentTypeError, "torch tensor of dtype %s cannot be viewed as a NumPy array: %s"
                  % (x.dtype, str(e).split("\n")[0]), "convert it to the parameter's dtype with .to(...)") from None


def _written_behind_autograd(x) -> bool:
    """A torch tensor that requires grad, outside torch.no_grad(): the runtime writes its memory
    through a NumPy view, which autograd does not record (no version bump), so a backward pass
    that saved it would use the new values silently."""
    if not _is_torch(x) or not getattr(x, "requires_grad", False):
        return False
    torch = sys.modules["torch"]
    return bool(getattr(torch, "is_grad_enabled", lambda: True)())


def as_array(x, err: Callable[..., PyptoError]) -> Optional[np.ndarray]:
    """A NumPy view of ``x`` (no copy): an ndarray, a CPU torch tensor, anything with
    ``__dlpack__`` or the buffer protocol; None if ``x`` is none of them."""
    if isinstance(x, np.ndarray):
        return x
    if _is_torch(x) and hasattr(x, "detach"):
        return _torch_to_numpy(x, err)
    if hasattr(x, "__dlpack__"):
        try:
            return np.from_dlpack(x)
        except (TypeError, ValueError, BufferError, RuntimeError) as e:
            raise err(ArgumentValueError, "the array passed (%s) cannot be shared through DLPack: %s"
                      % (type(x).__name__, e), "pass a CPU array (NumPy, torch on CPU, ...)")
    if isinstance(x, (str, bytes, int, float, bool)) or x is None:
        return None
    try:
        memoryview(x)
    except TypeError:
        return None
    return np.asarray(x)


def _kind_name(x) -> str:
    mod = type(x).__module__.split(".", 1)[0]
    return "%s.%s" % (mod, type(x).__name__) if mod not in ("builtins",) else type(x).__name__


def _dtype_hint(x, p: ParamSpec, accepted: List[np.dtype]) -> str:
    if p.dtype == "BF16":
        if _is_torch(x):
            return "pass a torch.bfloat16 tensor"
        return "pass bfloat16 bits as np.uint16 (or an ml_dtypes.bfloat16 array)"
    if _is_torch(x):
        return "convert it with .to(torch.%s)" % _DTYPES[p.dtype][2]
    if isinstance(x, np.ndarray):
        return "convert it with .astype(np.%s)" % accepted[0].name
    return "convert it to %s (e.g. np.asarray(x, dtype=np.%s))" % (accepted[0].name, accepted[0].name)


# ---------------------------------------------------------------------------------------------
# Arrays of another dtype: one rule for the call and for pypto run --inputs

def _an(word: str) -> str:
    return ("an " if word[:1] in "aeio" else "a ") + word   # an int8, a uint32


def _value_text(v) -> str:
    v = v.item() if hasattr(v, "item") else v
    return repr(v) if not isinstance(v, float) else ("%r" % v if v == v else "nan")


def convert_array(arr: np.ndarray, dtype: str, name: str) -> np.ndarray:
    """``arr`` as the NumPy dtype of DSL ``dtype`` (parameter ``name``), when no value changes.

    The one rule of ``CompiledProgram.__call__`` (an In tensor) and ``pypto run --inputs``: an
    array of an accepted dtype is returned as it is; one of another real-number dtype is
    converted (a copy) when every value converts exactly -- booleans (0 / 1) into any number
    type, integers that fit, whole floats that fit into an integer type, 0 / 1 into pl.BOOL,
    floats (or integers) that the parameter's float type holds exactly (float64 holding float32
    values, integers up to 2^24 into pl.FP32). Anything else raises ``ArgumentTypeError`` whose
    message names the parameter, the array's dtype and the first value that would change (and
    into what); its help names the explicit conversion for a caller who wants that change. Both
    paths show this text, the call after ``entry(params): ``, ``pypto run`` after ``--inputs: ``.

        convert_array(np.array([True, False]), "FP32", "x")   # array([1., 0.], dtype=float32)
        convert_array(np.array([0.1]), "FP32", "x")           # ArgumentTypeError: 0.1 is no float32 value
    """
    accepted = _accepted_dtypes(dtype)
    if arr.dtype in accepted:
        return arr
    target = accepted[0]
    src = arr.dtype
    head = "parameter '%s' is pl.%s (%s) and got %s array" % (name, dtype, " or ".join(d.name for d in accepted),
                                                               _an(str(src)))
    if dtype == "BF16" and target == np.uint16:
        raise ArgumentTypeError(head + ": without ml_dtypes a pl.BF16 array is its raw bits (uint16)",
                                help="pass the bfloat16 bits as np.uint16 (or install ml_dtypes and pass an "
                                     "ml_dtypes.bfloat16 array)")
    bf = bfloat16_dtype()
    kind = "f" if bf is not None and src == bf else src.kind
    if kind not in "biuf":
        raise ArgumentTypeError(head + ": only arrays of real numbers or booleans convert",
                                help="convert it yourself to %s (e.g. x.astype(np.%s)) if its values are numbers"
                                % (target.name, target.name))
    fix = "convert it with .astype(np.%s) if that change is what you mean" % target.name
    if target.kind == "b":
        fix = "pass x != 0 for truth values"
    with np.errstate(all="ignore"):
        out = arr.astype(target)
        if kind == "b" or arr.size == 0:
            return out
        if target.kind in "biu" and kind == "f":   # whole and in range, compared exactly
            lo, hi = (0, 1) if target.kind == "b" else (int(np.iinfo(target).min), int(np.iinfo(target).max))
            # float64 holds every value of the narrower float types; a longdouble (x86: 64-bit
            # mantissa) is compared in its own type: in float64, 2**63 - 1 rounded up to 2**63
            # and was refused as out of range. lo and hi + 1 are powers of two (exact in both).
            wide = src.kind == "f" and src.itemsize > 8
            f = arr if wide else arr.astype(np.float64)
            ftype = f.dtype.type
            bad = ~(np.isfinite(f) & (f == np.floor(f)) & (f >= ftype(lo)) & (f < ftype(hi + 1)))
        elif target.kind in "biu":   # integers: the value comes back, with its sign (-1 is no uint's 2^64 - 1)
            bad = (out.astype(src) != arr) | ((arr < 0) != (out < 0))
        else:                        # into a float type: finite values stay finite and come back exactly
            back = out.astype(src)
            bad = ~((back == arr) | (np.isnan(out) & (np.isnan(arr) if kind == "f" else False)))
            if kind != "f":
                bad |= ~np.isfinite(out)
        if not bad.any():
            return out
        at = tuple(int(i) for i in np.argwhere(bad)[0])
    raise ArgumentTypeError("%s: its value %s at index %s is not %s value (converted it would be %s)"
                            % (head, _value_text(arr[at]), at, _an(target.name if target.kind != "b" else "bool"),
                               _value_text(out[at])), help=fix)


# ---------------------------------------------------------------------------------------------
# Scalars

def scalar_bits(p: ParamSpec, v, where: str) -> int:
    """The 64-bit slot value of ``v`` for scalar parameter ``p`` (``where`` names it in errors:
    "argument 'n' of main(x, n)" for the call, "parameter 'n'" for ``pypto run --inputs``, which
    checks its 0-d arrays with this function, so both paths refuse the same values with the same
    text). Float parameters take any real number, rounded to float32 (its bits); integer
    parameters an integer in range; pl.BOOL a bool or 0 / 1 (2 is no bool value: refused, as an
    array of 2 is for a pl.BOOL tensor)."""
    # A NumPy / torch scalar or 0-d array stands for its value; an array of rank >= 1 does not,
    # even with one element (.item() would silently take np.array([3]) for 3).
    if isinstance(v, np.generic) or (hasattr(v, "item") and not isinstance(v, (int, float, bool)) and
                                     getattr(v, "ndim", 0) == 0):   # np.float64 is a float: its value, named float
        try:
            v = v.item()
        except Exception:  # noqa: BLE001 - not a 0-d array: reported below by type
            pass
    if getattr(v, "ndim", 0) and getattr(v, "shape", None) is not None:
        raise ArgumentTypeError("%s is a scalar (pl.Scalar[pl.%s]), got an array of shape %s"
                                % (where, p.dtype, tuple(v.shape)),
                                help="pass a Python number, or the element itself (x[0] or x.item(); in an .npz "
                                     "file, a 0-d array)")
    if p.dtype in ("FP32", "FP16", "BF16"):
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise ArgumentTypeError("%s expects a number (pl.Scalar[pl.%s]), got %s" % (where, p.dtype, type(v).__name__))
        try:    # scalars travel as float32 bits: a finite value beyond float32 has none
            return struct.unpack("<I", struct.pack("<f", float(v)))[0]
        except OverflowError:
            shown = repr(v) if len(repr(v)) <= 24 else repr(v)[:20] + "..."
            raise ArgumentValueError("%s = %s does not fit pl.%s (finite float32 values are at most %.6g in "
                                     "magnitude)" % (where, shown, p.dtype, float(np.finfo(np.float32).max)),
                                     help="pass float('inf') for an infinity") from None
    if p.dtype == "BOOL":
        if not isinstance(v, (bool, int)):
            raise ArgumentTypeError("%s expects a bool, got %s" % (where, type(v).__name__))
        if v not in (0, 1):
            raise ArgumentValueError("%s = %d is not a bool value (pl.Scalar[pl.BOOL] takes True / False or 0 / 1)"
                                     % (where, v), help="pass x != 0 for a truth value")
        return 1 if v else 0
    if not isinstance(v, int) or isinstance(v, bool):
        raise ArgumentTypeError("%s expects an integer (pl.Scalar[pl.%s]), got %s" % (where, p.dtype, type(v).__name__),
                                help=_integer_help(v))
    bits = {"INT8": 8, "INT16": 16, "INT32": 32, "UINT8": 8, "UINT16": 16, "UINT32": 32}.get(p.dtype, 64)
    signed = not p.dtype.startswith("UINT")
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not lo <= v <= hi:
        raise ArgumentValueError("%s = %d does not fit pl.%s (range %d..%d)" % (where, v, p.dtype, lo, hi))
    return v & 0xFFFFFFFFFFFFFFFF


def _integer_help(v) -> str:
    """The help for a non-integer passed to an integer scalar: floats are refused as Python's
    ``range(4.0)`` refuses them (docs/running.md); a whole one names the int() that passes it."""
    if not isinstance(v, float):
        return ""
    if v == v and v not in (float("inf"), float("-inf")) and v == int(v):
        return "pass int(x) (%d) if %r is the integer you mean, or compute it with // (n // 2, not n / 2)" % (int(v), v)
    return "pass an integer (a Python int, or an integer 0-d array)"


# ---------------------------------------------------------------------------------------------
# Binding and checking

@dataclass
class BoundCall:
    """A checked call: runtime slots, arrays to keep alive during the run, bound dynamic dims,
    and the pl.Out values allocated for the caller (declaration order; empty if all were given)."""
    tensors: List[TensorArg]
    scalars: List[int]
    keep: List[Any]
    dims: Dict[str, int]
    outputs: List[Any] = field(default_factory=list)
    # Written arguments the runtime cannot address in place (strided or misaligned): the caller's
    # array and the contiguous copy the run writes, copied back by write_back().
    staged: List[Tuple[np.ndarray, np.ndarray]] = field(default_factory=list)

    def write_back(self) -> None:
        """Copies each staged written argument back into the caller's array (after the run,
        whether it completed or failed: the array then holds what the tasks wrote, as an array
        written in place would)."""
        for caller, copy in self.staged:
            np.copyto(caller, copy, casting="no")


def _located(cls, p: Optional[ParamSpec], message: str, help: str = "") -> PyptoError:  # noqa: A002
    kw = {}
    span = getattr(p, "span", None)   # HOST signature entries may have none
    if span is not None and getattr(span, "line", 0):
        kw = dict(file=span.file, line=span.line, col=span.col, end_col=span.end_col, source_line=span.source_line)
    return cls(message, help=help, **kw)


def _did_you_mean(name: str, names: Sequence[str]) -> str:
    import difflib
    close = difflib.get_close_matches(name, names, n=1)
    return "did you mean '%s'? " % close[0] if close else ""


def _bind(params: List[ParamSpec], sig: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Tuple[Dict[str, Any], bool]:
    """Parameter name -> value. Positional arguments fill the parameters in order, except that when
    the pl.Out parameters are left out altogether they fill the others (``prog(x)`` for
    ``prog(x, out)``). Omitted pl.Out parameters are absent from the result (allocated later)."""
    names = [p.name for p in params]
    listing = ", ".join("%s: %s" % (p.name, p.describe()) for p in params)
    for k in kwargs:
        if k not in names:
            raise _located(ArgumentTypeError, None, "%s got an unknown argument '%s'" % (sig, k),
                           help=_did_you_mean(k, names) + "parameters: " + listing)
    if len(args) > len(params):
        raise _located(ArgumentTypeError, None, "%s takes %d argument%s, got %d"
                       % (sig, len(params), "" if len(params) == 1 else "s", len(args)),
                       help="pass one argument per parameter, in order: " + listing)
    outs_named = any(p.direction == "Out" for p in params if p.name in kwargs)
    non_out = [p for p in params if p.direction != "Out"]
    covered = {p.name for p in params[:len(args)]} | set(kwargs)
    skipped = (not outs_named and len(args) < len(params) and any(p.name not in covered for p in non_out) and
               {p.name for p in non_out[:len(args)]}.isdisjoint(kwargs) and
               all(p.name in kwargs for p in non_out[len(args):]))
    order = non_out if skipped else params
    bound: Dict[str, Any] = {}
    for p, v in zip(order, args):
        bound[p.name] = v
    for k, v in kwargs.items():
        if k in bound:
            raise _located(ArgumentTypeError, None, "%s got argument '%s' twice (by position and by name)" % (sig, k))
        bound[k] = v
    missing = [p for p in params if p.name not in bound and p.direction != "Out"]
    if missing:
        names_missing = ", ".join("'%s'" % p.name for p in missing)
        n = len(params)
        what = ("takes %d argument%s, got %d (missing %s)" % (n, "" if n == 1 else "s", len(args), names_missing)
                if not kwargs else "is missing argument%s %s" % ("" if len(missing) == 1 else "s", names_missing))
        raise _located(ArgumentTypeError, missing[0], "%s %s" % (sig, what),
                       help="parameters: " + listing + " (pl.Out parameters may be omitted: they are returned)")
    return bound, skipped


def _allocate(p: ParamSpec, dims: Dict[str, int], torch_like: bool, sig: str):
    shape = []
    for d in p.shape:
        if isinstance(d, int):
            shape.append(d)
        elif d in dims:
            shape.append(dims[d])
        else:
            raise _located(ArgumentValueError, p, "%s: cannot allocate output '%s': its dimension %s is not set by "
                           "any input" % (sig, p.name, d), help="pass '%s' yourself (%s)" % (p.name, p.describe()))
    if torch_like:
        torch = sys.modules["torch"]
        return torch.zeros(shape, dtype=getattr(torch, _DTYPES[p.dtype][2]))
    return np.zeros(shape, dtype=numpy_dtype(p.dtype))


def bind_and_check(params: List[ParamSpec], entry: str, args: Sequence[Any],
                   kwargs: Optional[Mapping[str, Any]] = None) -> BoundCall:
    """Binds ``args`` / ``kwargs`` to ``params``, allocates omitted pl.Out tensors, and checks
    every argument (kind, dtype, rank, shape, dynamic dims, layout, writability) before anything
    runs. Raises ArgumentTypeError / ArgumentValueError located at the parameter.

        call = bind_and_check(specs, "main", (a,), {"out": c})
    """
    sig = "%s(%s)" % (entry, ", ".join(p.name for p in params))
    bound, skipped = _bind(params, sig, args, kwargs or {})
    if skipped and not all(_kind_fits(p, bound[p.name]) for p in params if p.name in bound):
        # Too few arguments, and reading them as "the pl.Out parameters omitted" does not fit
        # their kinds either (an array for a scalar...): report the count.
        n = len(params)
        outs = [p.name for p in params if p.direction == "Out"]
        raise _located(ArgumentTypeError, None, "%s takes %d argument%s, got %d"
                       % (sig, n, "" if n == 1 else "s", len(args) + len(kwargs or {})),
                       help="pass one argument per parameter, or omit the pl.Out parameter%s %s (they are then "
                            "returned)" % ("" if len(outs) == 1 else "s", ", ".join(outs)))
    return _check(params, sig, bound)


def _kind_fits(p: ParamSpec, v) -> bool:
    is_array = not isinstance(v, (int, float, bool, complex)) and (
        isinstance(v, np.ndarray) and v.ndim > 0 or _is_torch(v) or hasattr(v, "__dlpack__") or
        hasattr(v, "__array_interface__") or isinstance(v, memoryview))
    return is_array == (p.kind == "tensor")


def _check(params: List[ParamSpec], sig: str, bound: Dict[str, Any]) -> BoundCall:
    tensors: Dict[int, TensorArg] = {}
    scalars: Dict[int, int] = {}
    keep: List[Any] = []
    dims: Dict[str, Tuple[int, str]] = {}
    passed: List[Tuple[ParamSpec, np.ndarray]] = []     # tensors as the runtime sees them
    given: List[Tuple[ParamSpec, np.ndarray]] = []      # the caller's arrays (for the staged ones' overlaps)
    staged: List[Tuple[ParamSpec, np.ndarray]] = []     # written arguments run on a contiguous copy
    torch_inputs = False
    for p in params:
        if p.name not in bound:
            continue
        v = bound[p.name]
        where = "argument '%s' of %s" % (p.name, sig)

        def err(cls, message, help="", _p=p):  # noqa: A002
            return _located(cls, _p, message, help)
        if p.kind == "scalar":
            try:
                scalars[p.slot] = scalar_bits(p, v, where)
            except PyptoError as e:
                raise _located(type(e), p, e.message, e.help)
            continue
        if isinstance(v, np.ma.MaskedArray):   # its data was used as it is: the mask silently ignored
            raise err(ArgumentTypeError, "%s is a masked array (numpy.ma): the kernels would read and write all of "
                      "its data, masked elements included, and leave the mask as it is" % where,
                      "pass np.ma.getdata(x) (the same memory, no mask)" + (" or x.filled(value) (masked elements "
                                                                             "replaced)" if p.direction == "In" else ""))
        arr = as_array(v, err)
        if arr is None:
            raise err(ArgumentTypeError, "%s must be a NumPy array (or an array with __dlpack__ or the buffer protocol) for %s, got %s" % (where, p.describe(), _kind_name(v)),
                      "e.g. np.zeros(%s, dtype=np.%s)" % ([d if isinstance(d, int) else 1 for d in p.shape],
                                                          numpy_dtype(p.dtype).name))
        torch_inputs = torch_inputs or _is_torch(v)
        given.append((p, arr))
        accepted = _accepted_dtypes(p.dtype)
        if arr.dtype not in accepted:
            shown = str(v.dtype) if _is_torch(v) else str(arr.dtype)
            # A written tensor is the caller's memory: a converted copy would take the result.
            # A torch bfloat16 tensor is viewed as its uint16 bits, which are no values to convert.
            if p.direction != "In" or shown == "torch.bfloat16":
                raise err(ArgumentTypeError, "%s has dtype %s, expected pl.%s (%s)%s"
                          % (where, shown, p.dtype, " or ".join(d.name for d in accepted),
                             "; pl.%s tensors are written in place, so they are not converted" % p.direction
                             if p.direction != "In" else ""), _dtype_hint(v, p, accepted))
            try:   # the rule pypto run --inputs applies too: converted when no value changes
                arr = convert_array(arr, p.dtype, p.name)
            except ArgumentTypeError as e:
                raise err(ArgumentTypeError, "%s: %s" % (where, e.message),
                          _dtype_hint(v, p, accepted) if _is_torch(v) else e.help) from None
        if arr.ndim != len(p.shape):
            raise err(ArgumentValueError, "%s has shape %s, expected rank %d (%s)"
                      % (where, tuple(arr.shape), len(p.shape), p.describe()))
        for axis, (want, got) in enumerate(zip(p.shape, arr.shape)):
            if isinstance(want, int):
                if want != got:
                    raise err(ArgumentValueError, "%s has shape %s, expected %s (axis %d is %d, not %d)"
                              % (where, tuple(arr.shape), tuple(p.shape), axis, got, want))
                continue
            if want in dims and dims[want][0] != got:
                raise err(ArgumentValueError, "%s: dynamic dimension %s is %d here but %d in argument '%s'"
                          % (where, want, got, dims[want][0], dims[want][1]),
                          "every parameter declaring %s must have the same extent on that axis" % want)
            dims.setdefault(want, (got, p.name))
            if got >= 1 << 32:
                raise err(ArgumentValueError, "%s: extent %d of axis %d is too large" % (where, got, axis))
        if p.direction != "In" and not arr.flags.writeable:
            raise err(ArgumentValueError, "%s is read-only but is written (pl.%s)" % (where, p.direction))
        # The runtime addresses a tensor as one row-major block, and kernels access elements through
        # typed pointers (an address that is not a multiple of the element size is undefined
        # behaviour, and can fault in vectorized loops). Another layout runs on a contiguous copy
        # (NumPy allocates aligned memory); a written one is copied back after the run.
        if not arr.flags.c_contiguous or not arr.flags.aligned:
            if p.direction != "In":
                if _self_overlapping(arr):
                    raise err(ArgumentValueError, "%s has elements that share memory (strides %s for shape %s) but "
                              "is written (pl.%s): which of their results it would keep is undefined"
                              % (where, arr.strides, tuple(arr.shape), p.direction),
                              "pass an array whose elements are distinct (e.g. np.zeros(shape))")
                staged.append((p, arr))
            arr = np.array(arr, order="C", copy=True)
        if p.direction != "In" and _written_behind_autograd(v):
            raise err(ArgumentValueError, "%s is a torch tensor that requires grad and is written in place (pl.%s): "
                      "autograd would not see the write (torch refuses such in-place writes)" % (where, p.direction),
                      "pass x.detach() (the same memory) or call inside torch.no_grad()")
        keep.append(arr)
        passed.append((p, arr))
        tensors[p.slot] = TensorArg(arr.ctypes.data, runtime_dtype_code(p.dtype), tuple(int(s) for s in arr.shape))
    copies = _check_overlaps(passed, sig)
    _check_staged_overlaps(staged, given, sig)
    for p, arr in passed:   # an In that is a written argument's very memory: read as it was before the call
        if p.name in copies:
            arr = arr.copy()
            keep.append(arr)
            tensors[p.slot] = TensorArg(arr.ctypes.data, runtime_dtype_code(p.dtype), tuple(int(s) for s in arr.shape))
    outputs: List[Any] = []
    flat_dims = {k: v[0] for k, v in dims.items()}
    for p in params:
        if p.name in bound:
            continue
        out = _allocate(p, flat_dims, torch_inputs, sig)
        outputs.append(out)
        arr = as_array(out, lambda cls, m, h="": _located(cls, p, m, h))
        keep.append(arr)
        tensors[p.slot] = TensorArg(arr.ctypes.data, runtime_dtype_code(p.dtype), tuple(int(s) for s in arr.shape))
    copied = {p.name: arr for p, arr in passed}
    return BoundCall([tensors[i] for i in sorted(tensors)], [scalars[i] for i in sorted(scalars)], keep,
                     flat_dims, outputs, [(arr, copied[p.name]) for p, arr in staged])


# ---------------------------------------------------------------------------------------------
# Random inputs (pypto run)

def _check_overlaps(passed: List[Tuple[ParamSpec, np.ndarray]], sig: str) -> List[str]:
    """Refuses two tensor arguments that are different views of overlapping memory when one is
    written. The runtime orders tasks by tensor (its storage base), so a write through one view
    would race with a read through the other (a wrong result now and then).

    The very same memory (same address, dtype and shape) for an In parameter and a written one is
    allowed, read as it was before the call: returns the names of those In parameters, which the
    caller passes as copies (in place, a task writing the output before another reads the input
    made a wrong result: y = swapped halves of x with x is y gave both halves the same rows). The
    very same memory for two written parameters is refused: one result would overwrite the other.
    Every array passed is C-contiguous here (arrays that are not run on copies), so its memory
    is exactly [address, address + nbytes)."""
    copies: List[str] = []
    spans = sorted(((arr.ctypes.data, arr.ctypes.data + arr.nbytes, p, arr) for p, arr in passed if arr.nbytes),
                   key=lambda t: t[0])
    for i, (lo, hi, p, a) in enumerate(spans):
        for lo2, hi2, q, b in spans[i + 1:]:
            if lo2 >= hi:
                break
            if p.direction == "In" and q.direction == "In":
                continue
            if lo2 == lo and a.dtype == b.dtype and a.shape == b.shape:
                if p.direction != "In" and q.direction != "In":
                    first, second = sorted((p, q), key=lambda s: s.slot)
                    raise _located(ArgumentValueError, second, "%s: arguments '%s' and '%s' are the same array, and "
                                   "both are written (pl.%s, pl.%s): one result would overwrite the other"
                                   % (sig, first.name, second.name, first.direction, second.direction),
                                   help="pass a separate array for each")
                reader = p if p.direction == "In" else q
                if reader.name not in copies:
                    copies.append(reader.name)
                continue
            w = q if q.direction != "In" else p
            other = p if w is q else q
            raise _located(ArgumentValueError, w, "%s: arguments '%s' and '%s' are different views of overlapping "
                           "memory, and '%s' is written (pl.%s): the runtime orders tasks by tensor and cannot see "
                           "that they share memory" % (sig, other.name, w.name, w.name, w.direction),
                           help="pass a copy of one of them (np.copy(x) / x.clone()), or the very same array for both")
    return copies


def _self_overlapping(arr: np.ndarray) -> bool:
    """True unless the axes, taken by increasing stride, each step past the memory the smaller
    ones span (a broadcast's stride 0, np.lib.stride_tricks views): sufficient for distinct
    elements, and every layout NumPy slicing and transposing makes satisfies it."""
    span = arr.itemsize
    for stride, extent in sorted((abs(st), n) for st, n in zip(arr.strides, arr.shape) if n > 1):
        if stride < span:
            return True
        span += stride * (extent - 1)
    return False


# np.exceptions is NumPy >= 1.25; 1.24 (the oldest supported) has the class at the top level.
_TOO_HARD = getattr(np, "exceptions", np).TooHardError


def _check_staged_overlaps(staged: List[Tuple[ParamSpec, np.ndarray]], given: List[Tuple[ParamSpec, np.ndarray]],
                           sig: str) -> None:
    """Refuses a staged written argument (run on a copy, copied back after the run) whose memory
    another written argument shares: the copies back would overwrite one result with the other.
    An In argument may share it: inputs are read as they were before the call, and the staged
    argument's memory changes only after the run."""
    for p, arr in staged:
        for q, other in given:
            if q is p or q.direction == "In":
                continue
            try:
                shared = np.shares_memory(arr, other, max_work=1 << 20)
            except _TOO_HARD:   # strides too tangled to decide: assume they share
                shared = True
            if shared:
                first, second = sorted((p, q), key=lambda s: s.slot)
                raise _located(ArgumentValueError, second, "%s: arguments '%s' and '%s' share memory, and both are "
                               "written (pl.%s, pl.%s): one result would overwrite the other"
                               % (sig, first.name, second.name, first.direction, second.direction),
                               help="pass a separate array for each")


def random_inputs(params, seed: int = 0, dims: Optional[Dict[str, int]] = None) -> List[Any]:
    """Seeded random arguments for parameters with ``kind``, ``name``, ``dtype``, ``direction``
    and ``shape`` (extents as int or digit strings, or dynamic dimension names looked up in
    ``dims``): floats uniform in [-1, 1), integers in [-8, 8) (unsigned [0, 16)), Out tensors
    zeroed, scalars 1 (floats 0.5). Serves L2 and HOST programs.

        x, y, out = random_inputs(compiled.params, seed=1)
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ArgumentValueError("the seed of random inputs must be a non-negative integer, got %r" % (seed,),
                                 help="e.g. random_inputs(seed=0) (pypto run --seed 0)")
    rng = np.random.default_rng(seed)
    dims = dict(dims or {})
    out: List[Any] = []
    for p in params:
        if p.kind == "scalar":
            out.append(0.5 if p.dtype in ("FP32", "FP16", "BF16") else (True if p.dtype == "BOOL" else 1))
            continue
        shape = []
        for d in p.shape:
            if isinstance(d, int) or (isinstance(d, str) and d.isdigit()):
                shape.append(int(d))
            elif d in dims:
                if isinstance(dims[d], bool) or not isinstance(dims[d], (int, np.integer)) or dims[d] < 0:
                    raise ArgumentValueError("dynamic dimension %s of parameter '%s' must be a non-negative "
                                             "integer, got %r" % (d, p.name, dims[d]),
                                             help="e.g. --dim %s=128 (or dims={'%s': 128})" % (d, d))
                shape.append(int(dims[d]))
            else:
                raise ArgumentValueError("dynamic dimension %s of parameter '%s' needs a value" % (d, p.name),
                                         help="give it with --dim %s=<extent> (or dims={'%s': n})" % (d, d))
        try:
            out.append(np.zeros(shape, dtype=numpy_dtype(p.dtype)) if p.direction == "Out"
                       else random_array(rng, p.dtype, shape))
        except (ValueError, MemoryError) as e:   # NumPy's "array is too big" / an allocation failure
            raise _located(ArgumentValueError, p, "cannot allocate a random input for parameter '%s' of shape %s "
                           "(pl.%s): %s" % (p.name, shape, p.dtype, e or type(e).__name__),
                           help="pass the arguments yourself, or declare a smaller shape") from None
    return out


# Elements drawn at once by random_array: the float64 / int64 draws of one chunk (32 MiB) exist at
# a time, not of the whole array (a [2**31] INT32 input peaked at 24 GiB: its int64 draws, then
# the copy; the OOM killer took the process).
RANDOM_CHUNK = 1 << 22


def random_array(rng: np.random.Generator, dtype: str, shape) -> np.ndarray:
    """A seeded random array of a DSL dtype (BF16 as uint16 bits unless ml_dtypes is present):
    floats uniform in [-1, 1), integers in [-8, 8) (unsigned [0, 16)), bools 0/1. Drawn in chunks
    of RANDOM_CHUNK elements into the result, so the extra memory is one chunk's draws; the values
    are those of one draw of the whole array (the generator's stream is consumed in order)."""
    bf = bfloat16_dtype() if dtype == "BF16" else None
    if dtype in ("FP32", "FP16"):
        target = numpy_dtype(dtype)
        draw = lambda n: rng.uniform(-1.0, 1.0, size=n)
    elif dtype == "BF16":
        target = bf if bf is not None else np.uint16
        def draw(n):
            f = rng.uniform(-1.0, 1.0, size=n).astype(np.float32)
            return f.astype(bf) if bf is not None else (f.view(np.uint32) >> 16).astype(np.uint16)
    elif dtype == "BOOL":
        target = np.bool_
        draw = lambda n: rng.integers(0, 2, size=n)
    else:
        target = numpy_dtype(dtype)
        low, high = (0, 16) if dtype.startswith("UINT") else (-8, 8)
        draw = lambda n: rng.integers(low, high, size=n)
    out = np.empty(shape, dtype=target)
    flat = out.reshape(-1)   # a fresh C-contiguous array: a view of it
    for i in range(0, flat.size, RANDOM_CHUNK):
        n = min(RANDOM_CHUNK, flat.size - i)
        flat[i:i + n] = draw(n)
    return out