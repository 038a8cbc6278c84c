"""Kernel text as templates with named holes: the generated CUDA C++ reads top to bottom in
the Python source, and each hole is filled by a small renderer.

A hole is ``$name`` (or ``${name}`` next to other letters): ``$`` never occurs in CUDA C++,
so the C++ braces stay as they are (no doubling as with ``str.format``). A hole alone on its
line takes a multi-line value, every line indented to the hole's column (as
:func:`cutemma.cuda.source.indent` does: blank lines stay empty); an empty value removes
that line, so optional parts (a cluster's sync, pingpong's hand-over) are holes whose
renderer returns "" when they do not apply.

>>> print(fill("if (x) {\\n  $body\\n}$tail", body="a = 1;\\nb = 2;", tail=""))
if (x) {
  a = 1;
  b = 2;
}
>>> fill("int n = ${count}u;", count=4)
'int n = 4u;'
>>> fill("$a and $b", a=1)
Traceback (most recent call last):
    ...
cutemma.errors.TiledMmaError: kernel template: no value for hole(s) b; give every hole one
"""

from __future__ import annotations

import re

from cutemma.errors import TiledMmaError

_HOLE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
_ALONE = re.compile(r"^([ \t]*)\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))[ \t]*$")


def fill(template: str, **holes: object) -> str:
    """``template`` with every ``$hole`` replaced by ``str(holes[hole])`` (see the module doc
    for holes alone on a line). Raises TiledMmaError naming holes without a value or values
    without a hole (a renderer and its template out of step).

    >>> fill("  $x\\n", x="p;\\n\\nq;")
    '  p;\\n\\n  q;\\n'
    """
    used = {a or b for a, b in _HOLE.findall(template)}
    missing, extra = used - holes.keys(), holes.keys() - used
    if missing or extra:
        what = []
        if missing:
            what.append(f"no value for hole(s) {', '.join(sorted(missing))}; give every hole one")
        if extra:
            what.append(f"value(s) {', '.join(sorted(extra))} have no hole; remove them")
        raise TiledMmaError("kernel template: " + "; ".join(what))
    out = []
    for line in template.split("\n"):
        alone = _ALONE.match(line)
        if alone:
            pad, name = alone.group(1), alone.group(2) or alone.group(3)
            value = str(holes[name])
            if value == "":
                continue  # an optional part that does not apply: no line at all
            out.extend(pad + v if v.strip() else "" for v in value.splitlines())
        else:
            out.append(_HOLE.sub(lambda m: str(holes[m.group(1) or m.group(2)]), line))
    return "\n".join(out)
