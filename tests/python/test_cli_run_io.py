"""`pypto run --inputs / --save / --repeat / --check` (python/pypto/cli/run.py, cli/arrays.py)."""
import os

import numpy as np
import pytest

from pypto import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTOR_ADD = os.path.join(ROOT, "examples", "vector_add.py")


def _inputs(tmp_path):
    rng = np.random.default_rng(7)
    a = rng.standard_normal(4096).astype(np.float32)
    b = rng.standard_normal(4096).astype(np.float32)
    path = tmp_path / "in.npz"
    np.savez(path, a=a, b=b)
    return a, b, str(path)


def test_inputs_from_npz_and_save_outputs(tmp_path, capsys):
    a, b, path = _inputs(tmp_path)
    out = str(tmp_path / "out.npz")
    assert cli.main(["run", VECTOR_ADD, "--inputs", path, "--save", out]) == 0
    with np.load(out) as saved:
        assert sorted(saved.files) == ["c"]
        np.testing.assert_array_equal(saved["c"], a + b)
    assert "saved: %s" % out in capsys.readouterr().out


def test_check_passes_against_a_correct_reference(tmp_path, capsys):
    a, b, path = _inputs(tmp_path)
    ref = str(tmp_path / "ref.npz")
    np.savez(ref, c=a + b)
    assert cli.main(["run", VECTOR_ADD, "--inputs", path, "--check", ref]) == 0
    assert "c          OK" in capsys.readouterr().out


def test_check_fails_with_the_worst_element_named(tmp_path, capsys):
    a, b, path = _inputs(tmp_path)
    ref = a + b
    ref[100] += 1.0
    np.savez(tmp_path / "ref.npz", c=ref)
    assert cli.main(["run", VECTOR_ADD, "--inputs", path, "--check", str(tmp_path / "ref.npz")]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH 1 of 4096 elements; worst at (100,)" in out


def test_repeat_prints_min_and_median_and_keeps_results(tmp_path, capsys):
    a, b, path = _inputs(tmp_path)
    out = str(tmp_path / "out.npz")
    assert cli.main(["run", VECTOR_ADD, "--inputs", path, "--repeat", "3", "--save", out]) == 0
    assert "3 runs: min " in capsys.readouterr().out
    with np.load(out) as saved:
        np.testing.assert_array_equal(saved["c"], a + b)


@pytest.mark.parametrize("argv, message", [
    (["--repeat", "0"], "--repeat must be in 1..1000000, got 0"),
    (["--inputs", "/nonexistent/in.npz"], "--inputs: no such file"),
    (["--save", "/nonexistent/dir/out.npz"], "--save: directory /nonexistent/dir does not exist"),
])
def test_usage_errors(argv, message, capsys):
    assert cli.main(["run", VECTOR_ADD] + argv) == 2
    assert message in capsys.readouterr().err


def test_inputs_with_unknown_name_or_wrong_shape(tmp_path, capsys):
    np.savez(tmp_path / "bad.npz", zz=np.zeros(3, np.float32))
    assert cli.main(["run", VECTOR_ADD, "--inputs", str(tmp_path / "bad.npz")]) == 2
    assert "has arrays for no parameter: zz" in capsys.readouterr().err
    np.savez(tmp_path / "bad2.npz", a=np.zeros(3, np.float32))
    assert cli.main(["run", VECTOR_ADD, "--inputs", str(tmp_path / "bad2.npz")]) == 2
    assert "'a' has shape (3,), the parameter needs (4096,)" in capsys.readouterr().err


def test_bad_output_paths_fail_before_compiling(tmp_path, capsys, monkeypatch):
    import pypto
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite a bad path"))
    assert cli.main(["run", VECTOR_ADD, "--trace", "/nonexistent/dir/t.json"]) == 2
    assert "--trace: directory /nonexistent/dir does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("repeat", ["0", "-1", "1000001", str(10 ** 20)])
def test_bad_repeat_is_refused_before_compiling(repeat, capsys, monkeypatch):
    # was checked after the compile (which printed "compiled ... -> <dir>" first); 10**20 was
    # accepted and ran until Ctrl-C
    import pypto
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite --repeat %s" % repeat))
    assert cli.main(["run", VECTOR_ADD, "--repeat", repeat]) == 2
    err = capsys.readouterr().err
    assert "pypto: error: --repeat must be in 1..1000000, got %s" % repeat in err, err
    assert ("it runs the program that many times" in err) == (int(repeat) > 0)


@pytest.mark.parametrize("repeat", ["1.5", "", "ten"])
def test_non_integer_repeat_is_a_usage_error(repeat, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["run", VECTOR_ADD, "--repeat", repeat])
    assert e.value.code == 2
    assert "argument --repeat: invalid int value: %r" % repeat in capsys.readouterr().err


def test_save_then_check_of_infinities_and_nans_is_ok(tmp_path, capsys):
    # +-inf against the same +-inf and NaN against NaN were MISMATCHes (|inf - inf| is NaN):
    # a run's --save output failed its own --check
    a = np.ones(4096, np.float32)
    a[:3] = [np.inf, -np.inf, np.nan]
    np.savez(tmp_path / "in.npz", a=a)
    ref = str(tmp_path / "ref.npz")
    assert cli.main(["run", VECTOR_ADD, "--inputs", str(tmp_path / "in.npz"), "--save", ref]) == 0
    assert cli.main(["run", VECTOR_ADD, "--inputs", str(tmp_path / "in.npz"), "--check", ref]) == 0
    assert "c          OK" in capsys.readouterr().out
    with np.load(ref) as saved:
        r = saved["c"].copy()
    r[0] = -np.inf   # a different infinity, and a number for a NaN, still mismatch
    r[2] = 0.0
    np.savez(tmp_path / "bad.npz", c=r)
    assert cli.main(["run", VECTOR_ADD, "--inputs", str(tmp_path / "in.npz"), "--check", str(tmp_path / "bad.npz")]) == 1
    assert "MISMATCH 2 of 4096 elements" in capsys.readouterr().out


class _P:
    def __init__(self, name, dtype):
        self.name, self.dtype, self.kind, self.direction = name, dtype, "tensor", "Out"


@pytest.mark.parametrize("dtype, got, ref, bad", [
    ("INT64", [2 ** 53 + 1, 5], [2 ** 53, 5], 1),          # equal through float64
    ("UINT64", [2 ** 64 - 1, 0], [2 ** 64 - 2, 0], 1),
    ("INT32", [1, 2], [1.9, 2.0], 1),                       # a float reference was truncated to 1
    ("INT32", [1, 2], [1.0, 2.0], 0),
    ("INT64", [2 ** 62, -3], [2 ** 62, -3], 0),
])
def test_check_compares_integers_exactly(tmp_path, dtype, got, ref, bad):
    from pypto.cli.arrays import check_outputs
    from pypto.runtime.args import numpy_dtype
    g = np.array(got, dtype=numpy_dtype(dtype))
    ints = all(isinstance(v, int) for v in ref)
    np.savez(tmp_path / "ref.npz", x=np.array(ref, dtype=g.dtype if ints else None))   # 2^64-2 alone would be float64
    line = check_outputs(str(tmp_path / "ref.npz"), [_P("x", dtype)], [g])[0]
    assert ("MISMATCH %d of 2" % bad in line) if bad else ("OK" in line), line


class _In:
    def __init__(self, name, dtype):
        self.name, self.dtype, self.kind, self.direction = name, dtype, "tensor", "In"


@pytest.mark.parametrize("dtype, given, message", [
    ("INT32", np.array([1.7, 2.0]), "its value 1.7 at index (0,) is not an int32 value (converted it would be 1)"),
    ("INT32", np.array([np.nan, 2.0]), "its value nan at index (0,) is not an int32 value"),
    ("UINT32", np.array([-1, 2]), "its value -1 at index (0,) is not a uint32 value (converted it would be 4294967295)"),
    ("INT8", np.array([300, 2]), "its value 300 at index (0,) is not an int8 value (converted it would be 44)"),
    ("BOOL", np.array([2, 0]), "its value 2 at index (0,) is not a bool value (converted it would be True)"),
    ("FP32", np.array([1 + 2j, 0]), "only arrays of real numbers or booleans convert"),
    ("BF16", np.array([0.5, 1.0], np.float32), "without ml_dtypes a pl.BF16 array is its raw bits"),
    ("FP32", np.array([0.1, 3]), "its value 0.1 at index (0,) is not a float32 value"),   # was rounded silently
    ("FP16", np.array([1e6, 3], np.float32), "its value 1000000.0 at index (0,) is not a float16 value (converted "
                                             "it would be inf)"),                        # became inf silently
])
def test_inputs_that_a_cast_would_change_are_refused(tmp_path, dtype, given, message):
    # each was cast silently (1.7 -> 1, -1 -> 4294967295, 300 -> 44, 1+2j -> 1, 0.5 -> bits 0, 0.1 rounded, 1e6 -> inf)
    from pypto.cli.arrays import load_inputs
    from pypto.cli.common import CliError
    from pypto.runtime.args import numpy_dtype
    if dtype == "BF16" and numpy_dtype("BF16") != np.uint16:   # ml_dtypes: BF16 arrays are values, the same rule
        given, message = np.array([0.1, 1.0]), "its value 0.1 at index (0,) is not a bfloat16 value"
    np.savez(tmp_path / "in.npz", x=given)
    with pytest.raises(CliError) as ei:
        load_inputs(str(tmp_path / "in.npz"), [_In("x", dtype)], [np.zeros(2, numpy_dtype(dtype))])
    assert "--inputs: parameter 'x' is pl.%s" % dtype in str(ei.value) and message in str(ei.value), str(ei.value)


@pytest.mark.parametrize("dtype, given", [
    ("INT32", np.array([1.0, -2.0])),            # whole floats
    ("UINT8", np.array([0, 255])),               # int64 values that fit
    ("BOOL", np.array([0, 1])),
    ("FP32", np.array([0.5, 3])),                # float64 values that float32 holds
    ("FP32", np.array([True, False])),           # booleans as 0 / 1
    ("FP16", np.array([1, 2], np.int32)),
])
def test_inputs_that_keep_their_values_are_converted(tmp_path, dtype, given):
    from pypto.cli.arrays import load_inputs
    from pypto.runtime.args import numpy_dtype
    np.savez(tmp_path / "in.npz", x=given)
    got = load_inputs(str(tmp_path / "in.npz"), [_In("x", dtype)], [np.zeros(2, numpy_dtype(dtype))])[0]
    assert got.dtype == numpy_dtype(dtype)
    np.testing.assert_array_equal(got, given.astype(numpy_dtype(dtype)))


def test_save_and_check_of_the_same_file_is_refused(tmp_path, capsys, monkeypatch):
    # --save wrote the outputs first, then --check compared them with themselves: always OK
    import pypto
    ref = tmp_path / "ref.npz"
    np.savez(ref, c=np.full(4096, 123.0, np.float32))   # a reference the run does not match
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled"))
    assert cli.main(["run", VECTOR_ADD, "--save", str(ref), "--check", str(tmp_path / "." / "ref.npz")]) == 2
    assert "--save and --check name the same file" in capsys.readouterr().err
    with np.load(ref) as kept:
        assert kept["c"][0] == 123.0


def test_save_onto_the_inputs_file_is_refused(tmp_path, capsys, monkeypatch):
    # --save replaced the inputs file with the outputs: its inputs were lost, and a later
    # --inputs run of it drew the missing ones at random
    import pypto
    f = tmp_path / "in.npz"
    np.savez(f, a=np.ones(4096, np.float32), b=np.ones(4096, np.float32))
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled"))
    assert cli.main(["run", VECTOR_ADD, "--inputs", str(f), "--save", str(tmp_path / "." / "in.npz")]) == 2
    assert "--save and --inputs name the same file" in capsys.readouterr().err
    with np.load(f) as kept:
        assert sorted(kept.files) == ["a", "b"]


@pytest.mark.parametrize("flag", ["--save", "--check", "--inputs"])
def test_trace_onto_another_file_flag_is_refused(tmp_path, capsys, monkeypatch, flag):
    # the trace overwrote the saved outputs, the reference or the inputs file
    import pypto
    f = tmp_path / "data.npz"
    np.savez(f, c=np.zeros(4096, np.float32))
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled"))
    assert cli.main(["run", VECTOR_ADD, flag, str(f), "--trace", str(f)]) == 2
    assert "--trace and %s name the same file" % flag in capsys.readouterr().err
    with np.load(f) as kept:
        assert list(kept.files) == ["c"]


def test_check_of_bf16_bits_against_a_float_reference(tmp_path):
    # without ml_dtypes a BF16 output is uint16 bits; a float reference was cast to uint16
    # (0.5 -> 0, 3.0 -> 3) and read as bits, so a correct output was a MISMATCH
    from pypto.cli.arrays import check_outputs
    from pypto.runtime.args import numpy_dtype
    vals = np.array([0.5, 3.0, -1.25], np.float32)
    bits = (vals.view(np.uint32) >> 16).astype(np.uint16).view(numpy_dtype("BF16"))   # exact in BF16 (values with ml_dtypes)
    np.savez(tmp_path / "ref.npz", x=vals)
    assert "OK" in check_outputs(str(tmp_path / "ref.npz"), [_P("x", "BF16")], [bits])[0]
    np.savez(tmp_path / "bad.npz", x=vals * 2)
    assert "MISMATCH 3 of 3" in check_outputs(str(tmp_path / "bad.npz"), [_P("x", "BF16")], [bits])[0]
    np.savez(tmp_path / "bits.npz", x=bits)   # a --save'd output: bits against bits
    assert "OK" in check_outputs(str(tmp_path / "bits.npz"), [_P("x", "BF16")], [bits])[0]


def _not_npz_files(tmp_path):
    good = tmp_path / "good.npz"
    np.savez(good, a=np.zeros(4096, np.float32))
    data = good.read_bytes()
    np.savez_compressed(tmp_path / "comp.npz", a=np.zeros(4096, np.float32))
    comp = bytearray((tmp_path / "comp.npz").read_bytes())
    comp[60:70] = b"\0" * 10                          # a damaged member: bad CRC
    files = {"one.npy": None, "truncated.npz": data[:len(data) // 2], "empty.npz": b"", "crc.npz": bytes(comp)}
    np.save(tmp_path / "one.npy", np.zeros(4096, np.float32))
    for name, content in files.items():
        if content is not None:
            (tmp_path / name).write_bytes(content)
    return {name: str(tmp_path / name) for name in files}


@pytest.mark.parametrize("name, message", [
    ("one.npy", "it holds one .npy array, not named arrays; save them with np.savez"),
    ("truncated.npz", "not a zip archive"),
    ("empty.npz", "empty file"),
])
@pytest.mark.parametrize("command, flag", [("run", "--inputs"), ("run", "--check"), ("graph", "--inputs")])
def test_a_file_that_is_no_npz_is_refused_before_compiling(tmp_path, capsys, monkeypatch, name, message, command, flag):
    # were tracebacks after the compile: TypeError (np.load gives a bare array for .npy),
    # zipfile.BadZipFile (truncated), EOFError (empty)
    import pypto
    path = _not_npz_files(tmp_path)[name]
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled"))
    argv = [command, VECTOR_ADD, flag, path] + (["-o", str(tmp_path / "g.dot")] if command == "graph" else [])
    assert cli.main(argv) == 2
    assert "%s: %s is not a NumPy .npz file: %s" % (flag, path, message) in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--inputs", "--check"])
def test_an_npz_with_a_damaged_member_is_a_usage_error(tmp_path, capsys, flag):
    # was a zipfile.BadZipFile traceback ('Bad CRC-32 for file a.npy') after the compile
    path = _not_npz_files(tmp_path)["crc.npz"]
    assert cli.main(["run", VECTOR_ADD, flag, path]) == 2
    err = capsys.readouterr().err
    assert "%s: %s is not a NumPy .npz file (" % (flag, path) in err and "Traceback" not in err


@pytest.mark.parametrize("ref", [np.full(4096, 1 + 5j, np.complex64), np.array(["a"] * 4096),
                                 np.array(["2020-01-01"] * 4096, dtype="datetime64[D]"), np.zeros(4096, "V4")],
                         ids=["complex", "str", "datetime", "void"])
def test_check_against_a_reference_that_is_no_real_number_is_refused(tmp_path, capsys, ref):
    # complex: the imaginary part was dropped (a reference of a + b + 5j passed), datetime: compared
    # as a day count, str: a ValueError traceback
    a, b, path = _inputs(tmp_path)
    if ref.dtype.kind == "c":
        ref = (a + b).astype(np.complex64) + 5j
    np.savez(tmp_path / "ref.npz", c=ref)
    assert cli.main(["run", VECTOR_ADD, "--inputs", path, "--check", str(tmp_path / "ref.npz")]) == 2
    err = capsys.readouterr().err
    assert "--check: reference 'c' in %s is a %s array; the output is FP32: only real numbers" % (
        tmp_path / "ref.npz", ref.dtype) in err and "Traceback" not in err


DYNAMIC = os.path.join(ROOT, "examples", "dynamic_shape.py")


def test_inputs_alone_give_the_dynamic_dimensions(tmp_path, capsys):
    # x: [M, 64]: M comes from the array (it needed --dim M=48 as well before).
    x = np.random.default_rng(3).standard_normal((48, 64)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x, alpha=np.array(0.5, np.float32))
    out = str(tmp_path / "out.npz")
    assert cli.main(["run", DYNAMIC, "--inputs", str(tmp_path / "in.npz"), "--save", out]) == 0, capsys.readouterr().err
    with np.load(out) as saved:
        np.testing.assert_allclose(saved["y"], np.maximum(x, 0) * 0.5 + x, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arrays, dim, message", [
    ({"x": (48, 64)}, ["--dim", "M=16"], "'x' of shape (48, 64) gives dynamic dimension M = 48, but --dim M=16 gives 16"),
    ({"x": (48, 64), "y": (32, 64)}, [], "'y' of shape (32, 64) gives dynamic dimension M = 32, but 'x' of shape (48, 64) "
                                         "gives 48"),
])
def test_inputs_that_disagree_on_a_dynamic_dimension_are_a_usage_error(tmp_path, capsys, arrays, dim, message):
    np.savez(tmp_path / "in.npz", **{k: np.zeros(s, np.float32) for k, s in arrays.items()})
    assert cli.main(["run", DYNAMIC, "--inputs", str(tmp_path / "in.npz")] + dim) == 2
    assert message in capsys.readouterr().err


def test_a_bf16_program_round_trips_through_save_check_and_inputs(tmp_path, capsys):
    # With ml_dtypes installed, --save wrote a BF16 output as |V2 (the .npy format has no
    # bfloat16) and --check and --inputs then refused that file as "no numbers". Saved as bits,
    # a file of bits or of np.savez'd ml_dtypes arrays reads back as BF16 in both setups.
    import sys
    from pypto.runtime.args import numpy_dtype
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from e2e_util import kernel_program_text
    prog = tmp_path / "bf.py"
    prog.write_text(kernel_program_text([("a", [4, 8], "BF16")], [("c", [4, 8], "BF16", "pl.add(ta, ta)")]))
    vals = np.arange(32, dtype=np.float32).reshape(4, 8) / 4          # exact in bfloat16, and so are their doubles
    bits = (vals.view(np.uint32) >> 16).astype(np.uint16)
    np.savez(tmp_path / "in.npz", a=bits.view(numpy_dtype("BF16")))   # |V2 when ml_dtypes is installed
    out = tmp_path / "out.npz"
    assert cli.main(["run", str(prog), "--inputs", str(tmp_path / "in.npz"), "--save", str(out)]) == 0
    with np.load(out) as saved:
        assert saved["c"].dtype == np.uint16
        np.testing.assert_array_equal(saved["c"], ((vals * 2).view(np.uint32) >> 16).astype(np.uint16))
    assert cli.main(["run", str(prog), "--inputs", str(tmp_path / "in.npz"), "--check", str(out)]) == 0
    np.savez(tmp_path / "ref.npz", c=vals * 2)                        # a float reference of the values
    assert cli.main(["run", str(prog), "--inputs", str(tmp_path / "in.npz"), "--check", str(tmp_path / "ref.npz")]) == 0
    np.savez(tmp_path / "bad.npz", c=vals * 3)
    assert cli.main(["run", str(prog), "--inputs", str(tmp_path / "in.npz"), "--check", str(tmp_path / "bad.npz")]) == 1
    assert "MISMATCH 31 of 32" in capsys.readouterr().out


@pytest.mark.parametrize("given", [np.zeros(2, [("a", "u1"), ("b", "u1")]), np.zeros(2, "V4"), np.zeros(2, "V2")])
def test_only_plain_2_byte_void_reads_as_bf16_bits(tmp_path, given):
    # |V2 is what np.savez writes for an ml_dtypes.bfloat16 array; a structured or wider void
    # array is no bfloat16, and a |V2 one for another dtype no number: refused by name.
    from pypto.cli.arrays import load_inputs
    from pypto.cli.common import CliError
    from pypto.runtime.args import numpy_dtype
    dtype = "FP32" if given.dtype == np.dtype("V2") else "BF16"
    np.savez(tmp_path / "in.npz", x=given)
    with pytest.raises(CliError) as ei:
        load_inputs(str(tmp_path / "in.npz"), [_In("x", dtype)], [np.zeros(2, numpy_dtype(dtype))])
    assert "--inputs: parameter 'x' is pl.%s" % dtype in str(ei.value), str(ei.value)
