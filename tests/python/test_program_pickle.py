"""A built program refuses pickling and copying with a TypeError that says what to do instead
(multiprocessing's spawn and forkserver start methods pickle what they pass to a worker; the
default becomes forkserver on Linux in Python 3.14). Before: "cannot pickle 'Program' object"."""
import copy
import multiprocessing as mp
import os
import pickle
import sys

import numpy as np
import pytest

import pypto

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import vector_add  # noqa: E402


def test_pickling_or_copying_a_compiled_program_says_to_compile_in_each_process():
    prog = pypto.compile(vector_add.VectorAdd)
    for attempt in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(TypeError, match=r"CompiledProgram cannot be pickled or copied .*pypto\.compile\(Program\) "
                                            r"in each process"):
            attempt(prog)
    a = np.arange(vector_add.N, dtype=np.float32)
    c = np.zeros_like(a)
    prog(a, a, c)   # the refused copy left the program working
    np.testing.assert_array_equal(c, 2 * a)


def _worker_compiles(n):
    prog = pypto.compile(vector_add.VectorAdd)   # a build-cache lookup
    a = np.full(vector_add.N, n, np.float32)
    c = np.zeros_like(a)
    prog(a, a, c)
    return float(c[0])


def test_the_advice_works_with_spawned_workers():
    with mp.get_context("spawn").Pool(2) as pool:
        assert pool.map(_worker_compiles, [1, 2, 3]) == [2.0, 4.0, 6.0]


def test_a_host_program_refuses_pickling_too():
    import two_chips
    from pypto import host
    prog = host.compile_host(two_chips.TwoChips, "host_main", chips=2)
    with pytest.raises(TypeError, match=r"HostProgram cannot be pickled or copied .*compile_host"):
        pickle.dumps(prog)


def test_a_forked_child_runs_the_program_its_parent_ran():
    prog = pypto.compile(vector_add.VectorAdd)
    a = np.arange(vector_add.N, dtype=np.float32)
    c = np.zeros_like(a)
    prog(a, a, c)   # the parent's runtime and worker threads exist now; the child has neither
    pid = os.fork()
    if pid == 0:   # the child: exit status 0 only if its run computed the sum
        status = 1
        try:
            c2 = np.zeros_like(a)
            prog(a, np.ones_like(a), c2)
            status = 0 if np.array_equal(c2, a + 1) else 3
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    prog(a, a, c)   # and the parent's runtime still works
    np.testing.assert_array_equal(c, 2 * a)
