"""The docs site builds with warnings as errors (``mkdocs build --strict``), pictures included.

Needs the ``docs`` extra (``pip install -e ".[docs]"``); skips without it. The gallery script
itself needs only cutemma and is always tested.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS_EXTRA = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")


def _missing() -> list[str]:
    return [m for m in DOCS_EXTRA if importlib.util.find_spec(m.split(".")[0]) is None or (
        "." in m and importlib.util.find_spec(m) is None)]  # fmt: skip


def test_gallery_script_writes_every_picture(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_gallery.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    files = sorted(tmp_path.glob("*.svg"))
    assert len(files) >= 12
    for f in files:
        root = ET.fromstring(f.read_text())  # every picture is well-formed SVG
        assert root.tag.endswith("svg")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    missing = _missing()
    if missing:
        pytest.skip(f"the docs extra is not installed (no {', '.join(missing)}): "
                    'pip install -e ".[docs]"')  # fmt: skip
    out_dir = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    res = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "WARNING" not in res.stderr, res.stderr[-3000:]
    return out_dir


def test_site_builds_strict_with_every_page(site):
    pages = ["index.html"] + [
        f"{p}/index.html"
        for p in ("getting-started", "layout-algebra", "atoms", "tiled-mma", "descriptors",
                  "verification", "gemm", "printing", "gallery", "design", "api/layout",
                  "api/mma", "api/tiled", "api/smem", "api/viz")
    ]  # fmt: skip
    for page in pages:
        assert (site / page).is_file(), page


def test_gallery_pictures_are_in_the_site(site):
    gallery = (site / "gallery" / "index.html").read_text()
    pictures = sorted((site / "img" / "gallery").glob("*.svg"))
    assert len(pictures) >= 12
    for p in pictures:
        assert f"img/gallery/{p.name}" in gallery


def test_api_reference_shows_docstring_examples_as_code(site):
    html = (site / "api" / "layout" / "index.html").read_text()
    assert 'id="cutemma.layout.composition"' in html
    # doctest lines are fenced as code (pycon), never rendered as nested block quotes
    assert "<blockquote>" not in html
    assert '<span class="gp">&gt;&gt;&gt; </span>' in html


def test_doctest_fences_wrap_examples_only():
    pytest.importorskip(
        "griffe", reason='the docs extra is not installed: pip install -e ".[docs]"'
    )
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        from griffe_doctest import fence_doctests
    finally:
        sys.path.remove(str(ROOT / "docs"))
    text = "Intro.\n\n    >>> f(1)\n    2\n    >>> g()\n\nAfter, with a > quote."
    assert fence_doctests(text).splitlines() == [
        "Intro.",
        "",
        "    ```pycon",
        "    >>> f(1)",
        "    2",
        "    >>> g()",
        "    ```",
        "",
        "After, with a > quote.",
    ]


ROLE_TEXT = __import__("re").compile(r":(class|func|mod|data|meth|attr|exc|obj):(<code>|`)")


def test_api_reference_has_no_raw_roles(site):
    # issue 22: Sphinx roles were shown as text (43 places on 7 pages); now autorefs links
    raw, linked = [], 0
    for page in (site / "api").glob("*/index.html"):
        html = page.read_text()
        raw += [f"{page.parent.name}: {m.group(0)}" for m in ROLE_TEXT.finditer(html)]
        linked += html.count('<a class="autorefs autorefs-internal"')
    assert raw == []
    assert linked >= 20
    kernels = (site / "api" / "kernels" / "index.html").read_text()
    assert 'href="#cutemma.kernels.pick_config"><code>pick_config' in kernels  # :func:`pick_config`


def test_roles_become_optional_cross_references():
    pytest.importorskip(
        "griffe", reason='the docs extra is not installed: pip install -e ".[docs]"'
    )
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        from griffe_doctest import link_roles
    finally:
        sys.path.remove(str(ROOT / "docs"))
    text = "A :class:`~cutemma.errors.TmaError`, :meth:`Layout.parse`, :func:`f()`."
    out = link_roles(text, lambda n: "cutemma.layout." + n if n.startswith("Layout") else n)
    assert out == (
        'A <autoref identifier="cutemma.errors.TmaError" optional><code>TmaError</code>'
        '</autoref>, <autoref identifier="cutemma.layout.Layout.parse" optional><code>'
        'Layout.parse</code></autoref>, <autoref identifier="f" optional><code>f()</code>'
        "</autoref>."
    )
    assert ":class:" not in out and ":meth:" not in out


def test_home_page_picture_is_the_atom_its_code_builds(site):
    import re

    md = (ROOT / "docs" / "index.md").read_text()
    atom = re.search(r'make_mma_atom\("([^"]+)"\)', md).group(1)
    src = re.search(r"!\[[^\]]*\]\((img/gallery/[^)]+\.svg)\)", md).group(1)
    assert atom in (site / src).read_text()  # the SVG's title names the atom


def test_site_loads_no_web_fonts(site):
    for page in ("index.html", "api/layout/index.html"):
        html = (site / page).read_text()
        assert "fonts.googleapis.com" not in html and "fonts.gstatic.com" not in html
