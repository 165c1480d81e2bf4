"""The per-call fast path of argument marshalling (issue 17, C++ CallPlan): it accepts exactly the
common calls the full checker accepts, with the same runtime slots, and leaves every other call
(None) to the full checker and its messages. A seeded differential smoke compares it with a Python
model of its contract (fast_args_reference.py) on random signatures and calls."""

import math
import sys

import numpy as np
import pytest

from pypto.runtime.args import ArgumentValueError, ParamSpec, bind_and_check
from pypto.runtime.fast_args import call_plan_entries, fast_marshaller
from pypto.runtime.loader import _tensor_tuples

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from fast_args_reference import reference_marshal  # noqa: E402

PARAMS = [
    ParamSpec("n", "scalar", "INT32", (), "In", 0),
    ParamSpec("x", "tensor", "FP32", (4, "N"), "In", 0),
    ParamSpec("alpha", "scalar", "FP32", (), "In", 1),
    ParamSpec("out", "tensor", "FP32", (4, "N"), "Out", 1),
    ParamSpec("flag", "scalar", "BOOL", (), "In", 2),
    ParamSpec("u", "scalar", "UINT8", (), "In", 3),
]
MARSHAL = fast_marshaller(PARAMS)


def _marshal(args):
    return MARSHAL(args)


def test_fast_path_matches_the_full_checker():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = np.zeros((4, 6), np.float32)
    args = (-3, x, 0.5, out, True, 255)
    fast = _marshal(args)
    call = bind_and_check(PARAMS, "main", args)
    assert [(a, c, s, None) for a, c, s in fast.tensors] == \
        [(d if isinstance(d, int) else d.ctypes.data, c, s, st) for d, c, s, st in _tensor_tuples(call.tensors)]
    assert fast.tensors[0][0] == x.ctypes.data and fast.tensors[1][0] == out.ctypes.data
    assert fast.scalars == call.scalars
    assert fast.scalars[0] == (-3) & 0xFFFFFFFFFFFFFFFF and fast.scalars[2] == 1 and fast.scalars[3] == 255
    assert fast.scalars[1] == 0x3F000000   # 0.5 as float32 bits


def test_the_call_holds_its_arrays():
    import gc
    import weakref
    x = np.zeros((4, 6), np.float32)
    ref = weakref.ref(x)
    fast = _marshal((1, x, 0.5, np.zeros((4, 6), np.float32), False, 0))
    del x
    gc.collect()
    assert ref() is not None   # the address the runtime will read stays valid
    del fast
    gc.collect()
    assert ref() is None


def _misaligned(shape):
    raw = np.zeros(int(np.prod(shape)) * 4 + 1, np.uint8)
    a = np.frombuffer(raw.data, np.float32, count=int(np.prod(shape)), offset=1).reshape(shape)
    return a


class _Sub(np.ndarray):
    pass


@pytest.mark.parametrize("change", [
    lambda a: a[:3],                                             # out omitted: allocated by the full path
    lambda a: a + (1,),                                          # one too many
    lambda a: (1.5,) + a[1:],                                    # float for an integer scalar
    lambda a: a[:5] + (256,),                                    # UINT8 out of range
    lambda a: a[:5] + (-1,),                                     # UINT8 below its range
    lambda a: (2 ** 31,) + a[1:],                                # INT32 out of range
    lambda a: (2 ** 70,) + a[1:],                                # past 64 bits
    lambda a: (True,) + a[1:],                                   # bool for an integer scalar
    lambda a: (np.int32(1),) + a[1:],                            # a NumPy scalar (the full checker decides)
    lambda a: a[:2] + (np.float64(0.5),) + a[3:],                # a float subclass
    lambda a: a[:2] + (1e39,) + a[3:],                           # past float32
    lambda a: a[:2] + (10 ** 400,) + a[3:],                      # an int past a double
    lambda a: a[:4] + (2,) + a[5:],                              # 2 for a bool
    lambda a: (1, a[1].astype(np.float64)) + a[2:],              # wrong dtype
    lambda a: (1, a[1].astype(">f4")) + a[2:],                   # non-native byte order
    lambda a: (1, np.zeros((4, 7), np.float32)) + a[2:],         # dynamic dim N disagrees with out
    lambda a: (1, np.zeros((5, 6), np.float32)) + a[2:],         # static dim wrong
    lambda a: (1, np.zeros((4, 6, 1), np.float32)) + a[2:],      # rank wrong
    lambda a: (1, np.zeros((6, 4), np.float32).T) + a[2:],       # not C-contiguous
    lambda a: (1, _misaligned((4, 6))) + a[2:],                  # not aligned
    lambda a: (1, np.zeros((4, 6), np.float32).view(_Sub)) + a[2:],   # an ndarray subclass
    lambda a: (1, a[1].tolist()) + a[2:],                        # not an ndarray
    lambda a: a[:3] + (_read_only((4, 6)),) + a[4:],             # read-only Out
])
def test_anything_else_goes_to_the_full_checker(change):
    x = np.zeros((4, 6), np.float32)
    args = (1, x, 0.5, np.zeros((4, 6), np.float32), False, 0)
    assert _marshal(args) is not None
    assert _marshal(change(args)) is None


def test_what_the_fast_path_takes():
    x, out = np.zeros((4, 6), np.float32), np.zeros((4, 6), np.float32)
    assert _marshal((1, _read_only((4, 6)), 0.5, out, False, 0)) is not None   # a read-only input
    assert _marshal((1, x, 3, out, 1, 0)).scalars[1:3] == [0x40400000, 1]       # an int for a float, 1 for a bool
    for v in (math.inf, -math.inf):
        assert _marshal((1, x, v, out, False, 0)).scalars[1] == (0x7F800000 if v > 0 else 0xFF800000)
    assert _marshal((1, x, math.nan, out, False, 0)) is not None
    empty = np.zeros((4, 0), np.float32)
    assert _marshal((1, empty, 0.5, np.zeros((4, 0), np.float32), False, 0)).tensors[0][2] == [4, 0]


def _read_only(shape):
    a = np.zeros(shape, np.float32)
    a.flags.writeable = False
    return a


def test_overlapping_views_go_to_the_full_checker():
    base = np.zeros((8, 6), np.float32)
    args = (1, base[:4], 0.5, base[2:6], False, 0)   # out overlaps x and is written
    assert _marshal(args) is None
    with pytest.raises(ArgumentValueError, match="different views of overlapping memory"):
        bind_and_check(PARAMS, "main", args)


def test_an_input_that_is_the_output_goes_to_the_full_checker():
    x = np.zeros((4, 6), np.float32)   # the full checker passes a copy of the In argument
    assert _marshal((1, x, 0.5, x, False, 0)) is None
    assert _marshal((1, x, 0.5, x.copy(), False, 0)) is not None
    assert _marshal((1, x, 0.5, x[:, :0].copy(), False, 0)) is None   # N disagrees (6, 0)


def test_plan_entries_name_dynamic_symbols_in_order():
    params = [ParamSpec("a", "tensor", "FP16", ("M", 8, "K"), "In", 0),
              ParamSpec("s", "scalar", "INT64", (), "In", 0),
              ParamSpec("b", "tensor", "INT8", ("K", "M"), "InOut", 1)]
    entries, nt, ns, nsym = call_plan_entries(params)
    assert (nt, ns, nsym) == (2, 1, 2)
    assert entries[0][3:] == (1, 2, [-1, 8, -2], False)
    assert entries[1] == ("scalar", 0, "int", -(1 << 63), (1 << 63) - 1)
    assert entries[2][5:] == ([-2, -1], True)


def test_bad_plans_are_refused():
    from pypto._core.program_abi import CallPlan
    t = ("tensor", 0, [np.dtype(np.float32)], 0, 4, [4], False)
    with pytest.raises(ValueError):
        CallPlan(np.ndarray, [("tensor", 1) + t[2:]], 1, 0, 0)      # slot past the tensors
    with pytest.raises(ValueError):
        CallPlan(np.ndarray, [t[:5] + ([-2],) + t[6:]], 1, 0, 1)    # symbol past the symbols
    with pytest.raises(ValueError):
        CallPlan(np.ndarray, [("scalar", 0, "complex", 0, 0)], 0, 1, 0)
    with pytest.raises(ValueError):
        CallPlan(np.ndarray, [("scalar", 0, "int", 0, 2 ** 70)], 0, 1, 0)
    with pytest.raises(ValueError):
        CallPlan(np.ndarray, [("vector", 0)], 0, 0, 0)
    with pytest.raises(ValueError):
        CallPlan(42, [], 0, 0, 0)


_DTYPES = ["FP32", "FP16", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "BOOL", "BF16"]


def _random_params(rng):
    params, nt, ns = [], 0, 0
    for i in range(int(rng.integers(1, 6))):
        dtype = _DTYPES[int(rng.integers(0, len(_DTYPES)))]
        if rng.random() < 0.6:
            shape = tuple(int(rng.integers(0, 4)) if rng.random() < 0.5 else "NM"[int(rng.integers(0, 2))]
                          for _ in range(int(rng.integers(0, 3))))
            params.append(ParamSpec("t%d" % i, "tensor", dtype, shape, ["In", "Out", "InOut"][int(rng.integers(0, 3))], nt))
            nt += 1
        else:
            params.append(ParamSpec("s%d" % i, "scalar", dtype, (), "In", ns))
            ns += 1
    return params


def _random_tensor(rng, p, dims, pool):
    from pypto.runtime.args import _accepted_dtypes
    want = [d if isinstance(d, int) else dims.setdefault(d, int(rng.integers(0, 4))) for d in p.shape]
    r = rng.random()
    if r < 0.08 and want:
        want[int(rng.integers(0, len(want)))] += 1                        # a wrong extent
    accepted = _accepted_dtypes(p.dtype)
    dt = accepted[int(rng.integers(0, len(accepted)))] if rng.random() < 0.9 else np.dtype(np.float64)
    if r > 0.7:                                                           # a view of shared memory
        base = pool[int(rng.integers(0, len(pool)))]
        n = int(np.prod(want)) * dt.itemsize
        off = int(rng.integers(0, 8)) * (1 if rng.random() < 0.2 else dt.itemsize)
        if off + n > base.nbytes:
            return np.zeros(want, dt)
        a = np.frombuffer(base.data, dt, count=int(np.prod(want)), offset=off).reshape(want)
    else:
        a = np.zeros(want, dt)
    if rng.random() < 0.05 and a.ndim == 2 and a.shape[0] == a.shape[1]:
        a = a.T
    if rng.random() < 0.08:
        a = a.view()
        a.flags.writeable = False
    return a


def _random_scalar(rng):
    choices = [0, 1, -1, 2, 255, 256, -129, 2 ** 31, 2 ** 32, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, 2 ** 64, -2 ** 63,
               -2 ** 63 - 1, 0.5, -2.5, 3.4e38, 3.5e38, 1e300, math.inf, math.nan, True, False, np.int32(3),
               np.float32(1.5), "1", None]
    return choices[int(rng.integers(0, len(choices)))]


def _normalized(fast):
    if fast is None:
        return None
    return [tuple(t) for t in fast.tensors], list(fast.scalars)


def test_the_plan_agrees_with_its_model_on_random_calls():
    # Seeded differential smoke (make fuzz runs no bigger version: the model is this test's).
    rng = np.random.default_rng(17)
    pool = [np.zeros(128, np.uint8) for _ in range(2)]
    accepted = refused = 0
    for _ in range(300):
        params = _random_params(rng)
        marshal = fast_marshaller(params)
        for _ in range(10):
            dims: dict = {}
            args = tuple(_random_tensor(rng, p, dims, pool) if p.kind == "tensor" else _random_scalar(rng)
                         for p in params)
            if rng.random() < 0.03:
                args = args[:-1]
            want = reference_marshal(params, args)
            got = _normalized(marshal(args))
            assert got == (None if want is None else (want[0], want[1])), (params, args)
            accepted += want is not None
            refused += want is None
    assert accepted > 300 and refused > 300   # both answers exercised


_NAMES = {np.dtype(np.uint8): "UINT8", np.dtype(np.float32): "FP32", np.dtype(np.int64): "INT64",
          np.dtype(np.int16): "INT16"}


def _overlap_refused(arrays, written):
    """Whether the plan of 1-d parameters matching `arrays` (pl.Out where written) refuses them."""
    params = [ParamSpec("a%d" % i, "tensor", _NAMES[a.dtype], ("N%d" % i,), "Out" if w else "In", i)
              for i, (a, w) in enumerate(zip(arrays, written))]
    return fast_marshaller(params)(tuple(arrays)) is None


def test_the_overlap_check_sees_exactly_the_shared_bytes():
    base = np.zeros(64, np.float32)
    assert not _overlap_refused([base[:32], base[32:]], [True, True])       # adjacent
    assert _overlap_refused([base[:33], base[32:]], [False, True])         # one element shared
    assert _overlap_refused([base[32:], base[:33]], [True, False])         # either order
    assert not _overlap_refused([base[:40], base[8:]], [False, False])     # both read
    assert not _overlap_refused([base[:0], base], [True, True])            # empty shares nothing
    assert _overlap_refused([base, base], [True, False])                   # the same memory
    assert not _overlap_refused([base], [True])
    # Only the first and the last overlap with a write between them: a look at neighbours in
    # address order alone misses it.
    assert _overlap_refused([base[0:40], base[10:12], base[30:50]], [False, False, True])
    ro = np.zeros(8, np.float32)
    ro.flags.writeable = False
    assert not _overlap_refused([ro, base], [False, True])                 # read-only is fine


def test_the_overlap_check_agrees_with_numpy_on_random_views():
    # Seeded differential smoke: contiguous, aligned views (any 8-byte offset, length, dtype,
    # read-only when read) of two buffers, against NumPy's exact np.shares_memory; a written flag
    # decides whether an overlap counts.
    rng = np.random.default_rng(26)
    bases = [np.zeros(512, np.uint8), np.zeros(512, np.uint8)]
    dtypes = list(_NAMES)
    checked = overlapping = 0
    for _ in range(2000):
        arrays, written = [], []
        for _ in range(int(rng.integers(1, 5))):
            base = bases[int(rng.integers(0, 2))]
            dt = dtypes[int(rng.integers(0, len(dtypes)))]
            lo = 8 * int(rng.integers(0, 64))
            n = int(rng.integers(0, (512 - lo) // dt.itemsize + 1))
            a = base[lo:lo + n * dt.itemsize].view(dt)
            w = bool(rng.random() < 0.5)
            if not w and rng.random() < 0.3:
                a = a.view()
                a.flags.writeable = False
            arrays.append(a)
            written.append(w)
        want = any(np.shares_memory(arrays[i], arrays[j]) and (written[i] or written[j])
                   for i in range(len(arrays)) for j in range(i + 1, len(arrays)))
        assert _overlap_refused(arrays, written) == want, [(a.ctypes.data, a.nbytes) for a in arrays]
        checked += 1
        overlapping += want
    assert 200 < overlapping < checked - 200   # both answers are exercised
