"""Bad files, paths and flags for the `pypto` command line (docs/codegen.md "Command line",
docs/running.md): each is a `pypto: error: ...` usage error (exit status 1 or 2) naming the file and
line or the path at fault, never a Python traceback, and found before anything runs whose results
it would lose."""
import os

import pytest

from pypto import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTOR_ADD = os.path.join(ROOT, "examples", "vector_add.py")


def _err(capsys):
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return err


@pytest.mark.parametrize("text, message", [
    ("x = (\n", "bad.py:1:5: not valid Python: '(' was never closed"),
    (b"\xff\xfe bad", "bad.py:1:"),
    ("import pypto\n\nraise RuntimeError('boom')\n", "running {p} failed at {p}:3: RuntimeError: boom"),
    ("import no_such_module_xyz\n", "failed at {p}:1: ModuleNotFoundError"),
])
def test_program_file_that_fails_to_load(tmp_path, capsys, text, message):
    p = tmp_path / "bad.py"
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert cli.main(["compile", str(p), "-o", str(tmp_path / "out")]) == 2
    assert message.format(p=p) in _err(capsys)


@pytest.mark.parametrize("command", ["run", "compile", "graph"])
@pytest.mark.parametrize("text, code, line", [
    ("raise SystemExit(None)\n", "None", 1),
    ("import sys\n\nsys.exit(3)\n", "3", 3),
    ("import sys\nsys.exit('usage: prog.py N')\n", "'usage: prog.py N'", 2),
])
def test_program_file_that_exits_while_loading(tmp_path, capsys, command, text, code, line):
    # sys.exit() at a program file's top level left pypto silently, with the file's status (0 read
    # as success, nothing compiled or run).
    p = tmp_path / "exits.py"
    p.write_text(text)
    out = tmp_path / ("g.dot" if command == "graph" else "out")
    assert cli.main([command, str(p), "-o", str(out)]) == 2
    assert ("pypto: error: %s exited while being loaded (SystemExit(%s) at %s:%d), so nothing was compiled or run"
            % (p, code, p, line)) in _err(capsys)
    assert not out.exists() or out.is_dir() and not any(out.iterdir())   # (run's -o probe makes the directory)


@pytest.mark.parametrize("command, name, flag", [
    ("compile", "kernel_config.py", None),
    ("compile", "main.cpp", "orchestration"),
    ("run", "build.sh", None),
    ("run", "libprogram.so", None),
    ("run", "in.npz", "--inputs"),
])
def test_output_directory_file_that_is_the_program_or_an_input_is_refused(tmp_path, capsys, command, name, flag):
    # pypto compile kernel_config.py -o . replaced the program with the generated kernel_config.py
    # (exit status 0); the same for any file written into -o (build.sh, libprogram.so, ...).
    import numpy as np
    out = tmp_path / "out"
    sub = out / flag if flag == "orchestration" else out
    sub.mkdir(parents=True)
    prog = tmp_path / "prog.py"
    prog.write_text(open(VECTOR_ADD).read())
    target = sub / name
    argv = [command, str(prog), "-o", str(out)]
    if flag == "--inputs":   # an input archive whose name a generated file has: orchestration/main.cpp
        (out / "orchestration").mkdir()
        target = out / "orchestration" / "main.cpp"
        np.savez(str(tmp_path / "in.npz"), a=np.zeros((16, 16), np.float32))
        os.replace(str(tmp_path / "in.npz"), str(target))
        argv += ["--inputs", str(target)]
    else:
        os.replace(str(prog), str(target))
        argv[1] = str(target)
    before = target.read_bytes()
    assert cli.main(argv) == 2
    err = _err(capsys)
    assert "pypto: error: -o: the generated %s would be written to %s, which is the %s" % (
        os.path.relpath(str(target), str(out)), target, "--inputs file" if flag == "--inputs" else "program file") \
        in err, err
    assert target.read_bytes() == before
    assert sorted(p.name for p in out.rglob("*")) == sorted(p.name for p in [target, *target.parents]
                                                           if out in p.parents)   # nothing else written


def test_program_file_without_py_suffix_is_loaded(tmp_path, capsys):
    p = tmp_path / "prog.txt"
    p.write_text(open(VECTOR_ADD).read())
    assert cli.main(["compile", str(p), "-o", str(tmp_path / "out")]) == 0
    assert os.path.isfile(tmp_path / "out" / "orchestration" / "main.cpp")


def test_output_directory_that_is_a_file(tmp_path, capsys):
    f = tmp_path / "taken"
    f.write_text("keep me")
    assert cli.main(["compile", VECTOR_ADD, "-o", str(f)]) == 2
    assert "output directory %s is an existing file" % f in _err(capsys)
    assert f.read_text() == "keep me"
    assert cli.main(["run", VECTOR_ADD, "-o", str(f)]) == 2    # a usage error, before compiling
    assert "-o: cannot write the generated sources to %s: it is an existing file" % f in _err(capsys)
    assert f.read_text() == "keep me"


def test_run_output_directory_that_cannot_be_made_is_refused_before_compiling(tmp_path, capsys, monkeypatch):
    import pypto

    def no_compile(*a, **k):
        raise AssertionError("compiled although -o cannot be written")
    monkeypatch.setattr(pypto, "compile", no_compile)
    assert cli.main(["run", VECTOR_ADD, "-o", "/proc/no_such_dir/out"]) == 2
    assert "-o: cannot write the generated sources to /proc/no_such_dir/out:" in _err(capsys)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(str(ro), os.W_OK):   # root: permissions do not stop it; /proc above covers the refusal
            return
        assert cli.main(["run", VECTOR_ADD, "-o", str(ro / "a" / "b")]) == 2
        assert "Permission denied" in _err(capsys)
    finally:
        ro.chmod(0o700)


def test_run_output_directory_probe_leaves_no_file_and_a_new_one_works(tmp_path, capsys):
    from pypto.runtime.trace_path import probe_directory
    assert probe_directory(str(tmp_path / "a" / "b")) is None
    assert os.listdir(tmp_path / "a" / "b") == []      # made, as the build would; the probe's file removed
    assert cli.main(["run", VECTOR_ADD, "-o", str(tmp_path / "a" / "b")]) == 0
    assert os.path.isfile(tmp_path / "a" / "b" / "orchestration" / "main.cpp")


@pytest.mark.parametrize("taken", [True, False])
def test_dump_ir_directory_that_is_a_file_or_unwritable(tmp_path, capsys, monkeypatch, taken):
    # a usage error before compiling, as -o's (it was status 1, from the pipeline's first dump)
    from pypto import codegen
    monkeypatch.setattr(codegen, "run_pipeline", lambda *a, **k: pytest.fail("compiled despite a bad --dump-ir"))
    f = tmp_path / "taken" if taken else "/proc/nope"
    if taken:
        f.write_text("keep me")
    assert cli.main(["compile", VECTOR_ADD, "-o", str(tmp_path / "out"), "--dump-ir", str(f)]) == 2
    assert "pypto: error: --dump-ir: cannot write the IR dumps to %s" % f in _err(capsys)


@pytest.mark.parametrize("flag", ["--save", "--trace"])
def test_save_or_trace_path_that_is_a_directory_fails_before_compiling(tmp_path, capsys, monkeypatch, flag):
    import pypto
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite a bad path"))
    assert cli.main(["run", VECTOR_ADD, flag, str(tmp_path)]) == 2
    assert "%s: %s is a directory" % (flag, tmp_path) in _err(capsys)


def test_save_writes_the_path_given(tmp_path, capsys):
    out = tmp_path / "result"          # no .npz suffix: np.savez(name) would write result.npz
    assert cli.main(["run", VECTOR_ADD, "--save", str(out)]) == 0
    assert out.is_file() and not (tmp_path / "result.npz").exists()


def test_trace_summary_of_a_directory(tmp_path, capsys):
    assert cli.main(["trace", "summary", str(tmp_path)]) == 2
    assert "cannot read %s" % tmp_path in _err(capsys)


DYNAMIC = os.path.join(ROOT, "examples", "dynamic_shape.py")


@pytest.mark.parametrize("argv, message", [
    (["run", DYNAMIC, "--dim", "M=64", "--dim", "K=3"],
     "--dim K=3: program DynamicRows has no dynamic dimension K (its dynamic dimensions: M)"),
    (["run", VECTOR_ADD, "--dim", "M=3"], "--dim M=3: program VectorAdd has no dynamic dimension M (it has none)"),
    (["run", VECTOR_ADD, "--dim", "N=5", "--mpi"], "--dim N=5: program VectorAdd has no dynamic dimension N"),
    (["graph", DYNAMIC, "--static", "--dim", "Q=1"], "--dim Q=1: program DynamicRows has no dynamic dimension Q"),
    (["graph", DYNAMIC, "--dim", "M=8", "--dim", "Q=1"], "--dim Q=1: program DynamicRows has no dynamic dimension Q"),
    (["graph", VECTOR_ADD, "--dim", "M=8"], "--dim M=8: program VectorAdd has no dynamic dimension M (it has none)"),
])
def test_dim_for_a_name_the_program_does_not_have(tmp_path, capsys, monkeypatch, argv, message):
    # Was silently ignored (the run went ahead without the extent the user meant to set), then
    # refused only after the compile and the C++ build: the names are known once the file is parsed.
    import pypto
    import subprocess
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite %s" % argv))
    monkeypatch.setattr(subprocess, "call", lambda *a, **k: pytest.fail("launched mpirun"))
    assert cli.main(argv) == 2
    assert "pypto: error: " + message in _err(capsys)


@pytest.mark.parametrize("argv, flag", [
    (["compile", VECTOR_ADD, "-o", ""], "-o"),
    (["compile", VECTOR_ADD, "-o", str("out"), "--dump-ir", " "], "--dump-ir"),
    (["run", VECTOR_ADD, "-o", ""], "-o"),
    (["run", VECTOR_ADD, "--save", ""], "--save"),
    (["run", VECTOR_ADD, "--trace", ""], "--trace"),
    (["run", VECTOR_ADD, "--inputs", ""], "--inputs"),
    (["run", VECTOR_ADD, "--check", ""], "--check"),
    (["graph", VECTOR_ADD, "-o", ""], "-o"),
    (["compile", "", "-o", "out"], "the program file"),
    (["trace", "summary", ""], "the trace file"),
])
def test_empty_path_is_a_usage_error(tmp_path, capsys, monkeypatch, argv, flag):
    # `compile -o ""` wrote the sources into the current directory; `run --inputs ""` and the
    # other empty run paths counted as not given; `graph -o ""` ended in a traceback.
    import pypto
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite an empty path"))
    assert cli.main(argv) == 2
    assert "%s: the path is empty" % flag in _err(capsys)
    assert os.listdir(tmp_path) == []


def test_graph_scalar_values_are_checked(tmp_path, capsys):
    """`pypto graph --static --scalar NAME=V`: V is an int, float or true/false, NAME a scalar
    parameter of the entry (else it would be ignored silently), and only with --static."""
    prog = os.path.join(ROOT, "tests", "golden", "if_else", "program.py")   # main(..., condition)
    out = str(tmp_path / "g.dot")
    assert cli.main(["graph", prog, "--static", "--scalar", "condition=1", "-o", out]) == 0
    assert "kernel_a" in open(out).read()
    cases = [
        (["--static", "--scalar", "conditon=1"], "--scalar conditon=1: main has no scalar parameter conditon "
                                                 "(its scalar parameters: condition)"),
        (["--static", "--scalar", "condition=one"], "--scalar condition: 'one' is not an integer, a float or true/false"),
        (["--static", "--scalar", "condition"], "--scalar expects NAME=VALUE, got 'condition'"),
        (["--scalar", "condition=1"], "--scalar sets a scalar parameter for --static"),
        # beyond int64: was a TypeError traceback of the static_task_graph binding; now the run's own text
        (["--static", "--scalar", "condition=%d" % 2 ** 64], "--scalar: argument 'condition' of main(a, b, c, d, "
                                                              "condition) = %d does not fit pl.INT64 (range "
                                                              "-9223372036854775808..9223372036854775807)" % 2 ** 64),
    ]
    for flags, message in cases:
        assert cli.main(["graph", prog, "-o", str(tmp_path / "bad.dot")] + flags) != 0
        assert message in _err(capsys), flags
        assert not os.path.exists(tmp_path / "bad.dot")


@pytest.mark.parametrize("argv", [
    ["run", DYNAMIC, "--dim", "M=4294967296"],
    ["graph", DYNAMIC, "--dim", "M=%d" % 10 ** 20],
    ["graph", DYNAMIC, "--static", "--dim", "M=%d" % 10 ** 20],   # was a TypeError traceback
])
def test_dim_above_the_runtimes_extent_is_refused_before_compiling(tmp_path, capsys, monkeypatch, argv):
    # run: refused after the compile, as an input that cannot be allocated
    import pypto
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite %s" % argv))
    assert cli.main(argv) == 2
    assert "pypto: error: --dim M: an extent must be at most 4294967295 (the runtime's 32-bit tensor extent), got " \
        in _err(capsys)


@pytest.mark.parametrize("command, path", [("compile", "/dev/null"), ("run", "/dev/null"), ("graph", "/dev/null")])
def test_program_path_that_is_not_a_regular_file(tmp_path, capsys, command, path):
    # was "no such file: /dev/null", for a path that exists
    assert cli.main([command, path, "-o", str(tmp_path / "out")]) == 2
    assert "pypto: error: %s is not a regular file" % path in _err(capsys)


@pytest.mark.parametrize("command", ["compile", "run", "graph"])
def test_program_path_that_is_a_directory(tmp_path, capsys, command):
    # was "no such file: <dir>", which is wrong for a path that exists
    d = tmp_path / "prog_dir"
    d.mkdir()
    assert cli.main([command, str(d), "-o", str(tmp_path / "out")]) == 2
    assert "%s is a directory, not a file" % d in _err(capsys)


@pytest.mark.parametrize("flag", ["--inputs", "--check"])
def test_inputs_or_check_path_that_is_a_directory(tmp_path, capsys, flag):
    assert cli.main(["run", VECTOR_ADD, flag, str(tmp_path)]) == 2
    assert "%s: %s is a directory, not a file" % (flag, tmp_path) in _err(capsys)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
@pytest.mark.parametrize("flag, path", [("--save", "/proc/no_such_dir_entry.npz"), ("--trace", "/proc/version")])
def test_save_or_trace_path_that_cannot_be_opened_fails_before_compiling(tmp_path, capsys, monkeypatch, flag, path):
    # /proc exists but takes no new file; /proc/version takes no writes: both were found only after
    # the run (--save: a FileNotFoundError traceback; --trace: no error at all, no trace written)
    import pypto
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite a bad path"))
    assert cli.main(["run", VECTOR_ADD, flag, path]) == 2
    err = _err(capsys)
    assert "%s: cannot write %s:" % (flag, path) in err, err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_save_that_fails_while_writing_is_a_usage_error(capsys):
    # /dev/full opens but every write fails: an OSError traceback after the run before
    assert cli.main(["run", VECTOR_ADD, "--save", "/dev/full"]) == 2
    assert "--save: cannot write /dev/full: No space left on device" in _err(capsys)


@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize("path, message", [
    ("{tmp}", "-o: {tmp} is a directory; give a file path"),
    ("/proc/no_such_dir_entry.dot", "-o: cannot write /proc/no_such_dir_entry.dot:"),
])
def test_graph_output_that_cannot_be_written_fails_before_compiling(tmp_path, capsys, monkeypatch, static, path,
                                                                     message):
    # --static: an IsADirectoryError / FileNotFoundError traceback; a run: compiled and ran, then
    # 'could not write the task graph'
    if path.startswith("/proc") and not os.path.isdir("/proc/self"):
        pytest.skip("needs Linux /proc")
    import pypto
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite a bad -o"))
    path = path.format(tmp=tmp_path)
    assert cli.main(["graph", VECTOR_ADD, "-o", path] + (["--static"] if static else [])) == 2
    assert message.format(tmp=tmp_path) in _err(capsys)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_graph_static_output_write_that_fails_is_a_usage_error(capsys):
    assert cli.main(["graph", VECTOR_ADD, "--static", "-o", "/dev/full"]) == 2   # was an OSError traceback
    assert "-o: cannot write /dev/full: No space left on device" in _err(capsys)


def test_graph_svg_of_an_svg_named_output_is_refused(tmp_path, capsys):
    # dot -Tsvg g.svg -o g.svg would overwrite the DOT file it reads
    assert cli.main(["graph", VECTOR_ADD, "--static", "--svg", "-o", str(tmp_path / "g.svg")]) == 2
    assert "--svg renders -o %s to %s, the same file" % (tmp_path / "g.svg", tmp_path / "g.svg") in _err(capsys)
    assert os.listdir(tmp_path) == []


def test_graph_of_a_host_entry_is_refused_before_compiling(tmp_path, capsys, monkeypatch):
    # was refused after compiling and building the whole HOST program
    import pypto
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled a HOST entry for graph"))
    prog = os.path.join(ROOT, "examples", "two_chips.py")
    assert cli.main(["graph", prog, "-o", str(tmp_path / "g.dot")]) == 2
    assert "'host_main' is a distributed HOST-level entry" in _err(capsys)


def test_pypto_without_a_command_names_the_choices(capsys):
    # said "the following arguments are required: command"
    from pypto import cli
    with pytest.raises(SystemExit) as e:
        cli.main([])
    assert e.value.code == 2
    assert "the following arguments are required: {compile,run,trace,graph}" in capsys.readouterr().err


@pytest.mark.parametrize("program", [VECTOR_ADD, os.path.join(ROOT, "examples", "two_chips.py")],
                         ids=["chip-level", "host"])
def test_trace_that_cannot_be_written_keeps_the_results(tmp_path, capsys, program):
    # --trace /dev/full: the run completed, then the trace write failed (no space left): a chip-level
    # run stopped there, its outputs neither printed nor --save'd; a HOST run was an OSError traceback.
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    out = tmp_path / "out.npz"
    assert cli.main(["run", program, "--trace", "/dev/full", "--save", str(out)]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "could not write the trace to /dev/full" in captured.err, captured.err
    assert "sha256=" in captured.out and "trace: /dev/full" not in captured.out, captured.out
    assert out.is_file()


@pytest.mark.parametrize("name, value, rule", [
    ("PTO2_L3_MPI_DEPTH", "0", "is not a count: it must be an integer in 1..65536"),
    ("PTO2_L3_MPI_DEPTH", "abc", "is not a count"),
    ("PTO2_L3_MPI_BATCH", "65537", "is not a count: it must be an integer in 1..65536"),
    ("PTO2_L3_MPI_BATCH", "2.5", "is not a count"),
    ("PTO2_L3_MPI_TIMEOUT_S", "nan", "is not a timeout: it must be a positive number of seconds"),
    ("PTO2_L3_MPI_TIMEOUT_S", "-1", "is not a timeout"),
])
def test_run_mpi_refuses_a_bad_mpi_knob_before_mpirun(monkeypatch, capsys, name, value, rule):
    # Every rank refused it, CHIPS + 1 times; now once, before mpirun (not needed: the check comes first).
    import shutil
    import subprocess
    for k in [k for k in os.environ if k.startswith(("OMPI_COMM_WORLD", "PMI_", "PTO2_L3_MPI_"))]:
        monkeypatch.delenv(k)   # the launching process, not a rank
    monkeypatch.setenv(name, value)
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    monkeypatch.setattr(subprocess, "call", lambda *a, **k: pytest.fail("mpirun started despite " + name))
    assert cli.main(["run", os.path.join(ROOT, "examples", "two_chips.py"), "--mpi"]) == 2
    err = _err(capsys)
    assert err.startswith("pypto: error: %s='%s' %s" % (name, value, rule)), err


def test_run_mpi_with_good_mpi_knobs_goes_on_to_mpirun(monkeypatch, capsys):
    import shutil
    for k in [k for k in os.environ if k.startswith(("OMPI_COMM_WORLD", "PMI_"))]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("PTO2_L3_MPI_DEPTH", "64")
    monkeypatch.setenv("PTO2_L3_MPI_BATCH", " ")        # blank: the default
    monkeypatch.setenv("PTO2_L3_MPI_TIMEOUT_S", "0.5")
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    assert cli.main(["run", os.path.join(ROOT, "examples", "two_chips.py"), "--mpi"]) == 2
    assert "--mpi needs mpirun" in _err(capsys)


@pytest.mark.parametrize("command, flag", [("graph", "-o"), ("run", "--save"), ("run", "--trace")])
def test_output_that_is_the_program_file_is_refused(tmp_path, capsys, monkeypatch, command, flag):
    # `pypto graph prog.py -o prog.py` replaced the user's program with a DOT file (--save: an
    # archive, --trace: a trace), exit status 0.
    import shutil

    import pypto
    prog = tmp_path / "prog.py"
    shutil.copy(VECTOR_ADD, prog)
    before = prog.read_bytes()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite %s prog.py" % flag))
    assert cli.main([command, str(prog), flag, "./prog.py"]) == 2
    assert "pypto: error: %s ./prog.py is the program file itself: writing there would replace your program" % flag \
        in _err(capsys)
    assert prog.read_bytes() == before


def test_trace_summary_of_a_device_is_refused(capsys):
    # /dev/zero was read until memory ran out (a hang, then the OOM killer)
    assert cli.main(["trace", "summary", "/dev/zero"]) == 2
    assert "pypto: error: /dev/zero is a device, not a trace file" in _err(capsys)


# Names and repeats known from the parsed program: usage errors (status 2, `pypto: error:`)
# before compiling. They were status 1 after the compile (--entry, --func) or accepted (a
# repeated --dim, the last one winning).
DYNAMIC = os.path.join(ROOT, "examples", "dynamic_shape.py")


@pytest.mark.parametrize("argv, message", [
    (["run", VECTOR_ADD, "--entry", "nope"], "--entry 'nope': program VectorAdd has no function of that name "
                                             "(its Orchestration functions: main)"),
    (["run", VECTOR_ADD, "--entry", "add_chunk"], "--entry 'add_chunk' names an InCore function of program "
                                                   "VectorAdd, not an Orchestration function"),
    (["graph", VECTOR_ADD, "--entry", "nope"], "--entry 'nope': program VectorAdd has no function of that name"),
    (["compile", VECTOR_ADD, "--func", "nope"], "--func 'nope': program VectorAdd has no function of that name"),
    (["compile", VECTOR_ADD, "--func", "add_chunk"], "--func 'add_chunk' names an InCore function"),
    (["run", DYNAMIC, "--dim", "M=16", "--dim", "M=32"], "--dim M is given twice, M=16 and M=32: give it once"),
    (["graph", DYNAMIC, "--dim", "M=16", "--dim", "M=32"], "--dim M is given twice"),
])
def test_names_and_repeats_are_usage_errors_before_compiling(tmp_path, capsys, monkeypatch, argv, message):
    import pypto
    from pypto import codegen
    monkeypatch.setattr(pypto, "compile", lambda *a, **k: pytest.fail("compiled despite a usage error"))
    monkeypatch.setattr(codegen, "run_pipeline", lambda *a, **k: pytest.fail("compiled despite a usage error"))
    if argv[0] != "run":
        argv = argv + ["-o", str(tmp_path / "out")]
    assert cli.main(argv) == 2
    assert "pypto: error: " + message in _err(capsys)


def test_a_repeated_dim_of_the_same_value_is_accepted(capsys):
    assert cli.main(["run", DYNAMIC, "--dim", "M=16", "--dim", "M=16"]) == 0
    assert "16x64 FP32" in capsys.readouterr().out


def test_a_dynamic_dimension_missing_from_dim_and_inputs_is_a_usage_error(tmp_path, capsys):
    import numpy as np
    f = tmp_path / "in.npz"
    np.savez(f, alpha=np.float32(2.0))     # no x or y to read M from
    assert cli.main(["run", DYNAMIC, "--inputs", str(f)]) == 2
    assert "pypto: error: dynamic dimension M of parameter 'x' needs a value: give it with --dim M=<extent>" \
        in _err(capsys)
