"""tcgen05 instruction descriptor against PTX ISA 9.7.16.4.2 (Table 42 and the block-scaled
table); expected words are assembled here from the ISA's bit positions."""

import random

import pytest

from cutemma.errors import DescriptorError
from cutemma.smem import decode_instr_desc, make_instr_desc
from cutemma.smem.instr_desc import KINDS


def word(**bits_at):
    return sum(v << lo for lo, v in bits_at.values())


def test_f16_bf16_f32_k_major():
    d = make_instr_desc("f16", "bf16", "bf16", "f32", M=128, N=256)
    # dtype F32=1 at 4-5, atype BF16=1 at 7-9, btype at 10-12, N>>3 at 17-22, M>>4 at 24-28
    assert d.raw == word(d=(4, 1), a=(7, 1), b=(10, 1), n=(17, 32), m=(24, 8))


def test_transpose_negate_and_sparsity_bits():
    d = make_instr_desc("tf32", "tf32", "tf32", "f32", 64, 8, "MN", "MN", negate_a=True,
                        negate_b=True, sparse=True, sparse_id2=3)  # fmt: skip
    expect = word(sel=(0, 3), sp=(2, 1), d=(4, 1), a=(7, 2), b=(10, 2), na=(13, 1), nb=(14, 1),
                  ta=(15, 1), tb=(16, 1), n=(17, 1), m=(24, 4))  # fmt: skip
    assert d.raw == expect


def test_i8_saturate_and_max_shift():
    d = make_instr_desc("i8", "s8", "u8", "s32", 128, 64, saturate=True, max_shift=2)
    assert d.raw == word(sat=(3, 1), d=(4, 2), a=(7, 1), b=(10, 0), n=(17, 8), m=(24, 8),
                         ms=(30, 2))  # fmt: skip


def test_f8f6f4_formats():
    d = make_instr_desc("f8f6f4", "e2m3", "e3m2", "f32", 128, 128)
    assert d.raw == word(d=(4, 1), a=(7, 3), b=(10, 4), n=(17, 16), m=(24, 8))
    # kind::f8f6f4 accumulates in f16 too (PTX ISA 9.7.16.10 .dtype: .f16, .f32): dtype F16=0
    d = make_instr_desc("f8f6f4", "e4m3", "e5m2", "f16", 128, 64)
    assert d.raw == word(a=(7, 0), b=(10, 1), n=(17, 8), m=(24, 8))


def test_block_scaled():
    d = make_instr_desc("mxf8f6f4", "e5m2", "e2m1", "f32", 128, 256, scale_type="ue8m0",
                        a_sf_id=2, b_sf_id=1)  # fmt: skip
    assert d.raw == word(bsf=(4, 1), a=(7, 1), b=(10, 5), n=(17, 32), sf=(23, 1), m=(24, 8),
                         asf=(29, 2))  # fmt: skip
    d = make_instr_desc("mxf4nvf4", "e2m1", "e2m1", "f32", 128, 8, scale_type="ue4m3", k_size=1)
    assert d.raw == word(a=(7, 1), b=(10, 1), n=(17, 1), m=(24, 8), k=(31, 1))


def test_round_trip_random():
    rng = random.Random(7)
    for _ in range(300):
        kind = rng.choice(list(KINDS))
        table = KINDS[kind].table
        # m_dim and n_dim >= 1: a descriptor of M or N = 0 is refused (the next test)
        fields = {f.name: rng.randrange(f.name in ("m_dim", "n_dim"), 1 << f.width) for f in table}
        raw = sum(v << f.lo for f, v in zip(table, fields.values()))
        d = decode_instr_desc(raw, kind)
        assert d.fields == fields and d.raw == raw


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_descriptor_of_no_shape_is_refused(kind):
    # issue 22: decode_instr_desc(0, 'f16') reported M = N = 0 without a word
    table = {f.name: f for f in KINDS[kind].table}
    for zero in ("m_dim", "n_dim"):
        other = "n_dim" if zero == "m_dim" else "m_dim"
        raw = 1 << table[other].lo  # the other field 1, this one 0
        with pytest.raises(DescriptorError, match="must be nonzero"):
            decode_instr_desc(raw, kind)


@pytest.mark.parametrize(
    "kwargs, rule",
    [
        (dict(kind="f8f6f4", a_type="e2m1", b_type="e4m3", d_type="f32", M=128, N=64,
              a_major="MN"), "cannot be MN-major"),
        (dict(kind="f16", a_type="bf16", b_type="bf16", d_type="f32", M=100, N=64), "multiple of 16"),
        (dict(kind="f16", a_type="bf16", b_type="bf16", d_type="f32", M=128, N=260), "N a multiple of 8"),
        (dict(kind="f16", a_type="bf16", b_type="bf16", d_type="f16", M=128, N=64), "f16 D"),
        (dict(kind="f16", a_type="tf32", b_type="tf32", d_type="f32", M=128, N=64), "A type"),
        (dict(kind="f16", a_type="f16", b_type="f16", d_type="f32", M=128, N=64,
              saturate=True), "saturate"),
        (dict(kind="i8", a_type="s8", b_type="s8", d_type="s32", M=128, N=64,
              negate_a=True), "negate"),
        (dict(kind="mxf4", a_type="e2m1", b_type="e2m1", d_type="f32", M=128, N=64), "scale_type"),
        (dict(kind="bf16", a_type="bf16", b_type="bf16", d_type="f32", M=128, N=64), "unknown"),
    ],
)  # fmt: skip
def test_rejections(kwargs, rule):
    with pytest.raises(DescriptorError, match=rule):
        make_instr_desc(**kwargs)


def test_decode_rejects_reserved_bits_and_describes():
    with pytest.raises(DescriptorError, match=r"\[6\]"):
        decode_instr_desc(1 << 6, "f16")
    text = make_instr_desc("f16", "f16", "f16", "f16", 64, 32, "K", "MN").describe()
    assert "M = 64, N = 32" in text and "B MN-major" in text and "a_format: f16" in text
