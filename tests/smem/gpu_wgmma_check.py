"""The GPU as third witness: wgmma (sm90a) reads A and B through descriptors from
``make_gmma_desc`` out of shared-memory images placed by cutemma's swizzled tile layouts.

Host: a (64 x 64) tile of A (M x K) and of B (N x K), bf16, in the layout of
``tile_to_shape(gmma_layout_atom(major, swizzle, 'bf16'), (64, 64))``; element (i, k) goes to
``image[tile(i, k)]``. The kernel copies the images verbatim into 1024-byte-aligned shared
memory (it knows no layout), adds the buffer address to each descriptor's start field and runs
four ``wgmma.m64n64k16`` (one per 16-wide K block, each with its own descriptor). D = A B^T
must come out exact (small integers).

Run in a fresh process (torch before cutemma, as tests/cuda/gpu_checks.py explains):
    python tests/smem/gpu_wgmma_check.py            # every case must be exact
    python tests/smem/gpu_wgmma_check.py --control  # SBO off by 16 bytes: every case must fail
    python tests/smem/gpu_wgmma_check.py --base-offset [--control]  # tiles off the repeat
"""

from __future__ import annotations

import sys

import numpy as np
import torch  # before cutemma

from cutemma.cuda.compile import compile
from cutemma.cuda.launch import load_kernel
from cutemma.cuda.source import Param
from cutemma.layout import tile_to_shape, zipped_divide
from cutemma.smem import gmma_layout_atom, make_gmma_desc

MN, K, KB = 64, 64, 16
D_REGS = MN * 64 // 128  # m64n64 f32: 32 accumulators per thread


def _source() -> str:
    regs = ", ".join(f"%{i}" for i in range(D_REGS))
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(D_REGS))
    n = D_REGS
    body = (
        "{\\n.reg .pred p;\\nsetp.ne.b32 p, %" + str(n + 2) + ", 0;\\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
        + regs
        + "}, %"
        + str(n)
        + ", %"
        + str(n + 1)
        + ", p, 1, 1, %TA%, %TB%;\\n}\\n"
    )
    wgmma = 'asm volatile("' + body + '" : ' + outs + ' : "l"(da), "l"(db), "r"(scale));'
    return r"""
extern "C" __global__ void wgmma_desc_check(const unsigned short* __restrict__ a_img,
    const unsigned short* __restrict__ b_img, const unsigned long long* __restrict__ a_desc,
    const unsigned long long* __restrict__ b_desc, float* __restrict__ out, int a_len, int b_len)
{
    __shared__ __align__(1024) unsigned short sa[8192];
    __shared__ __align__(1024) unsigned short sb[8192];
    for (int i = threadIdx.x; i < 8192; i += blockDim.x) {
        sa[i] = i < a_len ? a_img[i] : 0;
        sb[i] = i < b_len ? b_img[i] : 0;
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    unsigned a_base = (unsigned)__cvta_generic_to_shared(sa) >> 4;
    unsigned b_base = (unsigned)__cvta_generic_to_shared(sb) >> 4;
    float d[%NREG%];
    for (int i = 0; i < %NREG%; ++i) d[i] = 0.f;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    for (int kb = 0; kb < 4; ++kb) {
        unsigned long long da = a_desc[kb] + a_base;  // start field is bits 0-13, >> 4 units
        unsigned long long db = b_desc[kb] + b_base;
        int scale = kb > 0;
        %WGMMA%
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    // D fragment of wgmma m64nNk16 (PTX ISA, "Register fragments" for wgmma D):
    // warp w, lane l: rows 16w + l/4 (+8), columns 8i + 2(l%4) (+1)
    int w = threadIdx.x / 32, l = threadIdx.x % 32;
    for (int i = 0; i < %NREG% / 4; ++i) {
        int r = 16 * w + l / 4, c = 8 * i + 2 * (l % 4);
        out[r * 64 + c] = d[4 * i];
        out[r * 64 + c + 1] = d[4 * i + 1];
        out[(r + 8) * 64 + c] = d[4 * i + 2];
        out[(r + 8) * 64 + c + 1] = d[4 * i + 3];
    }
}
""".replace("%WGMMA%", wgmma).replace("%NREG%", str(D_REGS))


PARAMS = [
    Param("const unsigned short*", "a_img"),
    Param("const unsigned short*", "b_img"),
    Param("const unsigned long long*", "a_desc"),
    Param("const unsigned long long*", "b_desc"),
    Param("float*", "out"),
    Param("int", "a_len"),
    Param("int", "b_len"),
]


def image_and_descs(values: np.ndarray, major: str, swizzle: str, start: int = 0):
    """The shared-memory image of ``values`` (rows = M or N, cols = K) and 4 descriptors,
    for a tile at byte ``start`` of a 1024-byte-aligned buffer (the image begins there)."""
    tile = tile_to_shape(gmma_layout_atom(major, swizzle, "bf16"), (MN, K))
    bits = values.astype(np.float32).view(np.uint32) >> 16  # exact: small integers
    img = np.zeros(start // 2 + tile.cosize(), dtype=np.uint16)
    for i in range(MN):
        for k in range(K):
            img[start // 2 + tile(i, k)] = bits[i, k]
    blocks = zipped_divide(tile, (MN, KB))
    descs = [make_gmma_desc(blocks((None, None), (0, kb)), major, "bf16", start).raw
             for kb in range(4)]  # fmt: skip
    return img, np.array(descs, dtype=np.uint64)


def check(major: str, swizzle: str, control: bool = False, start: int = 0) -> None:
    rng = np.random.default_rng(90)
    a = rng.integers(-3, 4, size=(MN, K)).astype(np.float32)
    b = rng.integers(-3, 4, size=(MN, K)).astype(np.float32)
    a_img, a_desc = image_and_descs(a, major, swizzle, start)
    b_img, b_desc = image_and_descs(b, major, swizzle, start)
    if control and start:  # negative control: the base offset left at 0 must be wrong
        a_desc = a_desc & ~np.uint64(7 << 49)
    elif control:  # negative control: SBO one 16-byte unit off must give wrong results
        a_desc = a_desc + np.uint64(1 << 32)
    t = "1" if major == "MN" else "0"  # imm-trans-a/b: 1 = MN-major (transposed)
    src = _source().replace("%TA%", t).replace("%TB%", t)
    kernel = load_kernel(compile(src, "sm_90a"), "wgmma_desc_check", PARAMS)
    dev = "cuda"
    out = torch.zeros(MN * MN, dtype=torch.float32, device=dev)
    args = [
        torch.from_numpy(a_img.view(np.int16)).to(dev).view(torch.uint16)
        if hasattr(torch, "uint16") else torch.from_numpy(a_img.view(np.int16)).to(dev),
        torch.from_numpy(b_img.view(np.int16)).to(dev).view(torch.uint16)
        if hasattr(torch, "uint16") else torch.from_numpy(b_img.view(np.int16)).to(dev),
        torch.from_numpy(a_desc.view(np.int64)).to(dev).view(torch.uint64)
        if hasattr(torch, "uint64") else torch.from_numpy(a_desc.view(np.int64)).to(dev),
        torch.from_numpy(b_desc.view(np.int64)).to(dev).view(torch.uint64)
        if hasattr(torch, "uint64") else torch.from_numpy(b_desc.view(np.int64)).to(dev),
        out,
        len(a_img),
        len(b_img),
    ]  # fmt: skip
    kernel(*args, grid=1, block=128)
    torch.cuda.synchronize()
    got = out.cpu().numpy().reshape(MN, MN)
    want = a @ b.T
    bad = np.argwhere(got != want)
    status = (
        "ok" if len(bad) == 0 else f"{len(bad)} wrong, first at {tuple(int(x) for x in bad[0])}"
    )
    where = f" at +{start:#x} (base offset {a_desc[0] >> 49 & 7})" if start else ""
    print(f"{major:>2}-major {swizzle:<5}{where}{' (control)' if control else ''}: {status}")
    if (len(bad) > 0) != control:
        raise SystemExit(1)


if __name__ == "__main__":
    cases = [(m, s) for m in ("K", "MN") for s in ("INTER", "SW32", "SW64", "SW128")]
    failed = 0
    control = "--control" in sys.argv  # expect every case to fail with a corrupted SBO
    if "--base-offset" in sys.argv:  # tiles 128*r bytes past the pattern repeat
        cases = [(m, s, 128 * r) for m in ("K", "MN") for s, n in (("SW32", 2), ("SW64", 4),
                 ("SW128", 8)) for r in range(1, n)]  # fmt: skip
    else:
        cases = [(m, s, 0) for m, s in cases]
    for major, swizzle, start in cases:
        try:
            check(major, swizzle, control, start)
        except SystemExit:
            failed += 1
    sys.exit(1 if failed else 0)
