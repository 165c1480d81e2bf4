"""The one-line progress indicators of long steps (pypto.runtime.progress): a long run ticks
(RunIndicator), building the C++ core shows Ninja's [i/n] steps (run_build, what `make install`
runs); both draw only on a terminal and not with PYPTO_QUIET=1; a failed build prints its tail."""

from __future__ import annotations

import io
import os
import sys
import time

from pypto.runtime.progress import RunIndicator, run_build


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_long_step_ticks_on_a_terminal_and_erases_itself(monkeypatch):
    monkeypatch.delenv("PYPTO_QUIET", raising=False)
    out = _Tty()
    with RunIndicator("running main", delay=0.05, interval=0.02, stream=out):
        time.sleep(0.3)
    text = out.getvalue()
    assert "pypto: running main (" in text and text.count("\r") >= 3, repr(text)
    assert text.endswith("\r"), repr(text[-40:])  # the line is blanked at the end


def test_short_step_quiet_mode_and_pipes_print_nothing(monkeypatch):
    monkeypatch.delenv("PYPTO_QUIET", raising=False)
    out = _Tty()
    with RunIndicator("running main", delay=1.0, stream=out):
        time.sleep(0.05)
    assert out.getvalue() == ""
    monkeypatch.setenv("PYPTO_QUIET", "1")
    with RunIndicator("running main", delay=0.0, interval=0.01, stream=_Tty()) as r:
        time.sleep(0.05)
    assert not r.progress.enabled
    pipe = io.StringIO()
    monkeypatch.delenv("PYPTO_QUIET")
    with RunIndicator("running main", delay=0.0, interval=0.01, stream=pipe):
        time.sleep(0.05)
    assert pipe.getvalue() == ""


_FAKE_BUILD = ("import sys, time\n"
               "for i in range(1, 4):\n"
               "    print('[%d/3] Building CXX object src/CMakeFiles/x.dir/f%d.cpp.o' % (i, i), flush=True)\n"
               "    time.sleep(0.01)\n"
               "sys.exit(int(sys.argv[1]))\n")


def test_build_shows_ninja_steps_on_a_terminal(monkeypatch):
    monkeypatch.delenv("PYPTO_QUIET", raising=False)
    out = _Tty()
    assert run_build([sys.executable, "-c", _FAKE_BUILD, "0"], stream=out) == 0
    text = out.getvalue()
    assert "pypto: building the pypto C++ core [3/3] f3.cpp.o" in text, repr(text)
    assert "building the pypto C++ core: done in" in text


def test_build_is_silent_in_a_pipe_and_prints_its_tail_when_it_fails(monkeypatch):
    monkeypatch.delenv("PYPTO_QUIET", raising=False)
    pipe = io.StringIO()
    assert run_build([sys.executable, "-c", _FAKE_BUILD, "0"], stream=pipe) == 0
    assert pipe.getvalue() == ""
    assert run_build([sys.executable, "-c", _FAKE_BUILD, "3"], stream=pipe) == 3
    assert "[2/3] Building CXX object" in pipe.getvalue() and "failed (exit code 3)" in pipe.getvalue()


def test_progress_module_runs_by_path_before_pypto_is_installed(tmp_path):
    import subprocess
    import pypto.runtime.progress as progress
    env = dict(os.environ, PYTHONPATH="")  # the file alone, as `make install` runs it
    cp = subprocess.run([sys.executable, "-S", progress.__file__, "build", "--", sys.executable, "-c",
                         _FAKE_BUILD, "0"], capture_output=True, text=True, cwd=str(tmp_path), env=env, timeout=60)
    assert cp.returncode == 0, cp.stderr
    bad = subprocess.run([sys.executable, "-S", progress.__file__, "oops"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "usage" in bad.stderr


def test_long_run_line_shows_the_task_count(monkeypatch):
    monkeypatch.delenv("PYPTO_QUIET", raising=False)
    out, state = _Tty(), {"n": 0}

    def counts():
        state["n"] += 1
        return 50, min(state["n"], 50)   # (submitted, completed)
    with RunIndicator("running main", delay=0.0, interval=0.01, stream=out, counts=counts):
        time.sleep(0.1)
    assert "pypto: running main " in out.getvalue() and "/50 tasks done (" in out.getvalue(), repr(out.getvalue())
    from pypto.runtime.progress import task_counts_text
    assert task_counts_text(lambda: (10, 12)) == "10/10 tasks done"      # never more done than submitted
    assert task_counts_text(lambda: 1 / 0) == "" and task_counts_text(None) == ""


def test_runtime_counts_submitted_and_completed_tasks():
    """The runtime's counters (two atomic loads) after a run: every task submitted is done."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                    "examples"))
    import pypto
    import tiled_matmul as tm
    compiled = pypto.compile(tm.TiledMatmul)
    compiled(*compiled.random_inputs(seed=0))
    submitted, completed = compiled._runtime.progress()
    assert submitted == completed == compiled.last_stats.tasks == (tm.M // tm.TM) * (tm.N // tm.TN) > 1


def _backend():
    import importlib.util
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    spec = importlib.util.spec_from_file_location(
        "pypto_build_backend", os.path.join(root, "scripts", "build_backend", "pypto_build_backend.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_build_backend_draws_on_the_users_terminal_only_when_pip_hides_the_log():
    """`pip install .` without -v: the build backend's stdout is captured, so its progress goes to
    /dev/tty; a visible log, no terminal, PYPTO_QUIET=1 or make install's own line: nothing."""
    decide = _backend().progress_destination
    assert decide({}, stdout_is_tty=False, tty_available=True) == "/dev/tty"
    assert decide({}, stdout_is_tty=True, tty_available=True) is None
    assert decide({}, stdout_is_tty=False, tty_available=False) is None
    assert decide({"PYPTO_QUIET": "1"}, stdout_is_tty=False, tty_available=True) is None
    assert decide({"PYPTO_QUIET": "0"}, stdout_is_tty=False, tty_available=True) == "/dev/tty"
    assert decide({"PYPTO_BUILD_PROGRESS": "0"}, stdout_is_tty=False, tty_available=True) is None


def test_build_backend_exposes_every_pep517_hook():
    backend = _backend()
    for hook in ("build_wheel", "build_sdist", "build_editable", "get_requires_for_build_wheel",
                 "prepare_metadata_for_build_wheel"):
        assert callable(getattr(backend, hook)), hook


def test_a_streams_terminal_check_is_asked_once(monkeypatch):
    # Every call of a program asks whether stderr is a terminal (a system call): asked once per
    # stream, again for another stream or once the stream is closed.
    from pypto.runtime.progress import progress_enabled
    monkeypatch.delenv("PYPTO_QUIET", raising=False)

    class Counting(io.StringIO):
        asked = 0

        def isatty(self):
            Counting.asked += 1
            return super().isatty() or True

    a, b = Counting(), Counting()
    assert progress_enabled(a) and progress_enabled(a) and Counting.asked == 1
    assert progress_enabled(b) and Counting.asked == 2
    assert not progress_enabled(io.StringIO())          # a pipe-like stream: no
    assert progress_enabled(b) and Counting.asked == 3  # b was no longer the last one asked
    b.close()
    assert not progress_enabled(b)                      # closed: asked again (ValueError: no)
