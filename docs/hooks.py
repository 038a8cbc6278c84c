"""MkDocs hooks: add the gallery pictures (drawn by cutemma at build time) and the gallery page.

Nothing generated is written into docs/: the pictures become site files directly, so a build
always shows what the current code draws.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.structure.files import File, Files

_DOCS = Path(__file__).resolve().parent
# draw with this checkout's cutemma (the API pages document its sources too), then gen_gallery
sys.path[:0] = [str(_DOCS.parent), str(_DOCS)]
import gen_gallery  # noqa: E402  (docs/ is not a package)


def gallery_page() -> str:
    """The Markdown of the gallery: every picture with its caption."""
    lines = [
        "# Gallery",
        "",
        "Every picture on this site is drawn by cutemma when the site is built",
        "(`docs/gen_gallery.py`; `python docs/gen_gallery.py OUTDIR` writes them as SVG files).",
        "In Jupyter the same objects draw themselves.",
        "",
    ]
    for name, (caption, _) in gen_gallery.GALLERY.items():
        lines += [f"## {caption}", "", f"![{caption}](img/gallery/{name}.svg)", ""]
    return "\n".join(lines)


def on_files(files: Files, config) -> Files:
    for name, svg in gen_gallery.pictures().items():
        files.append(File.generated(config, f"img/gallery/{name}.svg", content=svg))
    files.append(File.generated(config, "gallery.md", content=gallery_page()))
    return files
