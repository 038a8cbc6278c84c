"""Split-K for decode-sized sm90 calls (issue 21): the slice views' index math, the slice
count's rules, and the reduction kernel's code (CPU: torch on the CPU for the views, NVRTC and
the SASS reader for the kernel).

The views are checked element by element against the definition of a K slice
(A3[s, m, j] = A[m, s * K/S + j], B3[s, j, n] = B[s * K/S + j, n]) and by the sum of the
slices' products against A @ B in float64; that the batched kernel's TMA maps can walk them
by the driver's stride rule (copy/tma.py); the reduction by its SASS: global loads, no
atomic (RED/ATOM) anywhere, so the S partials are added in the loop's fixed order.
"""

from __future__ import annotations

import pytest

from cutemma.copy.tma import stride_refusal
from cutemma.kernels.sm90 import splitk

torch = pytest.importorskip("torch")

CASES = [(1, 512, 64, 2), (3, 1024, 40, 4), (16, 768, 24, 3), (64, 2048, 8, 8), (7, 4096, 16, 16)]


def _operand(rows, cols, column_major):
    t = (
        torch.randn(cols, rows, dtype=torch.float64).t()
        if column_major
        else torch.randn(rows, cols, dtype=torch.float64)
    )
    return t


@pytest.mark.parametrize("m,k,n,s", CASES)
@pytest.mark.parametrize(
    "a_col,b_col", [(False, False), (False, True), (True, False), (True, True)]
)
def test_views_are_the_k_slices(m, k, n, s, a_col, b_col):
    A, B = _operand(m, k, a_col), _operand(k, n, b_col)
    A3, B3 = splitk.split_views(A, B, s)
    ks = k // s
    assert A3.shape == (s, m, ks) and B3.shape == (s, ks, n)
    assert A3.untyped_storage().data_ptr() == A.untyped_storage().data_ptr()  # views
    assert B3.untyped_storage().data_ptr() == B.untyped_storage().data_ptr()
    for i in range(s):
        assert torch.equal(A3[i], A[:, i * ks : (i + 1) * ks])
        assert torch.equal(B3[i], B[i * ks : (i + 1) * ks, :])
    parts = torch.stack([A3[i] @ B3[i] for i in range(s)])
    assert torch.allclose(sum(parts[i] for i in range(s)), A @ B, rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("elem_bytes", [1, 2, 4])
@pytest.mark.parametrize("m,n,k", [(1, 10240, 8192), (16, 8192, 28672), (4, 4096, 14336),
                                   (64, 8192, 8192), (1, 57344, 8192), (8, 1024, 4096)])  # fmt: skip
def test_slice_count_rules(m, n, k, elem_bytes):
    s = splitk.split_count(m, n, k, 132, elem_bytes)
    kt = splitk.K_TILE_BYTES // elem_bytes
    assert s == 1 or (s in splitk.SPLITS and k % (s * kt) == 0)
    assert s == 1 or k // s >= splitk.MIN_K_TILES * kt
    # every slice's batch stride is one TMA may walk (K-major A: K/S elements; N-major B:
    # K/S rows), so the split never hands the kernel a map the driver would refuse
    assert stride_refusal(k // s, elem_bytes, 2) is None
    assert stride_refusal(k // s * n, elem_bytes, 2) is None


def test_no_split_beyond_decode_or_when_tiles_fill_the_sms():
    assert splitk.split_count(splitk.SPLIT_MAX_M + 1, 10240, 8192, 132, 2) == 1
    assert splitk.split_count(1, 8192, 131 * 64, 132, 2) == 1  # 131 k tiles: no whole slices
    assert splitk.split_count(1, 132 * 128, 8192, 132, 2) == 1  # 132 tiles: one full wave
    assert splitk.split_count(1, 10240, 8192, 132, 2) == 1  # 80 tiles: 2 x 80 is past a wave
    assert splitk.split_count(1, 8192, 8192, 132, 2) == 2  # 64 tiles: 2 x 64 fill one wave
    assert splitk.split_count(64, 8192, 8192, 132, 1) == 1  # partials 12.5% of B's bytes


@pytest.mark.parametrize("m", [1, 4, 16, 64])
@pytest.mark.parametrize("n,k,eb", [(1024, 4096, 2), (4096, 14336, 2), (8192, 28672, 1),
                                    (2048, 8192, 1), (640, 16384, 4)])  # fmt: skip
def test_a_split_fills_at_most_one_wave(m, n, k, eb):
    s = splitk.split_count(m, n, k, 132, eb)
    tiles = -(-m // 128) * -(-n // 128)
    assert s * tiles <= 132
    assert 8 * s * m <= splitk.PARTIAL_SHARE * k * eb or s == 1
    # no larger count of the table would also fit: the split takes the most it may
    bigger = [c for c in splitk.SPLITS if c > s and c * tiles <= 132
              and k % (c * 128 // eb) == 0 and k // c >= splitk.MIN_K_TILES * 128 // eb
              and 8 * c * m <= splitk.PARTIAL_SHARE * k * eb]  # fmt: skip
    assert bigger == []


@pytest.mark.parametrize("out", ["bf16", "f16", "f32"])
def test_reduction_adds_in_order_without_atomics(out):
    pytest.importorskip("cuda.bindings")
    from cutemma.cuda import compile, count_instructions, local_memory_use, sass

    try:
        cubin = compile(splitk.reduce_source(out), "sm_90a")
    except Exception as exc:  # no NVRTC here
        pytest.skip(f"NVRTC unavailable: {exc}")
    counts = count_instructions(sass(cubin))
    assert not any(op.startswith(("RED", "ATOM")) for op in counts), counts
    assert counts.get("LDG", 0) >= 1 and counts.get("STG", 0) >= 1
    assert not local_memory_use(cubin)


@pytest.mark.parametrize("dtype,b_col", [("bf16", False), ("bf16", True), ("e4m3", True)])
def test_tma_maps_of_the_slices(dtype, b_col):
    """The batched kernel's rank-3 maps over the slice views: cutemma's TMA argument rules
    (copy/tma.py) take them, the batch the outermost dim, its stride the slice's."""
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.sm90.host import tma_major
    from cutemma.kernels.sm90.plan import Sm90Plan
    from cutemma.kernels.sm90.tma_maps import operand_map_args

    tdt = {"bf16": torch.bfloat16, "e4m3": torch.float8_e4m3fn}[dtype]
    m, k, n, s = 16, 8192, 1024, 8
    A = torch.empty(m, k, dtype=tdt)
    B = torch.empty(n, k, dtype=tdt).t() if b_col else torch.empty(k, n, dtype=tdt)
    A3, B3 = splitk.split_views(A, B, s)
    A3, am, lda = tma_major(A3, "A", ("K", "M"))
    B3, bm, ldb = tma_major(B3, "B", ("K", "N"))
    plan = Sm90Plan(Sm90Config(128, 128), dtype, am, bm, "f32")
    eb = A.element_size()
    for which, t, major, ld in (("A", A3, am, lda), ("B", B3, bm, ldb)):
        rows, cols = t.shape[-2:]
        args = operand_map_args(plan.tma[which], which, 1 << 40, rows, cols, major, ld, s,
                                t.stride(0))  # fmt: skip
        assert args.global_dim[-1] == s and args.global_strides[-1] == t.stride(0) * eb
        assert args.global_dim[0] * args.global_dim[1] * s == rows * cols * s
