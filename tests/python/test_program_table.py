"""program_table.cpp, the table a built L2 program library exports through libpto2's C ABI,
comes from the C++ code generator (codegen::GenerateProgramTable, bound as
pypto._core.codegen.generate_program_table) like the HOST glue file: no Python module of the
package writes C++ by string formatting, and the core type -> pto2_kernel_desc field mapping
lives in one C++ file."""

import os
import re

import pytest

import pypto
from pypto._core import codegen as _cg
from pypto._core.ir import CoreType
from pypto.runtime.build import KernelEntry, program_table_source


def test_the_build_writes_what_the_code_generator_prints():
    kernels = [KernelEntry("mm", 0, CoreType.AIC), KernelEntry("act", 1, CoreType.AIV)]
    text = program_table_source("orch", kernels)
    assert text == _cg.generate_program_table("orch", [("mm", 0, CoreType.AIC), ("act", 1, CoreType.AIV)])
    assert '    {0, "mm", 0, reinterpret_cast<void*>(&pypto_kernel_mm)},\n' in text          # 0 = AIC
    assert '    {1, "act", 1, reinterpret_cast<void*>(&pypto_kernel_act)},\n' in text         # 1 = AIV
    assert text.endswith('extern "C" const uint32_t pypto_program_kernel_count = 2;\n')
    assert 'extern "C" const char pypto_entry_name[] = "orch";' in text


def test_an_empty_table_has_one_sentinel_row_and_count_zero():
    text = _cg.generate_program_table("main", [])
    assert 'pypto_program_kernel_table[] = {{-1, "", 0, nullptr}};' in text
    assert "pypto_program_kernel_count = 0;" in text


def test_a_core_type_other_than_aic_or_aiv_is_refused():
    for core in (CoreType.MIXED, CoreType.Unknown):
        with pytest.raises(ValueError, match="kernel 'k' has core type '%s' \\(expected AIC or AIV\\)" % core.name):
            _cg.generate_program_table("main", [("k", 0, core)])
    with pytest.raises(TypeError):   # the core type is the enum, not its spelling
        _cg.generate_program_table("main", [("k", 0, "AIV")])


def test_no_python_module_of_the_package_writes_cpp():
    root = os.path.dirname(pypto.__file__)
    cpp = re.compile(r'extern \\?"C\\?"|#include [<"]|reinterpret_cast<')
    hits = []
    for d, _dirs, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                with open(os.path.join(d, f), encoding="utf-8") as fh:
                    hits += ["%s:%d" % (f, i + 1) for i, line in enumerate(fh) if cpp.search(line)]
    assert hits == []
