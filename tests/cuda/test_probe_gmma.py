"""GMMA probe kernels (cutemma.cuda.probe_gmma): the C index expressions equal the layouts,
every sm90 GMMA atom's probe compiles to its SASS kind without local memory, and (GPU) a
sample of probes matches emulate_tiles on an H100."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from cuda_skips import needs_cuobjdump, needs_nvrtc
from gpu_verify import verify_on_gpu

from cutemma.cuda import probe_gmma as pg
from cutemma.cuda.probe import probe_for
from cutemma.errors import CompileError
from cutemma.layout import Layout, Swizzle
from cutemma.mma import make_mma_atom, mma_op, mma_ops
from cutemma.mma.catalog import traits_of
from cutemma.smem import decode_gmma_desc, make_gmma_desc

# --- the C expressions are the layouts ------------------------------------------------------


def c_eval(expr: str, **env: int) -> int:
    """Evaluate a generated C index expression in Python (non-negative ints: / is //)."""
    return eval(re.sub(r"(?<![/])/(?![/])", "//", expr), {}, dict(env))


@pytest.mark.parametrize(
    "layout",
    [
        Layout(((4, 8, 4), (2, 2, 32)), ((128, 1, 16), (64, 8, 512))),
        Layout(((4, 8, 4), (4, 2, 2)), ((256, 1, 16), (64, 8, 1024))),
        Layout(((3, 1, 5), 7), ((0, 9, 2), 1)),
        Layout((128, (64, 16)), (0, (1, 64))),
    ],
    ids=str,
)
def test_layout_expr_equals_the_layout(layout):
    shape, stride = layout.shape[0], layout.stride[0]
    sub = Layout(shape, stride)
    expr = pg.layout_expr(shape, stride, "t")
    assert [c_eval(expr, t=t) for t in range(sub.size())] == [sub(t) for t in range(sub.size())]


@pytest.mark.parametrize("sw", [Swizzle(1, 3, 3), Swizzle(2, 3, 3), Swizzle(3, 3, 3),
                                Swizzle(3, 2, 3), Swizzle(2, 4, 3), Swizzle(0, 4, 3)], ids=str)  # fmt: skip
def test_swizzle_expr_equals_the_swizzle(sw):
    expr = pg.swizzle_expr(sw, "o")
    assert all(c_eval(expr, o=o) == sw(o) for o in range(4096))


_OPERANDS = [
    (rows, k, t, major)
    for t, k in (("f16", 16), ("bf16", 32), ("tf32", 8), ("e4m3", 32), ("s8", 64), ("b1", 256))
    for rows in (8, 24, 64, 256)
    for major in (("K", "MN") if t in ("f16", "bf16") else ("K",))
]


@pytest.mark.parametrize("rows,k,t,major", _OPERANDS)
def test_smem_offsets_and_descriptor_follow_the_layout(rows, k, t, major):
    op = pg.smem_operand("B", rows, k, t, major)
    expr = pg.smem_offset_expr(op, "r", "c")
    for r, c in itertools.product(range(rows), range(op.cols)):
        assert c_eval(expr, r=r, c=c) == op.layout(r, c), (r, c)
    dtype = "u8" if t == "b1" else t
    assert decode_gmma_desc(op.desc) == make_gmma_desc(op.layout, major, dtype)
    assert op.elements == rows * op.cols  # the image is dense: no gaps, no overlap


def test_swizzle_is_the_widest_that_tiles():
    assert pg.pick_swizzle(64, 16, "MN", "f16") == "SW128"  # 64 x 2 bytes = one 128-byte row
    assert pg.pick_swizzle(32, 16, "MN", "f16") == "SW64"
    assert pg.pick_swizzle(8, 16, "MN", "f16") == "INTER"
    assert pg.pick_swizzle(64, 64, "K", "e4m3") == "SW64"  # sparse B: 64 bytes of K
    with pytest.raises(CompileError, match="12x16"):
        pg.pick_swizzle(12, 16, "K", "f16")


def test_fragment_offsets_come_from_the_tv_layouts():
    atom = make_mma_atom("SM90_64x16x32_S32S8U8_RS_TN")
    text = pg.load_fragment("a", atom.op.a, atom.tv_layout_A, "A", "a0", atom.val_type_A)
    first = [int(x) for x in re.findall(r"a0 \+ (\d+)", text.splitlines()[0])]
    values = Layout(atom.tv_layout_A.shape[1], atom.tv_layout_A.stride[1])
    assert first == [values(v) for v in range(4)]  # 4 bytes of register 0 in bit order
    store = pg.store_fragment("acc", atom.op.c, atom.tv_layout_C, "D", "c0", atom.val_type_D)
    offs = [int(x) for x in re.findall(r"c0 \+ (\d+)", store)]
    c_vals = Layout(atom.tv_layout_C.shape[1], atom.tv_layout_C.stride[1])
    assert offs == [c_vals(v) for v in range(c_vals.size())]


def test_probe_text_names_the_operation():
    op = mma_op("SM90_64x24x16_F16F16F16_SS", a_major="MN", b_major="MN")
    p = probe_for(op)
    assert p.kernel_name in p.source and "wgmma.mma_async.sync.aligned.m64n24k16" in p.source
    assert ", 1, 1, 1, 1;" in p.source  # imm-scale-a/b, then imm-trans-a/b = 1 (MN-major)
    assert (p.arch, p.threads, p.runnable_on) == ("sm_90a", 128, ("sm_90a",))
    rs = probe_for(mma_op("SM90_64x8x32_F32E4M3E4M3_RS_TN"))
    assert "desc_a" not in rs.source and "a[3]" in rs.source


def test_sparse_probes_run_with_metadata_words():
    # tests/cuda/test_probe_gmma_sparse.py checks the packed A and sp-meta path in detail.
    p = probe_for(mma_op("SM90_SPARSE_64x16x64_S32S8S8_SS_TN"))
    assert p.runnable_on == ("sm_90a",) and "sp_meta = E[t]" in p.source


def test_not_a_gmma_op():
    with pytest.raises(CompileError, match="SM80_16x8x16_F32F16F16F32_TN"):
        pg.make_probe(mma_op("SM80_16x8x16_F32F16F16F32_TN"))


# --- every GMMA atom compiles ----------------------------------------------------------------


def gmma_ops() -> list:
    """Every sm90 GMMA atom (K-major), plus MN-major forms of the f16/bf16 class (dense and
    sparse) for every type row at a spread of N (SS: three major pairs, RS: B MN-major)."""
    ops = [o for o in mma_ops(arch=90) if o.ptx.startswith("wgmma")]
    extra = []
    for o in ops:
        if "f16" not in o.family or traits_of(o).shape_mnk[1] not in (8, 24, 64, 136, 256):
            continue
        pairs = [("K", "MN")] if o.a_source == "reg" else [("K", "MN"), ("MN", "K"), ("MN", "MN")]
        base = o.name.split("<", 1)[0]
        extra += [mma_op(base, a_major=a, b_major=b) for a, b in pairs]
    return ops + extra


@needs_nvrtc
@needs_cuobjdump
def test_mn_major_gmma_probes_compile_to_their_sass_kind():
    # The K-major form of every GMMA atom (2148) is compiled, and its SASS kind checked,
    # by the catalog-wide sweep in test_probe_compile.py; here the MN-major forms the
    # catalog lists once under their K-major names, each checked for exactly its kind.
    from cutemma.cuda.batch_compile import compile_probes

    ops = gmma_ops()
    assert len([o for o in ops if "<" not in o.name]) == 2148
    extra = [o for o in ops if "<" in o.name]
    assert len(extra) >= 100
    results = compile_probes([probe_for(o) for o in extra])
    bad = [(r.probe.kernel_name, r.problem) for r in results if r.problem]
    assert not bad, f"{len(bad)} of {len(extra)} failed, e.g. {bad[:3]}"
    for r in results:
        assert set(r.kinds) == set(r.probe.sass_kinds), (r.probe.kernel_name, r.kinds)


# --- the GPU ---------------------------------------------------------------------------------

GPU_SAMPLE = [
    ("SM90_64x8x16_F16F16F16_SS", {}),
    ("SM90_64x24x16_F16F16F16_SS", {"a_major": "MN", "b_major": "MN"}),
    ("SM90_64x64x16_F32BF16BF16_SS", {"b_major": "MN"}),
    ("SM90_64x128x16_F16F16F16_SS", {"a_major": "MN"}),
    ("SM90_64x32x16_F32F16F16_RS", {"b_major": "MN"}),
    ("SM90_64x256x16_F32BF16BF16_RS", {}),
    ("SM90_64x16x8_F32TF32TF32_SS_TN", {}),
    ("SM90_64x200x8_F32TF32TF32_RS_TN", {}),
    ("SM90_64x256x32_F32E4M3E5M2_SS_TN", {}),
    ("SM90_64x40x32_F16E5M2E4M3_RS_TN", {}),
    ("SM90_64x48x32_S32S8U8_RS_TN", {}),
    ("SM90_64x256x32_S32U8S8_SS_TN_SATURATE", {}),
    ("SM90_64x8x256_S32U1U1_SS_TN_ANDPOPC", {}),
    ("SM90_64x64x256_S32U1U1_RS_TN_ANDPOPC", {}),
]


@pytest.mark.gpu
def test_gmma_probes_match_emulation_on_the_gpu(tmp_path):
    verify_on_gpu(GPU_SAMPLE, tmp_path)


def test_gpu_sample_is_runnable():
    for name, kw in GPU_SAMPLE:
        assert probe_for(mma_op(name, **kw)).runnable_on == ("sm_90a",)
    assert np.unique([name for name, _ in GPU_SAMPLE]).size == len(GPU_SAMPLE)
