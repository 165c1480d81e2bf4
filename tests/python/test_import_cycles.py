"""The pypto package has no import cycle.

The test reads every module of the installed package with ``ast`` and builds the graph of its
imports. Both module-level imports and imports inside functions count (a function-level import
is still a dependency, only a later one); imports under ``if TYPE_CHECKING:`` do not (they
never run). An edge is an explicit import statement: ``from a.b import c`` depends on ``a.b.c``
when that is a module, else on ``a.b``. The implicit import of a parent package's
``__init__`` is not an edge (Python always runs it first; counting it would make every package
whose ``__init__`` re-exports a submodule a cycle with that submodule's own imports).
"""

from __future__ import annotations

import ast
import os

import pypto

# No exceptions: the CLI is one package (pypto/cli/) whose command modules import only its helpers.
_ALLOWED: set = set()


def _modules(root: str) -> dict:
    base = os.path.dirname(root)
    mods = {}
    for d, _dirs, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(d, f)
                name = os.path.relpath(path, base)[:-3].replace(os.sep, ".")
                mods[name[:-len(".__init__")] if name.endswith(".__init__") else name] = path
    return mods


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph(root: str) -> dict:
    """Module name -> set of package modules it imports (see the module doc for the rules)."""
    mods = _modules(root)
    graph = {}
    for name, path in mods.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        pkg = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        deps = set()
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name in mods)
                continue
            base = node.module or ""
            if node.level:
                parts = pkg.split(".")
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            for a in node.names:
                if "%s.%s" % (base, a.name) in mods:
                    deps.add("%s.%s" % (base, a.name))
                elif base in mods:
                    deps.add(base)
        deps.discard(name)
        graph[name] = deps
    return graph


def cycles(graph: dict) -> list:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_package_has_no_import_cycle():
    found = [c for c in cycles(import_graph(os.path.dirname(pypto.__file__))) if frozenset(c) not in _ALLOWED]
    assert not found, "import cycles in pypto: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_checker_finds_cycles(tmp_path):
    """The walker sees module-level, function-level and relative imports (so the test can fail)."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.sub import c\n")
    (pkg / "sub" / "c.py").write_text("from ..a import x\n")
    (pkg / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import e\n")
    (pkg / "e.py").write_text("import pkg.d\n")
    assert cycles(import_graph(str(pkg))) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
