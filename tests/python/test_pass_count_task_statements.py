"""CountTaskStatements: each Orchestration function gets its typed ``Function.task_statements``
(kernel / Group calls with a non-tuple result and pl.submits, each once, through loops, branches
and runtime scopes), printed as ``task_statements=N``; the L2 generator's one-block-per-task and
chunking choice (64 or more) reads it (DSL Before / Expected)."""

import pypto.language as pl
from pypto import codegen
from pypto.ir import passes

from pass_test_util import assert_pass


def test_calls_and_submits_are_counted_once_through_loops_and_branches():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            d = self.k(a, d)
            for i in pl.range(4):
                d = self.k(a, d)
            if n > 2:
                d = self.k(a, d)
            d, t = pl.submit(self.k, a, d)
            return d

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, task_statements=4)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            d = self.k(a, d)
            for i in pl.range(4):
                d = self.k(a, d)
            if n > 2:
                d = self.k(a, d)
            d, t = pl.submit(self.k, a, d)
            return d

    after = assert_pass(passes.CountTaskStatements(), Before, Expected)
    assert after.get("main").task_statements == 4 and after.get("k").task_statements == 0
    assert passes.verify_property(passes.IRProperty.TaskStatementsCounted, Before) != []
    assert passes.verify_property(passes.IRProperty.TaskStatementsCounted, after) == []


def test_a_tuple_valued_call_is_no_task_statement():
    # A call with two results is unpacked after it, so it never moves into a chunk: not counted.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def two(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                e: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            e2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], e)
            return c, e

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                 e: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c, e = self.two(a, c, e)
            return c

    after = assert_pass(passes.CountTaskStatements(), Before, Before)
    assert after.get("main").task_statements == 0


def test_sixty_four_statements_put_every_task_in_its_own_block():
    # The generator's choice follows the stamp: 63 calls print flat, 64 in `{ }` blocks / chunks.
    def program(n):
        body = "\n".join("        d = self.k(a, d)" for _ in range(n))
        return pl.parse_program(f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32],
          c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32],
             d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
{body}
        return d
''')
    small, big = codegen.run_pipeline(program(63)), codegen.run_pipeline(program(64))
    assert small.get("main").task_statements == 63 and big.get("main").task_statements == 64
    assert "PYPTO_CALL_CHUNK {" not in codegen.generate_orchestration(small, "main", run_passes=False).code
    assert "PYPTO_CALL_CHUNK {" in codegen.generate_orchestration(big, "main", run_passes=False).code


def test_ops_are_no_tasks_tasks_in_scopes_count_and_a_stale_stamp_is_recomputed():
    # tensor.create / tensor.read are ops, not tasks; the submits inside the MANUAL scope and the
    # call in the nested loop count; a stamp written by hand (task_statements=9) is replaced.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, task_statements=9)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], counts: pl.Tensor[[4], pl.INDEX],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            tmp = pl.create_tensor([16, 16], dtype=pl.FP32)
            m = pl.tensor.read(counts, [0])
            with pl.manual_scope():
                tmp2, t1 = pl.submit(self.k, a, tmp)
                d2, t2 = pl.submit(self.k, tmp2, d, deps=[t1])
            for i in pl.range(2):
                for j in pl.range(m):
                    d = self.k(a, d)
            return d

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, task_statements=3)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], counts: pl.Tensor[[4], pl.INDEX],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            tmp = pl.create_tensor([16, 16], dtype=pl.FP32)
            m = pl.tensor.read(counts, [0])
            with pl.manual_scope():
                tmp2, t1 = pl.submit(self.k, a, tmp)
                d2, t2 = pl.submit(self.k, tmp2, d, deps=[t1])
            for i in pl.range(2):
                for j in pl.range(m):
                    d = self.k(a, d)
            return d

    after = assert_pass(passes.CountTaskStatements(), Before, Expected)
    assert after.get("main").task_statements == 3
