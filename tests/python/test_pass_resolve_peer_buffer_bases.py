"""ResolvePeerBufferBases (the kernel pipeline): every ``system.import_peer_buffer`` gets attr
``base``, the base of its peer's ``reserve_buffer`` of that name (-1 for pl.AUTO), printed as
``pl.system.import_peer_buffer(base=256, ...)``; every import and reservation gets
``Call.cpu_base`` (a typed field, printed ``cpu_base=``), the address it binds on the CPU (the base,
0 for pl.AUTO) (DSL Before / Expected).
The CPU kernel backend prints ``cpu_base`` instead of walking the peer function or deciding what
AUTO binds (spec anchor_features §8)."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError
from pypto.ir import passes

from pass_test_util import assert_pass

def _imports(prog, fn):
    return _calls(prog, fn, "system.import_peer_buffer")


def _calls(prog, fn, op):
    return [s.value for s in ir.flatten_stmts(prog.get(fn).body)
            if isinstance(s, ir.AssignStmt) and isinstance(s.value, ir.Call) and s.value.callee == op]


def test_import_takes_the_peer_reservations_base():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.AIV)
        def consumer(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            ring = pl.reserve_buffer(name="ring", size=64, base=256)
            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.AIC)
        def producer(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            peer = pl.import_peer_buffer(name="ring", peer_func="consumer")
            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.AIV)
        def consumer(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            ring = pl.reserve_buffer(name="ring", size=64, base=256, cpu_base=256)
            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.AIC)
        def producer(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            peer = pl.import_peer_buffer(name="ring", peer_func="consumer", base=256, cpu_base=256)
            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

    after = assert_pass(passes.ResolvePeerBufferBases(), Before, Expected)
    imp = _imports(after, "producer")[0]
    assert imp.peer_base == 256 and "base" not in imp.attrs   # a typed field, not an attr
    assert _imports(Before, "producer")[0].peer_base == -2    # unstamped before the pass
    assert passes.verify_property(passes.IRProperty.PeerBufferBasesResolved, Before) != []
    assert passes.verify_property(passes.IRProperty.PeerBufferBasesResolved, after) == []
    text = ir.python_print(after)
    assert 'pl.system.import_peer_buffer(base=256, name="ring", peer_func="consumer", cpu_base=256)' in text
    assert ir.structural_equal(pl.parse_program(text), after)


def test_auto_reservation_and_two_imports_of_different_peers():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.AIV)
        def a(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            ring = pl.reserve_buffer(name="ring", size=64)
            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.AIV)
        def b(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            first = pl.reserve_buffer(name="ring", size=64, base=512)
            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.AIC)
        def user(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            pa = pl.import_peer_buffer(name="ring", peer_func="a")
            pb = pl.import_peer_buffer(name="ring", peer_func="b")
            pl.aic_initialize_pipe(1, 512, pa, pb)
            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.AIV)
        def a(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            ring = pl.reserve_buffer(name="ring", size=64, cpu_base=0)   # AUTO binds 0 on the CPU
            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.AIV)
        def b(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            first = pl.reserve_buffer(name="ring", size=64, base=512, cpu_base=512)
            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.AIC)
        def user(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            pa = pl.import_peer_buffer(name="ring", peer_func="a", base=pl.AUTO, cpu_base=0)   # AUTO stays AUTO (-1)
            pb = pl.import_peer_buffer(name="ring", peer_func="b", base=512, cpu_base=512)
            pl.aic_initialize_pipe(1, 512, pa, pb)
            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

    after = assert_pass(passes.ResolvePeerBufferBases(), Before, Expected)
    assert [c.peer_base for c in _imports(after, "user")] == [-1, 512]
    assert [c.cpu_base for c in _imports(after, "user")] == [0, 512]
    assert all("cpu_base" not in c.attrs for c in _imports(after, "user"))   # a typed field, not an attr


def test_already_stamped_program_is_unchanged_and_a_program_without_imports_too():
    @pl.program
    class Stamped:
        @pl.function(type=pl.FunctionType.AIV)
        def consumer(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            ring = pl.reserve_buffer(name="ring", size=64, base=128, cpu_base=128)
            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.AIV)
        def producer(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            peer = pl.import_peer_buffer(name="ring", peer_func="consumer", base=128, cpu_base=128)
            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

    assert_pass(passes.ResolvePeerBufferBases(), Stamped, Stamped)

    @pl.program
    class Plain:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
            return y

    assert_pass(passes.ResolvePeerBufferBases(), Plain, Plain)


def test_a_written_base_must_be_the_peers():
    src = ("import pypto.language as pl\n\n@pl.program\nclass P:\n"
           "    @pl.function(type=pl.FunctionType.AIV)\n"
           "    def consumer(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
           "        ring = pl.reserve_buffer(name=\"ring\", size=64, base=128)\n        return x\n\n"
           "    @pl.function(type=pl.FunctionType.AIV)\n"
           "    def producer(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
           "        p = pl.import_peer_buffer(name=\"ring\", peer_func=\"consumer\", base=7)\n        return x\n")
    with pytest.raises(PyptoError) as e:
        pl.parse_program(src)
    assert "base= of pl.import_peer_buffer must be the base of 'consumer's reservation 'ring' (128), got '7'" in str(e.value)
    assert "<string>:12:" in str(e.value)


def test_the_kernel_pipeline_runs_it_and_the_backend_prints_the_stamp():
    from pypto import codegen
    from pypto._core import kernel_cpu
    import os
    from codegen_test_util import GOLDEN_DIR, load_single_program
    prepared = codegen.run_pipeline(load_single_program(os.path.join(GOLDEN_DIR, "anchor_pipe_buffers", "program.py")))
    assert "ResolvePeerBufferBases" in [p.name for p in passes.kernel_pipeline()]
    assert passes.verify_property(passes.IRProperty.PeerBufferBasesResolved, prepared) == []
    assert "static_cast<int32_t>(256)" in kernel_cpu.generate(prepared, "producer")


def test_a_written_cpu_base_must_be_the_one_the_pass_stamps():
    src = ("import pypto.language as pl\n\n@pl.program\nclass P:\n"
           "    @pl.function(type=pl.FunctionType.AIV)\n"
           "    def consumer(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
           "        ring = pl.reserve_buffer(name=\"ring\", size=64, cpu_base=3)\n        return x\n")
    with pytest.raises(PyptoError) as e:
        pl.parse_program(src)
    assert ("cpu_base= of pl.reserve_buffer must be the address the buffer binds on the CPU (0: its base, 0 for "
            "pl.AUTO), got '3'") in str(e.value)
    assert "<string>:7:" in str(e.value)


def test_the_backend_prints_the_stamped_auto_cpu_base_and_the_property_names_a_missing_one():
    from pypto import codegen
    from pypto._core import kernel_cpu

    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def consumer(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            ring = pl.reserve_buffer(name="ring", size=64)
            pl.aiv_initialize_pipe(1, 512, ring, 0)
            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

    prepared = passes.ResolvePeerBufferBases()(P)
    assert "static_cast<int32_t>(0)" in kernel_cpu.generate(codegen.run_pipeline(P), "consumer")
    assert passes.verify_property(passes.IRProperty.PeerBufferBasesResolved, P) == [
        "function 'consumer': reserve_buffer 'ring' has no cpu_base, ResolvePeerBufferBases stamps cpu_base=0"]
    assert passes.verify_property(passes.IRProperty.PeerBufferBasesResolved, prepared) == []


def test_cpu_base_is_a_typed_call_field_compared_and_hashed():
    src = ("import pypto.language as pl\n\n@pl.program\nclass P:\n"
           "    @pl.function(type=pl.FunctionType.AIV)\n"
           "    def consumer(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
           "        ring = pl.reserve_buffer(name=\"ring\", size=64, base=256CPU)\n        return x\n")
    stamped = pl.parse_program(src.replace("CPU", ", cpu_base=256"))
    plain = pl.parse_program(src.replace("CPU", ""))
    (ring,) = _calls(stamped, "consumer", "system.reserve_buffer")
    assert ring.cpu_base == 256 and "cpu_base" not in ring.attrs
    assert _calls(plain, "consumer", "system.reserve_buffer")[0].cpu_base == -1
    ok, why = ir.structural_equal_explain(stamped, plain)
    assert not ok and "cpu_base 256 vs -1" in why
    assert ir.structural_hash(stamped) != ir.structural_hash(plain)
    text = ir.python_print(stamped)
    assert 'pl.system.reserve_buffer(base=256, name="ring", size=64, cpu_base=256)' in text
    assert ir.structural_equal(pl.parse_program(text), stamped)
    # the pass stamps the same field
    assert ir.structural_equal(passes.ResolvePeerBufferBases()(plain), stamped)
