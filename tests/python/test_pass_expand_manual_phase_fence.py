"""ExpandManualPhaseFence: in a manual scope, Submits of a pl.parallel loop that all depend on
one stable full TaskId array depend on a single task_dummy barrier instead, when that has
fewer edges (DSL Before / Expected). The pass requires CallDirectionsDerived, so each Before
is the DeriveCallDirections output of the program written here."""

import pypto.language as pl
from pypto.ir import passes

from pass_test_util import assert_pass


def test_phase_fence_of_an_array_carry_goes_through_one_barrier():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, row: pl.Scalar[pl.INDEX],
              out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
            out2 = pl.store(pl.load(out, [row, 0], [16, 16]), [row, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
            with pl.manual_scope():
                prev = None
                for phase in pl.range(3):
                    for b in pl.parallel(4):
                        out, prev = pl.submit(self.k, b * 16, out, deps=[prev])
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, row: pl.Scalar[pl.INDEX],
              out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
            out2 = pl.store(pl.load(out, [row, 0], [16, 16]), [row, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
            with pl.manual_scope():
                prev = pl.system.task_invalid()
                for phase, (out_1, prev_1) in pl.range(0, 3, 1, init_values=(out, prev)):
                    prev_fence = pl.system.task_dummy(deps=[prev_1])
                    for b, (out_2, prev_2) in pl.parallel(0, 4, 1, init_values=(out_1, prev_1)):
                        out_3, prev_3 = pl.submit(self.k, b * 16, out_2, arg_directions=[pl.Scalar, pl.InOut],
                                                  deps=[prev_fence])
                        out_4, prev_4 = pl.yield_(out_3, prev_3)
                    out_5, prev_5 = pl.yield_(out_4, prev_4)
            return out_5

    assert_pass(passes.ExpandManualPhaseFence(), passes.DeriveCallDirections()(Before), Expected)


def test_stable_task_id_array_dependency_goes_through_one_barrier():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, row: pl.Scalar[pl.INDEX],
              out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
            out2 = pl.store(pl.load(out, [row, 0], [16, 16]), [row, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
            with pl.manual_scope():
                tids = pl.array.create(4, pl.TASK_ID)
                for i in pl.range(4):
                    out, tid = pl.submit(self.k, i * 16, out)
                    tids[i] = tid
                for b in pl.parallel(4):
                    out, _ = pl.submit(self.k, b * 16, out, deps=[tids])
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, row: pl.Scalar[pl.INDEX],
              out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
            out2 = pl.store(pl.load(out, [row, 0], [16, 16]), [row, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
            with pl.manual_scope():
                tids = pl.array.create(4, pl.TASK_ID)
                for i, (out_1, tids_1) in pl.range(0, 4, 1, init_values=(out, tids)):
                    out_2, tid = pl.submit(self.k, i * 16, out_1, arg_directions=[pl.Scalar, pl.InOut])
                    tids_2 = pl.array.update_element(tids_1, i, tid)
                    out_3, tids_3 = pl.yield_(out_2, tids_2)
                tids_fence = pl.system.task_dummy(deps=[tids_3])
                for b, (out_4,) in pl.parallel(0, 4, 1, init_values=(out_3,)):
                    out_5, _ = pl.submit(self.k, b * 16, out_4, arg_directions=[pl.Scalar, pl.InOut],
                                         deps=[tids_fence])
                    out_6 = pl.yield_(out_5)
            return out_6

    assert_pass(passes.ExpandManualPhaseFence(), passes.DeriveCallDirections()(Before), Expected)


def test_unprofitable_fence_keeps_the_direct_dependencies():
    # 4 producers, 1 consumer: 4 direct edges < 4 + 1 through a barrier.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, row: pl.Scalar[pl.INDEX],
              out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
            out2 = pl.store(pl.load(out, [row, 0], [16, 16]), [row, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
            with pl.manual_scope():
                tids = pl.array.create(4, pl.TASK_ID)
                for i in pl.range(4):
                    out, tid = pl.submit(self.k, i * 16, out)
                    tids[i] = tid
                for b in pl.parallel(1):
                    out, _ = pl.submit(self.k, b * 16, out, deps=[tids])
            return out

    derived = passes.DeriveCallDirections()(Before)
    assert_pass(passes.ExpandManualPhaseFence(), derived, derived)


def test_nested_parallel_phases_go_through_one_barrier_before_the_outer_loop():
    # range > parallel(2) > parallel(3): every inner read of the carry is the range's 6 slots, so
    # one barrier before the outer pl.parallel serves all 6 inner tasks (12 edges, not 36).
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, row: pl.Scalar[pl.INDEX],
              out: pl.InOut[pl.Tensor[[96, 16], pl.FP32]]) -> pl.Tensor[[96, 16], pl.FP32]:
            out2 = pl.store(pl.load(out, [row, 0], [16, 16]), [row, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.InOut[pl.Tensor[[96, 16], pl.FP32]]) -> pl.Tensor[[96, 16], pl.FP32]:
            with pl.manual_scope():
                prev = None
                for phase in pl.range(3):
                    for o in pl.parallel(2):
                        for b in pl.parallel(3):
                            out, prev = pl.submit(self.k, (o * 3 + b) * 16, out, deps=[prev])
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, row: pl.Scalar[pl.INDEX],
              out: pl.InOut[pl.Tensor[[96, 16], pl.FP32]]) -> pl.Tensor[[96, 16], pl.FP32]:
            out2 = pl.store(pl.load(out, [row, 0], [16, 16]), [row, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.InOut[pl.Tensor[[96, 16], pl.FP32]]) -> pl.Tensor[[96, 16], pl.FP32]:
            with pl.manual_scope():
                prev = pl.system.task_invalid()
                for phase, (out_1, prev_1) in pl.range(0, 3, 1, init_values=(out, prev)):
                    prev_fence = pl.system.task_dummy(deps=[prev_1])
                    for o, (out_2, prev_2) in pl.parallel(0, 2, 1, init_values=(out_1, prev_1)):
                        for b, (out_3, prev_3) in pl.parallel(0, 3, 1, init_values=(out_2, prev_2)):
                            out_4, prev_4 = pl.submit(self.k, (o * 3 + b) * 16, out_3,
                                                      arg_directions=[pl.Scalar, pl.InOut], deps=[prev_fence])
                            out_5, prev_5 = pl.yield_(out_4, prev_4)
                        out_6, prev_6 = pl.yield_(out_5, prev_5)
                    out_7, prev_7 = pl.yield_(out_6, prev_6)
            return out_7

    assert_pass(passes.ExpandManualPhaseFence(), passes.DeriveCallDirections()(Before), Expected)


def test_a_chain_in_each_iteration_starts_from_the_barrier():
    # The inner loop is a pl.range: only its first iteration reads the phase before (its later
    # ones the tasks before them), and its one-TaskId carry cannot start from the range's 2
    # slots (the verifiers refused it): the chain starts from the barrier instead.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, row: pl.Scalar[pl.INDEX],
              out: pl.InOut[pl.Tensor[[96, 16], pl.FP32]]) -> pl.Tensor[[96, 16], pl.FP32]:
            out2 = pl.store(pl.load(out, [row, 0], [16, 16]), [row, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.InOut[pl.Tensor[[96, 16], pl.FP32]]) -> pl.Tensor[[96, 16], pl.FP32]:
            with pl.manual_scope():
                prev = None
                for phase in pl.range(3):
                    for o in pl.parallel(2):
                        for b in pl.range(3):
                            out, prev = pl.submit(self.k, (o * 3 + b) * 16, out, deps=[prev])
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, row: pl.Scalar[pl.INDEX],
              out: pl.InOut[pl.Tensor[[96, 16], pl.FP32]]) -> pl.Tensor[[96, 16], pl.FP32]:
            out2 = pl.store(pl.load(out, [row, 0], [16, 16]), [row, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.InOut[pl.Tensor[[96, 16], pl.FP32]]) -> pl.Tensor[[96, 16], pl.FP32]:
            with pl.manual_scope():
                prev = pl.system.task_invalid()
                for phase, (out_1, prev_1) in pl.range(0, 3, 1, init_values=(out, prev)):
                    prev_fence = pl.system.task_dummy(deps=[prev_1])
                    for o, (out_2, prev_2) in pl.parallel(0, 2, 1, init_values=(out_1, prev_1)):
                        for b, (out_3, prev_3) in pl.range(0, 3, 1, init_values=(out_2, prev_fence)):
                            out_4, prev_4 = pl.submit(self.k, (o * 3 + b) * 16, out_3,
                                                      arg_directions=[pl.Scalar, pl.InOut], deps=[prev_3])
                            out_5, prev_5 = pl.yield_(out_4, prev_4)
                        out_6, prev_6 = pl.yield_(out_5, prev_5)
                    out_7, prev_7 = pl.yield_(out_6, prev_6)
            return out_7

    assert_pass(passes.ExpandManualPhaseFence(), passes.DeriveCallDirections()(Before), Expected)


_K96 = '''
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, row: pl.Scalar[pl.INDEX],
          out: pl.InOut[pl.Tensor[[96, 16], pl.FP32]]) -> pl.Tensor[[96, 16], pl.FP32]:
        out2 = pl.store(pl.load(out, [row, 0], [16, 16]), [row, 0], out)
        return out
'''


def _program(name, main):
    return pl.parse_program("import pypto.language as pl\n\n@pl.program\nclass %s:%s\n%s" % (name, _K96, main),
                            "phase_fence.py")


def test_an_iteration_that_keeps_the_phase_before_keeps_the_barrier():
    # range > parallel(2) > if: parallel(3): iteration 0 keeps prev, the range's 6 slots, which
    # its 3 slots cannot hold (refused before); it keeps the barrier instead (one TaskId,
    # broadcast into its 3 slots), and the barrier waits on exactly those 6.
    before = _program("Before", '''
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.InOut[pl.Tensor[[96, 16], pl.FP32]]) -> pl.Tensor[[96, 16], pl.FP32]:
        with pl.manual_scope():
            prev = None
            for phase in pl.range(3):
                for o in pl.parallel(2):
                    if o > 0:
                        for b in pl.parallel(3):
                            out, prev = pl.submit(self.k, (o * 3 + b) * 16, out, deps=[prev])
        return out
''')
    expected = _program("Expected", '''
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.InOut[pl.Tensor[[96, 16], pl.FP32]]) -> pl.Tensor[[96, 16], pl.FP32]:
        with pl.manual_scope():
            prev = pl.system.task_invalid()
            for phase, (out_1, prev_1) in pl.range(0, 3, 1, init_values=(out, prev)):
                prev_fence = pl.system.task_dummy(deps=[prev_1])
                for o, (out_2, prev_2) in pl.parallel(0, 2, 1, init_values=(out_1, prev_1)):
                    if o > 0:
                        for b, (out_3, prev_3) in pl.parallel(0, 3, 1, init_values=(out_2, prev_2)):
                            out_4, prev_4 = pl.submit(self.k, (o * 3 + b) * 16, out_3,
                                                      arg_directions=[pl.Scalar, pl.InOut], deps=[prev_fence])
                            out_5, prev_5 = pl.yield_(out_4, prev_4)
                        out_6, prev_6 = pl.yield_(out_5, prev_5)
                    else:
                        out_6, prev_6 = pl.yield_(out_2, prev_fence)
                    out_7, prev_7 = pl.yield_(out_6, prev_6)
                out_8, prev_8 = pl.yield_(out_7, prev_7)
        return out_8
''')
    assert_pass(passes.ExpandManualPhaseFence(), passes.DeriveCallDirections()(before), expected)


def test_an_inner_iteration_that_keeps_the_phase_before_keeps_the_barrier():
    # range > parallel(2) > parallel(3) > if: submit: the inner iteration that skips keeps the
    # barrier, not the range's 6 slots (refused before: "one TaskId per iteration, but an
    # iteration ends with an array of 6"). Kept yields force the barrier: no profitability test.
    before = _program("Before", '''
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.InOut[pl.Tensor[[96, 16], pl.FP32]]) -> pl.Tensor[[96, 16], pl.FP32]:
        with pl.manual_scope():
            prev = None
            for phase in pl.range(3):
                for o in pl.parallel(2):
                    for b in pl.parallel(3):
                        if b > 0:
                            out, prev = pl.submit(self.k, (o * 3 + b) * 16, out, deps=[prev])
        return out
''')
    expected = _program("Expected", '''
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.InOut[pl.Tensor[[96, 16], pl.FP32]]) -> pl.Tensor[[96, 16], pl.FP32]:
        with pl.manual_scope():
            prev = pl.system.task_invalid()
            for phase, (out_1, prev_1) in pl.range(0, 3, 1, init_values=(out, prev)):
                prev_fence = pl.system.task_dummy(deps=[prev_1])
                for o, (out_2, prev_2) in pl.parallel(0, 2, 1, init_values=(out_1, prev_1)):
                    for b, (out_3, prev_3) in pl.parallel(0, 3, 1, init_values=(out_2, prev_2)):
                        if b > 0:
                            out_4, prev_4 = pl.submit(self.k, (o * 3 + b) * 16, out_3,
                                                      arg_directions=[pl.Scalar, pl.InOut], deps=[prev_fence])
                            out_5, prev_5 = pl.yield_(out_4, prev_4)
                        else:
                            out_5, prev_5 = pl.yield_(out_3, prev_fence)
                        out_6, prev_6 = pl.yield_(out_5, prev_5)
                    out_7, prev_7 = pl.yield_(out_6, prev_6)
                out_8, prev_8 = pl.yield_(out_7, prev_7)
        return out_8
''')
    assert_pass(passes.ExpandManualPhaseFence(), passes.DeriveCallDirections()(before), expected)
