"""``cutemma show`` for copy atoms: the CopyOperation, its traits and its S/D pictures.

``cutemma show SM75_U32x4_LDSM_N -p dtype=f16`` prints what the instruction is (PTX, source
and destination spaces), CuTe's bit layouts and the element layouts for the value type, and
the source/destination grids. ``-p thr=(32,4):(4,1) -p val=(1,8)`` composes a TiledCopy
(``make_tiled_copy``) first; ``-p smem=...`` adds its bank picture and conflict count;
``--svg FILE`` / ``--html FILE`` (hover a cell: its thread is outlined in both panels)
write the picture instead.

>>> import argparse
>>> ns = argparse.Namespace(name="UniversalCopy<uint64_t>", param=["dtype=f32"], no_grid=True,
...                         svg=None, html=None, latex=None)
>>> show_copy(ns)
UniversalCopy<uint64_t>  (universal, reg -> reg)
Operation
  ptx        (a C++ assignment)
  src        reg uint64_t[1]
  dst        reg uint64_t[1]
  note       dst = src: the compiler emits the load/store of that width
Traits (bits)
  thr_id     1:0
  src        (1,64):(0,1)
  dst        (1,64):(0,1)
  ref        (1,64):(0,1)
Atom (f32)
  src        (1,2):(0,1)
  dst        (1,2):(0,1)
  ref        (1,2):(0,1)
0
"""

from __future__ import annotations

import argparse

from cutemma.copy import CopyAtom, make_copy_atom
from cutemma.errors import CliError, CopyError
from cutemma.layout import Layout


def _default_dtype(name: str) -> str:
    """A value type the atom takes: 16-bit for the b16 matrix atoms, bytes for 8-bit ones."""
    if "U8" in name or "DU8" in name:
        return "u8"
    if "LDSM" in name or "STSM" in name or "MOVM" in name:
        return "f16"
    return "f32" if "uint8_t" not in name and "uint16_t" not in name else "u8"


def copy_show_text(atom: CopyAtom) -> str:
    """Operation, bit traits and element layouts of one copy atom (see the module example)."""
    op, t = atom.op, atom.traits
    lines = [
        f"{op.name}  ({op.family}, {op.kind})",
        "Operation",
        f"  ptx        {op.ptx or '(a C++ assignment)'}",
        f"  src        {op.src}",
        f"  dst        {op.dst}",
    ]
    if op.modifiers:
        lines.append(f"  modifiers  {' '.join(op.modifiers)}")
    if op.note:
        lines.append(f"  note       {op.note}")
    lines += [
        "Traits (bits)",
        f"  thr_id     {t.thr_id}",
        f"  src        {t.src_layout}",
        f"  dst        {t.dst_layout}",
        f"  ref        {t.ref_layout}",
    ]
    if t.val_id is not None:
        lines.append(f"  val_id     {t.val_id}")
    lines += [
        f"Atom ({atom.val_type.name})",
        f"  src        {atom.layout_src_tv}",
        f"  dst        {atom.layout_dst_tv}",
        f"  ref        {atom.layout_ref_tv}",
    ]
    return "\n".join(lines)


_COPY_WORDS = (
    "LDSM",
    "STSM",
    "MOVM",
    "CP_ASYNC",
    "TMEM_",
    "UTCCP",
    "Copy",
    "TMA_",
    "BULK_",
    "Shuffle",
)


def names_copy(name: str) -> bool:
    """Whether ``cutemma show NAME`` is about a copy atom: a copy catalog name, or a name of a
    copy form that the catalog refuses (it then gets the copy catalog's error).

    >>> names_copy("SM90_U32x1_STSM_N"), names_copy("SM80_U32x4_LDSM_N"), names_copy("SM61_DP2A")
    (True, True, False)
    """
    from cutemma.copy import is_copy_name

    return is_copy_name(name) or any(w in name for w in _COPY_WORDS)


def show_copy(args: argparse.Namespace) -> int:
    """Run ``cutemma show`` for a copy atom name (see the module text).

    >>> ns = argparse.Namespace(name="SM90_U32x1_STSM_N", param=None, no_grid=True, svg=None)
    >>> show_copy(ns)  # doctest: +ELLIPSIS
    SM90_U32x1_STSM_N  (sm90.stsm, reg -> smem)
    ...
    0
    """
    from cutemma.viz.copy import copy_html, copy_svg, copy_text

    if getattr(args, "thread", None) is not None:
        raise CliError(
            f"--thread {args.thread[:40]!r} draws one thread of a TiledMMA; {args.name} is a "
            "copy atom: its pictures show every thread (hover a cell in --html to pick one)"
        )
    params = {}
    for p in args.param or []:
        key, eq, value = p.partition("=")
        if not eq or key not in ("dtype", "thr", "val", "smem"):
            raise CopyError(
                f"parameter {p!r}: a copy atom takes -p dtype=f16, thr=L, val=L, smem=L"
            )
        if key in params:
            raise CopyError(f"parameter {key} given twice (-p {key}=...): give each key once")
        params[key] = value
    atom = make_copy_atom(args.name, params.get("dtype") or _default_dtype(args.name))
    obj = atom
    if "thr" in params:
        from cutemma.tiled import make_tiled_copy

        obj = make_tiled_copy(
            atom, Layout.parse(params["thr"]), Layout.parse(params.get("val", "1"))
        )
    smem = Layout.parse(params["smem"]) if "smem" in params else None
    if getattr(args, "svg", None):
        with open(args.svg, "w", encoding="utf-8") as f:
            f.write(copy_svg(obj, smem))
        print(f"wrote {args.svg}")
        return 0
    if getattr(args, "html", None):
        with open(args.html, "w", encoding="utf-8") as f:
            f.write(copy_html(obj, smem))
        print(f"wrote {args.html}")
        return 0
    if getattr(args, "latex", None):
        raise CopyError("copy atoms are drawn as SVG (--svg FILE) or HTML (--html FILE), not LaTeX")
    print(copy_show_text(atom))
    if obj is not atom:
        print(obj)
    if not args.no_grid or smem is not None:
        print()
        print(copy_text(obj, smem))
    return 0
