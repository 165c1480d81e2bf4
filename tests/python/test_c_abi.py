"""One C ABI between Python and libpto2 (runtime/include/pto2_c_api.h).

The structs and entry points crossing the boundary are declared once, in the header. The
program libraries include it (a disagreeing definition does not compile) and Python calls
through the nanobind binding pypto._core.program_abi, which includes it too: no ctypes mirror
of a C struct exists in the package.
"""
import os
import re
import subprocess

import pypto
import pytest
from pypto.runtime import include_dir
from pypto._core.ir import CoreType
from pypto.runtime.build import find_compiler, program_table_source, KernelEntry


def _package_sources():
    root = os.path.dirname(pypto.__file__)
    for d, _dirs, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                yield os.path.join(d, f)


def test_no_ctypes_mirror_of_a_c_struct():
    for path in _package_sources():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        assert "ctypes.Structure" not in text and not re.search(r"(?<!_)_fields_\s*=", text), path


def test_binding_and_library_agree_on_the_abi_version():
    from pypto._core import program_abi
    with open(os.path.join(include_dir(), "pto2_c_api.h")) as f:
        assert "#define PTO2_ABI_VERSION %d" % program_abi.ABI_VERSION in f.read()


def _syntax_check(tmp_path, code):
    src = tmp_path / "t.cpp"
    src.write_text(code)
    return subprocess.run([find_compiler(), "-std=c++17", "-fsyntax-only", "-I", include_dir(), str(src)],
                          capture_output=True, text=True)


def test_the_generated_program_table_compiles_against_the_header(tmp_path):
    r = _syntax_check(tmp_path, program_table_source("main", [KernelEntry("kernel_add", 0, CoreType.AIV)]) +
                      'extern "C" void aicpu_orchestration_entry(const ChipStorageTaskArgs&) {}\n'
                      'extern "C" void pypto_kernel_kernel_add(PTO2KernelContext*) {}\n')
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("drifted", [
    # an entry point whose tensor struct drifted from pto2_tensor_arg
    'struct my_tensor { void* data; };\n'
    'extern "C" int pto2_runtime_run(void*, void*, const my_tensor*, uint32_t, const uint64_t*, uint32_t,'
    ' pto2_stats*, char*, uint32_t) { return 0; }\n',
    # a kernel table of another layout
    'struct my_desc { int id; };\nextern "C" const my_desc pypto_program_kernel_table[] = {{0}};\n',
])
def test_a_definition_that_drifts_from_the_header_does_not_compile(tmp_path, drifted):
    r = _syntax_check(tmp_path, '#include <cstddef>\n#include <cstdint>\n#include "pto2_c_api.h"\n' + drifted)
    assert r.returncode != 0 and "conflicting declaration" in r.stderr, r.stderr


def test_no_module_of_the_package_uses_ctypes():
    # libpto2, program libraries and libpto2_mpi are all reached through pypto._core.program_abi,
    # whose function pointers are typed by the headers' declarations (decltype): nothing to drift.
    for path in _package_sources():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        assert not re.search(r"^\s*(import ctypes|from ctypes\b)", text, re.M), path
        assert "ctypes.CDLL" not in text, path


def test_the_sigint_hook_and_the_mpi_library_go_through_program_abi():
    from pypto._core import program_abi
    from pypto.runtime import library_path
    assert program_abi.cancel_runs_on_sigint(library_path(), True) == 0
    mpi = os.path.join(os.path.dirname(library_path()), "libpto2_mpi.so")
    if os.path.isfile(mpi):
        lib = program_abi.MpiLibrary(mpi)   # every entry point of pto_l3_mpi.h found and typed
        assert {"init", "transport", "transport_free", "last_bytes", "serve", "load", "close"} <= set(dir(lib))
    with pytest.raises(RuntimeError, match="cannot load"):
        program_abi.MpiLibrary("/nonexistent/libpto2_mpi.so")


def test_a_library_that_does_not_load_is_named_once(tmp_path):
    # The binding's "cannot load P: " and dlerror's "P: " used to repeat the path three times.
    from pypto.runtime.loader import ProgramLibrary, RunError
    bad = tmp_path / "libprogram.so"
    bad.write_text("not a library")
    with pytest.raises(RunError) as e:
        ProgramLibrary(str(bad))
    text = str(e.value)
    assert text.count(str(bad)) == 1 and "file too short" in text, text


_RUNTIME_DTYPE_NAMES = {"FP32": "FLOAT32", "FP16": "FLOAT16", "BF16": "BFLOAT16"}   # else the same name


def _dtype_code_asserts(codes):
    return '#include "pto2/types.h"\n' + "".join(
        "static_assert(static_cast<int>(DataType::%s) == %d, \"%s\");\n"
        % (_RUNTIME_DTYPE_NAMES.get(name, name), code, name) for name, code in codes.items())


def test_the_python_dtype_codes_are_the_runtime_enum(tmp_path):
    # runtime/args.py passes dtypes as DataType codes (pto2/types.h) (int32 in pto2_tensor_arg): its table is
    # checked against the enum by the compiler, so a reordered or extended enum fails here.
    from pypto.runtime.args import DTYPE_CODES
    assert set(DTYPE_CODES) == {"FP32", "FP16", "BF16", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16",
                                "UINT32", "UINT64", "BOOL"}
    r = _syntax_check(tmp_path, _dtype_code_asserts(DTYPE_CODES))
    assert r.returncode == 0, r.stderr
    drifted = dict(DTYPE_CODES, INT8=DTYPE_CODES["INT16"])
    assert _syntax_check(tmp_path, _dtype_code_asserts(drifted)).returncode != 0
