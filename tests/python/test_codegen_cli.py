"""`pypto compile prog.py -o out/` (python/pypto/cli.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from pypto import cli

from codegen_test_util import GOLDEN_DIR, significant_lines

ORCH_BASIC = os.path.join(GOLDEN_DIR, "orch_basic", "program.py")


def test_compile_writes_orchestration_file(tmp_path, capsys):
    assert cli.main(["compile", ORCH_BASIC, "-o", str(tmp_path)]) == 0
    out = tmp_path / "orchestration" / "orch_basic.cpp"
    assert out.is_file()
    with open(os.path.join(GOLDEN_DIR, "orch_basic", "expected.cpp")) as f:
        assert significant_lines(out.read_text()) == significant_lines(f.read())
    assert str(out) in capsys.readouterr().out


def test_compile_with_derived_dependencies_prints_each_verdict(tmp_path, capsys):
    # The user sees what the analysis made of each function, or why it fell back.
    assert cli.main(["compile", ORCH_BASIC, "-o", str(tmp_path), "--analyze-auto-scopes-for-deps"]) == 0
    err = capsys.readouterr().err
    assert "pypto: orch_basic: derived dependencies: manual: 2 tasks, 1 edges" in err, err
    manual = os.path.join(os.path.dirname(__file__), "spec_programs", "mech1_manual_scope.py")
    assert cli.main(["compile", manual, "-o", str(tmp_path / "m"), "--analyze-auto-scopes-for-deps"]) == 0
    err = capsys.readouterr().err
    assert "pypto: main: derived dependencies: fallback: a user pl.manual_scope() (never analysed)" in err, err
    assert cli.main(["compile", ORCH_BASIC, "-o", str(tmp_path / "off")]) == 0
    assert "derived dependencies" not in capsys.readouterr().err


def test_compile_host_program_writes_host_and_chip_files(tmp_path, capsys):
    # A HOST-level orchestration is generated against pto_l3_api.h (host/), its chip-level
    # targets as ordinary orchestrations; the HOST file is the golden one.
    prog = os.path.join(GOLDEN_DIR, "host_taskid_arrays", "host_program.py")
    assert cli.main(["compile", prog, "-o", str(tmp_path)]) == 0
    host_file = tmp_path / "host" / "host_main.cpp"
    with open(os.path.join(GOLDEN_DIR, "host_taskid_arrays", "expected_host.cpp")) as f:
        assert significant_lines(host_file.read_text()) == significant_lines(f.read())
    for target in ("chip_part", "chip_sum", "chip_add"):
        assert (tmp_path / "orchestration" / (target + ".cpp")).is_file()
    assert not (tmp_path / "orchestration" / "host_main.cpp").exists()
    assert str(host_file) in capsys.readouterr().out


def test_compile_several_programs_needs_program_flag(tmp_path, capsys):
    src = tmp_path / "two.py"
    with open(ORCH_BASIC) as f:
        text = f.read()
    src.write_text(text + "\n\nOther = OrchBasic\n" + text.replace("class OrchBasic", "class Second"))
    assert cli.main(["compile", str(src), "-o", str(tmp_path / "o")]) == 2
    assert "--program" in capsys.readouterr().err
    assert cli.main(["compile", str(src), "-o", str(tmp_path / "o"), "--program", "Second"]) == 0
    assert (tmp_path / "o" / "orchestration" / "orch_basic.cpp").is_file()


def test_compile_reports_user_errors(tmp_path, capsys):
    src = tmp_path / "bad.py"
    src.write_text("import pypto.language as pl\n\n@pl.program\nclass Bad:\n"
                   "    @pl.function(type=pl.FunctionType.Orchestration)\n"
                   "    def main(self, x: pl.Tensor[[16], pl.FP32]):\n"
                   "        y = self.nope(x)\n")
    assert cli.main(["compile", str(src), "-o", str(tmp_path / "o")]) == 1
    assert "error:" in capsys.readouterr().err


def test_compile_missing_file(tmp_path, capsys):
    assert cli.main(["compile", str(tmp_path / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_compile_dump_ir(tmp_path):
    assert cli.main(["compile", ORCH_BASIC, "-o", str(tmp_path / "o"), "--dump-ir", str(tmp_path / "ir")]) == 0
    assert (tmp_path / "ir" / "00_Input.py").is_file()


def test_console_entry_point(tmp_path):
    cp = subprocess.run([sys.executable, "-m", "pypto.cli", "compile", ORCH_BASIC, "-o", str(tmp_path)],
                        capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    assert (tmp_path / "orchestration" / "orch_basic.cpp").is_file()


def test_compile_of_a_program_without_orchestration_is_located(tmp_path, capsys):
    # Was 'pypto: error: program Empty has no Orchestration function', with no file or line
    # (pypto run said it located at the class).
    for body in ("    pass\n",
                 "    @pl.function(type=pl.FunctionType.InCore)\n"
                 "    def k(self, a: pl.Tensor[[16], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> "
                 "pl.Tensor[[16], pl.FP32]:\n"
                 "        c = pl.store(pl.load(a, [0], [16]), [0], c)\n        return c\n"):
        src = tmp_path / "empty.py"
        src.write_text("import pypto.language as pl\n\n\n@pl.program\nclass Empty:\n" + body)
        assert cli.main(["compile", str(src), "-o", str(tmp_path / "o")]) == 1
        err = capsys.readouterr().err
        assert "program 'Empty' has no Orchestration function to compile --> %s:5:1" % src in err, err
        assert "class Empty:" in err and "help: mark the entry with @pl.function" in err
        assert not (tmp_path / "o").exists()


def test_compile_func_empty_is_a_name_not_all(tmp_path, capsys):
    # --func "" generated every orchestration (an empty string counted as "not given")
    assert cli.main(["compile", ORCH_BASIC, "-o", str(tmp_path / "o"), "--func", ""]) == 2
    assert "pypto: error: --func '': program OrchBasic has no function of that name" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
