"""cutemma/kernels has no import circle: every import of every module (function-local ones
included) read with ast, the module graph searched for a cycle (issue 20)."""

from __future__ import annotations

import ast
from pathlib import Path

import cutemma.kernels

ROOT = Path(cutemma.kernels.__file__).parent
PKG = "cutemma.kernels"


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join([PKG, *parts])


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _imports(path: Path, known: set[str]) -> set[str]:
    """The package's modules a file imports, anywhere in it (``from pkg import mod``
    names the module ``mod``; a name from a package's ``__init__`` names the package)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                if sub in known:
                    out.add(sub)
                elif node.module in known:
                    out.add(node.module)
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {m: _imports(p, set(mods)) - {m} for m, p in mods.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as a list of modules (first == last), or None.

    >>> find_cycle({"a": {"b"}, "b": {"a"}})
    ['a', 'b', 'a']
    >>> find_cycle({"a": {"b"}, "b": set()}) is None
    True
    """
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n) :] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_no_import_cycle_in_kernels():
    cycle = find_cycle(_graph())
    assert cycle is None, "import cycle in cutemma/kernels: " + " -> ".join(cycle)


def test_graph_sees_function_local_imports(tmp_path):
    # the walk must see imports inside functions, or a circle could hide there
    f = tmp_path / "m.py"
    f.write_text(
        "def f():\n    from cutemma.kernels import tuned\n"
        "    from cutemma.kernels.sm90.host import prepare\n"
    )
    known = set(_modules())
    assert _imports(f, known) == {f"{PKG}.tuned", f"{PKG}.sm90.host"}
    assert find_cycle({**_graph(), f"{PKG}.tuned": {f"{PKG}.dispatch"}}) is not None


# what a family may never import: the other family, and every step above the family in
# cutemma.gemm's path (call -> policy -> design -> family -> runtime; DESIGN.md)
ABOVE_FAMILIES = ("dispatch", "torch_op", "call", "policy", "pick", "decode", "tuned", "tune",
                  "design", "explain")  # fmt: skip
FAMILIES = ("sm80", "sm90")


def test_families_import_neither_each_other_nor_the_steps_above():
    g = _graph()
    for m, deps in g.items():
        for fam in FAMILIES:
            if m == f"{PKG}.{fam}" or m.startswith(f"{PKG}.{fam}."):
                other = [f for f in FAMILIES if f != fam][0]
                bad = sorted(
                    d
                    for d in deps
                    if d.startswith(f"{PKG}.{other}") or d in {f"{PKG}.{a}" for a in ABOVE_FAMILIES}
                )
                assert bad == [], f"{m} imports {bad}"


def test_common_and_runtime_import_no_family_and_no_step_above():
    g = _graph()
    for m, deps in g.items():
        if m.startswith((f"{PKG}.common", f"{PKG}.runtime")):
            bad = sorted(
                d
                for d in deps
                if d.startswith(tuple(f"{PKG}.{f}" for f in FAMILIES))
                or d in {f"{PKG}.{a}" for a in ABOVE_FAMILIES}
            )
            assert bad == [], f"{m} imports {bad}"
