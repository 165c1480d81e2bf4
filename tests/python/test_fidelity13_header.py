"""Issue 13 "The real runtime header": libpto2's orchestration header has the real PTO2 runtime's shapes, so a
generated file that would not compile against the real runtime does not compile against libpto2 either.

Each pair below is the same orchestration snippet written the way the real header refuses and the way it
accepts; the refused form must fail g++ (naming the reason) and the accepted form must compile with
-Wall -Werror. (The generated goldens use the accepted forms: test_golden.py::test_golden_compiles.)
"""
import shutil

import pytest

from codegen_test_util import compile_cpp

PRELUDE = """#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipStorageTaskArgs& orch_args) {
    Tensor ext_a = from_tensor_arg(orch_args.tensor(0));
    int64_t cond = static_cast<int64_t>(orch_args.scalar(0));
    (void)cond;
    (void)ext_a;
%s
}
"""

PAIRS = {
    # rt_submit_dummy_task returns TaskOutputTensors (take .task_id()), not a PTO2TaskId
    "rt_submit_dummy_task": (
        """    Arg p;
    PTO2TaskId barrier = rt_submit_dummy_task(p);
    (void)barrier;""",
        """    Arg p;
    PTO2TaskId barrier = rt_submit_dummy_task(p).task_id();
    (void)barrier;""",
        "rt_submit_dummy_task"),
    # Tensor has no public default constructor: an if/else result cannot be declared ahead of the branches
    "Tensor default constructor": (
        """    Tensor c;
    if (cond > 0) { c = ext_a; } else { c = ext_a; }
    (void)c;""",
        """    Tensor c = ext_a;
    if (cond > 0) { c = ext_a; } else { c = ext_a; }
    (void)c;""",
        "Tensor"),
}


@pytest.mark.parametrize("case", list(PAIRS))
def test_refused_by_the_real_header_is_refused_by_libpto2(case):
    assert shutil.which("g++"), "g++ is required"
    refused, accepted, named = PAIRS[case]
    ok, log = compile_cpp(PRELUDE % refused, "refused")
    assert not ok, "compiled against libpto2 although the real PTO2 header refuses it:\n" + refused
    assert named in log, log
    ok, log = compile_cpp(PRELUDE % accepted, "accepted", exported=("aicpu_orchestration_entry",))
    assert ok, log
