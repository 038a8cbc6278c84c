"""Every TiledMMA partitions its tile exactly: each C element has one owner, and each atom
instance's A and B elements are exactly the rows, columns and k's its C elements need."""

from collections import defaultdict

import pytest

from cutemma import Layout, make_identity_tensor, make_tiled_mma, size

PERM_M32 = Layout((4, 4, 2), (1, 8, 4))
CASES = [
    ("SM70_8x8x4_F32F16F16F32_NT", (1, 1, 1), None),
    ("SM70_8x8x4_F32F16F16F32_NT", Layout((2, 2), (2, 1)), None),
    ("SM70_8x8x4_F32F16F16F32_NT", Layout((2, 2), (2, 1)), (32, 32, 4)),
    ("SM70_8x8x4_F32F16F16F32_NT", Layout((2, 2), (2, 1)), (PERM_M32, 32, 4)),
    ("SM70_8x8x4_F16F16F16F16_TN", (2, 2, 1), None),
    ("SM70_8x8x4_F32F16F16F32_TT", (4, 1, 1), (32, 16, 8)),
    ("SM80_16x8x16_F32F16F16F32_TN", (1, 1, 1), None),
    ("SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1), None),
    ("SM80_16x8x16_F32BF16BF16F32_TN", (2, 2, 1), (32, 32, 16)),
    ("SM80_16x8x16_F32BF16BF16F32_TN", Layout((2, 2), (2, 1)), (32, 32, 32)),
    ("SM80_16x8x8_F32TF32TF32F32_TN", (4, 1, 1), None),
    ("SM80_16x8x8_F16F16F16F16_TN", (1, 4, 1), (None, 64, None)),
    ("SM80_16x8x32_S32S8S8S32_TN", (2, 2, 1), None),
    ("SM80_8x8x4_F64F64F64F64_TN", (2, 2, 1), None),
    ("SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1), (Layout((16, 2), (2, 1)), None, None)),
    ("SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1), (None, Layout((8, 2), (2, 1)), None)),
    ("SM89_16x8x32_F32E4M3E4M3F32_TN", (2, 2, 1), None),
    ("SM89_16x8x32_F32E5M2E4M3F32_TN", (1, 2, 1), (16, 32, 32)),
    ("SM90_16x8x16_F64F64F64F64_TN", (2, 1, 1), None),
    ("SM90_16x8x8_F64F64F64F64_TN", (2, 2, 1), (32, 32, 8)),
    ("SM90_64x16x16_F32BF16BF16_SS", (1, 1, 1), None),
    ("SM90_64x16x16_F32BF16BF16_RS", (2, 1, 1), None),
    ("SM90_64x32x16_F16F16F16_RS", (1, 1, 1), (None, 64, None)),
]


def _ids(case):
    name, lay, perm = case
    return f"{name}-{lay}-{perm}"


def _coords(tensor_part):
    return [tensor_part(i) for i in range(size(tensor_part.layout))]


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_tile_is_partitioned_exactly(case):
    name, lay, perm = case
    tiled = make_tiled_mma(name, lay, perm)
    M, N, K = tiled.tile_size_mnk
    threads = sorted(tiled._thr_coords)
    assert len(threads) == tiled.size

    owners = defaultdict(list)
    need_a, need_b, have_a, have_b = (defaultdict(set) for _ in range(4))
    gmma_ss = name.endswith("_SS")
    for t in threads:
        v, am, an, ak = tiled.thr_coord(t)
        thr = tiled.get_slice(t)
        pc = thr.partition_C(make_identity_tensor((M, N)))
        pa = thr.partition_A(make_identity_tensor((M, K)))
        pb = thr.partition_B(make_identity_tensor((N, K)))
        fc, rm, rn = (size(pc.layout[i]) for i in range(3))
        fa, ra_m, ra_k = (size(pa.layout[i]) for i in range(3))
        fb, rb_n, rb_k = (size(pb.layout[i]) for i in range(3))
        assert (ra_m, rb_n) == (rm, rn) and ra_k == rb_k
        for i in range(rm):
            for j in range(rn):
                inst = (am, an, ak, i, j)
                for f in range(fc):
                    m, n = pc(f, i, j)
                    if ak == 0:
                        owners[(m, n)].append((t, f, i, j))
                    need_a[inst].add(m)
                    need_b[inst].add(n)
                for kk in range(ra_k):
                    have_a[inst] |= {pa(f, i, kk) for f in range(fa)}
                    have_b[inst] |= {pb(f, j, kk) for f in range(fb)}
    # every C element exactly once (K-replicas excluded)
    assert len(owners) == M * N
    assert all(len(o) == 1 for o in owners.values())
    # each atom instance reads exactly the A rows / B columns its C elements use, over its k's
    for inst, rows in need_a.items():
        ks = {k for _, k in have_a[inst]}
        assert {m for m, _ in have_a[inst]} == rows
        assert {n for n, _ in have_b[inst]} == need_b[inst]
        assert {k for _, k in have_b[inst]} == ks
        if not gmma_ss:  # register operands: every (row, k) pair is held
            assert have_a[inst] == {(m, k) for m in rows for k in ks}


@pytest.mark.parametrize("case", CASES[:12], ids=[_ids(c) for c in CASES[:12]])
def test_partition_of_identity_reproduces_tv_layouts(case):
    tiled = make_tiled_mma(*case)
    M, N, K = tiled.tile_size_mnk
    for which, (r, c) in {"A": (M, K), "B": (N, K), "C": (M, N)}.items():
        tv = getattr(tiled, f"tv_layout_{which}_tiled")
        # the TiledMMA's own threads (a lone SM70 atom's TV layouts also have rows for the
        # threads 4-15 and 20-31 it does not use; the C++ suite checks those)
        for t in sorted(tiled._thr_coords):
            part = getattr(tiled.get_slice(t), f"partition_{which}")(make_identity_tensor((r, c)))
            got = _coords(part)
            want = [divmod(tv(t, v), r)[::-1] for v in range(size(tv[1]))]
            assert got == want, (which, t)
