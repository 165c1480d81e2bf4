"""The CPU runtime models the chip (issue 16): an SPMD submit with core_num=4 and sync_start
runs with the default 2 AIV workers (gang helper threads join the gang), whatever the host's
core count; docs/runtime.md, "The modelled chip"."""
import importlib.util
import os
import sys

import numpy as np

import pypto

SPEC = os.path.join(os.path.dirname(__file__), "spec_programs", "spmd_scoped.py")


def test_sync_start_core_num_4_runs_on_2_workers():
    spec = importlib.util.spec_from_file_location("spec_modelled_cores_spmd", SPEC)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    prog = [v for v in vars(mod).values() if hasattr(v, "functions") and hasattr(v, "dynamic_dims")][0]
    c = pypto.compile(prog)
    x = np.random.default_rng(3).uniform(-1, 1, (16, 16)).astype(np.float32)
    rc = np.zeros((16, 16), np.int32)
    out = np.zeros((16, 16), np.float32)
    c(x, rc, out, aiv_workers=2)  # 4 blocks gang-started: more than the 2 AIV workers
    np.testing.assert_array_equal(rc, np.ones((16, 16), np.int32))
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-5, atol=1e-5)
