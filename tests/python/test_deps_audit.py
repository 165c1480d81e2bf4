"""The deps= audit: a user edge is never dropped. Every form that takes `deps=` either puts the
edge into the generated C++ (`params_tN.set_dependencies` with the producer's TaskId, or the L3
`add_dep_wait`) or is refused with a located error. One case per form."""
import pytest

import pypto.language as pl
from pypto import codegen
from pypto.errors import PyptoError

HEAD = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             d: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        c, t0 = pl.submit(self.k, a, c)
{body}
        return d
'''

STORE = "d = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], d)"

# form -> body (8-space indented lines); the edge on t0 must reach the C++ of a later task.
KEPT = {
    "pl.submit": ["d, t1 = pl.submit(self.k, a, d, deps=[t0])"],
    "pl.submit in pl.manual_scope": ["with pl.manual_scope():", "    d, t1 = pl.submit(self.k, a, d, deps=[t0])"],
    "pl.submit with a discarded tid": ["d, _ = pl.submit(self.k, a, d, deps=[t0])"],
    "pl.submit with None": ["d, t1 = pl.submit(self.k, a, d, deps=[None, t0])"],
    "pl.submit in a loop": ["for i in pl.range(2):", "    d, t1 = pl.submit(self.k, a, d, deps=[t0])"],
    "pl.submit in a branch": ["if n > 0:", "    d, t1 = pl.submit(self.k, a, d, deps=[t0])"],
    "pl.submit with a TaskId array": ["ts = pl.array.create(2, pl.TASK_ID)", "ts[0] = t0", "ts[1] = t0",
                                      "d, t1 = pl.submit(self.k, a, d, deps=[ts])"],
    "pl.spmd_submit": ["d, t1 = pl.spmd_submit(self.k, a, d, core_num=2, deps=[t0])"],
    "pl.at": ["with pl.at(level=pl.Level.CORE_GROUP, deps=[t0]):", "    " + STORE],
    "pl.at as tid": ["with pl.at(level=pl.Level.CORE_GROUP, deps=[t0]) as t1:", "    " + STORE],
    "pl.at with an empty body": ["with pl.at(level=pl.Level.CORE_GROUP, deps=[t0]):", "    pass"],
    "pl.at around one call": ["with pl.at(level=pl.Level.CORE_GROUP, deps=[t0]):", "    d = self.k(a, d)"],
    "pl.at in pl.manual_scope": ["with pl.manual_scope():", "    with pl.at(level=pl.Level.CORE_GROUP, deps=[t0]):",
                                 "        " + STORE],
    "with pl.spmd around one call": ["with pl.spmd(2, deps=[t0]):", "    d = self.k(a, d)"],
    "with pl.spmd as tid": ["with pl.spmd(2, deps=[t0]) as t1:", "    " + STORE],
    "for i in pl.spmd": ["for b in pl.spmd(2, deps=[t0]):", "    " + STORE],
    "pl.system.task_dummy": ["bar = pl.system.task_dummy(deps=[t0])", "d, t1 = pl.submit(self.k, a, d, deps=[bar])"],
}


def _code(body_lines, name):
    text = HEAD.format(body="\n".join("        " + line for line in body_lines))
    prog = pl.parse_program(text, name)
    return codegen.generate_orchestration(prog, codegen.orchestration_functions(prog)[0]).code


@pytest.mark.parametrize("form", list(KEPT))
def test_the_edge_reaches_the_cpp(form):
    code = _code(KEPT[form], "deps.py")
    lines = [line.strip() for line in code.splitlines()]
    producer = "ts[k]" if "array" in form else "t0"   # an array entry fans out slot by slot
    assert any(line.endswith("_deps_count++] = %s;" % producer) for line in lines), code   # the producer's TaskId
    if "task_dummy" in form:
        assert any(line.endswith("_deps_count++] = bar;") for line in lines), code
    assert any(".set_dependencies(" in line for line in lines), code


# form -> (body, message, the text the caret line contains)
REFUSED = {
    "pl.at at a non-task level": (["with pl.at(level=pl.Level.CHIP, deps=[t0]):", "    d = self.k(a, d)"],
                                  "pl.at(level=pl.Level.CHIP) is not a task: it cannot take deps=", "pl.at("),
    "pl.spmd in pl.cluster": (["with pl.cluster():", "    with pl.spmd(2, deps=[t0]):", "        d = self.k(a, d)"],
                              "deps=", "pl.spmd("),
    "pl.at in pl.cluster": (["with pl.cluster():", "    with pl.at(level=pl.Level.CORE_GROUP, deps=[t0]):",
                             "        d = self.k(a, d)"], "cannot be nested inside pl.cluster()", "pl.at("),
    "pl.submit in pl.cluster": (["with pl.cluster():", "    d, t1 = pl.submit(self.k, a, d, deps=[t0])"],
                                "TaskId 't0' is used inside pl.cluster()", "t0"),
    "pl.submit in a pl.at body": (["with pl.at(level=pl.Level.CORE_GROUP):", "    d, t1 = pl.submit(self.k, a, d, deps=[t0])"],
                                  "TaskId 't0' is used inside a pl.at body", "t0"),
    "pl.submit in a pl.spmd body": (["with pl.spmd(2):", "    d, t1 = pl.submit(self.k, a, d, deps=[t0])"],
                                    "TaskId 't0' is used inside a pl.spmd body", "t0"),
    "a plain call": (["d = self.k(a, d, deps=[t0])"], "deps= is not accepted on a plain call to 'k'", "[t0]"),
    "a tensor entry": (["d, t1 = pl.submit(self.k, a, d, deps=[a])"], "deps= entries must be TaskIds", "a"),
}


@pytest.mark.parametrize("form", list(REFUSED))
def test_a_form_that_would_drop_the_edge_is_refused_with_a_location(form):
    body, message, caret = REFUSED[form]
    with pytest.raises(PyptoError) as ei:
        _code(body, "deps.py")
    e = ei.value
    assert message in e.message, f"\nwant: {message}\ngot:  {e.message}"
    assert e.file == "deps.py" and e.line > 14, str(e)
    assert caret in e.source_line, str(e)


def test_host_level_submit_keeps_the_edge():
    from pypto import host
    text = '''
import pypto.language as pl


@pl.program
class H:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64], pl.FP32], c: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        c = pl.store(pl.load(a, [0], [64]), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, a: pl.Tensor[[64], pl.FP32], c: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        c = self.k(a, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: pl.Tensor[[64], pl.FP32], z: pl.Out[pl.Tensor[[64], pl.FP32]],
                  w: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        z, t0 = pl.submit(self.chip, x, z)
        bar = pl.system.task_dummy(deps=[t0])
        w, t1 = pl.submit(self.chip, x, w, deps=[t0, bar])
        return w
'''
    prog = pl.parse_program(text, "host.py")
    code = host.generate_host_orchestration(prog, host.host_functions(prog)[0]).code
    assert "add_dep_wait(t0);" in code, code
    assert "add_dep_wait(bar);" in code, code
