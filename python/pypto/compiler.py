"""The user API: compile a DSL program for the CPU runtime and call it on NumPy arrays.

    import numpy as np
    import pypto
    import pypto.language as pl

    compiled = pypto.compile(VectorAdd)               # VectorAdd: a @pl.program
    a = np.random.rand(16, 16).astype(np.float32)
    b = np.ones((16, 16), np.float32)
    d = np.empty((16, 16), np.float32)
    stats = compiled(a, b, d)                         # Out / InOut arrays are written in place
    assert np.allclose(d, a + 2 * b)
    print(stats.tasks, stats.wall_seconds)
    compiled.files["kernels/kernel_add.cpp"]          # generated sources, by path

``pypto.compile`` runs the pass pipeline and the code generators (orchestration and CPU
kernels), builds the result against libpto2 with the system C++ compiler (cached by content
hash: a second compile of the same program runs no compiler) and loads it. Calling the
:class:`CompiledProgram` checks every argument against the entry's signature before anything
runs, then runs the entry orchestration on the runtime's worker threads. See docs/running.md.
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from pypto.errors import PyptoError
from pypto.runtime.build import BuildResult, KernelEntry, build_program
from pypto.runtime.loader import DTYPE_CODES, ProgramLibrary, RunError, RunStats, TensorArg

__all__ = ["compile", "CompiledProgram", "ParamSpec", "ArgumentTypeError", "ArgumentValueError", "RunError",
           "RunStats", "numpy_dtype", "bfloat16_dtype"]


class ArgumentTypeError(PyptoError, TypeError):
    """A call argument has the wrong kind or dtype, or the argument count is wrong."""


class ArgumentValueError(PyptoError, ValueError):
    """A call argument has the wrong shape, layout or value."""


# ---------------------------------------------------------------------------------------------
# dtypes

def bfloat16_dtype() -> Optional[np.dtype]:
    """``ml_dtypes.bfloat16`` when ml_dtypes is installed, else None (use uint16 bit patterns)."""
    try:
        import ml_dtypes  # type: ignore
        return np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        return None


_NUMPY_DTYPES = {"FP32": np.float32, "FP16": np.float16, "INT8": np.int8, "INT16": np.int16, "INT32": np.int32,
                 "INT64": np.int64, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32,
                 "UINT64": np.uint64, "BOOL": np.bool_, "INDEX": np.int64}


def numpy_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of a DSL dtype: FP32 -> float32, FP16 -> float16, BF16 -> ml_dtypes.bfloat16
    if installed else uint16 (raw bfloat16 bits), INDEX -> int64, ..."""
    if dtype == "BF16":
        return bfloat16_dtype() or np.dtype(np.uint16)
    if dtype not in _NUMPY_DTYPES:
        raise ArgumentTypeError("dtype %s has no NumPy equivalent" % dtype)
    return np.dtype(_NUMPY_DTYPES[dtype])


def _accepted_dtypes(dtype: str) -> List[np.dtype]:
    if dtype == "BF16":
        out = [np.dtype(np.uint16)]
        bf = bfloat16_dtype()
        if bf is not None:
            out.insert(0, bf)
        return out
    return [numpy_dtype(dtype)]


def _runtime_dtype_code(dtype: str) -> int:
    return DTYPE_CODES["INT64" if dtype == "INDEX" else dtype]


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


def _signature_from(result, program, entry) -> List[ParamSpec]:
    from pypto._core import kernel_cpu
    sig = getattr(result, "signature", None)
    specs: List[ParamSpec] = []
    if sig:
        for p in sig:
            specs.append(ParamSpec(p.name, p.kind, p.dtype, tuple(_dim(d) for d in p.shape), p.direction, int(p.slot)))
    else:  # derive from the IR (tensor / scalar slots in parameter order)
        ti = si = 0
        for p in kernel_cpu.signature(program, entry):
            slot = ti if p["kind"] == "tensor" else si
            if p["kind"] == "tensor":
                ti += 1
            else:
                si += 1
            specs.append(ParamSpec(p["name"], p["kind"], p["dtype"], tuple(_dim(d) for d in p["shape"]),
                                   p["direction"], slot))
    try:
        fn = program.get(entry)
        for s, v in zip(specs, fn.params):
            s.span = v.span
    except Exception:  # spans are a nicety for messages
        pass
    return specs


# ---------------------------------------------------------------------------------------------
# Compiling

def _orchestration_functions(program) -> List[str]:
    from pypto._core import kernel_cpu
    return [name for name, ftype in kernel_cpu.functions(program) if ftype == "Orchestration"]


def _choose_entry(program, entry: Optional[str]) -> str:
    orch = _orchestration_functions(program)
    if entry is not None:
        if entry not in orch:
            raise PyptoError("entry '%s' is not an Orchestration function of program '%s'" % (entry, program.name),
                             help="Orchestration functions: %s" % (", ".join(orch) or "none"))
        return entry
    if len(orch) == 1:
        return orch[0]
    if not orch:
        raise PyptoError("program '%s' has no Orchestration function to run" % program.name,
                         help="mark the entry with @pl.function(type=pl.FunctionType.Orchestration)")
    raise PyptoError("program '%s' has %d Orchestration functions (%s); which one is the entry?"
                     % (program.name, len(orch), ", ".join(orch)),
                     help="pass entry=, e.g. pypto.compile(program, entry=%r)" % orch[0])


def _host_entry(program, entry: Optional[str]) -> Optional[str]:
    """The HOST-level Orchestration function to run, if that is what `entry` selects.

    With no `entry`, a program with exactly one HOST-level orchestration runs that one (its
    chip-level orchestrations are the next-level targets)."""
    from pypto import host
    hosts = host.host_functions(program)
    if entry is not None:
        return entry if entry in hosts else None
    return hosts[0] if len(hosts) == 1 else None


def _as_program(program):
    """Accepts an IR Program (what @pl.program returns)."""
    if hasattr(program, "functions") and hasattr(program, "get"):
        return program
    raise PyptoError("pypto.compile expects a program (a class decorated with @pl.program), got %s"
                     % type(program).__name__, help="decorate the class with @pl.program")


def generate(program, entry: Optional[str] = None):
    """Runs the passes and both code generators without building.

    Returns ``(entry, orchestration_result, kernel_sources, kernel_entries)``.
    """
    from pypto import codegen
    from pypto._core import kernel_cpu

    program = _as_program(program)
    entry = _choose_entry(program, entry)
    prepared = codegen.run_pipeline(program)
    result = codegen.generate_orchestration(prepared, entry, run_passes=False)
    kernel_ids: Dict[str, int] = dict(result.kernel_ids)
    core_types: Dict[str, str] = dict(getattr(result, "core_types", {}) or {})
    sources: Dict[str, str] = {}
    entries: List[KernelEntry] = []
    for name, kid in sorted(kernel_ids.items(), key=lambda kv: kv[1]):
        sources[name] = kernel_cpu.generate(prepared, name)
        core = core_types.get(name)
        if core not in ("AIC", "AIV"):
            core = kernel_cpu.core_type(prepared, name)
        entries.append(KernelEntry(name, int(kid), core))
    return entry, prepared, result, sources, entries


def compile(program, output_dir: Optional[str] = None, entry: Optional[str] = None,
            distributed: Optional[str] = None) -> "CompiledProgram":
    """Compiles ``program`` for the CPU runtime and loads it.

    ``entry`` names the Orchestration function to run (default: the only one, or the only
    HOST-level one — a HOST entry returns a ``pypto.host.HostProgram`` that runs on the L3
    runtime, its chip-level orchestrations being the next-level targets). ``output_dir``
    receives the generated sources and the built library (default: the cache directory,
    ``$PYPTO_CACHE_DIR`` or ``~/.cache/pypto/<hash>``). Raises ``PyptoError`` for a program
    the compiler rejects and ``pypto.runtime.build.BuildError`` if the C++ compiler fails.

        compiled = pypto.compile(MyProgram, output_dir="out")
        compiled(a, b, out)

    ``distributed="mpi"`` runs a HOST entry's next-level tasks on MPI ranks (under
    ``mpirun -np N``; see docs/distributed.md); it is an error for a chip-level entry.
    """
    program = _as_program(program)
    host_entry = _host_entry(program, entry)
    if host_entry is not None:
        # A distributed HOST-level entry runs on the L3 runtime (pypto.host): its pl.submit
        # calls become next-level tasks that each run a chip-level orchestration.
        from pypto import host
        return host.compile_host(program, host_entry, output_dir=output_dir, distributed=distributed)
    if distributed not in (None, "inprocess"):
        from pypto.errors import PyptoError
        raise PyptoError("distributed=%r applies to a HOST-level entry; this program's entry is chip-level"
                         % (distributed,))
    entry, prepared, result, sources, entries = generate(program, entry)
    orch_code = result.code
    build = build_program(entry, orch_code, sources, entries, output_dir=output_dir)
    return CompiledProgram(prepared, entry, _signature_from(result, prepared, entry), build, entries)


# ---------------------------------------------------------------------------------------------
# Calling

def _torch_to_numpy(x):
    """A CPU torch tensor as a NumPy array sharing its memory, or None if x is not a tensor."""
    try:
        import torch  # type: ignore
    except ImportError:
        return None
    if not isinstance(x, torch.Tensor):
        return None
    if x.device.type != "cpu":
        raise ArgumentValueError("torch tensor on device '%s'; the CPU runtime needs CPU tensors" % x.device,
                                 help="move it with .cpu() (and copy results back)")
    x = x.detach()
    if x.dtype == torch.bfloat16:
        return x.view(torch.int16).numpy().view(np.uint16)
    return x.numpy()


def _scalar_bits(p: ParamSpec, v, where: str) -> int:
    if hasattr(v, "item") and not isinstance(v, (int, float, bool)):
        try:
            v = v.item()
        except Exception:
            pass
    if p.dtype in ("FP32", "FP16", "BF16"):
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise ArgumentTypeError("%s expects a number (pl.Scalar[pl.%s]), got %s" % (where, p.dtype, type(v).__name__))
        return struct.unpack("<I", struct.pack("<f", float(v)))[0]
    if p.dtype == "BOOL":
        if not isinstance(v, (bool, int)):
            raise ArgumentTypeError("%s expects a bool, got %s" % (where, type(v).__name__))
        return 1 if v else 0
    if not isinstance(v, int) or isinstance(v, bool):
        raise ArgumentTypeError("%s expects an integer (pl.Scalar[pl.%s]), got %s" % (where, p.dtype, type(v).__name__),
                                help="pass a Python int" if isinstance(v, float) else "")
    bits = {"INT8": 8, "INT16": 16, "INT32": 32, "UINT8": 8, "UINT16": 16, "UINT32": 32}.get(p.dtype, 64)
    signed = not p.dtype.startswith("UINT")
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not lo <= v <= hi:
        raise ArgumentValueError("%s = %d does not fit pl.%s (range %d..%d)" % (where, v, p.dtype, lo, hi))
    return v & 0xFFFFFFFFFFFFFFFF


class CompiledProgram:
    """A program built for the CPU runtime; call it to run its entry orchestration.

    Attributes: ``entry`` (function name), ``params`` (list of :class:`ParamSpec`), ``files``
    (relative path -> generated source), ``output_dir``, ``library`` (path of the .so),
    ``kernels`` (name, id and core type of each kernel), ``cached`` (True if no compiler ran).
    """

    def __init__(self, program, entry: str, params: List[ParamSpec], build: BuildResult,
                 kernels: Sequence[KernelEntry]):
        self.program = program
        self.entry = entry
        self.params = params
        self.files: Dict[str, str] = dict(build.files)
        self.output_dir = build.output_dir
        self.library = build.library
        self.cached = build.cached
        self.kernels = list(kernels)
        self._lib = ProgramLibrary(build.library)
        self._runtime = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return "<CompiledProgram %s(%s) at %s>" % (self.entry, ", ".join(p.name for p in self.params), self.output_dir)

    # -- argument checking ----------------------------------------------------------------------

    def _err(self, cls, p: Optional[ParamSpec], message: str, help: str = ""):
        kw = {}
        span = p.span if p is not None else None
        if span is not None and getattr(span, "line", 0):
            kw = dict(file=span.file, line=span.line, col=span.col, end_col=span.end_col,
                      source_line=span.source_line)
        return cls(message, help=help, **kw)

    def check_args(self, args: Sequence[Any]) -> Tuple[List[TensorArg], List[int], List[np.ndarray], Dict[str, int]]:
        """Validates and marshals call arguments; raises before anything runs. Returns the tensor
        slots, the scalar slots, the arrays to keep alive, and the bound dynamic dims."""
        sig = "%s(%s)" % (self.entry, ", ".join(p.name for p in self.params))
        if len(args) != len(self.params):
            raise self._err(ArgumentTypeError, None, "%s takes %d argument%s, got %d"
                            % (sig, len(self.params), "" if len(self.params) == 1 else "s", len(args)),
                            help="pass one argument per parameter, in order: " +
                                 ", ".join("%s: %s" % (p.name, p.describe()) for p in self.params))
        tensors: Dict[int, TensorArg] = {}
        scalars: Dict[int, int] = {}
        keep: List[np.ndarray] = []
        dims: Dict[str, Tuple[int, str]] = {}
        for p, v in zip(self.params, args):
            where = "argument '%s' of %s" % (p.name, sig)
            if p.kind == "scalar":
                try:
                    scalars[p.slot] = _scalar_bits(p, v, where)
                except PyptoError as e:
                    raise self._err(type(e), p, e.message, e.help)
                continue
            arr = _torch_to_numpy(v)
            if arr is None:
                if not isinstance(v, np.ndarray):
                    raise self._err(ArgumentTypeError, p, "%s must be a NumPy array (%s), got %s"
                                    % (where, p.describe(), type(v).__name__),
                                    help="e.g. np.zeros(%s, dtype=np.%s)" % (
                                        [d if isinstance(d, int) else 1 for d in p.shape], numpy_dtype(p.dtype).name))
                arr = v
            accepted = _accepted_dtypes(p.dtype)
            if arr.dtype not in accepted:
                hint = "convert it with .astype(np.%s)" % accepted[0].name
                if p.dtype == "BF16":
                    hint = "pass bfloat16 bits as np.uint16 (or an ml_dtypes.bfloat16 array)"
                raise self._err(ArgumentTypeError, p, "%s has dtype %s, expected pl.%s (%s)"
                                % (where, arr.dtype, p.dtype, " or ".join(d.name for d in accepted)), help=hint)
            if arr.ndim != len(p.shape):
                raise self._err(ArgumentValueError, p, "%s has shape %s, expected rank %d (%s)"
                                % (where, tuple(arr.shape), len(p.shape), p.describe()))
            for axis, (want, got) in enumerate(zip(p.shape, arr.shape)):
                if isinstance(want, int):
                    if want != got:
                        raise self._err(ArgumentValueError, p, "%s has shape %s, expected %s (axis %d is %d, not %d)"
                                        % (where, tuple(arr.shape), tuple(p.shape), axis, got, want))
                else:
                    if want in dims and dims[want][0] != got:
                        raise self._err(ArgumentValueError, p,
                                        "%s: dynamic dimension %s is %d here but %d in argument '%s'"
                                        % (where, want, got, dims[want][0], dims[want][1]),
                                        help="every parameter declaring %s must have the same extent on that axis" % want)
                    dims.setdefault(want, (got, p.name))
                    if got >= 1 << 32:
                        raise self._err(ArgumentValueError, p, "%s: extent %d of axis %d is too large" % (where, got, axis))
            if not arr.flags.c_contiguous:
                if p.direction == "In":
                    arr = np.ascontiguousarray(arr)
                else:
                    raise self._err(ArgumentValueError, p, "%s is not C-contiguous; pl.%s tensors are written in place"
                                    % (where, p.direction), help="pass np.ascontiguousarray(x) and read the result "
                                                                  "from that array")
            if p.direction != "In" and not arr.flags.writeable:
                raise self._err(ArgumentValueError, p, "%s is read-only but is written (pl.%s)" % (where, p.direction))
            keep.append(arr)
            tensors[p.slot] = TensorArg(arr.ctypes.data, _runtime_dtype_code(p.dtype), tuple(int(s) for s in arr.shape))
        t_list = [tensors[i] for i in sorted(tensors)]
        s_list = [scalars[i] for i in sorted(scalars)]
        return t_list, s_list, keep, {k: v[0] for k, v in dims.items()}

    # -- running ----------------------------------------------------------------------------------

    def _get_runtime(self, config):
        if self._runtime is not None and self._runtime.config == config:
            return self._runtime
        if self._runtime is not None:
            self._runtime.close()
            self._runtime = None
        self._runtime = self._lib.create_runtime(*config)
        return self._runtime

    def __call__(self, *args, aic_workers: Optional[int] = None, aiv_workers: Optional[int] = None,
                 clusters: Optional[int] = None, trace: Optional[str] = None,
                 task_ring_size: Optional[int] = None, memory_limit: Optional[int] = None) -> RunStats:
        """Runs the entry on ``args`` (NumPy arrays / CPU torch tensors for tensors, Python numbers
        for scalars). Worker counts default to 1 AIC and 2 AIV; ``clusters`` 0 = min(aic, aiv).
        ``trace="trace.json"`` writes a Chrome/Perfetto trace of the run. ``task_ring_size``
        (in-flight tasks) and ``memory_limit`` (bytes of live intermediate tensors) bound the
        runtime's resources; the orchestration waits (back-pressure) when they are reached.
        Returns RunStats; raises ArgumentTypeError / ArgumentValueError before running,
        RunError if the run fails.
        """
        tensors, scalars, keep, _dims = self.check_args(args)
        for name, val in (("aic_workers", aic_workers), ("aiv_workers", aiv_workers), ("clusters", clusters),
                          ("task_ring_size", task_ring_size), ("memory_limit", memory_limit)):
            if val is not None and (not isinstance(val, int) or isinstance(val, bool) or val < 0 or
                                    (val == 0 and name in ("aic_workers", "aiv_workers"))):
                raise ArgumentValueError("%s must be a positive integer, got %r" % (name, val))
        config = (aic_workers if aic_workers is not None else 1, aiv_workers if aiv_workers is not None else 2,
                  clusters if clusters is not None else 0, trace is not None, task_ring_size or 0, memory_limit or 0)
        with self._lock:
            rt = self._get_runtime(config)
            stats = rt.run(tensors, scalars)
            if trace is not None:
                rt.write_trace(str(trace))
                stats.trace_path = str(trace)
        del keep
        return stats

    run = __call__

    def close(self) -> None:
        """Stops the runtime's worker threads (a later call starts new ones)."""
        with self._lock:
            if self._runtime is not None:
                self._runtime.close()
                self._runtime = None

    def __del__(self):
        try:
            if self._runtime is not None:
                self._runtime.close()
        except Exception:
            pass

    def random_inputs(self, seed: int = 0, dims: Optional[Dict[str, int]] = None) -> List[Any]:
        """Seeded random arguments of the declared shapes and dtypes (dynamic dims from ``dims``):
        floats uniform in [-1, 1), integers in [-8, 8) (unsigned [0, 16)), Out tensors zeroed,
        scalars 1 (floats 0.5). Used by ``pypto run``."""
        return random_inputs(self.params, seed, dims)


def random_inputs(params, seed: int = 0, dims: Optional[Dict[str, int]] = None) -> List[Any]:
    """Seeded random arguments for parameters with ``kind``, ``name``, ``dtype``, ``direction``
    and ``shape`` (entries: extents as int or digit strings, or dynamic dimension names looked
    up in ``dims``); see ``CompiledProgram.random_inputs``. Also serves HOST programs
    (``pypto.host.HostProgram.random_inputs``)."""
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
                shape.append(int(dims[d]))
            else:
                raise ArgumentValueError("dynamic dimension %s of parameter '%s' needs a value" % (d, p.name),
                                         help="give it with --dim %s=<extent> (or dims={'%s': n})" % (d, d))
        if p.direction == "Out":
            out.append(np.zeros(shape, dtype=numpy_dtype(p.dtype)))
        else:
            out.append(random_array(rng, p.dtype, shape))
    return out


def random_array(rng: np.random.Generator, dtype: str, shape) -> np.ndarray:
    """A seeded random array of a DSL dtype (BF16 as uint16 bits unless ml_dtypes is present)."""
    if dtype in ("FP32", "FP16"):
        return rng.uniform(-1.0, 1.0, size=shape).astype(numpy_dtype(dtype))
    if dtype == "BF16":
        f = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)
        bf = bfloat16_dtype()
        return f.astype(bf) if bf is not None else (f.view(np.uint32) >> 16).astype(np.uint16)
    if dtype == "BOOL":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.startswith("UINT"):
        return rng.integers(0, 16, size=shape).astype(numpy_dtype(dtype))
    return rng.integers(-8, 8, size=shape).astype(numpy_dtype(dtype))
