"""Rules of issue 11 checked on the C++ sources (skipped outside a source checkout):
- node, op and enum switches in the code generators, the passes and the IR have no `default:`
  label, so -Wswitch names every switch a new node kind / op / dtype must be added to;
- every pass states its contract in full: required, produced and invalidated properties (an
  empty `/*invalidated=*/{}` says "breaks nothing" where a reader sees it);
- one TaskId lowering for L2 and HOST (only it prints a guarded dependency entry);
- one naming convention in the emitters (member functions snake_case, PascalCase only for free
  functions, constructors and the generators' `Generate()`), one C++ reserved-word table;
- the code generators hold no IR walk of their own (an analysis is a pass) and raise no user
  error (VerifyOrchestrationProgram / VerifyHostProgram / VerifyKernelProgram, passes in
  src/transforms, refuse a program before a backend prints it; a backend only raises
  InternalError for a broken precondition);
- no string-keyed attr is a protocol between passes and code generators for what is now a typed
  field (`iter_arg_*` carry attrs, `compiler_manual_dep_edges`, `manual_dep_edges`, the scope
  task options, a loop's chunk request, an import's peer base), and the
  code generators read no attr key beyond a known list (op options the user writes);
- tests and bindings include no private header from src/ (only include/pypto/... and their own
  helpers)."""

from __future__ import annotations

import os
import re

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SRC = os.path.join(ROOT, "src")

pytestmark = pytest.mark.skipif(not os.path.isdir(os.path.join(SRC, "codegen")), reason="no source checkout")


def _sources(*dirs):
    for d in dirs:
        for base, _subdirs, files in os.walk(os.path.join(SRC, d)):
            for f in sorted(files):
                if f.endswith((".cpp", ".h")):
                    path = os.path.join(base, f)
                    with open(path, encoding="utf-8") as fh:
                        yield os.path.relpath(path, ROOT), fh.read().splitlines()


def _code(line: str) -> str:
    """The line without its // comment and string literals."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    return line.split("//", 1)[0]


def _hits(pattern: str, *dirs, raw: bool = False):
    rx = re.compile(pattern)
    return ["%s:%d: %s" % (path, i + 1, line.strip())
            for path, lines in _sources(*dirs) for i, line in enumerate(lines)
            if rx.search(line if raw else _code(line))]


def test_no_default_label_in_codegen_transforms_and_ir_switches():
    assert _hits(r"^\s*default\s*:", "codegen", "transforms", "ir") == []


def test_no_user_error_site_in_the_code_generators():
    assert _hits(r"\bPYPTO_USER_CHECK\b|\bUserError\b|\braise_user_error\b|\bRenderUserError\b", "codegen") == []


def test_no_ir_walk_in_the_code_generators():
    # "No analysis or fixpoint lives in src/codegen": a generator prints the statements it is
    # handed, in order; a separate walk over the IR (an IRVisitor / IRMutator) is an analysis,
    # which belongs in a pass that stamps its result.
    assert _hits(r"\b(IRVisitor|IRMutator)\b", "codegen") == []
    assert _hits(r"\b(IRVisitor|IRMutator)\b", "transforms") != []   # the pattern sees the walkers


def test_the_kernel_generator_reads_kernel_stamps_not_their_analyses():
    # The kernel passes' analyses (what a pass stamps, callable for its property check) are not
    # called from src/codegen: the generator reads ForStmt::inplace_carries / lent_inits and
    # Call::shares_source_tile / reads_in_place instead.
    analyses = r"\b(InPlaceCarriesOf|InPlaceMatmulLoadsOf|LentLoopInitsOf|InPlaceMatmulLoads|VarUses)\s*\("
    assert _hits(analyses, "codegen") == []
    assert len(_hits(analyses, "transforms")) >= 3   # the pattern sees the analyses where they live


def test_no_string_keyed_attr_for_typed_pass_results():
    assert _hits(r'"(iter_arg_[a-z_]*|compiler_manual_dep_edges|manual_dep_edges)', "codegen", raw=True) == []
    assert _hits(r'"(iter_arg_[a-z_]*|compiler_manual_dep_edges)', "transforms", raw=True) == []


def test_no_string_keyed_attr_for_typed_user_options():
    # Scope task options (ScopeStmt::options), a loop's chunk request (ForStmt::chunk) and an
    # import's peer base (Call::peer_base) are typed: no pass, code generator or IR file reads or
    # writes them as attrs (the IR constructors name the old keys only to refuse them).
    keys = r'"(deps|predicate|no_dep_args|sync_start|allow_early_resolve|chunk|chunk_policy)"'
    access = r'(attr_get<[^>]*>\(\s*[\w.>-]*attrs,\s*|attrs(\.|->)(count|at|find|erase)\(\s*|attrs\[\s*)'
    assert _hits(access + keys, "codegen", "transforms", "ir", raw=True) == []
    assert _hits(access + r'"base"', "codegen", raw=True) == []
    assert _hits(r'attrs\["base"\]\s*=', "transforms", raw=True) == []
    # The scan sees an access of this form (an untyped scope option, still an attr).
    assert _hits(access + r'"core_num"', "transforms", raw=True) != []


def test_the_checks_see_the_sources():
    # The scan reads the tree it checks (a moved directory would make every rule pass vacuously).
    files = [p for p, _ in _sources("codegen", "transforms", "ir")]
    assert len(files) > 50 and "src/transforms/static_task_graph.cpp" in files and "src/ir/enums.cpp" in files
    assert _hits(r"\bPYPTO_USER_CHECK\b", "transforms") != []


# The attr keys the code generators read: options the user writes on an op (kept as the op's
# attrs by the parser and the passes). Pass results are typed fields (issue 11), never attrs: a
# new key here is a new protocol between layers: make it a typed field instead, or add it with
# its reason.
CODEGEN_ATTR_KEYS = {
    # op options written in the DSL
    "atomic", "axis", "cmp_type", "descending", "drop_dims", "init_value", "manual_dep", "mask_pattern", "message", "mode",
    "pad_value", "transpose",   # message: the text of an assert (system.assert)
}


def test_the_code_generators_read_only_known_attr_keys():
    rx = re.compile(r'attrs(?:\s*,\s*|\.(?:count|at|find)\(\s*)"([a-z_0-9]+)"|IntAttr\(\s*\w+\s*,\s*"([a-z_0-9]+)"')
    read = {}
    for path, lines in _sources("codegen"):
        for i, line in enumerate(lines):
            for m in rx.finditer(line.split("//", 1)[0]):
                read.setdefault(m.group(1) or m.group(2), "%s:%d" % (path, i + 1))
    assert "drop_dims" in read and "transpose" in read   # the scan sees what it should
    unknown = {k: where for k, where in read.items() if k not in CODEGEN_ATTR_KEYS}
    assert unknown == {}, "attr keys read by src/codegen that are no known op option: %s" % unknown


def _private_src_includes(*dirs):
    """`#include "..."` lines under `dirs` (relative to the root) that name a header in src/
    other than the including directory's own (a bindings helper may include a bindings header)."""
    rx = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
    hits = []
    for d in dirs:
        for base, _subdirs, files in os.walk(os.path.join(ROOT, d)):
            for f in sorted(files):
                if not f.endswith((".cpp", ".h")):
                    continue
                path = os.path.join(base, f)
                with open(path, encoding="utf-8") as fh:
                    for i, line in enumerate(fh):
                        m = rx.match(line)
                        if not m:
                            continue
                        target = os.path.normpath(os.path.join(base, m.group(1)))
                        private = "src/" in m.group(1) or (
                            os.path.isfile(target) and target.startswith(SRC + os.sep)
                            and os.path.dirname(target) != os.path.normpath(base))
                        if private:
                            hits.append("%s:%d: %s" % (os.path.relpath(path, ROOT), i + 1, line.strip()))
    return hits


def test_tests_and_bindings_include_no_private_src_header():
    # The rule of issue 11: what a test or a binding needs is a public header under include/pypto.
    assert os.path.isdir(os.path.join(ROOT, "tests", "cpp", "codegen"))   # the scan sees the tests
    assert _private_src_includes("tests/cpp", "src/bindings") == []


def test_every_pass_declares_required_produced_and_invalidated():
    # `Pass{"Name", required, produced, run, /*invalidated=*/{...}}`: the last field has a default,
    # so a pass could leave it out silently; the rule makes every contract say it.
    constructions, missing = 0, []
    for path, lines in _sources("transforms"):
        for i, line in enumerate(lines):
            if 'Pass{"' not in line or line.lstrip().startswith("//"):
                continue
            constructions += 1
            end = next(j for j in range(i, len(lines)) if re.search(r"\}\s*;[\s}]*$", _code(lines[j])))
            if "/*invalidated=*/" not in " ".join(lines[i:end + 1]):
                missing.append("%s:%d: %s" % (path, i + 1, line.strip()))
    assert constructions >= 30   # the scan sees the passes
    assert missing == []


def _class_names(*dirs):
    rx = re.compile(r"\b(?:class|struct)\s+([A-Z]\w*)")
    return {m.group(1) for _p, lines in _sources(*dirs) for line in lines for m in rx.finditer(_code(line))}


def test_emitter_member_functions_are_snake_case():
    # Issue 11: `emit_for`, `EmitFor` and `EmitDepArray` coexisted. Members are snake_case; a
    # PascalCase name inside a class is a constructor or the generator's entry point `Generate`.
    classes = _class_names("codegen") | _class_names("../include/pypto/codegen")
    allowed = classes | {"Generate"}
    member_decl = re.compile(r"^\s{2,}(?:(?:static|virtual|inline|explicit|const|constexpr)\s+)*"
                             r"(?:[\w:<>,*&]+\s+[*&]?)?([A-Z]\w*)\s*\(")
    out_of_class = re.compile(r"\b([A-Z]\w*)(?:<\w+>)?::~?([A-Za-z_]\w*)\s*\(")
    bad = []
    for path, lines in list(_sources("codegen")) + list(_sources("../include/pypto/codegen")):
        for i, line in enumerate(lines):
            code = _code(line)
            m = member_decl.match(code)
            if m and path.endswith(".h") and m.group(1) not in allowed and not m.group(1).isupper() \
                    and not code.lstrip().startswith("return"):   # not a macro, not a call
                bad.append("%s:%d: %s" % (path, i + 1, line.strip()))
            for owner, name in out_of_class.findall(code):
                if owner in classes and name[0].isupper() and name not in allowed:
                    bad.append("%s:%d: %s" % (path, i + 1, line.strip()))
    assert {"Emitter", "HostEmitter", "KernelEmitter", "CppWriter"} <= classes   # the scan sees the emitters
    assert bad == []


def test_one_cpp_reserved_word_table():
    # The emitters share one table (src/codegen/common/cpp_names.cpp, IsReservedCppName); a second
    # list of C++ keywords would drift from it.
    tables = sorted({path for path, lines in _sources("codegen", "transforms", "ir", "bindings")
                     for line in lines if re.search(r'"(alignas|constexpr|static_assert|reinterpret_cast)"', line)})
    assert tables == ["src/codegen/common/cpp_names.cpp"]


def test_one_task_id_lowering_prints_the_guarded_dependency():
    # Issue 11: L2 (orchestration/task_ids.cpp) and HOST (host/host_task_ids.cpp) each lowered
    # TaskIds. The guarded dependency entry `if (t.is_valid()) <sink>` is printed by the one
    # TaskIdLowering (src/codegen/common/task_id_lowering.cpp); L2 and HOST only supply the sink.
    printers = sorted({hit.split(":", 1)[0] for hit in _hits(r'is_valid\(\)', "codegen", raw=True)
                       if '"' in hit.split(": ", 1)[1].split("//", 1)[0]})
    assert printers == ["src/codegen/common/task_id_lowering.cpp"]


def test_every_runtime_helper_generated_code_calls_is_reserved():
    # A DSL local named after a runtime helper the generated code calls later (pto2_float_floordiv
    # for a float `//`, pto2_slice_extent for a slice in a long function) hid the function, and
    # the generated C++ did not compile: each helper must be in the one reserved table.
    with open(os.path.join(SRC, "codegen", "common", "cpp_names.cpp"), encoding="utf-8") as fh:
        table = fh.read()
    literal = re.compile(r'"(?:\\.|[^"\\])*"')
    helpers = {name for _path, lines in _sources("codegen") for line in lines if not line.lstrip().startswith("//")
               for text in literal.findall(line) for name in re.findall(r"\b(pto2_[a-z0-9_]+)", text)}
    assert {"pto2_floordiv", "pto2_slice_u32"} <= helpers   # the scan sees the printers' calls
    assert sorted(h for h in helpers if '"%s"' % h not in table) == []
