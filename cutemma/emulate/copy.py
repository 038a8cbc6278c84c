"""A TiledCopy run on the CPU, instruction by instruction, as CuTe's ``copy(tiled_copy, src, dst)``.

Each thread's source and destination partitions (``ThrCopy.partition_S`` / ``partition_D`` or
``retile_S/D``, possibly over a swizzled shared-memory layout) are read in their own order:
the first ``num_val_src`` / ``num_val_dst`` values are one instruction, the next ones the
next instruction (CuTe's ``Copy_Atom::call`` peels the atom's values off the front mode).
One instruction gathers the source values of the atom's threads (consecutive thread indices,
as CuTe assumes), moves them with :meth:`CopyAtom.move` (ldmatrix's transpose, a shuffle's
exchange, ...) and scatters them to the destinations.

>>> import numpy as np
>>> from cutemma.copy import make_copy_atom
>>> from cutemma.layout import Layout
>>> from cutemma.tensor import Tensor
>>> from cutemma.tiled import make_tiled_copy
>>> tc = make_tiled_copy(make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint64_t>", "f16"),
...                      Layout((8, 4), (4, 1)), Layout((1, 4)))
>>> src = Tensor(np.arange(128.0), Layout((8, 16), (16, 1)))
>>> dst = Tensor(np.zeros(128), Layout((8, 16), (1, 8)))
>>> copy_tensors(tc, src, dst)
>>> dst(3, 5) == src(3, 5), float(dst.data[5 * 8 + 3])
(True, 53.0)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cutemma.errors import CopyError
from cutemma.tensor import Tensor


def _offsets(t: Tensor) -> np.ndarray:
    return np.array([t.offset + t.layout(i) for i in range(t.size())], dtype=np.int64)


def copy(tiled_copy, src_parts: Sequence[Tensor], dst_parts: Sequence[Tensor]) -> None:
    """Run ``tiled_copy`` given every thread's source and destination partition (thread order).

    Writes into the destination tensors' numpy data.

    >>> import numpy as np
    >>> from cutemma.copy import make_copy_atom
    >>> from cutemma.layout import Layout
    >>> from cutemma.tensor import Tensor
    >>> from cutemma.tiled import make_tiled_copy
    >>> tc = make_tiled_copy(make_copy_atom("SM50_Shuffle_U32_2x2Trans_XOR1", "uint32_t"),
    ...                      Layout(32), Layout(2))
    >>> regs = [Tensor(np.array([2.0 * t, 2.0 * t + 1]), Layout(2)) for t in range(32)]
    >>> out = [Tensor(np.zeros(2), Layout(2)) for t in range(32)]
    >>> copy(tc, regs, out)
    >>> out[0].data.tolist(), out[1].data.tolist()
    ([0.0, 2.0], [1.0, 3.0])
    """
    from cutemma.tiled.tiled_copy import TiledCopy

    if not isinstance(tiled_copy, TiledCopy):
        raise CopyError(f"copy: expected a TiledCopy (make_tiled_copy(...)), got {tiled_copy!r}")
    bad = [p for p in (*src_parts, *dst_parts) if not isinstance(p, Tensor)]
    if bad:
        raise CopyError(f"copy: every partition must be a cutemma Tensor, got {bad[0]!r}")
    atom = tiled_copy.atom
    n_thr, a_thr = tiled_copy.size, atom.traits.threads
    if len(src_parts) != n_thr or len(dst_parts) != n_thr:
        raise CopyError(
            f"copy: give one source and one destination partition per thread ({n_thr}); "
            f"got {len(src_parts)} and {len(dst_parts)}"
        )
    nv_s, nv_d = atom.num_val_src, atom.num_val_dst
    s_off = [_offsets(p) for p in src_parts]
    d_off = [_offsets(p) for p in dst_parts]
    for t in range(n_thr):
        if s_off[t].size % nv_s or d_off[t].size % nv_d:
            raise CopyError(
                f"copy: thread {t}'s partitions hold {s_off[t].size} source / {d_off[t].size} "
                f"destination values, not whole {atom.name} instructions ({nv_s} / {nv_d})"
            )
        if s_off[t].size // nv_s != d_off[t].size // nv_d:
            raise CopyError(
                f"copy: thread {t}'s source makes {s_off[t].size // nv_s} instructions, its "
                f"destination {d_off[t].size // nv_d}; partition both with the same TiledCopy"
            )
    n_instr = s_off[0].size // nv_s
    s_tab = np.stack([o.reshape(n_instr, nv_s) for o in s_off])  # (thr, instr, val)
    d_tab = np.stack([o.reshape(n_instr, nv_d) for o in d_off])
    for g in range(n_thr // a_thr):
        rows = slice(g * a_thr, (g + 1) * a_thr)
        for i in range(n_instr):
            vals = np.stack([src_parts[t].data[s_tab[t, i]] for t in range(rows.start, rows.stop)])
            moved = atom.move(vals)
            for j, t in enumerate(range(rows.start, rows.stop)):
                dst_parts[t].data[d_tab[t, i]] = moved[j]


def copy_tensors(tiled_copy, src: Tensor, dst: Tensor) -> None:
    """Run ``tiled_copy`` from a whole source tensor to a whole destination tensor.

    Each thread's parts are ``partition_S(src)`` and ``partition_D(dst)`` (e.g. global to
    shared memory with cp.async; either side may be swizzled).

    >>> import numpy as np
    >>> from cutemma.copy import make_copy_atom
    >>> from cutemma.layout import Layout
    >>> from cutemma.tiled import make_tiled_copy
    >>> tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint32_t>", "f32"), Layout((4, 8)))
    >>> src = Tensor(np.arange(32.0), Layout((4, 8)))               # column-major
    >>> dst = Tensor(np.zeros(32), Layout((4, 8), (8, 1)))          # row-major
    >>> copy_tensors(tc, src, dst)
    >>> dst.data[:8].tolist()                                        # row 0: 0, 4, 8, ...
    [0.0, 4.0, 8.0, 12.0, 16.0, 20.0, 24.0, 28.0]
    """
    from cutemma.tiled.tiled_copy import TiledCopy

    if not isinstance(tiled_copy, TiledCopy):
        raise CopyError(
            f"copy_tensors: expected a TiledCopy (make_tiled_copy(...)), got {tiled_copy!r}"
        )
    slices = [tiled_copy.get_slice(t) for t in range(tiled_copy.size)]
    copy(
        tiled_copy,
        [s.partition_S(src) for s in slices],
        [s.partition_D(dst) for s in slices],
    )
