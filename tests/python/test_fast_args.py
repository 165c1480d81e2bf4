"""The per-call fast path of argument marshalling (issue 17): it accepts exactly the common calls the
full checker accepts, with the same runtime slots, and leaves every other call (None) to the full
checker and its messages."""

import numpy as np
import pytest

from pypto.runtime.args import ArgumentValueError, ParamSpec, bind_and_check
from pypto.runtime.fast_args import fast_marshaller
from pypto.runtime.loader import _tensor_tuples

PARAMS = [
    ParamSpec("n", "scalar", "INT32", (), "In", 0),
    ParamSpec("x", "tensor", "FP32", (4, "N"), "In", 0),
    ParamSpec("alpha", "scalar", "FP32", (), "In", 1),
    ParamSpec("out", "tensor", "FP32", (4, "N"), "Out", 1),
    ParamSpec("flag", "scalar", "BOOL", (), "In", 2),
    ParamSpec("u", "scalar", "UINT8", (), "In", 3),
]
SIG = "main(n, x, alpha, out, flag, u)"


def _marshal(args):
    return fast_marshaller(PARAMS, SIG)(args)


def test_fast_path_matches_the_full_checker():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = np.zeros((4, 6), np.float32)
    args = (-3, x, 0.5, out, True, 255)
    tensors, scalars, keep = _marshal(args)
    call = bind_and_check(PARAMS, "main", args)
    # The fast path hands the binding the arrays themselves (it reads their address).
    assert [(d.ctypes.data, c, list(s), st) for d, c, s, st in tensors] == _tensor_tuples(call.tensors)
    assert tensors[0][0] is x and tensors[1][0] is out
    assert scalars == call.scalars
    assert scalars[0] == (-3) & 0xFFFFFFFFFFFFFFFF and scalars[2] == 1 and scalars[3] == 255
    assert keep[0] is x and keep[1] is out


@pytest.mark.parametrize("change", [
    lambda a: a[:3],                                             # out omitted: allocated by the full path
    lambda a: (1.5,) + a[1:],                                    # float for an integer scalar
    lambda a: a[:5] + (256,),                                    # UINT8 out of range
    lambda a: (True,) + a[1:],                                   # bool for an integer scalar
    lambda a: (1, a[1].astype(np.float64)) + a[2:],              # wrong dtype
    lambda a: (1, np.zeros((4, 7), np.float32)) + a[2:],         # dynamic dim N disagrees with out
    lambda a: (1, np.zeros((5, 6), np.float32)) + a[2:],         # static dim wrong
    lambda a: (1, np.zeros((6, 4), np.float32).T) + a[2:],       # not C-contiguous
    lambda a: (1, a[1].tolist()) + a[2:],                        # not an ndarray
    lambda a: a[:3] + (_read_only((4, 6)),) + a[4:],             # read-only Out
])
def test_anything_else_goes_to_the_full_checker(change):
    x = np.zeros((4, 6), np.float32)
    args = (1, x, 0.5, np.zeros((4, 6), np.float32), False, 0)
    assert _marshal(args) is not None
    assert _marshal(change(args)) is None


def _read_only(shape):
    a = np.zeros(shape, np.float32)
    a.flags.writeable = False
    return a


def test_overlapping_views_are_refused_on_the_fast_path_too():
    base = np.zeros((8, 6), np.float32)
    args = (1, base[:4], 0.5, base[2:6], False, 0)   # out overlaps x and is written
    with pytest.raises(ArgumentValueError, match="different views of overlapping memory") as fast:
        _marshal(args)
    with pytest.raises(ArgumentValueError) as full:
        bind_and_check(PARAMS, "main", args)
    assert str(fast.value) == str(full.value)


def test_an_input_that_is_the_output_goes_to_the_full_checker():
    x = np.zeros((4, 6), np.float32)   # the full checker passes a copy of the In argument
    assert _marshal((1, x, 0.5, x, False, 0)) is None
    assert _marshal((1, x, 0.5, x.copy(), False, 0)) is not None


def test_buffers_overlap_sees_exactly_the_shared_bytes():
    from pypto._core.program_abi import buffers_overlap
    base = np.zeros(64, np.float32)
    assert not buffers_overlap([base[:32], base[32:]], [True, True])       # adjacent
    assert buffers_overlap([base[:33], base[32:]], [False, True])         # one element shared
    assert buffers_overlap([base[32:], base[:33]], [True, False])         # either order
    assert not buffers_overlap([base[:40], base[8:]], [False, False])     # both read
    assert not buffers_overlap([base[:0], base], [True, True])            # empty shares nothing
    assert buffers_overlap([base, base], [True, False])                   # the same memory
    assert not buffers_overlap([base], [True])
    assert not buffers_overlap([], [])
    # Only the first and the last overlap with a write between them: a look at neighbours in
    # address order alone misses it.
    assert buffers_overlap([base[0:40], base[10:12], base[30:50]], [False, False, True])
    assert buffers_overlap([np.zeros((6, 4), np.float32).T, base], [False, False])  # not contiguous: ask the full check
    ro = np.zeros(8, np.float32)
    ro.flags.writeable = False
    assert not buffers_overlap([ro, base], [False, True])                 # read-only is fine
    with pytest.raises(ValueError):
        buffers_overlap([base], [])
    with pytest.raises(TypeError):
        buffers_overlap([object()], [True])


def test_buffers_overlap_agrees_with_numpy_on_random_views():
    # Seeded differential smoke: contiguous views (any offset, length, dtype, read-only or not)
    # of two buffers, against NumPy's exact np.shares_memory; a written flag decides whether an
    # overlap counts.
    from pypto._core.program_abi import buffers_overlap
    rng = np.random.default_rng(26)
    bases = [np.zeros(512, np.uint8), np.zeros(512, np.uint8)]
    dtypes = [np.uint8, np.float32, np.float64, np.int16]
    checked = overlapping = 0
    for _ in range(2000):
        arrays, written = [], []
        for _ in range(int(rng.integers(0, 5))):
            base = bases[int(rng.integers(0, 2))]
            dt = np.dtype(dtypes[int(rng.integers(0, len(dtypes)))])
            lo = int(rng.integers(0, 512))
            n = int(rng.integers(0, (512 - lo) // dt.itemsize + 1))
            a = base[lo:lo + n * dt.itemsize].view(dt)
            if rng.random() < 0.3:
                a = a.view()
                a.flags.writeable = False
            arrays.append(a)
            written.append(bool(rng.random() < 0.5))
        want = any(np.shares_memory(arrays[i], arrays[j]) and (written[i] or written[j])
                   for i in range(len(arrays)) for j in range(i + 1, len(arrays)))
        assert buffers_overlap(arrays, written) == want, [(a.ctypes.data, a.nbytes) for a in arrays]
        checked += 1
        overlapping += want
    assert 200 < overlapping < checked - 200   # both answers are exercised
