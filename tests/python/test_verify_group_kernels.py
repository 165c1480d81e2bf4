"""A Group that StampGroupKernels cannot stamp (two kernels of one core type, a call to a
non-kernel, no kernel at all) is refused by VerifyOrchestrationProgram where it is submitted,
with the problem the pass found (GroupKernelsProblemOf): one decision, reported once."""

import pytest

import pypto.language as pl
from pypto import codegen
from pypto.errors import PyptoError


def _program(group_body: str):
    src = f'''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV)
    def act(self, c: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = pl.store(pl.exp(pl.load(c, [0, 0], [16, 16])), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.AIV)
    def act2(self, c: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = pl.store(pl.exp(pl.load(c, [0, 0], [16, 16])), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def helper(self, c: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = self.act(c, out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def grp(self, c: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
{group_body}
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, c: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = self.grp(c, out)
        return out
'''
    return pl.parse_program(src)


@pytest.mark.parametrize("body, message, help_text", [
    ("        out = self.act(c, out)\n        out = self.act2(c, out)",
     "Group function 'grp' calls two AIV kernels ('act' and 'act2')",
     "a Group body calls exactly one AIC kernel and one AIV kernel"),
    ("        out = self.helper(c, out)",
     "Group function 'grp' calls 'helper', which is not a kernel",
     "a Group body calls one AIC kernel and one AIV kernel"),
    ("        x = 1",
     "Group function 'grp' must call an AIC kernel and/or an AIV kernel",
     "AIC: FunctionType.AIC or an InCore kernel using Left/Right/Acc/Mat tiles; AIV otherwise"),
])
def test_an_unstampable_group_is_a_located_error_at_its_definition(body, message, help_text):
    prog = _program(body)
    prepared = codegen.run_pipeline(prog)
    assert prepared.get("grp").group_aic == "" and prepared.get("grp").group_aiv == ""   # no stamp
    with pytest.raises(PyptoError) as e:
        codegen.generate_orchestration(prepared, "main", run_passes=False)
    text = str(e.value)
    assert message in text and help_text in text
    assert "<string>:23:5" in text   # the Group function (its span), as before
