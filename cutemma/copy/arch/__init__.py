"""One module per architecture; each registers its copy families in :data:`FAMILIES`.

The registry imports every module here on the first lookup; the catalog
(:mod:`cutemma.copy.catalog`) looks names up in it and this package never imports it.
Shared pieces: :func:`tv` builds a (thread, value) bit layout from lists of
(extent, stride) pairs the way CuTe writes them (extent-1 pairs dropped, a lone pair
unwrapped), :func:`simple_family` turns a dict of name -> builder into a family, and
the m8n8 matrix layouts that ldmatrix (sm75), stmatrix (sm90) and the sm100 8-bit
variants share.

>>> str(tv([(8, 128), (4, 0)], [(128, 1)]))
'((8,4),128):((128,0),1)'
"""

from __future__ import annotations

from collections.abc import Callable

from cutemma.copy.operation import CopyOperation, Operand
from cutemma.copy.traits import CopyTraits
from cutemma.errors import CopyError
from cutemma.layout import Layout
from cutemma.layout.layout import coalesce
from cutemma.mma.names import MmaName
from cutemma.mma.registry import Family, FamilyRegistry

# A copy family has the MMA family's shape; its build takes the name alone.
CopyFamily = Family

# Every copy family of every architecture, filled by this package's modules.
FAMILIES = FamilyRegistry("copy", __name__, CopyError)


def register_copy_family(family: CopyFamily) -> CopyFamily:
    """Add a family (called by ``cutemma.copy.arch`` modules at import).

    >>> register_copy_family(FAMILIES.families(50)[0]).arch
    50
    """
    return FAMILIES.register(family)


Pairs = list[tuple[int, int]]


def mode(pairs: Pairs) -> tuple:
    """(shape, stride) of one mode from (extent, stride) pairs, dropping extent-1 pairs.

    >>> mode([(32, 32), (1, 1024)])
    (32, 32)
    """
    kept = [(s, d) for s, d in pairs if s != 1]
    if not kept:
        return 1, 0
    if len(kept) == 1:
        return kept[0]
    return tuple(s for s, _ in kept), tuple(d for _, d in kept)


def tv(thr: Pairs, val: Pairs, coalesce_val: bool = False) -> Layout:
    """A (thread, value) layout from pair lists; ``coalesce_val`` merges the value mode.

    >>> str(tv([(32, 64)], [(32, 1), (2, 32)], coalesce_val=True))
    '(32,64):(64,1)'
    """
    (ts, td), (vs, vd) = mode(thr), mode(val)
    if coalesce_val:
        c = coalesce(Layout(vs, vd))
        vs, vd = c.shape, c.stride
    return Layout((ts, vs), (td, vd))


# ---------------------------------------------------------------- m8n8 b16 matrices
# ldmatrix/stmatrix .m8n8 .b16 (PTX ISA, "Warp-level matrix load instruction: ldmatrix"
# and "stmatrix"): x<n> moves n 8x8 matrices of 16-bit elements. Index space: bit
# 1024*j + 128*row + c of matrix j's row (8 rows of 128 bits, row-major).
# Memory side: lane 8*j + r gives the address of row r of matrix j (lanes >= 8n give none).
# Register side, plain: register j of lane t holds row t/4, elements 2*(t%4), 2*(t%4)+1.
# Register side, .trans: register j of lane t holds column t/4, rows 2*(t%4) and +1.


def rows_layout(n_rows: int) -> Layout:
    """Memory side: lane r < n_rows addresses 128-bit row r; other lanes stride 0.

    >>> str(rows_layout(16))
    '((16,2),128):((128,0),1)'
    """
    return tv([(n_rows, 128), (32 // n_rows, 0)], [(128, 1)])


def m8n8_regs(n: int, trans: bool) -> Layout:
    """Register side of x<n> m8n8 b16 matrices, plain or transposed.

    >>> str(m8n8_regs(2, False)), str(m8n8_regs(1, True))
    ('(32,(32,2)):(32,(1,1024))', '((4,8),(16,2)):((256,16),(1,128))')
    """
    if trans:
        return tv([(4, 256), (8, 16)], [(16, 1), (2, 128), (n, 1024)])
    return tv([(32, 32)], [(32, 1), (n, 1024)])


def m8n8_family(arch: int, verb: str, ptx_isa: tuple[int, int]) -> CopyFamily:
    """The six x1/x2/x4 m8n8 b16 names of ``ldmatrix`` (``verb='LDSM'``, smem -> registers)
    or ``stmatrix`` (``'STSM'``, registers -> smem), plain (``_N``, U32 registers) and
    ``.trans`` (``_T``, U16 pairs), registered as the family ``sm<arch>.<verb>``; the reference
    is the register side.

    >>> from cutemma.copy import copy_families
    >>> [f.members()[:2] for f in copy_families(90) if f.name == 'sm90.stsm']
    [['SM90_U32x1_STSM_N', 'SM90_U32x2_STSM_N']]
    """
    load = verb == "LDSM"
    family = f"sm{arch}.{verb.lower()}"

    def entry(n: int, trans: bool):
        name = f"SM{arch}_U16x{2 * n}_{verb}_T" if trans else f"SM{arch}_U32x{n}_{verb}_N"

        def build():
            mem, regs = Operand("smem", "uint128_t", 1), Operand("reg", "uint32_t", n)
            op = CopyOperation(
                name,
                arch,
                family,
                f"{'ld' if load else 'st'}matrix.sync.aligned.m8n8.x{n}"
                f"{'.trans' if trans else ''}.shared.b16",
                *((mem, regs) if load else (regs, mem)),
                modifiers=("trans",) if trans else (),
                params=(("num", n), ("trans", trans)),
                ptx_isa=ptx_isa,
            )
            reg_side, rows = m8n8_regs(n, trans), rows_layout(8 * n)
            src, dst = (rows, reg_side) if load else (reg_side, rows)
            return op, CopyTraits(Layout(32), src, dst, reg_side)

        return name, build

    what = "ldmatrix" if load else "stmatrix"
    return table_family(
        family,
        arch,
        f"SM{arch}_U32x{{1,2,4}}_{verb}_N and SM{arch}_U16x{{2,4,8}}_{verb}_T "
        f"({what} m8n8 b16, plain/.trans)",
        dict(entry(n, t) for t in (False, True) for n in (1, 2, 4)),
    )


# ---------------------------------------------------------------- families from tables


def table_family(
    name: str,
    arch: int,
    description: str,
    table: dict[str, Callable[[], tuple[CopyOperation, CopyTraits]]],
) -> CopyFamily:
    """A family of a fixed set of names (``table``: canonical name -> builder), registered.

    >>> table_family('sm0.demo', 0, 'demo', {}).members()
    []
    """

    def claims(n: MmaName) -> bool:
        return _canon(n) in table

    def build(n: MmaName):
        return table[_canon(n)]()

    fam = CopyFamily(name, arch, description, claims, build, lambda: list(table))
    if table:
        register_copy_family(fam)
    return fam


def _canon(n: MmaName) -> str:
    return n.text


def reject(name: str, why: str) -> CopyError:
    """A CopyError for a name that has a family's form but breaks one of its rules.

    >>> str(reject('SM80_CP_ASYNC_CACHEGLOBAL<uint32_t>', 'only 128-bit'))
    'SM80_CP_ASYNC_CACHEGLOBAL<uint32_t>: only 128-bit'
    """
    return CopyError(f"{name}: {why}")
