"""No import circle anywhere in cutemma (issue 32): every module of every subpackage read with
ast, its imports drawn as a graph of cutemma's modules, the graph searched for a cycle.

What counts as an import: ``import m`` and ``from m import n`` anywhere in a file (inside
functions too: a function-local import is still an arrow, only a later one), and
``importlib.import_module("cutemma.x")`` with a literal string. What does not: imports under
``if TYPE_CHECKING:`` (never run), and the package ``__init__`` that Python runs before a
submodule (every package re-exports its own modules; counting that arrow would make each
package a circle with its members).

``from pkg import name`` where ``pkg`` loads ``name`` lazily (its ``_LAZY`` table) is an arrow
to ``pkg`` and to the module that defines ``name``, as that is what the statement runs.

Run as a script to list every circle (each strongly connected set of modules):
``python tests/test_import_graph.py``.
"""

from __future__ import annotations

import ast
import doctest
from pathlib import Path

import cutemma

ROOT = Path(cutemma.__file__).parent
PKG = "cutemma"


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    return ".".join([PKG, *(p for p in rel.parts if p != "__init__")])


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST):
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (its ``else`` does run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
        else:
            stack.extend(ast.iter_child_nodes(node))


def _lazy_table(path: Path) -> dict[str, str]:
    """A package's ``_LAZY`` table (name -> module relative to the package), read without
    importing it: the table is a dict of string literals, built with ``dict.fromkeys``."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
            "_LAZY"
        ]:
            code = compile(ast.Expression(node.value), str(path), "eval")
            return eval(code, {"__builtins__": {}, "dict": dict})
    return {}


def _resolve(module: str, level: int, importer: str, is_package: bool) -> str:
    """The absolute name of ``from <level dots><module> import ...`` written in ``importer``."""
    if level == 0:
        return module
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def imports_of(
    path: Path, name: str, mods: dict[str, Path], lazy: dict[str, dict[str, str]]
) -> set[str]:
    """The cutemma modules the file ``path`` (module ``name``) imports, anywhere in it."""
    out: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in _nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in mods}
        elif isinstance(node, ast.ImportFrom):
            src = _resolve(node.module or "", node.level, name, is_package)
            for a in node.names:
                if f"{src}.{a.name}" in mods:
                    out.add(f"{src}.{a.name}")
                elif src in mods:
                    out.add(src)
                    target = lazy.get(src, {}).get(a.name)
                    if target is not None and f"{src}.{target}" in mods:
                        out.add(f"{src}.{target}")
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in mods
        ):
            out.add(node.args[0].value)
    return out - {name}


def import_graph() -> dict[str, set[str]]:
    """cutemma's modules, each with the cutemma modules it imports."""
    mods = _modules()
    lazy = {m: _lazy_table(p) for m, p in mods.items() if p.name == "__init__.py"}
    return {m: imports_of(p, m, mods, lazy) for m, p in mods.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as a list of modules (first == last), or None.

    >>> find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}})
    ['a', 'b', 'c', 'a']
    >>> find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
    True
    >>> find_cycle({"a": {"a"}})
    ['a', 'a']
    """
    state: dict[str, int] = {}  # 1: on the current path, 2: finished, no cycle through it
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n) :] + [n]
            if n not in state and (found := visit(n)):
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every set of modules that import each other, directly or around (Tarjan's strongly
    connected components of more than one module, or of one that imports itself), sorted.

    >>> circles({"a": {"b"}, "b": {"a", "c"}, "c": {"d"}, "d": {"c"}, "e": {"a"}})
    [['a', 'b'], ['c', 'd']]
    >>> circles({"a": {"b"}, "b": set()})
    []
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sorted(out)


def test_no_import_cycle_in_cutemma():
    graph = import_graph()
    assert len(graph) > 100  # the walk saw the whole package, kernels included
    assert any(m.startswith("cutemma.kernels.sm90.") for m in graph)
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in cutemma: " + " -> ".join(cycle)


def test_cycle_finders_examples():
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    results = [
        runner.run(t)
        for f in (find_cycle, circles)
        for t in finder.find(f, f.__name__, globs=globals())
    ]
    assert sum(r.attempted for r in results) >= 5  # the examples were found and run
    assert sum(r.failed for r in results) == 0


def test_walk_counts_local_and_literal_imports_not_type_checking(tmp_path):
    # a circle could hide in a function, or behind importlib; TYPE_CHECKING never runs
    f = tmp_path / "m.py"
    f.write_text(
        "from typing import TYPE_CHECKING\n"
        "import importlib\n"
        "if TYPE_CHECKING:\n"
        "    from cutemma.viz import svg\n"
        "else:\n"
        "    from cutemma.viz import latex\n"
        "def f():\n"
        "    from cutemma.layout.swizzle import Swizzle\n"
        "    from cutemma.copy import make_copy_atom\n"
        "    importlib.import_module('cutemma.emit.dsl')\n"
    )
    mods = _modules()
    lazy = {"cutemma.copy": _lazy_table(mods["cutemma.copy"])}
    assert imports_of(f, "cutemma.m", mods, lazy) == {
        "cutemma.viz.latex",
        "cutemma.layout.swizzle",
        "cutemma.copy",
        "cutemma.copy.catalog",  # where the lazily loaded make_copy_atom lives
        "cutemma.emit.dsl",
    }
    assert find_cycle({**import_graph(), "cutemma.errors": {"cutemma.display"}}) is None
    looped = {**import_graph(), "cutemma.errors": {"cutemma.layout.layout"}}
    assert find_cycle(looped) is not None  # layout.layout imports errors: now a circle


def test_relative_imports_resolve(tmp_path):
    f = tmp_path / "__init__.py"
    f.write_text("from . import swizzle\nfrom .layout import Layout\nfrom .. import errors\n")
    mods = _modules()
    assert imports_of(f, "cutemma.layout", mods, {}) == {
        "cutemma.layout.swizzle",
        "cutemma.layout.layout",
        "cutemma.errors",
    }


# cutemma.gemm's path, top down: call -> policy -> design -> family -> runtime (DESIGN.md).
# What a family may never import: the other family, and every step above the family.
KERNELS = "cutemma.kernels"
ABOVE_FAMILIES = ("dispatch", "torch_op", "call", "policy", "pick", "decode", "tuned", "tune",
                  "design", "report")  # fmt: skip
FAMILIES = ("sm80", "sm90")


def _under(module: str, names) -> bool:
    return any(module == f"{KERNELS}.{n}" or module.startswith(f"{KERNELS}.{n}.") for n in names)


def test_families_import_neither_each_other_nor_the_steps_above():
    bad = [
        f"{m} -> {d}"
        for m, deps in import_graph().items()
        for fam in FAMILIES
        if _under(m, (fam,))
        for d in sorted(deps)
        if _under(d, [f for f in FAMILIES if f != fam]) or _under(d, ABOVE_FAMILIES)
    ]
    assert not bad, "a kernel family imports another family or a step above it: " + "; ".join(bad)


def test_common_and_runtime_import_no_family_and_no_step_above():
    bad = [
        f"{m} -> {d}"
        for m, deps in import_graph().items()
        if _under(m, ("common", "runtime"))
        for d in sorted(deps)
        if _under(d, FAMILIES) or _under(d, ABOVE_FAMILIES)
    ]
    assert not bad, "common/ or runtime/ reaches up: " + "; ".join(bad)


if __name__ == "__main__":
    found = circles(import_graph())
    for c in found:
        print(" <-> ".join(c))
    print(f"{len(found)} circle(s)")
