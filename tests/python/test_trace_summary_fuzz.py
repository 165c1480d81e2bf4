"""The trace summary's three readers agree on mutated traces (tests/python/trace_fuzz.py): a
seeded smoke here, the full size under `make fuzz` (scripts/fuzz_trace_summary.py), and one
test per disagreement the fuzz found."""
import collections
import os

import pytest

import pypto.trace_summary as ts
import trace_fuzz as tf
from pypto.trace_summary import TraceFormatError, summarize

SMOKE = 1500   # mutants, ~5 s


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    return tf.real_traces(str(tmp_path_factory.mktemp("real_traces")))


def test_the_readers_agree_on_mutated_traces(real, tmp_path):
    verdicts = collections.Counter(tf.check(seed, real, str(tmp_path)) for seed in range(SMOKE))
    # Every reader is reached: the native one reads the real traces' mutants it accepts, the
    # line reader the rest, and many mutants are refused by all.
    assert verdicts["native same"] > SMOKE // 20, verdicts
    assert verdicts["same"] > SMOKE // 5, verdicts
    assert verdicts["both refuse"] > SMOKE // 5, verdicts


def test_the_real_traces_are_read_natively(real):
    assert all(tf.native_accepts(t) for t in real)


def test_the_fuzz_catches_a_line_reader_that_reads_numbers_differently(monkeypatch, tmp_path):
    # The line reader as it was: float("-0") is -0.0 where JSON's integer -0 is 0.
    text = tf.trace_text(tf.libpto2_trace_events(3, 1)).replace('"ts":1.500,', '"ts":-0,', 1)
    assert tf.check_text(text, str(tmp_path / "t.json")) == "same"
    monkeypatch.setattr(ts, "_json_float", float)
    with pytest.raises(tf.Mismatch, match="summarize and the document reader differ"):
        tf.check_text(text, str(tmp_path / "t.json"))


def test_the_fuzz_catches_a_native_reader_that_reads_differently(real, monkeypatch, tmp_path):
    native = ts._native_summary

    def one_edge_more(path):
        s = native(path)
        if s is not None:
            s.edges += 1
        return s
    monkeypatch.setattr(ts, "_native_summary", one_edge_more)
    with pytest.raises(tf.Mismatch, match="summarize and the document reader differ"):
        tf.check_text(real[0], str(tmp_path / "t.json"))
    monkeypatch.setattr(ts, "summarize", ts._summarize_document)   # only the native read differs now
    with pytest.raises(tf.Mismatch, match="the native reader accepted it with another summary"):
        tf.check_text(real[0], str(tmp_path / "t.json"))


# ---- the fuzz's findings

def test_a_time_of_minus_zero_reads_as_zero_in_every_reader(real, tmp_path):
    # JSON's -0 is the integer 0: the native and line readers gave -0.0 ("at -0.0 us").
    head, rest = real[0].split('"cat":"task"', 1)
    ts_at = rest.index('"ts":') + 5
    text = head + '"cat":"task"' + rest[:ts_at] + "-0" + rest[rest.index(",", ts_at):]
    assert tf.check_text(text, str(tmp_path / "t.json")) == "native same"
    assert "at      -0.0 us" not in summarize(str(tmp_path / "t.json")).format(top=100)
    synthetic = tf.trace_text(tf.libpto2_trace_events(3, 1)).replace('"ts":1.500,', '"ts":-0,', 1)
    assert tf.check_text(synthetic, str(tmp_path / "s.json")) == "same"


def test_a_dependency_past_the_float_range_is_a_located_error(tmp_path):
    # int(1e309) raised OverflowError: `pypto trace summary` printed a traceback.
    text = tf.trace_text(tf.libpto2_trace_events(3, 1)).replace('"from":1,', '"from":1e309,', 1)
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(TraceFormatError, match=r"event \d+ \(ph 's', cat 'dep'\) is malformed: "
                                               "cannot convert float infinity to integer"):
        summarize(str(path))
    assert tf.check_text(text, str(path)) == "both refuse"


def test_a_trace_that_is_not_utf8_is_refused_by_name(tmp_path):
    # summarize raised UnicodeDecodeError, which its doc does not name.
    raw = tf.trace_text(tf.libpto2_trace_events(3, 1)).encode().replace(b'"add"', b'"a\xffd"', 1)
    path = tmp_path / "t.json"
    path.write_bytes(raw)
    offset = raw.index(b"\xff")
    with pytest.raises(TraceFormatError, match=r"is not UTF-8 text \(byte 0xff at offset %d\): a trace is JSON "
                                               "in UTF-8" % offset):
        summarize(str(path))


def test_a_bad_unicode_escape_in_a_submission_is_refused_like_the_document_reader(tmp_path):
    # The line reader skipped submission lines unchecked, so `\\u12` (not JSON) was summarized.
    text = tf.trace_text(tf.libpto2_trace_events(3, 1)).replace('"name":"submit mul"', '"name":"submit \\u12"', 1)
    assert '\\u12"' in text
    path = str(tmp_path / "t.json")
    assert tf.check_text(text, path) == "both refuse"
    with pytest.raises(TraceFormatError, match="is not JSON"):
        summarize(path)


def test_the_fuzz_script_runs(tmp_path):
    import subprocess
    import sys
    script = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "fuzz_trace_summary.py")
    out = subprocess.run([sys.executable, script, "--count", "40", "--seed", "7"], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "40 mutants (seed 7)" in out.stdout and "0 disagreements" in out.stdout
