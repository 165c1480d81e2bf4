"""A tensor the runtime allocates for a pl.submit inside a loop / if body (a trailing Out argument
left out) that leaves the body as a loop carry or an if result (issue 13, spec anchor_features §17).

The body's AUTO runtime scope used to end with that tensor still named by the carry: the runtime
reclaimed its storage and the next allocation reused it, so a later task read (and here, wrote)
the same memory. The orchestration's `pl.tensor.read` waits for the producing task, so the storage
is free at the end of the body's scope and the reuse is certain. MaterializeRuntimeScopes now
passes such an output explicitly, as a `pl.create_tensor` placed before the body's scope."""

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen

# swap writes its output's top half before reading its input's top half: run in place (output
# storage == input storage) it computes a different result, which is how a reuse shows.
_HEAD = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def swap(self, x: pl.Tensor[[64, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        b = pl.load(x, [32, 0], [32, 64])
        y = pl.store(pl.add(b, 1.0), [0, 0], y)
        t = pl.load(x, [0, 0], [32, 64])
        y = pl.store(pl.add(t, 1.0), [32, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 64], pl.FP32]:
'''


def _program(body):
    src = _HEAD + "\n".join("        " + line for line in body.strip("\n").splitlines()) + "\n        return out\n"
    return pl.parse_program(src, "t.py")


def _swap(x, times):
    for _ in range(times):
        x = np.concatenate([x[32:], x[:32]]) + 1
    return x


def _run(p, n):
    a = np.random.default_rng(n).standard_normal((64, 64)).astype(np.float32)
    out = np.zeros_like(a)
    pypto.compile(p)(a, out, n, race_check=True)
    return a, out


_LOOP = '''
acc = a
for i in {range}(n):
    acc, t = pl.submit(self.swap, acc)
    s = pl.tensor.read(acc, [0, 0])
out = self.swap(acc, out)
'''


@pytest.mark.parametrize("loop", ["pl.range", "pl.parallel"])
@pytest.mark.parametrize("n", [0, 1, 3, 8])
def test_a_runtime_output_carried_out_of_a_loop_body_is_not_reused_e2e_numpy(loop, n):
    a, out = _run(_program(_LOOP.format(range=loop)), n)
    np.testing.assert_allclose(out, _swap(a, n + 1), rtol=1e-6)


_IF = '''
if n > 0:
    y, t = pl.submit(self.swap, a)
    s = pl.tensor.read(y, [0, 0])
else:
    y = a
z, t2 = pl.submit(self.swap, y)
out = self.swap(z, out)
'''


@pytest.mark.parametrize("n", [0, 1])
def test_a_runtime_output_leaving_an_if_branch_is_not_reused_e2e_numpy(n):
    a, out = _run(_program(_IF), n)
    np.testing.assert_allclose(out, _swap(a, 3 if n > 0 else 2), rtol=1e-6)


def test_the_escaping_output_is_allocated_before_the_body_scope():
    code = codegen.generate_orchestration(_program(_LOOP.format(range="pl.range")), "main").code
    loop = code.split("for (int64_t i = 0;", 1)[1]
    before, inside = loop.split("PTO2_SCOPE() {", 1)
    assert "alloc_tensors(y_out_ci)" in before and "const Tensor& y_out = " in before
    assert "params_t0.add_output(y_out);" in inside and "acc = y_out;" in inside
    assert "TensorCreateInfo" not in inside          # the task no longer allocates it


def test_a_runtime_output_used_only_inside_the_body_stays_runtime_allocated():
    p = _program('''
for i in pl.range(n):
    tmp, t = pl.submit(self.swap, a)
    out = self.swap(tmp, out)
''')
    code = codegen.generate_orchestration(p, "main").code
    assert "alloc_tensors" not in code and "params_t0.add_output(params_t0_out0_ci);" in code
    a, out = _run(p, 2)
    np.testing.assert_allclose(out, _swap(a, 2), rtol=1e-6)
