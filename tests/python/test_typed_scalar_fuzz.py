"""Integer scalar expressions over every integer dtype agree with Python's integers promoted and
wrapped as docs/dsl.md says (tests/python/typed_scalar_fuzz.py): a seeded smoke here, the full
size under `make fuzz` (scripts/fuzz_exprs.py --kind typed). Before, narrow types computed in
C++'s int without wrapping, a UINT64 compared with an INT64 as unsigned (and failed -Werror),
and the L2 generator printed `//` as C++'s `/` for a narrowing cast of a positive literal."""
import numpy as np
import pytest

import typed_scalar_fuzz as tf


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_typed_expressions_agree_with_python(side, seed):
    assert tf.check(seed, side) == []


def test_the_reference_promotes_and_wraps_as_the_docs_say():
    assert tf.promote("INT8", "UINT8") == "INT8" and tf.promote("UINT64", "INDEX") == "INDEX"
    assert tf.promote("BOOL", "BOOL") == "INDEX" and tf.promote("BOOL", "UINT16") == "UINT16"
    assert tf.promote("INT32", "UINT64") == "UINT64" and tf.promote("UINT32", "INT64") == "INT64"
    assert tf.wrap("INT8", 500) == -12 and tf.wrap("UINT8", -5) == 251 and tf.wrap("BOOL", -3) == 1


# Each gave another value, or failed the -Werror build, before (found by the typed fuzzer and by
# probing its first findings by hand); the expected values are Python's, wrapped to the dtype.
FOUND = [
    ("pl.cast(pl.cast(a, pl.INT8) * pl.cast(100, pl.INT8) > 0, pl.INT64)", lambda a, b: int(tf.wrap("INT8", a * 100) > 0)),
    ("pl.cast(pl.cast(a, pl.UINT8) - pl.cast(10, pl.UINT8) > 0, pl.INT64)", lambda a, b: int(tf.wrap("UINT8", a - 10) > 0)),
    ("(pl.cast(a, pl.INT16) * pl.cast(10000, pl.INT16)) // 7", lambda a, b: tf.wrap("INT16", a * 10000) // 7),
    ("pl.cast(-pl.cast(a, pl.UINT8) > 0, pl.INT64)", lambda a, b: int(tf.wrap("UINT8", -a) > 0)),
    ("pl.cast(pl.cast(a, pl.INT32) * 1000000000 > 0, pl.INT64)", lambda a, b: int(tf.wrap("INT32", a) * 10**9 > 0)),
    ("pl.cast(pl.cast(a, pl.UINT64) < -1, pl.INT64)", lambda a, b: int(a < -1)),
    ("pl.cast(pl.cast(a, pl.UINT64) == a, pl.INT64)", lambda a, b: 1),
    ("pl.cast(max(pl.cast(a, pl.INT8), pl.cast(250, pl.UINT8)), pl.INT64)", lambda a, b: max(tf.wrap("INT8", a), -6)),
    ("pl.cast(min(a, pl.cast(a, pl.UINT64)), pl.INT64)", lambda a, b: a),
    ("pl.cast(pl.cast(65535, pl.INT8) % pl.cast(65535, pl.INT64), pl.INT64)", lambda a, b: -1 % 65535),
    ("pl.cast((a > b) == 100, pl.INT64)", lambda a, b: 0),
    # (of literals alone, `2147483648 * max(-8, 4294967297)`, it is now a parse error: beyond int64)
    ("(2147483648 * max(a, 4294967297))", lambda a, b: tf.wrap("INT64", 2147483648 * 4294967297)),
]


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
def test_the_findings_compute_what_python_does(side):
    import pypto
    import pypto.language as pl
    import scalar_expr_fuzz as sf
    texts = [t for t, _ in FOUND]
    prog = pypto.compile(pl.parse_program(sf.program_text(texts, side), "typed_found_%s.py" % side))
    for a, b in ((5, 3), (-3, 7), (200, -1)):
        c = np.zeros(len(texts), np.int64)
        prog(a, b, c)
        want = [tf.wrap("INT64", f(a, b)) for _, f in FOUND]
        assert list(c) == want, [(t, int(g), w) for (t, _), g, w in zip(FOUND, c, want) if g != w]


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
def test_a_constant_remainder_divides_in_the_result_dtype(side):
    """Seed 2033: `pl.cast(4294967297, pl.INT32) % pl.cast(-1, pl.UINT32)` is 1 % -1 = 0 in INT32
    (the promoted dtype); the kernel's constant folding divided the raw values (1 % 4294967295)."""
    import pypto
    import pypto.language as pl
    import scalar_expr_fuzz as sf
    texts = ["(pl.cast((4294967297), pl.INT32) % pl.cast((-1), pl.UINT32))",
             "(pl.cast((7), pl.INT32) // pl.cast((-2), pl.UINT32))",
             "(b if (pl.cast((4294967297), pl.INT32) % pl.cast((-1), pl.UINT32)) else ((1) + pl.cast(b, pl.UINT32)))"]
    prog = pypto.compile(pl.parse_program(sf.program_text(texts, side), "typed_const_%s.py" % side))
    c = np.zeros(len(texts), np.int64)
    prog(3, 7, c)
    assert list(c) == [0, -4, 8]


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
def test_literals_keep_their_dtype_in_cpp(side):
    """Seed 3029: the INT32 constant -2147483648 printed as `-2147483648`, a C++ long, so
    `pl.cast(2147483648, pl.INT32) - b32` computed in 64 bits (-2147483649, not INT32's
    2147483647). UINT32 / UINT64 literals likewise print cast to their type."""
    import pypto
    import pypto.language as pl
    import scalar_expr_fuzz as sf
    texts = ["(pl.cast((2147483648), pl.INT32) - pl.cast(b, pl.INT32))",
             "(pl.cast((-1), pl.UINT32) + pl.cast(b, pl.UINT32))",
             "pl.cast(pl.cast(b, pl.UINT64) < pl.cast((-1), pl.UINT64), pl.INT64)",
             "((250) if ((65535) == max(b, pl.cast((200), pl.INT64))) else (pl.cast((2147483648), pl.INT32) - pl.cast(b, pl.INT32)))"]
    prog = pypto.compile(pl.parse_program(sf.program_text(texts, side), "typed_literals_%s.py" % side))
    c = np.zeros(len(texts), np.int64)
    prog(3, 1, c)
    assert list(c) == [2147483647, 0, 1, 2147483647]
