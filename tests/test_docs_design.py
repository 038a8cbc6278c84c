"""docs/design.md's layer list names every package and module of cutemma/ (issue 32): a
layer added to the code and not to the page fails here."""

from __future__ import annotations

import re
from pathlib import Path

import cutemma

ROOT = Path(__file__).resolve().parent.parent
PKG = Path(cutemma.__file__).parent


def _layer_block() -> str:
    text = (ROOT / "docs" / "design.md").read_text()
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    return section


def test_every_package_and_module_is_a_layer_line():
    section = _layer_block()
    listed = set(re.findall(r"^([A-Za-z_][\w.]*?)/?(?=:|\s)", section, flags=re.M))
    present = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    present |= {p.name for p in PKG.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    missing = sorted(present - listed)
    assert not missing, f"docs/design.md's layer list leaves out {missing}"
    stale = sorted(n for n in listed if n.endswith(".py") and n not in present)
    assert not stale, f"docs/design.md lists modules that are gone: {stale}"


def test_every_kernels_module_is_a_line_of_its_block():
    """The kernels block lists each module and package of cutemma/kernels as kernels/NAME."""
    section = _layer_block()
    listed = set(re.findall(r"^kernels/([\w.]+?)/?(?=\s)", section, flags=re.M))
    kdir = PKG / "kernels"
    present = {p.name for p in kdir.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    present |= {p.name for p in kdir.glob("*.py") if p.name != "__init__.py"}
    assert sorted(present - listed) == [], "docs/design.md's kernels block leaves these out"
    assert sorted(listed - present) == [], (
        "docs/design.md's kernels block names modules that are gone"
    )
