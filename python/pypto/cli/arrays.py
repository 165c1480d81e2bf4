"""Named arrays in and out of ``pypto run``: ``--inputs in.npz``, ``--save out.npz``, ``--check ref.npz``.

An ``.npz`` file maps parameter names to arrays (``np.savez(path, x=..., out=...)``); a scalar
parameter is a 0-d array. Comparison tolerances depend on the dtype (``TOLERANCES``): floats
compare with ``|a - b| <= atol + rtol * |b|`` (equal values, infinities included, and NaN against NaN
match), integers and booleans exactly.

    pypto run prog.py --inputs in.npz --save out.npz
    pypto run prog.py --inputs in.npz --check ref.npz     # exit status 1 on a mismatch
"""

from __future__ import annotations

import os
import zipfile
import zlib
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from pypto.cli.common import CliError, check_dims, dynamic_dim_names, not_a_file, require_dim_values
from pypto.errors import PyptoError
from pypto.runtime.args import ArgumentTypeError, convert_array, scalar_bits
from pypto.runtime.trace_path import probe_writable

__all__ = ["TOLERANCES", "bf16_file_array", "check_paths", "dims_from_inputs", "entry_inputs", "load_inputs", "read_inputs", "npz_problem",
           "npz_members_problem", "outputs_by_name", "save_outputs", "check_outputs"]

# (rtol, atol) per DSL dtype; dtypes not listed compare exactly.
TOLERANCES: Dict[str, Tuple[float, float]] = {
    "FP32": (1e-5, 1e-6),
    "FP16": (1e-3, 1e-4),
    "BF16": (1e-2, 1e-3),
}


def check_paths(args) -> None:
    """Usage errors for ``--inputs`` / ``--check`` files that do not exist and ``--save`` / ``--trace``
    paths whose directory does not exist, raised before anything is compiled or run."""
    for flag, path in (("--inputs", getattr(args, "inputs", None)), ("--check", getattr(args, "check", None))):
        if path and not os.path.isfile(path):
            raise CliError("%s: %s" % (flag, not_a_file(path)))
        problem = npz_problem(path) if path else ""
        if problem:    # found now, not after the compile
            raise CliError("%s: %s is not a NumPy .npz file: %s" % (flag, path, problem))
        problem = npz_members_problem(path) if path else ""
        if problem:    # object arrays and other members were refused after the compile (or a traceback)
            raise CliError("%s: %s" % (flag, problem))
    save, check = getattr(args, "save", None), getattr(args, "check", None)
    if save and check and os.path.abspath(save) == os.path.abspath(check):   # saved first, the check always passed
        raise CliError("--save and --check name the same file (%s): the check would compare the outputs with "
                       "themselves; save to another file" % save)
    inputs = getattr(args, "inputs", None)
    if save and inputs and os.path.abspath(save) == os.path.abspath(inputs):   # the run's inputs would be lost
        raise CliError("--save and --inputs name the same file (%s): saving the outputs would replace the inputs "
                       "(a later --inputs run would then draw the missing ones at random); save to another file"
                       % save)
    trace = getattr(args, "trace", None)
    for flag, path in (("--save", save), ("--check", check), ("--inputs", inputs)):
        if trace and path and os.path.abspath(trace) == os.path.abspath(path):   # one would overwrite the other
            raise CliError("--trace and %s name the same file (%s); give the trace its own file" % (flag, trace))
    for flag, path in (("--save", getattr(args, "save", None)), ("--trace", getattr(args, "trace", None))):
        if path and os.path.isdir(path):    # found now, not after the run whose results it would hold
            raise CliError("%s: %s is a directory; give a file path" % (flag, path))
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise CliError("%s: directory %s does not exist" % (flag, os.path.dirname(os.path.abspath(path))))
        problem = probe_writable(path) if path else None
        if problem:    # e.g. a directory that takes no new files: found now, not after the run
            raise CliError("%s: cannot write %s: %s" % (flag, path, problem))


def npz_problem(path: str) -> str:
    """Why ``path`` is no ``.npz`` archive ('' when it is a zip file, which np.load reads as one):
    np.load returned a bare array for an ``.npy`` file (then a TypeError traceback) and raised
    zipfile.BadZipFile / EOFError tracebacks for a truncated or empty file."""
    try:
        with open(path, "rb") as f:
            head = f.read(6)
    except OSError as e:
        return e.strerror or str(e)
    if head == b"\x93NUMPY":
        return "it holds one .npy array, not named arrays; save them with np.savez(path, <name>=array, ...)"
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:   # a pickle (protocol 2..5)
        return ("it is a pickle, which pypto does not load (unpickling runs code from the file); save the arrays "
                "with np.savez(path, <name>=array, ...)")
    if not zipfile.is_zipfile(path):
        return "empty file" if not head else "not a zip archive (truncated, or not written by np.savez)"
    return ""


def npz_members_problem(path: str) -> str:
    """Why the members of the ``.npz`` archive at ``path`` are not arrays pypto loads ('' when each
    is a ``.npy`` array without Python objects), from each member's ``.npy`` header alone (no
    array data is read), so that ``pypto run`` says it before compiling: an object array (np.load
    refuses to unpickle it: unpickling runs code from the file) was refused only after the C++
    build, and a member that is no ``.npy`` array (np.load returns its bytes) was a traceback."""
    fmt = np.lib.format
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                with zf.open(info) as f:
                    try:
                        version = fmt.read_magic(f)
                    except ValueError:
                        return ("member '%s' of %s is not a .npy array; save the arrays with np.savez(path, "
                                "<name>=array, ...)" % (info.filename, path))
                    read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
                    try:
                        _shape, _fortran, dtype = read(f, max_header_size=1 << 20)
                    except Exception as e:  # noqa: BLE001 - a damaged header: NumPy's parser raises many kinds
                        return "%s is not a NumPy .npz file (member '%s': %s)" % (path, info.filename,
                                                                                   str(e).split("\n")[0] or type(e).__name__)
                if dtype.hasobject:
                    return ("array '%s' in %s holds Python objects (dtype %s), which pypto does not load (unpickling "
                            "runs code from the file); save it as numbers, e.g. np.savez(path, %s=np.asarray(a, "
                            "dtype=np.float32))" % (name, path, dtype, name))
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as e:   # a damaged member or header
        return "%s is not a NumPy .npz file (%s)" % (path, e)
    return ""


def _load_npz(path: str, flag: str) -> Dict[str, np.ndarray]:
    if not os.path.isfile(path):
        raise CliError("%s: %s" % (flag, not_a_file(path)))
    problem = npz_problem(path)
    if problem:
        raise CliError("%s: %s is not a NumPy .npz file: %s" % (flag, path, problem))
    problem = npz_members_problem(path)
    if problem:
        raise CliError("%s: %s" % (flag, problem))
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as e:   # a damaged member
        raise CliError("%s: %s is not a NumPy .npz file (%s)" % (flag, path, e))


def read_inputs(path: str) -> Dict[str, np.ndarray]:
    """The arrays of the ``--inputs`` file (usage errors for a missing or damaged file)."""
    return _load_npz(path, "--inputs")


def dims_from_inputs(arrays: Dict[str, np.ndarray], params, dims: Dict[str, int]) -> Dict[str, int]:
    """``dims`` (from ``--dim``) with each other dynamic dimension read from the shape of an
    ``--inputs`` array whose parameter's shape names it, so a file of arrays is enough to run a
    dynamic-shape program. An array that disagrees with ``--dim`` or with another array is a
    usage error naming both; an array of the wrong rank is left to ``load_inputs``.

        dims_from_inputs({"x": np.zeros((48, 64))}, params, {})   # -> {"M": 48} for x: [M, 64]
    """
    out = dict(dims)
    source: Dict[str, str] = {name: "--dim %s=%d" % (name, n) for name, n in dims.items()}
    for p in params:
        arr = arrays.get(p.name) if p.kind == "tensor" else None
        if arr is None or arr.ndim != len(p.shape):
            continue
        for want, got in zip(p.shape, arr.shape):
            if isinstance(want, int) or (isinstance(want, str) and want.isdigit()):
                continue
            here = "'%s' of shape %s" % (p.name, tuple(arr.shape))
            if want in out and out[want] != got:
                raise CliError("--inputs: %s gives dynamic dimension %s = %d, but %s gives %d"
                               % (here, want, got, source[want], out[want]))
            out.setdefault(want, int(got))
            source.setdefault(want, here)
    return out


def entry_inputs(params, random_inputs: Callable[[Dict[str, int]], List], path: Optional[str], dims: Dict[str, int],
                 what: str) -> List:
    """The arguments of a CLI run of an entry with parameters ``params`` (``what`` names it in
    errors): ``--dim`` checked against its dynamic dimensions, the other dimensions read from the
    ``--inputs`` arrays (``dims_from_inputs``), then ``random_inputs(dims)`` with the file's arrays
    in place of the random ones.

        inputs = entry_inputs(c.params, lambda d: c.random_inputs(seed=0, dims=d), "in.npz", {}, "entry main")
    """
    check_dims(dims, dynamic_dim_names(params), what)
    arrays = read_inputs(path) if path else None
    if arrays:
        dims = dims_from_inputs(arrays, params, dims)
    require_dim_values([(d, p.name) for p in params if p.kind == "tensor" for d in p.shape
                        if isinstance(d, str) and not d.isdigit()], dims, path is not None)
    inputs = random_inputs(dims)
    return load_inputs(path, params, inputs, arrays) if arrays is not None else inputs


def load_inputs(path: str, params, inputs: List, arrays: Optional[Dict[str, np.ndarray]] = None) -> List:
    """``inputs`` with each parameter named in the ``.npz`` at ``path`` replaced by its array (a
    scalar by the 0-d array's value). Unknown names and wrong shapes are usage errors. ``arrays``:
    the file's arrays when already read (``read_inputs``)."""
    if arrays is None:
        arrays = _load_npz(path, "--inputs")
    by_name = {p.name: i for i, p in enumerate(params)}
    unknown = sorted(set(arrays) - set(by_name))
    if unknown:
        raise CliError("--inputs: %s has arrays for no parameter: %s (parameters: %s)"
                       % (path, ", ".join(unknown), ", ".join(p.name for p in params)))
    out = list(inputs)
    for name, arr in arrays.items():
        i = by_name[name]
        p = params[i]
        if p.kind == "scalar":
            try:   # the call's check and text: a value refused here would have been refused by the run
                scalar_bits(p, arr, "parameter '%s'" % name)
            except PyptoError as e:
                raise CliError("--inputs: %s%s" % (e.message, "; " + e.help if e.help else "")) from None
            out[i] = arr.item()
            continue
        expect = tuple(np.shape(inputs[i]))
        if tuple(arr.shape) != expect:
            raise CliError("--inputs: '%s' has shape %s, the parameter needs %s" % (name, tuple(arr.shape), expect))
        out[i] = np.ascontiguousarray(_cast_input(name, bf16_file_array(arr, p.dtype), p.dtype))
    return out


def bf16_file_array(arr: np.ndarray, dsl_dtype: str) -> np.ndarray:
    """A ``pl.BF16`` array as an ``.npz`` holds it, as bits: the ``.npy`` format has no bfloat16,
    so ``np.savez`` writes an ``ml_dtypes.bfloat16`` array as 2-byte void (``|V2``), which read
    back is no number. Such an array is taken as its uint16 bits (what pypto passes for pl.BF16
    without ml_dtypes); any other array is returned as it is.

        bf16_file_array(np.zeros(3, "V2"), "BF16").dtype   # dtype('uint16')
    """
    if dsl_dtype == "BF16" and arr.dtype.kind == "V" and arr.dtype.itemsize == 2 and arr.dtype.names is None:
        return arr.view(np.uint16)
    return arr


def _cast_input(name: str, arr: np.ndarray, dsl_dtype: str) -> np.ndarray:
    """``arr`` for parameter ``name`` of DSL dtype ``dsl_dtype``: the call's rule
    (``pypto.runtime.args.convert_array``: converted when no value changes) and its message, as a
    usage error. The cast used to round silently (0.1 into FP32, 1e6 into FP16 became inf) and,
    before that, to truncate and wrap (1.7 became 1, -1 into UINT32 4294967295)."""
    try:
        return convert_array(arr, dsl_dtype, name)
    except ArgumentTypeError as e:
        raise CliError("--inputs: %s; %s" % (e.message, e.help)) from None


def outputs_by_name(params, inputs: Sequence) -> Dict[str, np.ndarray]:
    """The Out / InOut tensor arguments by parameter name."""
    return {p.name: np.asarray(a) for p, a in zip(params, inputs)
            if p.kind == "tensor" and p.direction in ("Out", "InOut")}


def save_outputs(path: str, params, inputs: Sequence) -> None:
    """Writes the Out / InOut tensors to ``path`` (``.npz``, one array per parameter name; a
    pl.BF16 one as its uint16 bits, which ``--check`` and ``--inputs`` read back as BF16)."""
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise CliError("--save: directory %s does not exist" % d)
    if os.path.isdir(path):
        raise CliError("--save: %s is a directory; give a file path" % path)
    # An open file, not the name: np.savez(name) appends ".npz" to a name without it, and the
    # outputs would land in a file other than the one reported.
    try:
        with open(path, "wb") as f:
            dtypes = {p.name: p.dtype for p in params}
            np.savez(f, **{k: bf16_file_array(a, dtypes[k]) for k, a in outputs_by_name(params, inputs).items()})
    except OSError as e:    # writable when probed, but the write failed (a full disk, ...)
        raise CliError("--save: cannot write %s: %s" % (path, e.strerror or e)) from None


def check_outputs(path: str, params, inputs: Sequence) -> List[str]:
    """Compares the outputs with the reference arrays in ``path``; returns one line per output
    (``OK`` or ``MISMATCH`` with the worst element). A reference for a name that is not an output
    is a usage error; an output without a reference is reported as not checked."""
    refs = _load_npz(path, "--check")
    outs = outputs_by_name(params, inputs)
    dtypes = {p.name: p.dtype for p in params}
    unknown = sorted(set(refs) - set(outs))
    if unknown:
        raise CliError("--check: %s has arrays for no output: %s (outputs: %s)"
                       % (path, ", ".join(unknown), ", ".join(sorted(outs)) or "none"))
    lines = []
    for name, got in outs.items():
        if name not in refs:
            lines.append("  %-10s not checked (no reference in %s)" % (name, path))
            continue
        ref = bf16_file_array(refs[name], dtypes[name])
        if ref.dtype.kind not in "biuf" and ref.dtype != got.dtype:
            # was compared through a cast: a complex reference lost its imaginary part (a match
            # whatever it held), a datetime one compared as a day count, a string one raised
            # a ValueError traceback
            raise CliError("--check: reference '%s' in %s is a %s array; the output is %s: only real numbers "
                           "(or an array of the output's own dtype) compare" % (name, path, ref.dtype, dtypes[name]))
        if ref.shape != got.shape:
            lines.append("  %-10s MISMATCH shape %s, reference %s" % (name, got.shape, ref.shape))
            continue
        rtol, atol = TOLERANCES.get(dtypes[name], (0.0, 0.0))
        bad, g, r, diff = _mismatches(got, ref, dtypes[name], rtol, atol)
        nbad = int(np.count_nonzero(bad))
        if nbad == 0:
            lines.append("  %-10s OK (rtol %g, atol %g)" % (name, rtol, atol))
        else:
            idx = np.unravel_index(int(np.argmax(np.where(bad, diff, -1.0))), g.shape)
            lines.append("  %-10s MISMATCH %d of %d elements; worst at %s: %r, reference %r (rtol %g, atol %g)"
                         % (name, nbad, g.size, tuple(int(i) for i in idx), g[idx].item(), r[idx].item(), rtol, atol))
    return lines


def _mismatches(got: np.ndarray, ref: np.ndarray, dtype: str, rtol: float, atol: float):
    """(bad mask, got, ref, |got - ref| with NaN as +inf) of an output against its reference.

    Integers and booleans compare exactly, in their own types (through float64, two INT64
    values above 2^53 apart by 1 were equal, and a float reference was truncated to the output's
    type: 1.9 matched 1). Floats match when equal (so +inf matches +inf and the same NaN
    position matches: |inf - inf| is NaN, which no tolerance admits) or within the tolerance."""
    if got.dtype.kind in "biu" and dtype != "BF16":
        if ref.dtype.kind in "biu":
            bad = got != ref
        else:   # a float reference: only exact integer values match
            bad = ~(got.astype(np.float64) == ref.astype(np.float64))
        g, r = got, ref
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    else:
        g = _as_float64(got, dtype)
        with np.errstate(invalid="ignore", over="ignore"):   # a float64 reference beyond FP16 is inf, as the output
            if dtype == "BF16" and got.dtype == np.uint16 and ref.dtype.kind == "f":
                r = ref.astype(np.float64)   # a float reference of BF16 bits: its values (a cast made them bit patterns)
            elif dtype == "BF16" and ref.dtype == np.uint16:
                r = _as_float64(ref, dtype)  # bits (a --save'd output) against bfloat16 values: a cast read them as numbers
            else:
                r = _as_float64(ref.astype(got.dtype, copy=False), dtype)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(g - r)
            finite = np.isfinite(g) & np.isfinite(r)   # inf within inf's tolerance is no match: -inf vs +inf
            bad = ~((g == r) | (np.isnan(g) & np.isnan(r)) | (finite & (diff <= atol + rtol * np.abs(r))))
    return bad, g, r, np.where(np.isnan(diff), np.inf, diff)


def _as_float64(a: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "BF16" and a.dtype == np.uint16:   # BF16 carried as raw bits without ml_dtypes
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)
