"""Distributed HOST orchestration end to end on the CPU runtime.

The first tests assemble the HOST program by hand
from the library pieces: the generated host C++ (pypto.host), one generated L2 orchestration
per chip-level target (pypto.codegen; each file's entry renamed with -D so several link
together), the generated CPU kernels (pypto._core.kernel_cpu), and a small driver that
registers every target and its own kernel table with pto2::L3Runtime (2 chips) and runs
host_orchestration_entry. Results are checked with NumPy.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import textwrap

import numpy as np
import pytest

import pypto.language as pl
from pypto import codegen, host
from pypto.runtime import include_dir, kernel_include_dir, library_path

T = pl.Tensor[[16, 16], pl.FP32]


@pl.program
class TwoChips:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_scale(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
                     c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.mul(pl.load(a, [0, 0], [16, 16]), s), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                   c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_scale(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
                   c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.kernel_scale(a, s, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_add(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.kernel_add(a, b, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: pl.Tensor[[16, 16], pl.FP32], acc: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                  tmp: pl.Out[pl.Tensor[[16, 16], pl.FP32]], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                  alpha: pl.Scalar[pl.FP32], steps: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        # tmp = alpha * x on target chip_scale; then `steps` in-place adds on target chip_add,
        # the first waiting for tmp (cross-target edge), the rest chained; out = 2 * acc last.
        tmp, prev = pl.submit(self.chip_scale, x, alpha, tmp)
        for k in pl.range(steps):
            acc, prev = pl.submit(self.chip_add, acc, tmp, acc, deps=[prev])
        out, t = pl.submit(self.chip_scale, acc, 2.0, out, deps=[prev])
        return out


def _driver(targets, kernels, tensors, outputs) -> str:
    """main.cpp: registers targets + per-target kernels, loads tensors, runs, writes outputs."""
    decl = ['extern "C" void host_orchestration_entry(const ChipStorageTaskArgs&);']
    reg = []
    for name, tid in targets.items():
        decl.append('extern "C" void l2_entry_%s(const ChipStorageTaskArgs&);' % name)
        reg.append('l3.register_target(%d, "%s", &l2_entry_%s);' % (tid, name, name))
        for kname, kid, core in kernels[name]:
            decl.append('extern "C" void pypto_kernel_%s(PTO2KernelContext*);' % kname)
            reg.append('l3.register_target_kernel(%d, %d, "%s", pto2::CoreType::%s, &pypto_kernel_%s);'
                       % (tid, kid, kname, core, kname))
    load = []
    for i, name in enumerate(tensors):
        load.append('std::vector<float> t%d = load(dir + "/%s.bin");' % (i, name))
        load.append("args.add_tensor(make_tensor_external(t%d.data(), sh, 2, DataType::FLOAT32));" % i)
    store = ['store(dir + "/%s.out", t%d);' % (name, tensors.index(name)) for name in outputs]
    return textwrap.dedent("""\
        #include <cstdio>
        #include <cstdlib>
        #include <fstream>
        #include <set>
        #include <string>
        #include <vector>
        #include "pto_l3_api.h"
        %s
        static std::vector<float> load(const std::string& p) {
          std::ifstream f(p, std::ios::binary);
          std::vector<float> v(256);
          f.read(reinterpret_cast<char*>(v.data()), 256 * sizeof(float));
          return v;
        }
        static void store(const std::string& p, const std::vector<float>& v) {
          std::ofstream f(p, std::ios::binary);
          f.write(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
        }
        int main(int argc, char** argv) {
          std::string dir = argv[1];
          pto2::L3Runtime l3(pto2::L3Options{}.chips(2).chip_options(pto2::RuntimeOptions{}.aic_workers(1).aiv_workers(1)));
          %s
          uint32_t sh[2] = {16, 16};
          ChipStorageTaskArgs args;
          %s
          for (int i = 2; i < argc; ++i) args.add_scalar(std::strtoull(argv[i], nullptr, 10));
          pto2::L3RunResult r = l3.run(&host_orchestration_entry, args);
          if (!r.ok()) { std::printf("FAILED: %%s\\n", r.message.c_str()); return 1; }
          %s
          std::printf("tasks %%llu wait_edges %%llu chain_edges %%llu\\n", (unsigned long long)r.tasks_executed,
                      (unsigned long long)r.wait_edges, (unsigned long long)r.chain_edges);
          return 0;
        }
        """) % ("\n".join(decl), "\n  ".join(reg), "\n  ".join(load), "\n  ".join(store))


@pytest.fixture(scope="module")
def host_binary(tmp_path_factory):
    cxx = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("g++")
    if cxx is None:
        pytest.fail("no C++ compiler: g++ (or $CXX) is required to build HOST programs")
    from pypto._core import kernel_cpu
    d = tmp_path_factory.mktemp("host_l3")
    prepared = codegen.run_pipeline(TwoChips)
    h = host.generate_host_orchestration(prepared, "host_main", run_passes=False)
    files = {"host_main.cpp": (h.code, [])}
    kernels = {}
    for name in h.target_ids:
        l2 = codegen.generate_orchestration(prepared, name, run_passes=False)
        files["l2_%s.cpp" % name] = (l2.code, ["-Daicpu_orchestration_entry=l2_entry_%s" % name,
                                               "-Daicpu_orchestration_config=l2_config_%s" % name])
        kernels[name] = []
        for kname, kid in sorted(l2.kernel_ids.items(), key=lambda kv: kv[1]):
            core = kernel_cpu.core_type(prepared, kname).name   # the C++ text of pto2::CoreType
            kernels[name].append((kname, kid, core))
            files.setdefault("k_%s.cpp" % kname, (kernel_cpu.generate(prepared, kname), []))
    tensors = [s.name for s in h.signature if s.kind == "tensor"]
    outputs = [s.name for s in h.signature if s.kind == "tensor" and s.direction != "In"]
    files["main.cpp"] = (_driver(dict(h.target_ids), kernels, tensors, outputs), [])
    objs = []
    for rel, (code, defs) in files.items():
        (d / rel).write_text(code)
        obj = str(d / (rel + ".o"))
        cp = subprocess.run([cxx, "-std=c++17", "-O1", "-Wall", "-Werror", "-I", include_dir(), "-I",
                             kernel_include_dir(), *defs, "-c", str(d / rel), "-o", obj], capture_output=True, text=True)
        assert cp.returncode == 0, "%s:\n%s" % (rel, cp.stderr)
        objs.append(obj)
    lib = os.path.abspath(library_path())
    exe = str(d / "host_main")
    cp = subprocess.run([cxx, "-o", exe, *objs, lib, "-Wl,-rpath," + os.path.dirname(lib), "-pthread"],
                        capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    return exe, d, h


def _f32_slot(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


@pytest.mark.parametrize("steps", [0, 1, 4])
def test_host_program_runs_on_l3_runtime(host_binary, steps):
    exe, d, h = host_binary
    assert h.target_ids == {"chip_scale": 0, "chip_add": 1}
    rng = np.random.default_rng(steps)
    x = rng.standard_normal((16, 16)).astype(np.float32)
    acc = rng.standard_normal((16, 16)).astype(np.float32)
    run_dir = d / ("run%d" % steps)
    run_dir.mkdir()
    for name, arr in (("x", x), ("acc", acc), ("tmp", np.zeros_like(x)), ("out", np.zeros_like(x))):
        arr.tofile(str(run_dir / (name + ".bin")))
    alpha = 0.5
    cp = subprocess.run([exe, str(run_dir), str(_f32_slot(alpha)), str(steps)], capture_output=True, text=True,
                        timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "tasks %d " % (steps + 2) in cp.stdout
    tmp_ref = alpha * x
    acc_ref = acc.copy()
    for _ in range(steps):
        acc_ref = acc_ref + tmp_ref
    got = {n: np.fromfile(str(run_dir / (n + ".out")), dtype=np.float32).reshape(16, 16) for n in ("acc", "tmp", "out")}
    np.testing.assert_allclose(got["tmp"], tmp_ref, rtol=1e-6)
    np.testing.assert_allclose(got["acc"], acc_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["out"], 2.0 * acc_ref, rtol=1e-5, atol=1e-6)


# -- the same program through pypto.host.compile_host (the library path) ----------------------
@pytest.fixture(scope="module")
def compiled_host():
    return host.compile_host(TwoChips, chips=2)


@pytest.mark.parametrize("steps", [0, 3])
def test_compile_host_runs_with_numpy_arrays(compiled_host, steps):
    rng = np.random.default_rng(10 + steps)
    x = rng.standard_normal((16, 16)).astype(np.float32)
    acc = rng.standard_normal((16, 16)).astype(np.float32)
    acc0 = acc.copy()
    tmp = np.zeros_like(x)
    out = np.zeros_like(x)
    stats = compiled_host(x, acc, tmp, out, 0.25, steps)
    assert stats["tasks_executed"] == steps + 2
    assert stats["wait_edges"] == steps + 1      # every deps= entry (prev) is a real edge
    ref = acc0 + steps * (0.25 * x)
    np.testing.assert_allclose(tmp, 0.25 * x, rtol=1e-6)
    np.testing.assert_allclose(acc, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, 2.0 * ref, rtol=1e-5, atol=1e-6)
    assert set(compiled_host.files) >= {"host/host_main.cpp", "orchestration/chip_add.cpp",
                                        "orchestration/chip_scale.cpp", "kernels/kernel_add.cpp", "host_runner.cpp"}


def test_compile_host_checks_arguments(compiled_host):
    from pypto.errors import PyptoError
    x = np.zeros((16, 16), np.float32)
    with pytest.raises(PyptoError, match="takes 6 arguments"):
        compiled_host(x, x)
    with pytest.raises(PyptoError, match="has shape"):
        compiled_host(x, np.zeros((8, 16), np.float32), x, x, 1.0, 1)
    with pytest.raises(PyptoError, match="dtype"):
        compiled_host(x, np.zeros((16, 16), np.float64), x, x, 1.0, 1)
    # A chip-level call's options read as misspelt parameters ("unknown argument", the DSL's
    # parameters as help); and task_graph's positional arguments landed in path / static / dims.
    for option, value in (("clusters", 1), ("task_ring_size", 64), ("memory_limit", 1 << 20), ("race_check", True)):
        with pytest.raises(PyptoError, match="%s= applies to chip-level entries" % option):
            compiled_host(x, x, x, x, 1.0, 1, **{option: value})
    from pypto.static_graph import StaticGraphError
    with pytest.raises(StaticGraphError, match="takes no arguments: 3 positional value"):
        compiled_host.task_graph(x, x, x)


# -- pypto.compile picks the HOST entry and runs it on the L3 runtime ---------------------------
def test_pypto_compile_runs_a_host_entry():
    import pypto
    compiled = pypto.compile(TwoChips)            # the single HOST-level orchestration is the entry
    assert isinstance(compiled, host.HostProgram)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 16)).astype(np.float32)
    acc = rng.standard_normal((16, 16)).astype(np.float32)
    ref = acc + 2 * (0.5 * x)
    tmp, out = np.zeros_like(x), np.zeros_like(x)
    stats = compiled(x, acc, tmp, out, 0.5, 2)
    assert stats["tasks_executed"] == 4
    np.testing.assert_allclose(acc, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, 2.0 * ref, rtol=1e-5, atol=1e-6)


def test_pypto_compile_chip_entry_of_a_host_program():
    import pypto
    chip = pypto.compile(TwoChips, entry="chip_add")   # a chip-level entry still runs on libpto2
    a = np.ones((16, 16), np.float32)
    c = np.zeros_like(a)
    chip(a, a, c)
    np.testing.assert_allclose(c, 2 * a)


def test_host_trace_directory_missing_fails_before_running(tmp_path):
    from host_cases import _golden
    from pypto.runtime.trace_path import TracePathError
    prog = host.compile_host(_golden("host_basic"))
    x = np.ones(64, np.float32)
    z, w = np.zeros(64, np.float32), np.zeros(64, np.float32)
    with pytest.raises(TracePathError, match="does not exist"):
        prog(x, x, z, w, trace=str(tmp_path / "no" / "dir" / "host.json"))
    assert not z.any() and not w.any()      # nothing ran
    stats = prog(x, x, z, w, trace=str(tmp_path / "host.json"))
    assert stats.trace_path == str(tmp_path / "host.json") and os.path.isfile(stats.trace_path)


def test_compile_host_writes_strided_outputs_back(compiled_host):
    """A written HOST argument the runtime cannot address in place (a transposed InOut, a column
    slice as Out) runs on a contiguous copy that is written back after the run."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 16)).astype(np.float32)
    acc_buf = rng.standard_normal((16, 16)).astype(np.float32)
    acc = acc_buf.T                              # InOut, transposed: read and written through the view
    acc0 = acc.copy()
    wide = np.full((16, 32), -5.0, np.float32)
    out = wide[:, 8:24]                          # Out, a column slice of a wider buffer
    compiled_host(x, acc, np.zeros_like(x), out, 0.5, 2)
    ref = acc0 + 2 * (0.5 * x)
    np.testing.assert_allclose(acc_buf.T, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, 2.0 * ref, rtol=1e-5, atol=1e-6)
    assert (wide[:, :8] == -5).all() and (wide[:, 24:] == -5).all()
