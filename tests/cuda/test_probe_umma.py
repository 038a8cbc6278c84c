"""tcgen05 probe kernels (cutemma.cuda.probe_umma): compile-only on sm_100a, every catalog
atom and a spread of parameter variants compiles to its UTC*MMA kind without local memory."""

from __future__ import annotations

import re

import pytest
from cuda_skips import needs_cuobjdump, needs_nvrtc

from cutemma.cuda import probe_umma as pu
from cutemma.cuda.probe import probe_for
from cutemma.errors import CompileError
from cutemma.mma import mma_op, mma_ops
from cutemma.smem import decode_instr_desc, decode_umma_desc


def umma_ops() -> list:
    """The catalog's tcgen05 atoms plus variants: other types, M=64, N=8, MN-major."""
    ops = [o for o in mma_ops(arch=100) if o.ptx.startswith("tcgen05")]
    ops += [
        mma_op("SM100_MMA_F16BF16_SS", a_type="bf16", b_type="bf16", m=64, n=8, b_major="MN"),
        mma_op("SM100_MMA_F16BF16_SS", c_type="f16", a_major="MN", n=136),
        mma_op("SM100_MMA_TF32_2x1SM_SS", a_major="MN", b_major="MN", n=48),
        mma_op("SM100_MMA_S8_SS", a_type="u8", b_type="s8", saturate=True, n=24),
        mma_op("SM100_MMA_F8F6F4_SS", a_type="e2m1", b_type="e3m2", n=64),
        mma_op("SM100_MMA_F8F6F4_TS", a_type="e5m2", b_type="e2m3", n=128),
        mma_op("SM100_MMA_MXF4NVF4_SS", sf_type="ue4m3", vs=16, n=96),
    ]
    return ops


def test_descriptors_follow_the_params():
    op = mma_op("SM100_MMA_F16BF16_SS", a_type="bf16", b_type="bf16", m=64, n=8, b_major="MN")
    d = decode_instr_desc(pu.instr_desc(op), "f16")
    assert (d.M, d.N, d.fields["b_major"], d.fields["a_major"]) == (64, 8, 1, 0)
    b = pu._operands(op, pu.traits_of(op))[-1]
    assert (b.rows, b.cols, b.major) == (8, 16, "MN")
    assert decode_umma_desc(b.desc).swizzle_mode().name == b.swizzle == "INTER"


def test_sub_byte_types_in_shared_memory():
    padded = mma_op("SM100_MMA_F8F6F4_SS", a_type="e2m1", b_type="e3m2")
    packed = mma_op("SM100_MMA_MXF4_SS")
    assert (pu.smem_bits(padded, "e2m1"), pu.smem_bits(padded, "e3m2")) == (8, 8)
    a = pu._operands(packed, pu.traits_of(packed))[0]
    assert (a.pack, a.bits, a.cols) == (2, 4, 32)  # K=64 e2m1: 32 bytes of K
    src = probe_for(packed).source
    assert "& 15u) << 4" in src  # the odd element goes to the high nibble


def test_ts_reads_a_from_tensor_memory_in_brackets():
    text = pu.umma_asm(mma_op("SM100_MMA_S8_TS"))
    assert re.search(r"kind::i8 \[%\d+\], \[%\d+\], %\d+, %\d+", text)
    ss = pu.umma_asm(mma_op("SM100_MMA_S8_SS"))
    assert re.search(r"kind::i8 \[%\d+\], %\d+, %\d+, %\d+", ss)


def test_probe_shape_and_life_cycle():
    p = probe_for(mma_op("SM100_MMA_TF32_2x1SM_TS_SPARSE"))
    assert (p.arch, p.threads, p.runnable_on) == ("sm_100a", 128, ())
    for step in ("tcgen05.alloc.cta_group::2", "tcgen05.mma.sp.cta_group::2", "tcgen05.commit",
                 "tcgen05.ld", "tcgen05.dealloc.cta_group::2"):  # fmt: skip
        assert step in p.source, step


def test_not_a_tcgen05_op():
    with pytest.raises(CompileError, match="SM90_64x8x16_F16F16F16_SS"):
        pu.make_probe(mma_op("SM90_64x8x16_F16F16F16_SS"))


@needs_nvrtc
@needs_cuobjdump
def test_every_tcgen05_probe_compiles_to_its_sass_kind():
    from cutemma.cuda.batch_compile import compile_probes

    ops = umma_ops()
    results = compile_probes([probe_for(o) for o in ops])
    bad = [(r.probe.kernel_name, r.problem) for r in results if r.problem]
    assert not bad, bad[:3]
    kinds = {r.probe.op.ptx.split("kind::")[1].split(".")[0]: set(r.kinds) for r in results}
    assert kinds == {
        "tf32": {"UTCHMMA"},
        "f16": {"UTCHMMA"},
        "i8": {"UTCIMMA"},
        "f8f6f4": {"UTCQMMA"},
        "mxf8f6f4": {"UTCQMMA"},
        "mxf4": {"UTCOMMA"},
        "mxf4nvf4": {"UTCOMMA"},
    }
