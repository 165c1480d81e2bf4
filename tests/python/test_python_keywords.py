"""One list of Python keywords in the C++ core (ir::IsPythonKeyword, src/ir/printer_support.cpp):
it is Python's own `keyword.kwlist`, the printer never names a Var with one, and the parser's
call-run scanner (src/bindings/bind_call_runs.cpp) leaves a line naming one to the ast path."""

import keyword

from pypto import ir

RUN = ["    a = self.k(x, y)\n", "    b = self.k(a, y)\n", "    c = self.k(b, y)\n", "    d = self.k(c, y)\n"]


def test_the_printer_renames_every_python_keyword_and_nothing_else():
    index = ir.ScalarType.make(ir.DataType.INDEX)
    for kw in keyword.kwlist:
        assert ir.python_print(ir.Var.make(kw, index)) == kw + "_", kw
    for soft in ("match", "case", "type", "x"):
        assert ir.python_print(ir.Var.make(soft, index)) == soft


def test_the_call_run_scanner_refuses_a_keyword_as_target_or_argument():
    assert list(ir.scan_call_runs(RUN, 1, 2)[1]) == [1]
    for kw in keyword.kwlist:
        as_target = list(RUN)
        as_target[1] = "    %s = self.k(a, y)\n" % kw
        as_arg = list(RUN)
        as_arg[1] = "    b = self.k(a, %s)\n" % kw
        for lines in (as_target, as_arg):
            assert list(ir.scan_call_runs(lines, 1, 2)[1]) == [3], (kw, lines[1])
