"""``cutemma list`` and ``cutemma show``: the MMA and copy catalogs on the command line.

``cutemma list [--arch sm80] [--family int8]`` prints one row per operation and the
counts per architecture and family (``--family copy``, or a copy family such as ``ldsm``,
lists copy atoms); ``cutemma show NAME [-p key=value ...]`` prints
the Operation (PTX, registers), the traits (types, shape, ThrID, layouts) and the
atom's thread-value grids as :func:`cutemma.print_text` draws them (CuTe's ``print_latex``
picture: A is M x K, B is drawn K x N above C, C is M x N).

>>> import argparse
>>> parser = argparse.ArgumentParser(prog='cutemma')
>>> register(parser.add_subparsers())
>>> args = parser.parse_args(['list', '--arch', 'sm61'])
>>> args.run(args)
name       arch  family   MxNxK  D,A,B,C         ptx
---------  ----  -------  -----  --------------  ---------------
SM61_DP4A  sm61  sm61.dp  1x1x4  s32,s8,s8,s32   dp4a.s32.s32
SM61_DP2A  sm61  sm61.dp  1x1x2  s32,s16,s8,s32  dp2a.lo.s32.s32
<BLANKLINE>
2 operations: sm61.dp 2
0
"""

from __future__ import annotations

import argparse
import re
from collections import Counter

from cutemma.errors import AtomError
from cutemma.mma import MmaAtom, make_mma_atom, mma_ops, traits_of


def table_text(rows: list[list[str]]) -> str:
    """Left-aligned columns under a dashed rule (first row is the header).

    >>> print(table_text([['a', 'bb'], ['ccc', 'd']]))
    a    bb
    ---  --
    ccc  d
    """
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    rule = "  ".join("-" * w for w in widths)
    return "\n".join([lines[0], rule, *lines[1:]])


def run_list(args: argparse.Namespace) -> int:
    """Print the catalog (optionally one arch / family) and its counts.

    >>> run_list(argparse.Namespace(arch=None, family="sm80.f64"))  # doctest: +ELLIPSIS
    name                        arch  family    MxNxK  D,A,B,C          ptx
    ...
    SM80_8x8x4_F64F64F64F64_TN  sm80  sm80.f64  8x8x4  f64,f64,f64,f64  mma.sync.aligned.m8n8k4...
    <BLANKLINE>
    1 operations: sm80.f64 1
    0
    """
    from cutemma.cli.args import catalog_arch

    if _copy_family(args.family):
        return run_list_copy(args)
    ops = mma_ops(catalog_arch(args.arch) if args.arch else None, args.family)
    rows = [["name", "arch", "family", "MxNxK", "D,A,B,C", "ptx"]]
    for op in ops:
        t = traits_of(op)
        types = ",".join(x.name for x in (t.val_type_D, t.val_type_A, t.val_type_B, t.val_type_C))
        rows.append(
            [op.name, f"sm{op.arch}", op.family, "x".join(map(str, t.shape_mnk)), types, op.ptx]
        )
    print(table_text(rows))
    counts = Counter(op.family for op in ops)
    per_family = ", ".join(f"{f} {n}" for f, n in counts.items())
    print(f"\n{len(ops)} operations: {per_family}")
    return 0


def _copy_family(family: str | None) -> bool:
    """Whether ``--family`` asks for copy atoms: ``copy`` (all of them) or a copy family's name.

    >>> _copy_family("copy"), _copy_family("ldsm"), _copy_family("sm80.int8"), _copy_family(None)
    (True, True, False, False)
    """
    if family is None:
        return False
    from cutemma.copy.catalog import copy_families

    return family == "copy" or any(family in (f.name, f.short) for f in copy_families())


def run_list_copy(args: argparse.Namespace) -> int:
    """``cutemma list --family copy`` (or a copy family, e.g. ``ldsm``, ``sm100.tmem_load``):
    one row per copy atom, then the counts per family.

    >>> run_list_copy(argparse.Namespace(arch="sm90", family="stsm"))  # doctest: +ELLIPSIS
    name               arch  family     src -> dst    ptx
    ...
    SM90_U16x8_STSM_T  sm90  sm90.stsm  reg -> smem   stmatrix.sync.aligned.m8n8.x4.trans.shared.b16
    <BLANKLINE>
    6 copy atoms: sm90.stsm 6
    0
    """
    from cutemma.cli.args import parse_arch
    from cutemma.copy import copy_ops

    arch = None
    if args.arch:
        arch, _ = parse_arch(args.arch, "--arch")
    family = None if args.family == "copy" else args.family
    ops = copy_ops(arch, family)
    rows = [["name", "arch", "family", "src -> dst", "ptx"]]
    for op in ops:
        arch_text = f"sm{op.arch}" if op.arch else "any"
        rows.append([op.name, arch_text, op.family, op.kind, op.ptx or "(C++ assignment)"])
    print(table_text(rows))
    counts = Counter(op.family for op in ops)
    print(f"\n{len(ops)} copy atoms: " + ", ".join(f"{f} {n}" for f, n in counts.items()))
    return 0


def show_text(atom: MmaAtom, grids: bool = True) -> str:
    """Everything ``cutemma show`` prints for one atom.

    >>> from cutemma.mma import make_mma_atom
    >>> print(show_text(make_mma_atom('SM61_DP4A'), grids=False))
    SM61_DP4A  (sm61, family sm61.dp)
    Operation
      ptx        dp4a.s32.s32
      registers  D int32_t[1]  A uint32_t[1]  B uint32_t[1]  C int32_t[1]
      sources    A reg  B reg
    Traits
      types      D s32  A s8  B s8  C s32
      shape_mnk  (1, 1, 4)
      thr_id     1:0
      A layout   (1,4):(0,1)
      B layout   (1,4):(0,1)
      C layout   (1,1):(0,0)
    """
    op, t = atom.op, atom.traits
    regs = "  ".join(f"{w} {r if r is not None else '-'}" for w, r in zip("DABC", op.registers))
    lines = [
        f"{op.name}  (sm{op.arch}, family {op.family})",
        "Operation",
        f"  ptx        {op.ptx}",
        f"  registers  {regs}",
        f"  sources    A {op.a_source}  B {op.b_source}",
    ]
    if op.modifiers:
        lines.append(f"  modifiers  {' '.join(op.modifiers)}")
    if op.extras:
        lines.append("  extras     " + "  ".join(f"{e.name}:{e.kind}" for e in op.extras))
    if op.params:
        lines.append("  params     " + "  ".join(f"{k}={v}" for k, v in op.params))
    if op.note:
        lines.append(f"  note       {op.note}")
    types = "  ".join(
        f"{w} {x}" for w, x in zip("DABC", (t.val_type_D, t.val_type_A, t.val_type_B, t.val_type_C))
    )
    lines += [
        "Traits",
        f"  types      {types}",
        f"  shape_mnk  {t.shape_mnk}",
        f"  thr_id     {t.thr_id}",
        f"  A layout   {t.tv_layout_A}",
        f"  B layout   {t.tv_layout_B}",
        f"  C layout   {t.tv_layout_C}",
    ]
    if grids:  # the grids of print_text: CuTe's print_latex picture, B drawn K x N above C
        from cutemma.viz import to_text

        lines += ["", to_text(atom)]
    return "\n".join(lines)


def _params(pairs: list[str]) -> dict:
    out = {}
    for p in pairs or []:
        key, eq, value = p.partition("=")
        if not eq or not key or not value:
            raise AtomError(f"parameter {p!r}: write key=value, e.g. -p a_major=K")
        if key in out:
            raise AtomError(f"parameter {key} given twice (-p {key}=...): give each key once")
        out[key] = int(value) if re.fullmatch(r"-?\d{1,9}", value) else value
    return out


def run_show(args: argparse.Namespace) -> int:
    """Print one atom (Operation, traits, thread-value grids), or draw it / its TiledMMA.

    A copy atom's name goes to :func:`cutemma.cli.copy_show.show_copy`.

    With ``--atom-layout`` or ``--tile`` the atom is composed into a TiledMMA first; with
    ``--svg/--html/--latex`` the picture is written to the file instead of the text.

    >>> ns = argparse.Namespace(name="SM61_DP2A", param=None, no_grid=False, atom_layout=None,
    ...                         tile=None)
    >>> run_show(ns)  # doctest: +ELLIPSIS
    SM61_DP2A  (sm61, family sm61.dp)
    ...
    C  (T,V) -> (m,n)  (1,1):(0,0)
            0
        +----+
     0  |T0V0|
    0
    """
    from cutemma.cli.copy_show import names_copy, show_copy

    if names_copy(args.name):
        return show_copy(args)
    from cutemma.cli.show_viz import (
        MAX_CELLS,
        cells_of,
        check_outputs,
        parse_atom_layout,
        parse_tile,
        terminal_text,
        write_from_args,
    )
    from cutemma.tiled import make_tiled_mma

    check_outputs(args)
    atom = make_mma_atom(args.name, **_params(args.param))
    obj = atom
    thread = getattr(args, "thread", None)
    if args.atom_layout or args.tile or thread is not None:
        layout = parse_atom_layout(args.atom_layout) if args.atom_layout else (1, 1, 1)
        obj = make_tiled_mma(atom, layout, parse_tile(args.tile) if args.tile else None)
    if thread is not None:  # one thread's cells of the TiledMMA (its ThrMma)
        obj = obj.get_slice(_thread_index(thread, obj))
    if write_from_args(obj, args):
        return 0
    if obj is atom:
        print(show_text(atom, grids=not args.no_grid))
    else:
        print(obj)
        if args.no_grid:
            pass
        elif cells_of(obj) > MAX_CELLS:
            print(f"(grids of {cells_of(obj)} cells not printed: more than {MAX_CELLS})")
        else:
            print(terminal_text(obj))
    return 0


def _thread_index(text: str, tiled) -> int:
    n = tiled.thread_count
    # ASCII digits only ('²'.isdigit() is True, int('²') fails), few enough for int()
    if not re.fullmatch(r"[0-9]{1,18}", text) or (n is not None and int(text) >= n):
        from cutemma.errors import CliError

        raise CliError(
            f"--thread {text[:40]!r}: expected a whole number among the TiledMMA's thread "
            f"indices 0..{n - 1}"
        )
    return int(text)


def register(sub) -> None:
    """Add the ``list`` and ``show`` subcommands.

    >>> sub = argparse.ArgumentParser(prog="cutemma").add_subparsers()
    >>> register(sub)
    >>> sub.choices["show"].parse_args(["SM61_DP4A", "-p", "a=1", "-p", "b=2"]).param
    ['a=1', 'b=2']
    """
    p = sub.add_parser(
        "list",
        help="list the MMA catalog (or, with --family copy, the copy atoms) with counts",
        description="List the MMA atoms of the catalog by architecture and family, with counts; "
        "--family copy (or a copy family such as ldsm) lists the copy atoms instead. Each "
        "name is what cutemma show and cutemma emit take.",
    )
    p.add_argument("--arch", help="only this architecture, e.g. sm80")
    p.add_argument(
        "--family",
        help="only this family, e.g. int8 or sm80.int8; 'copy' lists the copy atoms, a copy "
        "family (ldsm, cp_async, tma, tmem_load, ...) only its atoms",
    )
    p.set_defaults(run=run_list)
    s = sub.add_parser(
        "show",
        help="show one MMA or copy atom: PTX, registers, layouts, TV tables",
        description="Show one MMA or copy atom: its PTX, registers, layouts and thread-value "
        "tables (cutemma list, and cutemma list --family copy, name them), or draw it.",
    )
    s.add_argument(
        "name",
        help="operation name, e.g. SM80_16x8x16_F32BF16BF16F32_TN, or a copy atom, e.g. "
        "SM75_U32x4_LDSM_N (cutemma list --family copy lists them)",
    )
    s.add_argument(
        "--thread",
        metavar="N",
        help="draw only thread N's cells of the (Tiled)MMA: its ThrMma (get_slice(N))",
    )
    s.add_argument("-p", "--param", action="append", help="parameter key=value (repeatable)")
    s.add_argument("--no-grid", action="store_true", help="leave out the thread-value grids")
    s.add_argument("--atom-layout", help='tile atoms over threads, e.g. "(2,2):(2,1)" or "2,2,1"')
    s.add_argument(
        "--tile", help='tile size / permutations, e.g. "32,32,4" or "(4,4,2):(1,8,4),32,4"'
    )
    from cutemma.cli.show_viz import add_picture_args

    add_picture_args(s)
    s.set_defaults(run=run_show)
