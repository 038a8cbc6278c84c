"""Batched 3-D GEMM on the sm90 family without a GPU: the batched kernel's SASS, the rank-3
tensor-map arguments, the refusals, and the fast path's argument boxes.

The expected map arguments are derived here from a tensor's shape and strides (the mode
of stride 1 first, then the other matrix mode, then the batch; bytes = elements x element
size), the rules from the driver's documentation of ``cuTensorMapEncodeTiled``, and the
SASS counts from the plan (each operand's loads exist twice in the batched kernel: a
rank-3 branch and the rank-2 branch of a shared operand).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "cuda"))
from cuda_skips import needs_cuobjdump, needs_nvrtc  # noqa: E402

from cutemma.copy.tma import TMA_RULES, tensor_map_args  # noqa: E402
from cutemma.errors import TmaError  # noqa: E402
from cutemma.kernels import pick  # noqa: E402
from cutemma.kernels.runtime import fastpath as fp  # noqa: E402
from cutemma.kernels.sm90 import launch as fp90  # noqa: E402
from cutemma.kernels.sm90 import operands as ops  # noqa: E402
from cutemma.kernels.sm90 import tma_maps as tm  # noqa: E402
from cutemma.kernels.sm90.plan import Sm90Config, Sm90Plan  # noqa: E402
from cutemma.kernels.sm90.source import (  # noqa: E402
    gemm_sm90_source,
    kernel_name_sm90,
    params_sm90,
)

EB = {"bfloat16": 2, "float16": 2, "float32": 4, "float8_e4m3fn": 1}


class FakeTensor:
    """Just what the host code reads of a torch tensor: shape, strides, pointer, dtype."""

    def __init__(self, shape, strides, dtype="bfloat16", ptr=0x7F0000000000):
        self.shape, self._strides, self.dtype, self._ptr = tuple(shape), tuple(strides), dtype, ptr
        self.device = type("Dev", (), {"index": 0, "type": "cuda"})()

    def dim(self):
        return len(self.shape)

    def stride(self, i=None):
        return self._strides if i is None else self._strides[i]

    def data_ptr(self):
        return self._ptr

    def get_device(self):
        return 0

    def element_size(self):
        return EB[self.dtype]

    def __getitem__(self, i):  # t[0] of a 3-D tensor
        assert i == 0 and self.dim() == 3
        return FakeTensor(self.shape[1:], self._strides[1:], self.dtype, self._ptr)


def expected_map(t: FakeTensor):
    """(dims, byte strides) a TMA map of ``t`` must have, from its shape and strides alone:
    the matrix mode of stride 1 first, then the other, then (if the batch is real: more
    than one matrix, nonzero stride) the batch."""
    *b, r, c = t.shape
    *bs, sr, sc = t.stride()
    eb = t.element_size()
    dims, strides = ((c, r), [sr]) if sc == 1 else ((r, c), [sc])
    if b and b[0] > 1 and bs[0] != 0:
        dims, strides = (*dims, b[0]), [*strides, bs[0]]
    return tuple(dims), tuple(s * eb for s in strides)


def captured_map(monkeypatch, plan, which, t, names):
    """The arguments operand_map hands the driver (encode replaced by a recorder)."""
    seen = []
    monkeypatch.setattr(tm, "encode_tensor_map", lambda args: seen.append(args) or b"")
    tt, major, ld = ops.tma_major(ops.shared_operand(t), which)
    tm.operand_map(plan, which, tt, major, ld)
    return seen[0], major


BF16_KN = Sm90Plan(Sm90Config(128, 256), "bf16", "K", "N", "bf16")
BF16_MK = Sm90Plan(Sm90Config(128, 128), "bf16", "M", "K", "bf16")
L, M, N, K = 5, 300, 136, 264


@pytest.mark.parametrize(
    "plan,which,t",
    [
        # A (L, M, K) row-major, contiguous
        (BF16_KN, "A", FakeTensor((L, M, K), (M * K, K, 1))),
        # A (L, M, K) with padded rows and a padded batch stride
        (BF16_KN, "A", FakeTensor((L, M, K), (M * 272 + 64, 272, 1))),
        # B (L, K, N) row-major (N-major)
        (BF16_KN, "B", FakeTensor((L, K, N), (K * N, N, 1))),
        # A column-major per problem (M-major): stored (L, K, 304) and transposed
        (BF16_MK, "A", FakeTensor((L, M, K), (K * 304, 1, 304))),
        # B column-major (K-major) per problem
        (BF16_MK, "B", FakeTensor((L, K, N), (K * N, 1, K))),
        # shared operands: a batch stride of 0, a batch of 1, a 2-D matrix: rank 2
        (BF16_KN, "B", FakeTensor((L, K, N), (0, N, 1))),
        (BF16_KN, "A", FakeTensor((1, M, K), (M * K, K, 1))),
        (BF16_MK, "B", FakeTensor((K, N), (1, K))),
    ],
    ids=["A-KN", "A-padded", "B-N", "A-M", "B-K", "B-stride0", "A-batch1", "B-2d"],
)
def test_operand_maps_match_the_tensor(monkeypatch, plan, which, t):
    names = ("K", "M") if which == "A" else ("K", "N")
    args, major = captured_map(monkeypatch, plan, which, t, names)
    dims, strides = expected_map(t)
    assert args.global_dim == dims and args.global_strides == strides
    assert args.rank == len(dims)
    assert args.box_dim == tuple(plan.tma[which].box) + (1,) * (len(dims) - 2)  # one problem
    assert args.element_strides == (1,) * len(dims)
    assert args.global_address == t.data_ptr()
    assert major == (plan.a_major if which == "A" else plan.b_major)


def test_output_maps_match_the_tensor():
    box = BF16_KN.tma_D
    ptr = 0x7F0000000000
    for shape, st in [((L, M, N), (M * N, N, 1)), ((L, M, N), (M * 144 + 8, 144, 1))]:
        args = tm.output_map_args(box, ptr, shape, st)
        assert args.global_dim == (N, M, L)
        assert args.global_strides == (st[1] * 2, st[0] * 2)
        assert args.box_dim == (*box.box, 1)
    # what TMA cannot store: the register epilogue writes it instead (None)
    assert tm.output_map_args(box, ptr, (L, M, N), (M * N + 1, N, 1)) is None  # 2-byte batch
    assert tm.output_map_args(box, ptr, (L, M, N), (N, N, 1)) is None  # problems overlap
    assert tm.output_map_args(box, ptr, (L, M, N), (M * N, 1, M)) is None  # column-major
    assert tm.output_map_args(box, ptr + 8, (L, M, N), (M * N, N, 1)) is None  # misaligned


def test_zero_and_unaligned_strides_are_named():
    box = BF16_KN.tma["A"]
    with pytest.raises(TmaError, match="a zero \\(broadcast\\) stride is not allowed"):
        tensor_map_args(box, 0x7F0000000000, (K, M, L), (K, 0))
    with pytest.raises(TmaError, match="stride 12 elements = 24 bytes of dim 2 .*batch stride"):
        tensor_map_args(box, 0x7F0000000000, (K, M, L), (K, 12))
    with pytest.raises(TmaError, match="below 2\\^40"):
        tensor_map_args(box, 0x7F0000000000, (K, M, L), (K, TMA_RULES.max_stride // 2))


def refusal(A, B, dtype="bf16"):
    """Why the sm90 kernel cannot read (A, B) on an sm_90a device, or None."""
    seen = ops.views(A, B, dtype, "sm_90a")
    return seen if isinstance(seen, str) else None


@pytest.mark.parametrize(
    "a,b,why",
    [
        (((L, M, K), (M * K, K, 1)), ((L, K, N), (K * N, N, 1)), None),
        (((L, M, K), (0, K, 1)), ((L, K, N), (K * N, N, 1)), None),  # A broadcast
        (((M, K), (K, 1)), ((L, K, N), (K * N, N, 1)), None),  # A 2-D
        (((L, M, K), (M * K, K, 1)), ((1, K, N), (K * N, N, 1)), None),  # B batch of 1
        (((L, M, K), (M * K + 4, K, 1)), ((K, N), (N, 1)), "operand A .* its batch stride 79204"),
        (((M, K), (K, 1)), ((L, K, N), (K * N + 3, N, 1)), "operand B .* batch stride .* dim 2"),
        (((L, M, 260), (M * 260, 260, 1)), ((K, N), (N, 1)), "operand A .* leading stride 260"),
    ],
)
def test_batched_refusals_are_tma_rules(a, b, why):
    A, B = FakeTensor(*a), FakeTensor(*b)
    got = refusal(A, B)
    if why is None:
        assert got is None
    else:
        assert got is not None and __import__("re").search(why, got), got
        assert "16 bytes" in got


def test_batched_fp8_needs_k_major():
    k, n = 256, 144  # 16-byte rows of 1-byte elements
    A = FakeTensor((L, M, k), (M * k, k, 1), "float8_e4m3fn")
    B_n = FakeTensor((L, k, n), (k * n, n, 1), "float8_e4m3fn")  # N-major
    B_k = FakeTensor((L, k, n), (k * n, 1, k), "float8_e4m3fn")
    assert refusal(A, B_n, "e4m3") == "an 8- or 32-bit operand that is not K-major"
    assert refusal(A, B_k, "e4m3") is None


def test_kernel_name_and_signature_tell_batched_from_2d():
    cfg = Sm90Config(128, 256)
    two = kernel_name_sm90(cfg, "bf16", "K", "N", "bf16", "bf16")
    bat = kernel_name_sm90(cfg, "bf16", "K", "N", "bf16", "bf16", batched=True)
    assert two != bat
    src2 = gemm_sm90_source(cfg, "bf16", "K", "N", "bf16")
    src3 = gemm_sm90_source(cfg, "bf16", "K", "N", "bf16", batched=True)
    assert f" {two}(" in src2 and f" {bat}(" in src3
    # the 2-D kernel has no trace of the batch; the batched one walks L problems
    for word in ("tma_load_3d", "tiles_l", "ldd_l", "bat &"):
        assert word not in src2 and word in src3
    assert "tiles = L * tiles_l" in src3 and "const int l = tile / tiles_l" in src3
    names3 = [p.name for p in params_sm90("bf16", "bf16", True, batched=True)]
    assert names3[: len(params_sm90("bf16", "bf16", True))] == [
        p.name for p in params_sm90("bf16", "bf16", True)
    ]


def test_a_batch_takes_whole_unswapped_tiles():
    """Stream-K and swap-AB run 2-D calls: a batch's candidates and its pick are neither."""
    from cutemma.kernels.space import candidates

    found = candidates(64, 2048, 2048, "bf16", batch=8)
    assert found and not any(c.stream_k or c.swap_ab for c in found)
    cfg = pick.pick_sm90_config(64, 2048, 2048, batch=8).config
    assert not cfg.stream_k and not cfg.swap_ab


def test_fast_path_keys_and_boxes(monkeypatch):
    """A batched call never reuses a 2-D launch on the same pointers (the guard tells
    them apart); the batched launch's argument boxes are the batched kernel's signature,
    C's and D's batch strides set."""
    A3 = FakeTensor((L, M, K), (M * K, K, 1))
    B2 = FakeTensor((K, N), (N, 1))
    monkeypatch.setattr(fp, "_stream_getter", lambda: None)

    class Plan:
        tma_store = False
        stream_k = None

    sizes = [fp._I32(M), fp._I32(N), fp._I32(K)]
    maps = (tm.NO_MAP, tm.NO_MAP)
    p = fp90.PreparedLaunch(None, 0, 132, maps, sizes, Plan, "bfloat16", (L, M, N), (L, 3))
    assert len(p.args) == len(params_sm90("bf16", "bf16", False, batched=True))
    assert p.args[-4].value == L and p.args[-1].value == 3
    out = FakeTensor((L, M, N), (M * N + 64, N, 1))
    C = FakeTensor((L, M, N), (0, N, 1))  # a shared C
    p.set_operands(C, out, 2.0, 0.5)
    assert (p.ldc_l.value, p.ldd_l.value) == (0, M * N + 64)
    assert (p.ldd_m.value, p.ldd_n.value, p.ldc_m.value) == (N, 1, N)
    p.write_out(out.data_ptr(), out.stride(), out)  # a hit whose out moved: C = D = out
    assert p.ldc_l.value == p.ldd_l.value == M * N + 64
    assert (p.ldc_m.value, p.ldc_n.value, p.beta.value) == (N, 1, 0.0)
    p2 = fp90.PreparedLaunch(None, 0, 132, maps, sizes, Plan, "bfloat16", (M, N))
    assert len(p2.args) == len(params_sm90("bf16", "bf16", False))
    monkeypatch.setattr(fp, "FAST", {})
    fp.remember(A3, B2, FakeTensor((L, M, N), (M * N, N, 1)), False, None, p)
    assert fp.find(A3, B2, None, None).prepared is p
    assert fp.find(A3[0], B2, None, None) is None  # same pointers, a 2-D call


CASES = [
    (Sm90Config(128, 256), "bf16", "K", "N", "bf16"),  # TMA-store epilogue
    (Sm90Config(128, 128), "f16", "M", "K", "f32"),  # register epilogue
    (Sm90Config(128, 128), "e4m3", "K", "K", "bf16"),  # promoted fp8
    (Sm90Config(128, 128, cluster=2), "bf16", "K", "K", "bf16"),  # B multicast
]


@needs_nvrtc
@needs_cuobjdump
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0].name}-{c[1]}-{c[2]}{c[3]}-{c[4]}")
def test_batched_sass(case):
    from cutemma.cuda import compile, count_instructions, local_memory_use, sass
    from cutemma.cuda.sass import instructions

    config, dtype, am, bm, out = case
    plan = Sm90Plan(config, dtype, am, bm, out)
    cubin = compile(gemm_sm90_source(config, dtype, am, bm, out, batched=True), "sm_90a")
    text = sass(cubin)
    counts, ops = count_instructions(text), instructions(text)
    kind = "QGMMA" if dtype == "e4m3" else "HGMMA"
    assert counts.get(kind, 0) == plan.k_blocks * plan.mma_m  # the mainloop is the 2-D one
    assert counts.get("HMMA", 0) == 0
    boxes = len(plan.tma["A"].copies) + len(plan.tma["B"].copies)
    for rank in ("3D", "2D"):  # a batched branch and a shared branch per operand
        assert sum(op.startswith(f"UTMALDG.{rank}") for op in ops) == boxes, rank
    if config.cluster > 1:
        mc = sum(op.startswith("UTMALDG.3D.MULTICAST") for op in ops)
        assert mc == len(plan.tma["B"].copies)
    stores = len(plan.tma_D.copies) * plan.d_passes if plan.tma_store else 0
    assert sum(op.startswith("UTMASTG.3D") for op in ops) == stores
    assert not any(op.startswith("UTMASTG.2D") for op in ops)
    assert counts.get("SYNCS", 0) > 0 and counts.get("USETMAXREG", 0) == 2
    assert not local_memory_use(cubin), local_memory_use(cubin)
    for warning in ("C7508", "C7510", "C7514"):
        assert warning not in cubin.log


@pytest.mark.parametrize(
    "which,shape,strides,major",
    [
        ("A", (L, 1, 200), (200, 200, 1), "K"),  # one row: K contiguous
        ("A", (L, 300, 1), (304, 1, 1), "M"),  # one column, rows contiguous
        ("B", (L, 200, 1), (200, 1, 1), "K"),  # N = 1 (torch's contiguous (K, 1))
        ("B", (L, 1, 136), (136, 136, 1), "N"),  # K = 1, N contiguous
        ("B", (L, 8, 1), (8, 1, 8), "K"),  # a transposed (1, K) row
    ],
)
def test_vectors_take_a_legal_leading_stride(monkeypatch, which, shape, strides, major):
    """A mode of extent 1 has no stride TMA uses; the map takes the contiguous mode first
    and a leading stride of 16-byte multiple covering it (any would do, none is read)."""
    t = FakeTensor(shape, strides)
    names = ("K", "M") if which == "A" else ("K", "N")
    plan = Sm90Plan(Sm90Config(128, 128), "bf16", "K" if which == "B" else major,
                    major if which == "B" else "K", "bf16")  # fmt: skip
    args, got = captured_map(monkeypatch, plan, which, t, names)
    assert got == major
    r, c = shape[1:]
    contiguous = r if strides[1] == 1 and r > 1 else c  # the extent of the stride-1 mode
    assert args.global_dim == (contiguous, r * c // contiguous, L)
    lead, batch = args.global_strides
    assert lead % 16 == 0 and lead >= contiguous * 2 and batch == strides[0] * 2
