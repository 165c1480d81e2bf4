"""Helpers for the end-to-end tests: build a one-kernel DSL program from a list of inputs and
output expressions, and NumPy references for the 16-bit float dtypes.

    prog = kernel_program(inputs=[("a", [16, 16], "FP32"), ("b", [16, 16], "FP32")],
                          outputs=[("c", [16, 16], "FP32", "pl.add(ta, tb)")])
    outs = run_kernel_program(prog, {"a": a, "b": b})      # {"c": array}

In output expressions each input ``x`` is available as the loaded tile ``tx`` (a load of the
whole tensor) and as the tensor ``x`` itself; scalar params are available by name.
"""
import numpy as np

import pypto
from pypto.compiler import bfloat16_dtype, numpy_dtype
import pypto.language as pl


def _ty(shape, dtype):
    return "pl.Tensor[[%s], pl.%s]" % (", ".join(str(d) for d in shape), dtype)


def kernel_program_text(inputs, outputs, scalars=(), body=None):
    """DSL text: kernel `k(inputs..., outputs..., scalars...)` and orchestration `main` calling it once."""
    params = ["%s: %s" % (n, _ty(s, d)) for n, s, d in inputs]
    params += ["%s: pl.Out[%s]" % (n, _ty(s, d)) for n, s, d, _e in outputs]
    params += ["%s: pl.Scalar[pl.%s]" % (n, d) for n, d in scalars]
    rets = [_ty(s, d) for _n, s, d, _e in outputs]
    ret = rets[0] if len(rets) == 1 else "tuple[%s]" % ", ".join(rets)
    names = [n for n, _s, _d in inputs] + [n for n, _s, _d, _e in outputs] + [n for n, _d in scalars]
    outs = ", ".join(n for n, _s, _d, _e in outputs)
    lines = ["import pypto.language as pl", "", "", "@pl.program", "class OpTest:",
             "    @pl.function(type=pl.FunctionType.InCore)",
             "    def k(self, %s) -> %s:" % (", ".join(params), ret)]
    for n, s, _d in inputs:
        lines.append("        t%s = pl.load(%s, [%s], [%s])" % (n, n, ", ".join("0" for _ in s), ", ".join(map(str, s))))
    for stmt in body or []:
        lines.append("        " + stmt)
    for n, s, _d, e in outputs:
        lines.append("        %s = pl.store(%s, [%s], %s)" % (n, e, ", ".join("0" for _ in s), n))
    lines.append("        return %s" % outs)
    lines += ["", "    @pl.function(type=pl.FunctionType.Orchestration)",
              "    def main(self, %s) -> %s:" % (", ".join(params), ret),
              "        %s = self.k(%s)" % (outs, ", ".join(names)),
              "        return %s" % outs, ""]
    return "\n".join(lines)


def kernel_program(inputs, outputs, scalars=(), body=None):
    return pypto.compile(pl.parse_program(kernel_program_text(inputs, outputs, scalars, body)))


def run_kernel_program(compiled, values, scalars=(), **kw):
    """Calls `compiled` with input arrays by name, fresh zeroed outputs and scalar values."""
    args = []
    outs = {}
    for p in compiled.params:
        if p.kind == "scalar":
            continue
        if p.direction == "Out":
            arr = np.zeros(p.shape, dtype=numpy_dtype(p.dtype))
            outs[p.name] = arr
            args.append(arr)
        else:
            args.append(values[p.name])
    args.extend(scalars)
    compiled(*args, **kw)
    return outs


# ---- bfloat16 as uint16 bit patterns -------------------------------------------------------

def bf16_bits(x):
    """float32 values -> bfloat16 bits (round to nearest even)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_as_bits(arr):
    """A pl.BF16 array as its uint16 bits: an ml_dtypes.bfloat16 array (what pypto allocates for
    pl.BF16 when ml_dtypes is installed) is viewed, a uint16 one returned as it is."""
    arr = np.asarray(arr)
    bf = bfloat16_dtype()
    return arr.view(np.uint16) if bf is not None and arr.dtype == bf else np.asarray(arr, np.uint16)


def bf16_value(bits):
    """bfloat16 bits (or an ml_dtypes.bfloat16 array) -> float32 values."""
    return (bf16_as_bits(bits).astype(np.uint32) << 16).view(np.float32)


def round_to(dtype, x):
    """Rounds float32 values to the precision of a DSL float dtype (FP32 unchanged)."""
    x = np.asarray(x, np.float32)
    if dtype == "FP16":
        return x.astype(np.float16).astype(np.float32)
    if dtype == "BF16":
        return bf16_value(bf16_bits(x))
    return x


def as_float(dtype, arr):
    """An array of a DSL float dtype as float32 values (BF16 arrays hold bits)."""
    return bf16_value(arr) if dtype == "BF16" else np.asarray(arr).astype(np.float32)


def from_float(dtype, x):
    """float32 values -> an array of DSL dtype `dtype` (BF16 as bits, or as ml_dtypes.bfloat16
    values when ml_dtypes is installed: the same bits)."""
    if dtype == "BF16":
        bits = bf16_bits(x)
        return bits.view(numpy_dtype("BF16")) if bfloat16_dtype() is not None else bits
    return np.asarray(x).astype(numpy_dtype(dtype))


# Tolerances per dtype (rtol, atol): FP32 elementwise 1e-5; FP16 one half-ulp-ish 1e-3;
# BF16 (8-bit mantissa) 1e-2.
TOL = {"FP32": (1e-5, 1e-5), "FP16": (1e-3, 1e-3), "BF16": (1e-2, 1e-2)}
