"""The policy (cutemma.kernels.policy.choose) on call records of CPU tensors: which family,
config and views each kind of call gets, and the sm90 operand views a design's GMMA atom
fixes. Expected values come from the rules the docs state (docs/gemm.md, the policy's
module doc), not from running the policy.
"""

from __future__ import annotations

import pytest

from cutemma.errors import LaunchError

torch = pytest.importorskip("torch")

from policy_calls import nothing_tuned, record  # noqa: E402, F401 - beside this file (its fixture: autouse)

from cutemma.kernels import GemmDesign  # noqa: E402
from cutemma.kernels.policy import choose  # noqa: E402
from cutemma.kernels.sm80.config import GemmConfig  # noqa: E402
from cutemma.kernels.sm90.config import Sm90Config  # noqa: E402
from cutemma.kernels.sm90.operands import views  # noqa: E402

BF = torch.bfloat16


def test_a_gemm_config_runs_sm80_and_says_why():
    A, B = torch.zeros(256, 512, dtype=BF), torch.zeros(512, 256, dtype=BF)
    c = choose(record(A, B, config=GemmConfig(64, 64, 32)))
    assert (c.family, c.config, c.why) == (
        "sm80",
        GemmConfig(64, 64, 32),
        "an sm80 config was asked for",
    )


def test_an_sm90_config_where_tma_cannot_read_names_the_rule():
    A = torch.zeros(256, 513, dtype=BF)[:, :512]  # a leading stride of 513 elements
    B = torch.zeros(512, 256, dtype=BF)
    with pytest.raises(LaunchError, match="is an sm90 config, but operand A TMA cannot read"):
        choose(record(A, B, config=Sm90Config(128, 128)))
    c = choose(record(A, B))  # nothing asked: the sm80 kernel, with the reason
    assert c.family == "sm80" and "operand A" in c.why


def test_decode_calls_swap_and_others_do_not():
    B = torch.zeros(8192, 8192, dtype=BF)
    c = choose(record(torch.zeros(16, 8192, dtype=BF), B))
    assert c.family == "sm90" and c.swap and not c.config.swap_ab
    # the kernel's A is B^T (a view of B), its B is A^T
    assert c.views.A.data_ptr() == B.data_ptr() and tuple(c.views.A.shape) == (8192, 8192)
    big = choose(record(torch.zeros(1024, 8192, dtype=BF), B))
    assert big.family == "sm90" and not big.swap
    with_c = choose(record(torch.zeros(16, 8192, dtype=BF), B, C=torch.zeros(16, 8192, dtype=BF)))
    assert not with_c.swap  # a swapped kernel takes no C from the policy's pick


def test_a_swap_config_refuses_a_batch():
    A, B = torch.zeros(3, 16, 256, dtype=BF), torch.zeros(256, 512, dtype=BF)
    cfg = Sm90Config(64, 16, consumers=1, swap_ab=True, epilogue="regs")
    with pytest.raises(LaunchError, match="swaps A and B, which runs 2-D calls"):
        choose(record(A, B, batch=3, config=cfg))


@pytest.mark.parametrize("atom,want", [("SM90_64x64x16_F32BF16BF16_SS<MN,MN>", ("M", "N")),
                                       ("SM90_64x64x16_F32BF16BF16_SS<K,MN>", ("K", "N")),
                                       ("SM90_64x64x16_F32BF16BF16_SS<MN,K>", ("M", "K"))])  # fmt: skip
def test_a_gmma_atoms_majors_are_the_views_majors(atom, want):
    """K-major A and B given; the design's atom fixes the majors: the views are copies in
    those majors holding the same values, and the call is not remembered (copied)."""
    A = torch.arange(128 * 64, dtype=torch.float32).reshape(128, 64).to(BF)
    B = torch.arange(64 * 128, dtype=torch.float32).reshape(128, 64).to(BF).t()  # K-major
    d = GemmDesign(atom, tile=(128, 128, 64))
    c = choose(record(A, B, design=d))
    assert (c.views.a_major, c.views.b_major) == want and c.views.copied
    assert torch.equal(c.views.A, A) and torch.equal(c.views.B, B)
    # the same operands without a design: read as given, nothing copied
    v = views(A, B, "bf16", "sm_90a")
    assert (v.a_major, v.b_major, v.copied) == ("K", "K", False)


def test_a_copy_into_the_atoms_major_pads_its_rows_for_tma():
    """B (64, 97) K-major into an N-major atom: 97 columns of bf16 are 194 bytes, no 16-byte
    stride; the copy's rows are padded to 104 elements (208 bytes) and TMA reads it."""
    A = torch.ones(128, 64, dtype=BF)
    B = torch.arange(97 * 64, dtype=torch.float32).reshape(97, 64).to(BF).t()
    d = GemmDesign("SM90_64x64x16_F32BF16BF16_SS<K,MN>", tile=(128, 64, 64))
    c = choose(record(A, B, design=d))
    assert c.views.b_major == "N" and c.views.ldb == 104 and c.views.B.stride() == (104, 1)
    assert torch.equal(c.views.B, B)


def test_an_rs_design_reads_a_k_major_and_its_registers_table_is_checked():
    """GMMA RS atoms load A into registers from K-major rows (CuTe's RS atoms take K-major A
    only): an M-major A is copied K-major (it ran wrong on the GPU as given: 17.0 off,
    bench/results/design-acceptance-h200.json before this); and a design whose A-register
    table cannot be written as thread part + constants is refused by its plan rule, not at
    launch."""
    from cutemma.kernels import failed_rules
    from cutemma.tiled import make_tiled_mma

    rs = GemmDesign(make_tiled_mma("SM90_64x16x16_F16F16F16_RS<K,K>", (1, 1, 1)),
                    tile=(256, 80, 16), schedule="pingpong")  # fmt: skip
    assert rs.major("A") == "K" and rs.major("B") is None
    A = torch.zeros(64, 400, dtype=torch.float16).t()  # (400, 64) M-major
    B = torch.zeros(64, 232, dtype=torch.float16)
    c = choose(record(A, B, dtype="f16", design=rs))
    assert c.views.a_major == "K" and c.views.copied
    bad = GemmDesign(make_tiled_mma("SM90_64x96x16_F16F16F16_RS<K,MN>", (3, 1, 1)),
                     tile=(384, 96, 32), stages=5, schedule="alternate")  # fmt: skip
    assert failed_rules(bad, "sm_90a") == ["plan"]


def test_a_design_pads_operands_tma_cannot_read():
    """A design's sm90 kernel is fixed, so a B whose rows are 97 elements (194 bytes, no
    16-byte stride) is copied into rows of 104 for it (a seed TiledMMA ran so on the H200);
    a plain call asking the same config is refused by name."""
    A = torch.ones(131, 72, dtype=BF)
    B = torch.arange(72 * 97, dtype=torch.float32).reshape(72, 97).to(BF)
    d = GemmDesign("SM90_64x128x16_F32BF16BF16_SS<K,K>")
    c = choose(record(A, B, design=d))
    assert c.family == "sm90" and c.views.ldb == 104 and c.views.copied
    assert torch.equal(c.views.B, B)
    with pytest.raises(LaunchError, match="leading stride 97 elements"):
        choose(record(A, B, config=d.config))


class _Strided:
    """A stand-in operand: any shape and strides (a stride near 2^40 bytes needs no memory)."""

    def __init__(self, shape, stride, eb):
        self.shape, self._stride, self.eb = shape, stride, eb

    def stride(self, d=None):
        return self._stride if d is None else self._stride[d]

    def element_size(self):
        return self.eb

    def data_ptr(self):
        return 1 << 20

    def dim(self):
        return len(self.shape)


@pytest.mark.parametrize("elem_bytes", [1, 2, 4])
@pytest.mark.parametrize("dim", [1, 2])
def test_the_policys_tma_stride_rule_is_the_tensor_maps(elem_bytes, dim):
    """The views decide TMA readability from the driver's numbers (TMA_RULES); the
    tensor-map encoder's own check (copy/tma_map.stride_refusal) is the witness: the same
    answer on strides around every boundary, for the leading (dim 1) and batch (dim 2)
    strides."""
    from cutemma.copy.tma_map import TMA_RULES, stride_refusal

    dtype = {1: "e4m3", 2: "bf16", 4: "tf32"}[elem_bytes]
    v = 16 // elem_bytes
    B = _Strided((8 * v, 2), (1, 8 * v), elem_bytes)  # K-major, aligned
    top = TMA_RULES.max_stride // elem_bytes
    for elements in [0, 1, 2, 7, 8, 15, 16, 17, 24, 4096, 4097, top - 16, top - 1, top, top + 16]:
        if dim == 1:
            A = _Strided((2, 8 * v), (elements, 1), elem_bytes)
        elif elements == 0:
            continue  # a zero batch stride is a shared operand: a 2-D map, no batch stride
        else:
            A = _Strided((3, 2, 8 * v), (elements, 8 * v, 1), elem_bytes)
        seen = views(A, B, dtype, "sm_90a")
        want = stride_refusal(elements, elem_bytes, dim)
        assert isinstance(seen, str) == (want is not None), (elements, seen, want)
        if want is not None:
            assert f"stride {elements} elements = {elements * elem_bytes} bytes" in seen


def test_the_call_record_holds_what_the_policy_reads():
    """make_call's record carries plain ints and the operands' majors (fake tensors: no
    device is needed), so the policy checks no argument again."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from cutemma.kernels.call import make_call

    with FakeTensorMode():
        A = torch.empty(64, 32, dtype=BF, device="cuda").t()  # (32, 64), M-major
        B = torch.empty(64, 48, dtype=BF, device="cuda")  # N-major
        call = make_call(A, B, fake=True)
    assert (call.M, call.N, call.K) == (32, 48, 64)
    assert all(type(x) is int for x in (call.M, call.N, call.K))
    assert (call.a_major, call.b_major) == ("M", "N")


@pytest.mark.parametrize("split", [None, 4])
def test_a_stream_k_choice_carries_its_work_for_the_launch(split):
    """The policy hands the launch stream-K's (shared tiles, CTAs) for the call's own tile
    counts (300 x 8192 over 128 x 128 tiles: 3 x 64; K 4096 over 64-deep k tiles: 64);
    a config without stream-K carries none."""
    from cutemma.kernels.sm90.streamk import sk_split

    A, B = torch.zeros(300, 4096, dtype=BF), torch.zeros(4096, 8192, dtype=BF)
    cfg = Sm90Config(128, 128, stream_k=True, split=split)
    c = choose(record(A, B, config=cfg))
    assert c.work == sk_split(3, 64, 64, 132, split)
    assert choose(record(A, B, config=Sm90Config(128, 128))).work is None


def test_a_stream_k_launch_without_its_work_is_refused():
    from cutemma.kernels.sm90 import launch as fp90

    class Plan:
        stream_k, tma_store = (128, 128, 64), False

    sizes = [fp90._I32(300), fp90._I32(8192), fp90._I32(4096)]
    with pytest.raises(LaunchError, match="stream-K launch needs its work"):
        fp90.PreparedLaunch(None, 0, 132, (fp90._I32(), fp90._I32()), sizes, Plan, "x", (3, 4))
