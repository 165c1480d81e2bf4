"""Numbers and tensors assigned at the top level of a `with pl.scope()` / `pl.manual_scope()`
block and read after it (a `pl.tensor.read` value, a `pl.tensor.dim`, a copy of an if result, a
slice / reshape / transpose view). Refused before ("'k' (defined at line 9) is used outside the
runtime scope that defines it: its C++ variable is declared inside that PTO2_SCOPE block"): a
Python `with` block does not scope its names. StampScopeExits now stamps such a value on the
block (`exit_values`), and the generator gives it an exit slot declared before the block,
assigned right after the assignment and read after the block. A tensor the runtime allocates in
the scope still cannot leave it, nor can a view of one (located error)."""

import re

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen, ir
from pypto.errors import PyptoError
from pypto.ir import passes

from pass_test_util import assert_pass
from test_scope_loop_exits import _KERNELS   # step: [16, 16] + 1, half: [8, 16] + 1


def _source(body, scope):
    body = body.replace("SCOPE", scope)
    return "import pypto.language as pl\n\n@pl.program\nclass P:" + _KERNELS + '''
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
''' + "\n".join("        " + line for line in body.strip("\n").splitlines()) + "\n        return out\n"


def _line(src, marker="#!"):
    return next(i + 1 for i, s in enumerate(src.splitlines()) if marker in s)


# Each case: the body, and the expected `out` from the inputs (a = a0, n) in NumPy.
NUMBERS = '''
with pl.SCOPE():
    k = n + 1
    if n > 1:
        r = n * 3
    else:
        r = n - 7
    c = r
    s = 0
    for i in pl.range(4):
        s = s + i * n
    total = s
with pl.SCOPE():
    d = pl.tensor.dim(a, 1)
a = pl.tensor.write(a, [0, 0], pl.cast(k, pl.FP32))
a = pl.tensor.write(a, [0, 1], pl.cast(c, pl.FP32))
a = pl.tensor.write(a, [0, 2], pl.cast(total, pl.FP32))
a = pl.tensor.write(a, [0, 3], pl.cast(d, pl.FP32))
out = self.step(a, out)
'''


def _numbers_reference(a, n):
    a = a.copy()
    a[0, :4] = [n + 1, n * 3 if n > 1 else n - 7, 6 * n, 16]
    return a + 1


# A value read from the tensor a task of the scope writes (the scope waits for it: the read is
# in the scope), and views of a parameter, read after the block (nested blocks: pl.scope() around
# pl.scope() / pl.manual_scope()).
TENSORS = '''
with pl.scope():
    top = pl.slice(a, [8, 16], [0, 0])
    with pl.SCOPE():
        out = self.step(a, out)
        v = pl.tensor.read(out, [2, 3])
        flat = pl.reshape(a, [256])
    tr = pl.transpose(a, 0, 1)
t = pl.create_tensor([8, 16], dtype=pl.FP32)
t = self.half(top, t)
out = pl.assemble(out, t, [8, 0])
out = pl.tensor.write(out, [0, 0], v * 10.0)
f = pl.tensor.read(flat, [17])
out = pl.tensor.write(out, [0, 1], f)
g = pl.tensor.read(tr, [2, 5])
out = pl.tensor.write(out, [0, 2], g)
'''


def _tensors_reference(a, n):
    out = a + 1
    out[8:] = a[:8] + 1
    out[0, 0] = (a[2, 3] + 1) * 10
    out[0, 1] = a.reshape(-1)[17]
    out[0, 2] = a.T[2, 5]
    return out


@pytest.mark.parametrize("scope", ["scope", "manual_scope"])
@pytest.mark.parametrize("n", [0, 1, 2, 5])
@pytest.mark.parametrize("case", ["numbers", "tensors"])
def test_assigned_values_read_after_the_block_e2e_numpy(case, scope, n, monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    body, reference = {"numbers": (NUMBERS, _numbers_reference), "tensors": (TENSORS, _tensors_reference)}[case]
    src = _source(body, scope)
    compiled = pypto.compile(pl.parse_program(src, "t.py"))
    a = np.random.default_rng(n).standard_normal((16, 16)).astype(np.float32)
    want = reference(a, n)
    out = np.zeros_like(a)
    compiled(a.copy(), out, n, race_check=True)
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_exit_slots_of_assigned_values_in_cpp():
    code = codegen.generate_orchestration(pl.parse_program(_source(TENSORS, "scope"), "t.py"), "main").code
    assert "std::optional<Tensor> top_exit;" in code and "float v_exit = 0;" in code
    # The slot is assigned right after the assignment, inside the block, and read after it.
    assert code.index("std::optional<Tensor> top_exit;") < code.index("top_exit = top;") < code.index(
        "Tensor top = *top_exit;")
    # Nested: into the inner block's slot, then on into the outer block's right after it.
    assert code.index("flat_exit_1 = flat;") < code.index("Tensor flat = *flat_exit_1;") < code.index(
        "flat_exit = flat;") < code.index("Tensor flat = *flat_exit;")
    assert not re.search(r"\bt_exit", code)   # created after the block


def test_values_leave_a_block_of_call_chunks():
    # A scope body of 70 calls is emitted in chunk lambdas (kCallChunkMin): the slot is assigned
    # inside the chunk that defines the value.
    calls = "\n".join(f"    o{i} = self.step(a, out)" for i in range(70))
    src = _source(f'''
with pl.scope():
    k = n + 10
{calls}
    v = pl.tensor.read(o69, [0, 0])
    h = pl.slice(a, [8, 16], [8, 0])
    w = v + pl.cast(k, pl.FP32)
t = pl.create_tensor([8, 16], dtype=pl.FP32)
t = self.half(h, t)
out = pl.assemble(out, t, [0, 0])
out = pl.tensor.write(out, [0, 1], w)
''', "scope")
    program = pl.parse_program(src, "t.py")
    code = codegen.generate_orchestration(program, "main").code
    chunk = code.index("PYPTO_CALL_CHUNK {")
    assert chunk < code.index("w_exit = w;") and chunk < code.index("h_exit = h;")
    compiled = pypto.compile(program)
    a = np.random.default_rng(3).standard_normal((16, 16)).astype(np.float32)
    out = np.zeros_like(a)
    compiled(a.copy(), out, 2, race_check=True)
    want = a + 1
    want[:8] = a[8:] + 1
    want[0, 1] = (a[0, 0] + 1) + 12
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_a_value_of_a_scope_in_a_loop_body_is_read_after_the_block():
    src = _source('''
for i in pl.range(3):
    with pl.scope():
        k = i * 2 + n
        out = self.step(a, out)
    a = pl.tensor.write(a, [0, i], pl.cast(k, pl.FP32))
out = self.step(a, out)
''', "scope")
    compiled = pypto.compile(pl.parse_program(src, "t.py"))
    a = np.zeros((16, 16), np.float32)
    out = np.zeros_like(a)
    compiled(a, out, 5, race_check=True)
    want = np.ones((16, 16), np.float32)
    want[0, :3] = [6, 8, 10]
    np.testing.assert_allclose(out, want)


@pytest.mark.parametrize("view", ["pl.slice(t, [8, 16], [8, 0])", "pl.reshape(t, [8, 32])"])
def test_a_view_of_a_tensor_allocated_in_the_scope_cannot_leave_it(view):
    src = _source(f'''
with pl.scope():
    t = pl.create_tensor([16, 16], dtype=pl.FP32)
    t = self.step(a, t)
    h = {view}  #!
out = self.step(a, out)
m = pl.tensor.read(h, [0, 0])
out = pl.tensor.write(out, [0, 0], m)
''', "scope")
    with pytest.raises(PyptoError) as ei:
        codegen.generate_orchestration(pl.parse_program(src, "t.py"), "main")
    e = ei.value
    assert "'h' is read after the runtime scope that defines it, but it is a view of a tensor the runtime " \
           "allocated inside that scope: it is reclaimed when the scope ends" in e.message
    assert (e.file, e.line) == ("t.py", _line(src))
    assert "create it before the scope" in e.help


def test_a_tensor_allocated_in_the_scope_still_cannot_leave_it():
    src = _source('''
with pl.scope():
    t = pl.create_tensor([16, 16], dtype=pl.FP32)
    t = self.step(a, t)
out = self.step(t, out)  #!
''', "scope")
    with pytest.raises(PyptoError) as ei:
        codegen.generate_orchestration(pl.parse_program(src, "t.py"), "main")
    assert "'t' is used outside the runtime scope that produced it" in ei.value.message
    assert (ei.value.file, ei.value.line) == ("t.py", _line(src))


def test_assigned_values_read_after_the_block_are_stamped_aliases_and_allocations_not():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                 n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.scope():
                    m = n + 1
                    unused = n + 2
                    h = pl.slice(a, [16, 16], [0, 0])
                    o = self.k(a, out)
                    t = pl.create_tensor([16, 16], dtype=pl.FP32)
                o2 = self.k(h, o)
                q = m * 2
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                 n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.scope(exit_values=["m", "h"]):
                    m = n + 1
                    unused = n + 2
                    h = pl.slice(a, [16, 16], [0, 0])
                    o = self.k(a, out)
                    t = pl.create_tensor([16, 16], dtype=pl.FP32)
                o2 = self.k(h, o)
                q = m * 2
            return out

    after = assert_pass(passes.StampScopeExits(), Before, Expected)
    inner = ir.flatten_stmts(ir.flatten_stmts(after.get("main").body)[0].body)[0]
    assert [v.name for v in inner.exit_values] == ["m", "h"]
    assert passes.verify_property(passes.IRProperty.ScopeExitsStamped, Before) != []
    # `o` names `out`'s Tensor (the kernel writes it back), declared outside: no slot.
    code = codegen.generate_orchestration(codegen.run_pipeline(Before), "main").code
    assert "int64_t m_exit = 0;" in code and "std::optional<Tensor> h_exit;" in code and "o_exit" not in code


# pl.Array versions whose C array the block made, read after it (refused before: "'w' (defined at
# line N) is used outside the runtime scope that defines it"). Only an array's latest version can
# be read (an older one is refused), so the slot, copied after the last version's definition,
# holds the final contents; later in-place updates go to the slot.
ARRAYS = {
    "assigned": ('''
with pl.SCOPE():
    w = pl.array.create(2, pl.INT32)
    w[1] = 5
    w[0] = pl.cast(n, pl.INT32)
x = w[0] * 10 + w[1]
''', lambda n: 10 * n + 5),
    "if_then_updated": ('''
with pl.SCOPE():
    w = pl.array.create(2, pl.INT32)
    if n > 4:
        w[1] = 5
    w[0] = 3
x = w[0] * 10 + w[1]
''', lambda n: 30 + (5 if n > 4 else 0)),
    "nested_then_updated_after": ('''
with pl.scope():
    with pl.SCOPE():
        w = pl.array.create(2, pl.INT32)
        if n > 4:
            w[1] = 5
    w[0] = 3
x = w[0] * 10 + w[1]
w[1] = 9
x = x * 100 + w[1]
''', lambda n: (30 + (5 if n > 4 else 0)) * 100 + 9),
    "loop": ('''
with pl.SCOPE():
    w = pl.array.create(4, pl.INT32)
    for i in pl.range(n):
        w[i % 4] = w[i % 4] + pl.cast(i, pl.INT32)
x = w[0] * 1000 + w[1] * 100 + w[2] * 10 + w[3]
''', lambda n: sum(i * 10 ** (3 - i % 4) for i in range(n))),
    "copy": ('''
with pl.SCOPE():
    w = pl.array.create(2, pl.INT32)
    w[1] = 4
    z = w
x = z[1] + n
''', lambda n: 4 + n),
}


@pytest.mark.parametrize("scope", ["scope", "manual_scope"])
@pytest.mark.parametrize("case", sorted(ARRAYS))
def test_arrays_made_in_the_block_are_read_after_it_e2e(case, scope, monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    body, want = ARRAYS[case]
    body += "a = pl.tensor.write(a, [0, 0], pl.cast(x, pl.FP32))\nout = self.step(a, out)\n"
    compiled = pypto.compile(pl.parse_program(_source(body, scope), "t.py"))
    for n in (0, 1, 5, 7):
        a = np.zeros((16, 16), np.float32)
        out = np.zeros_like(a)
        compiled(a, out, n, race_check=True)
        assert out[0, 0] == want(n) + 1, (case, n)


def test_array_exit_slots_are_c_arrays_copied_after_the_last_version():
    code = codegen.generate_orchestration(
        pl.parse_program(_source(ARRAYS["assigned"][0] + "out = self.step(a, out)\n", "scope"), "t.py"), "main").code
    assert "int32_t w_exit[2];" in code
    block = code[code.index("PTO2_SCOPE() {", code.index("int32_t w_exit[2];")):]
    end = block.index("\n        }\n")
    # after the last update, inside the block; the reads after it name the slot
    assert block.index("w[0] = ") < block.index("w_exit[k] = w[k];") < end
    assert "= w_exit[0];" in block[end:] and "= w_exit[1];" in block[end:]


# A return that ends a runtime scope ending the function (refused before: "return is only allowed
# at the top level of a function body"): the scope does not scope names, so it returns after it.
def _returning(body):
    return _source(body, "scope").rsplit("        return out\n", 1)[0]


@pytest.mark.parametrize("body, want", [
    ('''
with pl.scope():
    out = self.step(a, out)
    return out
''', 1.0),
    ('''
with pl.scope():
    with pl.manual_scope():
        k = n + 5
        a = pl.tensor.write(a, [0, 0], pl.cast(k, pl.FP32))
        out, t = pl.submit(self.step, a, out)
        return out
''', 9.0),
])
def test_a_return_may_end_a_scope_that_ends_the_function(body, want):
    program = pl.parse_program(_returning(body), "t.py")
    fn = program.get("main")
    assert isinstance(ir.flatten_stmts(fn.body)[-1], ir.ReturnStmt)   # after the block
    a = np.zeros((16, 16), np.float32)
    out = np.zeros_like(a)
    pypto.compile(program)(a, out, 3, race_check=True)
    assert out[0, 0] == want


@pytest.mark.parametrize("body", [
    '''
with pl.scope():
    out = self.step(a, out)
    if n > 1:
        return out  #!
''',
    '''
with pl.scope():
    out = self.step(a, out)
    return out  #!
k = 1
''',
    '''
for i in pl.range(2):
    with pl.scope():
        out = self.step(a, out)
        return out  #!
''',
])
def test_any_other_return_in_a_block_is_still_refused(body):
    src = _returning(body)
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "t.py")
    e = ei.value
    assert "return is only allowed at the top level of a function body" in e.message
    assert "a return may also end a pl.scope() / pl.manual_scope() block that ends the function" in e.help
    assert (e.file, e.line) == ("t.py", _line(src))
