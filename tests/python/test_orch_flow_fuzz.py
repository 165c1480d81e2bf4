"""Control flow in orchestrations (loops and branches carrying tensors, views and scalars around
kernel calls) agrees with the same statements run as Python on NumPy arrays
(tests/python/orch_flow_fuzz.py): a seeded smoke here, more seeds under `make fuzz`
(scripts/fuzz_exprs.py --kind orch), and what the fuzzer found."""
import numpy as np
import pytest

import orch_flow_fuzz as of
import pypto
import pypto.language as pl


@pytest.mark.parametrize("seed", range(4))
def test_orchestration_control_flow_agrees_with_python(seed, monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    assert of.check(seed) == []


def test_the_generator_spells_every_form_in_the_orchestration():
    cases = [of.make_case(seed) for seed in range(30)]
    text = "\n".join(c.body for c in cases)
    for form in ("pl.slice(x, ", "pl.slice(out, ", "out = pl.assemble(out, ", "pl.tensor.write(os, ",
                 "pl.create_tensor(", " if ", "for i", "elif ", "pl.unroll(", "pl.parallel(", "pl.tensor.read(",
                 "self.k_acc_", "with pl.scope():"):
        assert form in text, form
    kinds = {spec[0] for c in cases for spec in c.gen.kernels.values()}
    assert kinds == {"binary", "unary", "scalar", "fscalar", "literal", "reduce", "accumulate"}
    assert "pl.load(" not in text and "pl.store(" not in text   # tile ops only inside the kernels


def test_the_check_sees_a_wrong_model(monkeypatch):
    # the model's views copying instead (a later assemble into `out` no longer shows through them)
    monkeypatch.setattr(of._OrchModel, "slice", staticmethod(
        lambda x, shape, offsets: x[offsets[0]:offsets[0] + shape[0], offsets[1]:offsets[1] + shape[1]].copy()))
    seeds = [s for s in range(40) if "pl.slice(out, " in of.make_case(s).body][:8]
    assert sum(1 for s in seeds if of.check(s)) >= 1


WRITE_IN_LOOP = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, n: pl.Scalar[pl.INDEX], os: pl.InOut[pl.Tensor[[1, 4], pl.INT64]]) -> pl.Tensor[[1, 4], pl.INT64]:
        for i in pl.range(n):
            pl.tensor.write(os, [0, i % 3], pl.cast(i + 10, pl.INT64))
        pl.tensor.write(os, [0, 3], pl.cast(n + 100, pl.INT64))
        return os
'''


@pytest.mark.parametrize("spelling", ["pl.tensor.write", "pl.write"])
@pytest.mark.parametrize("n", [0, 1, 2])
def test_a_write_after_a_loop_that_wrote_the_same_tensor_reaches_it(n, spelling, monkeypatch):
    # orch_flow_fuzz seed 0: the write statement in the loop rebinds `os` without an assignment the
    # loop saw, so `os` looked first bound in the body and was seeded with a fresh tensor; with no
    # iteration, the write after the loop went to that tensor and the caller's `os` kept -7
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    src = WRITE_IN_LOOP.replace("pl.tensor.write(", spelling + "(")
    prog = pypto.compile(pl.parse_program(src, "write_loop.py"))
    os = np.full((1, 4), -7, np.int64)
    prog(n, os)
    want = [-7, -7, -7, n + 100]
    for i in range(n):
        want[i % 3] = i + 10
    assert list(os[0]) == want
    assert "pl.create_tensor" not in pypto.ir.python_print(pl.parse_program(src, "write_loop.py"))


SELF_COMPARED_ONLY = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, n: pl.Scalar[pl.INDEX], os: pl.InOut[pl.Tensor[[1, 4], pl.INT64]]) -> pl.Tensor[[1, 4], pl.INT64]:
        s1 = n % 7
        if n < 8:
            s3 = (s1 - 3) % 7
            pl.tensor.write(os, [0, 0], pl.cast(1 if s3 == s3 else 0, pl.INT64))
        for i in pl.range(n):
            s8 = i
        pl.tensor.write(os, [0, 1], pl.cast(5 if s8 < s8 else 6, pl.INT64))
        pl.tensor.write(os, [0, 2], pl.cast(max(s1, s1) == s1, pl.INT64))
        return os
'''


@pytest.mark.parametrize("n", [0, 3])
def test_a_scalar_read_only_by_a_comparison_with_itself_builds_warning_free(n, monkeypatch):
    # orch_flow_fuzz seeds 76 and 11: the printer folded `s3 == s3` to true after printing (and so
    # counting as read) its operands, so the orchestration neither used nor voided `int64_t s3`
    # (-Werror=unused-variable; a loop carry: unused-but-set-variable). `max(s1, s1) == s1` is
    # one text from two trees: it is still compared (against a cast, which g++ does not report)
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    prog = pypto.compile(pl.parse_program(SELF_COMPARED_ONLY, "self_compared.py"))
    os = np.full((1, 4), -7, np.int64)
    prog(n, os)
    assert list(os[0]) == [1, 6, 1, -7]
