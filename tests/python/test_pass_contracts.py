"""Pass contracts (issue 11): every pass declares the IR property it produces, the docs/ir.md
table states each pass's contract as the code does, and the verifiers of the properties of the
rewriting passes catch a program the pass has not run on."""

import os
import re

import pypto.language as pl
from pypto.ir import passes

from codegen_test_util import GOLDEN_DIR, load_single_program

DOCS = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "ir.md")


def _factories():
    return {name: getattr(passes, name) for name in passes._PASS_NAMES}


def test_every_pass_declares_what_it_produces():
    silent = [name for name, make in _factories().items() if not make().produced]
    assert not silent, "passes that declare no produced IR property: %s" % silent


def test_every_pipeline_pass_is_callable_from_python():
    names = set(_factories())
    assert {p.name for p in passes._passes.default_pipeline(True)} <= names
    assert {p.name for p in passes.kernel_pipeline()} <= names


def _names(cell):
    return set(re.findall(r"`(\w+)`", cell))


def _docs_table():
    """{pass name: (requires, produces, invalidates)} from docs/ir.md's "Every pass" table."""
    rows = {}
    text = open(DOCS).read().split("### Every pass", 1)[1]
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 5 or not cells[0].startswith("`"):
            continue
        rows[re.match(r"`(\w+)`", cells[0]).group(1)] = tuple(_names(c) for c in cells[1:4])
    return rows


def test_the_docs_table_states_every_pass_contract_as_the_code_does():
    table = _docs_table()
    assert set(table) == set(_factories()), "docs/ir.md 'Every pass' table vs the bound passes"
    for name, make in _factories().items():
        p = make()
        assert table[name] == (set(p.required), set(p.produced), set(p.invalidated)), name


def _violations(prop, program):
    return passes.verify_property(getattr(passes.IRProperty, prop), program)


def test_loops_unrolled_holds_after_unroll_loops_only():
    p = load_single_program(os.path.join(GOLDEN_DIR, "anchor_unroll", "program.py"))
    found = _violations("LoopsUnrolled", p)
    assert found and "pl.unroll loop" in found[0]
    assert _violations("LoopsUnrolled", passes.UnrollLoops()(p)) == []


@pl.program
class Scopes:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
        return out2

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[16, 16], pl.FP32],
            out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out2 = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
        return out2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.cluster():
            out = self.cube(x, out)
            out = self.vec(x, out)
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), pl.load(out, [0, 0], [16, 16])), [0, 0], out)
        return out


def test_scope_outlining_properties_hold_after_their_pass_only():
    cluster = _violations("ClusterScopesOutlined", Scopes)
    assert len(cluster) == 1 and "pl.cluster scope" in cluster[0]
    after_cluster = passes.OutlineClusterScopes()(Scopes)
    assert _violations("ClusterScopesOutlined", after_cluster) == []
    incore = _violations("IncoreScopesOutlined", after_cluster)
    assert len(incore) == 1 and "pl.at scope" in incore[0]
    assert _violations("IncoreScopesOutlined", passes.OutlineIncoreScopes()(after_cluster)) == []


@pl.program
class TensorOpsKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.assemble(c, pl.add(a, a), [0, 0])
        return c


def test_fixed_point_properties_fail_before_their_pass_and_hold_after():
    for prop, make in (("KernelTensorOpsConverted", passes.ConvertTensorToTileOps),
                       ("WrittenParamDirectionsUpgraded", passes.UpgradeWrittenParamDirections)):
        found = _violations(prop, TensorOpsKernel)
        assert found and ("running %s again changes the program" % make().name) in found[0], (prop, found)
    converted = passes.ConvertTensorToTileOps()(TensorOpsKernel)
    assert _violations("KernelTensorOpsConverted", converted) == []
    upgraded = passes.UpgradeWrittenParamDirections()(converted)
    assert _violations("WrittenParamDirectionsUpgraded", upgraded) == []
