"""TiledCopy emulation on the CPU against an independent model of ldmatrix/stmatrix, over
swizzled shared memory, and a cp.async -> ldmatrix -> mma.sync pipeline end to end.

The model (``ldmatrix_model``/``stmatrix_model``) is written from the PTX ISA text, not from
the atoms' layouts: lane ``8j + r`` gives the address of row r of matrix j; lane t receives
(or gives) in register j the elements (t/4, 2(t%4)+h), transposed (2(t%4)+h, t/4) with .trans.
"""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.copy import make_copy_atom
from cutemma.emulate.copy import copy, copy_tensors
from cutemma.layout import Layout, Swizzle
from cutemma.layout.layout import size
from cutemma.layout.swizzle import make_swizzled
from cutemma.mma import make_mma_atom
from cutemma.tensor import Tensor, make_identity_tensor
from cutemma.tiled import (
    make_tiled_copy,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_C,
    make_tiled_mma,
)


def ldmatrix_model(smem: np.ndarray, addrs, num: int, trans: bool) -> np.ndarray:
    out = np.zeros((32, 2 * num), dtype=smem.dtype)
    for j in range(num):
        mat = np.stack([smem[addrs[8 * j + r] : addrs[8 * j + r] + 8] for r in range(8)])
        for t in range(32):
            for h in range(2):
                r, c = t // 4, 2 * (t % 4) + h
                out[t, 2 * j + h] = mat[c, r] if trans else mat[r, c]
    return out


def stmatrix_model(regs: np.ndarray, addrs, num: int, trans: bool, smem: np.ndarray) -> None:
    for j in range(num):
        for t in range(32):
            for h in range(2):
                r, c = t // 4, 2 * (t % 4) + h
                row, col = (c, r) if trans else (r, c)
                smem[addrs[8 * j + row] + col] = regs[t, 2 * j + h]


def _frag(thr_mma, tensor, which):
    part = getattr(thr_mma, f"partition_{which}")(tensor)
    return Tensor(np.zeros(size(part.layout)), Layout(part.layout.shape))


def _offsets(t: Tensor) -> list[int]:
    return [t.offset + t.layout(i) for i in range(t.size())]


CASES = [
    # (operand, mma permutation, smem layout (MN, K), copy atom, num matrices, trans)
    (
        "A",
        None,
        make_swizzled(Swizzle(3, 3, 3), Layout((32, 64), (64, 1))),
        "SM75_U32x4_LDSM_N",
        4,
        False,
    ),
    (
        "A",
        None,
        make_swizzled(Swizzle(2, 3, 3), Layout((32, 32), (32, 1))),
        "SM75_U32x2_LDSM_N",
        2,
        False,
    ),
    (
        "B",
        (32, 32, 16),
        make_swizzled(Swizzle(3, 3, 3), Layout((64, 32), (1, 64))),
        "SM75_U16x8_LDSM_T",
        4,
        True,
    ),
    (
        "B",
        None,
        make_swizzled(Swizzle(3, 3, 3), Layout((16, 64), (64, 1))),
        "SM75_U32x2_LDSM_N",
        2,
        False,
    ),
    ("A", None, Layout((32, 16), (1, 32)), "SM75_U16x8_LDSM_T", 4, True),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[3]}-{i}" for i, c in enumerate(CASES)])
def test_ldmatrix_tiled_copy_matches_isa_model_and_mma(case):
    which, perm, smem_layout, op, num, trans = case
    tm = make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2), perm)
    tc = (make_tiled_copy_A if which == "A" else make_tiled_copy_B)(make_copy_atom(op, "f16"), tm)
    rng = np.random.default_rng(0)
    data = rng.permutation(smem_layout.cosize()).astype(np.float64)
    s = Tensor(data, smem_layout)
    srcs, dsts, frags = [], [], []
    for t in range(tc.size):
        thr = tc.get_slice(t)
        frag = _frag(tm.get_slice(t), s, which)
        srcs.append(thr.partition_S(s))
        dsts.append(thr.retile_D(frag))
        frags.append(frag)
    copy(tc, srcs, dsts)
    # 1. each thread's registers hold what the MMA's partition of shared memory says
    # (read through the identity tensor: ThrMma.partition_* drops a swizzle, see the report)
    ident = make_identity_tensor(smem_layout.shape)
    for t in range(tc.size):
        coords = getattr(tm.get_slice(t), f"partition_{which}")(ident).tolist()
        assert frags[t].tolist() == [s(*c) for c in coords], t
    # 2. every instruction equals the ISA model fed with the lanes' row addresses
    nv = tc.atom.num_val_src
    nd = tc.atom.num_val_dst
    n_instr = srcs[0].size() // nv
    for w in range(tc.size // 32):
        for i in range(n_instr):
            addrs = []
            for lane in range(32):
                offs = _offsets(srcs[32 * w + lane])[i * nv : (i + 1) * nv]
                # ldmatrix reads 16-byte rows: the lane's 8 values are contiguous in smem
                assert offs == list(range(offs[0], offs[0] + 8)), (lane, offs)
                addrs.append(offs[0])
            model = ldmatrix_model(data, addrs, num, trans)
            got = np.stack(
                [
                    np.array(dsts[32 * w + lane].tolist()[i * nd : (i + 1) * nd])
                    for lane in range(32)
                ]
            )
            assert (got == model).all()


@pytest.mark.parametrize(
    "op, num, trans, smem_layout",
    [
        ("SM90_U32x4_STSM_N", 4, False, make_swizzled(Swizzle(3, 3, 3), Layout((32, 64), (64, 1)))),
        ("SM90_U16x4_STSM_T", 2, True, Layout((32, 32), (1, 32))),
    ],
)
def test_stmatrix_tiled_copy_matches_isa_model(op, num, trans, smem_layout):
    tm = make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", (2, 2), (32, 32, 16))
    tc = make_tiled_copy_C(make_copy_atom(op, "f16"), tm)
    shape = smem_layout.shape
    n = smem_layout.cosize()
    smem = Tensor(np.full(n, -1.0), smem_layout)
    rng = np.random.default_rng(1)
    srcs, dsts = [], []
    for t in range(tc.size):
        frag = _frag(tm.get_slice(t), Tensor(np.zeros(n), Layout(shape)), "C")
        frag.data[:] = rng.permutation(frag.size()) + 1000 * t
        srcs.append(tc.get_slice(t).retile_S(frag))
        dsts.append(tc.get_slice(t).partition_D(smem))
    copy(tc, srcs, dsts)
    model = np.full(n, -1.0)
    nv, nd = tc.atom.num_val_src, tc.atom.num_val_dst
    for w in range(tc.size // 32):
        for i in range(srcs[0].size() // nv):
            regs = np.stack(
                [
                    np.array(srcs[32 * w + lane].tolist()[i * nv : (i + 1) * nv])
                    for lane in range(32)
                ]
            )
            addrs = [_offsets(dsts[32 * w + lane])[i * nd] for lane in range(32)]
            stmatrix_model(regs, addrs, num, trans, model)
    assert (smem.data == model).all()
    assert (model >= 0).all()  # the C tile covers the whole smem tile


def test_cp_async_ldmatrix_mma_end_to_end():
    """gmem --cp.async--> swizzled smem --ldmatrix--> registers --mma.sync--> D = A B^T."""
    M, N, K = 32, 32, 32
    rng = np.random.default_rng(2)
    a = rng.integers(-4, 5, (M, K)).astype(np.float64)
    b = rng.integers(-4, 5, (N, K)).astype(np.float64)
    g2s = make_tiled_copy(
        make_copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "f16"),
        Layout((32, 4), (4, 1)),
        Layout((1, 8)),
    )
    swz = make_swizzled(Swizzle(2, 3, 3), Layout((32, 32), (32, 1)))  # K-major, 64-byte rows
    sa, sb = Tensor(np.zeros(M * K), swz), Tensor(np.zeros(N * K), swz)
    copy_tensors(g2s, Tensor(a.ravel(), Layout((M, K), (K, 1))), sa)
    copy_tensors(g2s, Tensor(b.ravel(), Layout((N, K), (K, 1))), sb)
    assert [sa(m, k) for m in range(M) for k in range(K)] == a.ravel().tolist()

    tm = make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2), (32, 32, 16))
    s2r_a = make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "f16"), tm)
    s2r_b = make_tiled_copy_B(make_copy_atom("SM75_U32x4_LDSM_N", "f16"), tm)
    frag_a = [_frag(tm.get_slice(t), sa, "A") for t in range(tm.size)]
    frag_b = [_frag(tm.get_slice(t), sb, "B") for t in range(tm.size)]
    copy(
        s2r_a,
        [s2r_a.get_slice(t).partition_S(sa) for t in range(tm.size)],
        [s2r_a.get_slice(t).retile_D(frag_a[t]) for t in range(tm.size)],
    )
    copy(
        s2r_b,
        [s2r_b.get_slice(t).partition_S(sb) for t in range(tm.size)],
        [s2r_b.get_slice(t).retile_D(frag_b[t]) for t in range(tm.size)],
    )

    # mma.sync on the fragments: each group of 32 threads is one atom instance
    atom = make_mma_atom("SM80_16x8x16_F32F16F16F32_TN")
    d = np.zeros((M, N))
    ident = make_identity_tensor((M, N))

    def arr(frag):  # (FrgV, M_tiles, K_tiles) array of a compact fragment
        shp = tuple(size(frag.layout[i]) for i in range(3))
        return frag.data.reshape(shp, order="F")

    groups: dict[tuple, list[int]] = {}
    for t in range(tm.size):
        v, pm, pn, pk = tm.thr_coord(t)
        groups.setdefault((pm, pn, pk), [None] * 32)[v] = t
    for threads in groups.values():
        fa = np.stack([arr(frag_a[t]) for t in threads])
        fb = np.stack([arr(frag_b[t]) for t in threads])
        c_parts = [tm.get_slice(t).partition_C(ident) for t in threads]
        n_m, n_n = size(c_parts[0].layout[1]), size(c_parts[0].layout[2])
        for mi in range(n_m):
            for ni in range(n_n):
                acc = atom.make_fragment_C()
                for ki in range(fa.shape[3]):
                    acc = atom.emulate(fa[:, :, mi, ki], fb[:, :, ni, ki], acc)
                for j, part in enumerate(c_parts):
                    for v in range(acc.shape[1]):
                        m, n = part(v, mi, ni)
                        d[m, n] = acc[j, v]
    assert (d == a @ b.T).all()
