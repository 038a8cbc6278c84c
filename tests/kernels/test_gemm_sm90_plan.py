"""The sm90 GEMM's data path on the CPU: what TMA writes is what every wgmma descriptor reads.

A model of each side, written from the documents rather than from cutemma's layouts:
- TMA (CUDA driver API, cuTensorMapEncodeTiled; PTX ISA cp.async.bulk.tensor): a box of
  (b0 contiguous, b1 rows) lands dense at its shared destination, element (i, j) at byte
  (i + b0 j) * size, then the shared byte address is swizzled (128B: bits [4,7) ^= [7,10)).
- wgmma (PTX ISA 9.7.15.5.1.2 canonical layouts, in bytes): K-major swizzled, row r, k:
  start + (r % 8) * row + (r / 8) * SBO + k * size; MN-major swizzled, (mn, k):
  start + (mn % E) * size + (mn / E) * LBO + (k % 8) * row + (k / 8) * SBO with E elements
  per swizzle row; then the same byte swizzle of the absolute address.
Every element each warpgroup's descriptor reads, in every k block, must be the element of
A (or B) the TiledMMA says it multiplies.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from cutemma.errors import TiledMmaError
from cutemma.kernels.sm90.plan import Sm90Config, Sm90Plan
from cutemma.kernels.sm90.source import gemm_sm90_source
from cutemma.smem import decode_gmma_desc

ROW_BYTES = {1: 128, 2: 64, 3: 32}  # wgmma descriptor layout_type -> swizzle row bytes
SWZ_BITS = {1: 3, 2: 2, 3: 1}


def byte_swizzle(addr: np.ndarray, bits: int) -> np.ndarray:
    return addr ^ ((addr >> 7) & ((1 << bits) - 1)) << 4


def tma_image(plan: Sm90Plan, which: str, base: int) -> dict[int, tuple[int, int]]:
    """Shared byte address -> (mn, k) of the tile element TMA put there (stage at ``base``)."""
    box = plan.tma[which]
    eb = plan.elem_bytes
    b0, b1 = box.box
    span = {"SW128": 128, "SW64": 64, "SW32": 32}[box.swizzle]  # a box row is one swizzle row
    assert b0 * eb == span
    bits = {128: 3, 64: 2, 32: 1}[span]
    image = {}
    for dc, do, off, _rank in plan.stage_copies(which):
        for j in range(b1):
            for i in range(b0):
                c, o = dc + i, do + j
                mn, k = (o, c) if box.contiguous == "K" else (c, o)
                addr = int(byte_swizzle(np.array(base + off * eb + (i + b0 * j) * eb), bits))
                assert addr not in image, "two elements land on one address"
                image[addr] = (mn, k)
    return image


def wgmma_reads(raw: int, major: str, rows: int, kdim: int, eb: int) -> np.ndarray:
    """[r, k] -> shared byte address a wgmma reads through descriptor ``raw``."""
    d = decode_gmma_desc(raw)
    start, lbo, sbo = d.start_address << 4, d.leading_byte_offset << 4, d.stride_byte_offset << 4
    row = ROW_BYTES[d.layout_type]
    r = np.arange(rows)[:, None]
    k = np.arange(kdim)[None, :]
    if major == "K":
        addr = start + (r % 8) * row + (r // 8) * sbo + k * eb
    else:
        e = row // eb
        addr = start + (r % e) * eb + (r // e) * lbo + (k % 8) * row + (k // 8) * sbo
    return byte_swizzle(addr, SWZ_BITS[d.layout_type])


CASES = [
    (Sm90Config(128, 128), "bf16", "K", "K"),
    (Sm90Config(128, 256), "bf16", "K", "N"),
    (Sm90Config(128, 128), "f16", "M", "K"),
    (Sm90Config(128, 256), "f16", "M", "N"),
    (Sm90Config(64, 128, consumers=1), "bf16", "M", "N"),
    (Sm90Config(128, 64), "tf32", "K", "K"),
    (Sm90Config(128, 128), "e4m3", "K", "K"),
    (Sm90Config(128, 128, block_k=256), "e4m3", "K", "K"),  # two swizzle atoms along K
    (Sm90Config(192, 128, consumers=3), "e4m3", "K", "K"),  # 3 consumer warpgroups
    (Sm90Config(128, 192), "e4m3", "K", "K"),  # promoted, 2 x 96 accumulators
    (Sm90Config(128, 128, schedule="pingpong"), "bf16", "M", "N"),  # one warpgroup per tile
    (Sm90Config(64, 128, schedule="pingpong"), "e4m3", "K", "K"),
    (Sm90Config(128, 256, cluster=2), "bf16", "K", "K"),
    (Sm90Config(128, 256, cluster=2), "f16", "M", "K"),
    (Sm90Config(128, 128, cluster=2), "bf16", "K", "K"),
    (Sm90Config(128, 256, cluster=2), "bf16", "K", "N"),
    (Sm90Config(128, 128, cluster=2), "f16", "M", "N"),
    (Sm90Config(128, 256, cluster=2, multicast="A"), "bf16", "K", "N"),  # pairs along N
    (Sm90Config(128, 128, cluster=2, multicast="A"), "f16", "M", "K"),
    (Sm90Config(128, 320, wgmma_n=64, epilogue="regs"), "bf16", "K", "N"),  # 5 wgmma along N
    (Sm90Config(128, 320, wgmma_n=160, promote=False), "e4m3", "K", "K"),  # B boxes of 160
    (Sm90Config(128, 256, wgmma_n=128), "f16", "M", "N"),
    (Sm90Config(128, 320, wgmma_n=(256, 64)), "bf16", "K", "N"),  # mixed: LBO 0 for the n64
    (Sm90Config(128, 320, wgmma_n=(256, 64)), "f16", "M", "K"),
    (Sm90Config(128, 192, wgmma_n=(128, 64)), "e4m3", "K", "K"),
    # two warpgroups side by side along N, each all 192 rows by half the columns
    (Sm90Config(192, 192, consumers_n=2), "bf16", "K", "K"),
    (Sm90Config(192, 192, consumers_n=2), "bf16", "M", "N"),  # B at SW64: atoms of 32 columns
    (Sm90Config(192, 160, consumers_n=2), "f16", "K", "N"),  # B at SW32: atoms of 16 columns
    (Sm90Config(192, 128, consumers_n=2), "e4m3", "K", "K"),
    (Sm90Config(128, 256, consumers_n=2), "bf16", "M", "K"),
]


@pytest.mark.parametrize("config,dtype,am,bm", CASES, ids=lambda x: str(getattr(x, "name", x)))
def test_tma_writes_what_wgmma_reads(config, dtype, am, bm):
    plan = Sm90Plan(config, dtype, am, bm)
    base = 3 * 1024 * 16  # a stage on the 1024-byte pattern
    for which in ("A", "B"):
        image = tma_image(plan, which, base)
        common, offs = plan.descriptors[which]
        major = plan.mn_major[which]
        for (w, im, kb), off in offs.items():
            # the TiledMMA: warpgroups (wm, wn), M first (consumers_m along M, consumers_n
            # along N); warpgroup w's wgmma multiplies A rows 64 wm + im * tm by the B rows
            # of N block jn (the key's middle index for B: wgmmas side by side along N) past
            # its warpgroup's wn * wgmma N
            wm, wn = w % config.consumers_m, w // config.consumers_m
            if which == "A":
                rows, r0, bits = 64, 64 * wm + im * plan.tm, common
            else:
                n0, tiled = plan.columns[im]
                rows, bits = tiled.atom.shape_mnk[1], plan.desc_b_bits.get(im, common)
                r0 = n0 + wn * rows
            raw = bits | ((base + off) >> 4)
            addrs = wgmma_reads(raw, major, rows, plan.tk, plan.elem_bytes)
            for r in range(rows):
                for k in range(plan.tk):
                    got = image.get(int(addrs[r, k]))
                    assert got == (r0 + r, kb * plan.tk + k), (which, w, kb, r, k, got)


# The generated kernel, CTA by CTA. In a cluster, a CTA's shared::cta addresses carry its
# rank above the 256 KiB window (SASS of these kernels: S2UR SR_CgaCtaId; ULEA base,
# CgaCtaId, 0x400, 0x18, i.e. (rank << 24) + 0x400; test_gemm_sm90_compile checks it).
# A multicast box lands "at the same CTA-relative offset as dstMem" in every CTA of the mask
# (PTX ISA, cp.async.bulk.tensor), and a descriptor keeps address bits [4, 18) of its start
# ("matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4"): both are CTA-relative.
CTA_WINDOW = 1 << 24


def _c(expr: str, env: dict) -> int:
    """One unsigned 32-bit C expression of the generated source, evaluated."""
    py = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)u(ll)?\b", r"\1", expr)
    py = py.replace("{", "[").replace("}", "]")
    while "?" in py:  # innermost (wg == i ? x : y) first
        py = re.sub(
            r"\((\w+) == (\d+) \? ([^()?:]+) : ([^()?:]+)\)", r"(\3 if \1 == \2 else \4)", py
        )
    value = eval(py, {"__builtins__": {}}, env)  # noqa: S307 - our own generated text
    return value if isinstance(value, list) else value & 0xFFFFFFFF


def _balanced(src: str, start: int) -> str:
    """The parenthesised expression of ``src`` opening at index ``start``."""
    depth = 0
    for i in range(start, len(src)):
        depth += {"(": 1, ")": -1}.get(src[i], 0)
        if depth == 0:
            return src[start : i + 1]
    raise AssertionError("unbalanced")


def _decl(src: str, name: str) -> str:
    """The initialiser of ``const uint32_t <name> = ...`` (up to ',' or ';' at depth 0)."""
    i = src.index(f" {name} = ") + len(name) + 4
    depth, j = 0, i
    while depth or src[j] not in ",;":
        depth += {"(": 1, ")": -1, "{": 1, "}": -1}.get(src[j], 0)
        j += 1
    return src[i:j]


def cta_images(src: str, plan: Sm90Plan, stage: int) -> dict[int, dict[int, tuple]]:
    """rank -> {CTA-relative byte: (operand, mn, k)}: what the producers' TMA lines of
    ``src`` (k tile 0 of the tile at m0 = n0 = 0) write into stage ``stage`` of each CTA."""
    cl = plan.config.cluster
    eb = plan.elem_bytes
    images = {r: {} for r in range(cl)}
    producer = src.split("setmaxnreg.dec")[1].split("setmaxnreg.inc")[0]
    loads = re.findall(r"tma_load_2d(_multicast)?\(([^;]*)\);", producer)
    assert len(loads) == len(plan.tma["A"].copies) + len(plan.tma["B"].copies)
    for q in range(cl):  # the issuing CTA
        env = {"rank": q, "stage": stage, "kt": 0, "m0": 0, "n0": 0, "BLOCK_K": plan.block_k}
        env["smem"] = _c(_decl(src, "smem").replace("smem_addr(smem_raw)", "raw"),
                         {"raw": q * CTA_WINDOW + 0x400})  # fmt: skip
        env["a_dst"] = _c(_decl(src, "a_dst"), env)
        env["b_dst"] = _c(_decl(src, "b_dst"), env)
        for multicast, args in loads:
            dst, tmap, c0, c1, _bar, *mask = (a.strip() for a in args.split(","))
            which = tmap[-1].upper()
            box = plan.tma[which]
            b0, b1 = box.box
            c0, c1, dst = _c(c0, env), _c(c1, env), _c(dst, env) % CTA_WINDOW
            receivers = [r for r in range(cl) if _c(mask[0], env) >> r & 1] if multicast else [q]
            for j in range(b1):
                for i in range(b0):
                    mn, k = (c1 + j, c0 + i) if box.contiguous == "K" else (c0 + i, c1 + j)
                    addr = int(byte_swizzle(np.array(dst + (i + b0 * j) * eb), 3))
                    for r in receivers:
                        assert addr not in images[r], "two elements land on one address"
                        images[r][addr] = (which, mn, k)
    return images


CTA_CASES = [
    (Sm90Config(128, 256, cluster=2), "bf16", "K", "N"),
    (Sm90Config(128, 128, cluster=2), "f16", "M", "N"),
    (Sm90Config(128, 256, cluster=2), "bf16", "M", "K"),
    (Sm90Config(128, 128), "bf16", "K", "N"),
    (Sm90Config(128, 256, cluster=2, multicast="A"), "bf16", "M", "N"),
    (Sm90Config(128, 128, cluster=2, multicast="A"), "bf16", "K", "K"),
]


@pytest.mark.parametrize("config,dtype,am,bm", CTA_CASES, ids=lambda x: str(getattr(x, "name", x)))
def test_every_cta_reads_what_the_cluster_wrote(config, dtype, am, bm):
    """The generated source, evaluated CTA by CTA (each at its cluster address): the TMA
    lines of every producer (multicast included) and the descriptors of every consumer
    warpgroup agree on where each element of the tile sits, and each CTA's full barrier
    expects the bytes that land in it. The N-major-B cluster bug (rank 1's descriptors ORed
    the rank bit 24 into LBO) fails this; K-major descriptors ignore LBO and passed."""
    plan = Sm90Plan(config, dtype, am, bm, "bf16")
    src = gemm_sm90_source(config, dtype, am, bm, "bf16")
    stage = plan.stages - 1
    images = cta_images(src, plan, stage)
    expect = int(re.search(r"mbar_expect_tx\(full, (\d+)\)", src).group(1))
    defines = dict(re.findall(r"#define (DESC_[AB]) (0x[0-9a-f]+)ull", src))
    desc = {k: int(v, 16) for k, v in defines.items()}
    consumer = src.split("setmaxnreg.inc")[1]
    a_off_name = re.search(r"const uint32_t (a_off\[\d+\]\[\d+\]) = ", consumer).group(1)
    # every wgmma's operands: "l"(desc_a<im>_<kb>), "l"((DESC_B | <start expr>))
    mmas = [
        (int(m.group(1)), int(m.group(2)), _balanced(consumer, m.end()))
        for m in re.finditer(r'"l"\(desc_a(\d+)_(\d+)\), "l"\(\(DESC_B \| ', consumer)
    ]
    assert len(mmas) == plan.mma_m * plan.k_blocks
    for r, image in images.items():
        assert len(image) * plan.elem_bytes == expect, (r, len(image))
        for w in range(config.consumers):
            env = {"rank": r, "stage": stage, "wg": w}
            env["smem"] = _c(_decl(src, "smem").replace("smem_addr(smem_raw)", "raw"),
                             {"raw": r * CTA_WINDOW + 0x400})  # fmt: skip
            env["a_addr"] = _c(_decl(consumer, "a_addr"), env)
            env["b_addr"] = _c(_decl(consumer, "b_addr"), env)
            env["a_off"] = _c(_decl(consumer, a_off_name), env)
            for im, kb, b_expr in mmas:
                a_decl = re.search(rf"desc_a{im}_{kb} = DESC_A \| ", consumer)
                starts = {"A": _balanced(consumer, a_decl.end()), "B": b_expr}
                for which, expr in starts.items():
                    raw = desc[f"DESC_{which}"] | _c(expr, env)
                    rows = 64 if which == "A" else config.block_n
                    addrs = wgmma_reads(raw, plan.mn_major[which], rows, plan.tk, plan.elem_bytes)
                    r0 = (64 * w + im * plan.tm) if which == "A" else 0
                    for i in range(rows):
                        for k in range(plan.tk):
                            got = image.get(int(addrs[i, k]))
                            assert got == (which, r0 + i, kb * plan.tk + k), (r, w, im, kb, i, k)


def test_stage_bytes_and_expect_tx():
    """expect_tx counts every byte the stage's boxes write (zero fill included)."""
    plan = Sm90Plan(Sm90Config(128, 256), "bf16", "M", "N")
    assert plan.tma["A"].bytes == 128 * 64 * 2 and plan.tma["B"].bytes == 256 * 64 * 2
    two = Sm90Plan(Sm90Config(128, 256, cluster=2), "bf16", "M", "K")
    assert two.tma["B"].bytes == 128 * 64 * 2  # each CTA of the pair loads half of B
    assert plan.stage_bytes == plan.tma["A"].bytes + plan.tma["B"].bytes
    assert plan.shared_bytes <= 227 * 1024
    assert plan.stages == 4  # 48 KiB stages: 4 fit in 227 KiB, 5 do not


def test_bad_plans_are_named():
    with pytest.raises(TiledMmaError, match="K-major only"):
        Sm90Plan(Sm90Config(), "tf32", "M", "K")
    with pytest.raises(TiledMmaError, match="do not fit"):
        Sm90Plan(Sm90Config(128, 256, stages=6), "bf16", "K", "K")
    with pytest.raises(TiledMmaError, match="multiple of 64"):
        Sm90Config(96, 128)
    with pytest.raises(TiledMmaError, match="'A' with cluster=2"):
        Sm90Config(128, 128, multicast="A")  # nothing to share without a pair
    with pytest.raises(TiledMmaError, match="multicast 'C'"):
        Sm90Config(128, 128, cluster=2, multicast="C")
    with pytest.raises(TiledMmaError, match="promoted fp8 accumulation"):
        Sm90Plan(Sm90Config(128, 256), "e4m3", "K", "K")  # 2 x 128 accumulators per thread
    assert not Sm90Plan(Sm90Config(128, 256, promote=False), "e4m3", "K", "K").promote
    assert Sm90Plan(Sm90Config(128, 128), "e4m3", "K", "K").promote
    assert not Sm90Plan(Sm90Config(128, 256), "bf16", "K", "K").promote  # 16-bit: f32 already
    # schedules: a named error for an unknown one, pingpong needs 2 warpgroups and no cluster
    with pytest.raises(TiledMmaError, match="schedule 'turns' in"):
        Sm90Config(schedule="turns")
    with pytest.raises(TiledMmaError, match="pingpong with consumers=2 and cluster=1"):
        Sm90Config(192, 128, consumers=3, schedule="pingpong")
    with pytest.raises(TiledMmaError, match="pingpong with consumers=2 and cluster=1"):
        Sm90Config(128, 128, cluster=2, schedule="pingpong")
    with pytest.raises(TiledMmaError, match="alternate with 2 or 3"):
        Sm90Config(64, 128, consumers=1, schedule="alternate")
    # a pingpong warpgroup holds the whole tile: 128x256 bf16 is 256 accumulators per thread,
    # 128x128 promoted fp8 2 x 128; both over 232 - 32 registers
    with pytest.raises(TiledMmaError, match="at most 200 fit"):
        Sm90Plan(Sm90Config(128, 256, schedule="pingpong"), "bf16", "K", "K")
    with pytest.raises(TiledMmaError, match="at most 100 fit"):
        Sm90Plan(Sm90Config(128, 128, schedule="pingpong"), "e4m3", "K", "K")
    assert Sm90Plan(Sm90Config(128, 192), "e4m3", "K", "K").acc_per_thread == 96
    # promote="overlap": 3 sets (two wgmma targets + f32); 3 x 64 fits 200, 3 x 96 does not
    assert Sm90Plan(Sm90Config(128, 128, promote="overlap"), "e4m3", "K", "K").overlap
    with pytest.raises(TiledMmaError, match="keeps 3 sets of 96 .* at most 66 fit"):
        Sm90Plan(Sm90Config(128, 192, promote="overlap"), "e4m3", "K", "K")
    assert not Sm90Plan(Sm90Config(128, 256, promote="overlap"), "bf16", "K", "K").overlap
    with pytest.raises(TiledMmaError, match="promote 'always' in"):
        Sm90Config(promote="always")
    with pytest.raises(TiledMmaError, match="promote='overlap' with schedule='cooperative'"):
        Sm90Config(64, 128, promote="overlap", schedule="pingpong")
    assert Sm90Config(128, 128, promote="overlap").name == "b128x128_c2_sauto_ovl"


def wgmma_c_coords(t: int, v: int) -> tuple[int, int]:
    """(m, n) of accumulator v of thread t in a 64xN wgmma warpgroup (PTX ISA 9.7.15.5.1.1,
    the f32 D fragment: row = 16 * warp + lane / 4 + 8 * (v / 2 % 2), col = 8 * (v / 4) +
    2 * (lane % 4) + v % 2)."""
    warp, lane = t // 32, t % 32
    return 16 * warp + lane // 4 + 8 * (v // 2 % 2), 8 * (v // 4) + 2 * (lane % 4) + v % 2


def assert_32_banks(plan: Sm90Plan) -> None:
    """Every warp's 32-bit stores of one accumulator pair into the staging tile hit 32
    different banks."""
    thr, consts = plan.epilogue_smem
    sw = plan.smem_D.outer
    for warp in range(plan.consumer_threads // 32):
        for v in range(0, plan.acc_per_thread, 2):
            banks = {
                (2 * sw(thr(t) + consts[v]) // 4) % 32 for t in range(32 * warp, 32 * warp + 32)
            }
            assert len(banks) == 32, (warp, v)


STAGING_CASES = [
    (Sm90Config(128, 256), "bf16"),
    (Sm90Config(128, 128), "f16"),
    (Sm90Config(256, 128), "bf16"),  # 2 M repeats per warpgroup
    (Sm90Config(192, 128, consumers=3), "bf16"),
    (Sm90Config(128, 128, schedule="pingpong"), "bf16"),  # one warpgroup, 2 M repeats
    (Sm90Config(128, 256, wgmma_n=128), "bf16"),  # 2 N repeats per warpgroup
    (Sm90Config(128, 320, wgmma_n=64), "f16"),  # 5 N repeats (2 stages beside the staging)
    (Sm90Config(128, 192, wgmma_n=(128, 64), schedule="pingpong"), "bf16"),  # mixed, 2 M
    # warpgroups side by side along N: SW64 (96 columns each), SW32 (80), SW128 (64)
    (Sm90Config(192, 192, consumers_n=2), "bf16"),
    (Sm90Config(192, 160, consumers_n=2), "f16"),
    (Sm90Config(192, 128, consumers_n=2), "bf16"),
]


@pytest.mark.parametrize("config,out", STAGING_CASES, ids=str)
def test_staging_tile_is_what_tma_stores(config, out):
    """The TMA-store epilogue: each thread writes acc v at swizzle(thread part + constant);
    the TMA store boxes (dense rows of 128 bytes, SW128 on the shared address) read the
    element (m, n) of the block tile from exactly there; a warp's 32-bit stores hit 32
    different banks."""
    plan = Sm90Plan(config, "bf16", "K", "N", out)
    bits = {"SW128": 3, "SW64": 2, "SW32": 1}[plan.tma_D.swizzle]
    assert plan.tma_store and plan.tma_D.box[0] * 2 == 16 << bits  # a box row: a swizzle row
    base = 1024 * 48
    thr, consts = plan.epilogue_smem
    sw = plan.smem_D.outer
    # TMA store model: box (b0 n, b1 m) read dense from off, byte-swizzled
    b0, b1 = plan.tma_D.box
    where = {}
    for dc, do, off in plan.tma_D.copies:
        for j in range(b1):
            for i in range(b0):
                addr = int(byte_swizzle(np.array(base + (off + i + b0 * j) * 2), bits))
                where[do + j, dc + i] = addr  # (m, n) -> shared byte
    assert len(set(where.values())) == config.block_m * config.block_n
    per_wg = plan.acc_per_thread
    blocks = [(plan.acc_offset(i, j), i, j) for i in range(plan.mma_m) for j in range(plan.mma_n)]
    for t in range(plan.consumer_threads):
        for v in range(per_wg):
            # the mainloop's wgmma (im, jn) writes a run of values from acc_offset(im, jn)
            start, im, jn = max(b for b in blocks if b[0] <= v)
            vv = v - start
            m, n = wgmma_c_coords(t % 128, vv)
            # warpgroup (wm, wn) of the TiledMMA (M first), then its M and N repeats
            wm, wn = t // 128 % config.consumers_m, t // 128 // config.consumers_m
            m += 64 * wm + im * 64 * config.consumers_m
            n += wn * plan.columns[jn][1].atom.shape_mnk[1] + plan.columns[jn][0]
            got = base + 2 * sw(thr(t) + consts[v])
            assert got == where[m, n], (t, v, m, n)
    assert_32_banks(plan)


def test_staging_tile_takes_smem_from_the_ring():
    """128x256 bf16 out: the 64 KiB staging tile leaves room for 3 stages of 48 KiB;
    f32 outputs and epilogue='regs' keep 4 stages and no staging tile."""
    assert Sm90Plan(Sm90Config(128, 256), "bf16", "K", "K", "bf16").stages == 3
    assert Sm90Plan(Sm90Config(128, 256), "bf16", "K", "K", "f32").stages == 4
    regs = Sm90Plan(Sm90Config(128, 256, epilogue="regs"), "bf16", "K", "K", "bf16")
    assert regs.stages == 4 and regs.bytes_D == 0
    assert Sm90Plan(Sm90Config(128, 256), "bf16", "K", "K", "bf16").shared_bytes <= 227 * 1024


@pytest.mark.parametrize("n", [192, 128, 64])
def test_split_halves_are_the_accumulator_halves(n):
    """promote="split" issues two 64 x n/2 wgmmas into the two halves of the 64 x n set:
    by the catalog's C layouts (proven against the PTX ISA fragment tables), value i < v/2
    of every thread of the half-width atom is value i of the full-width one, and the hi
    atom's value i (B rows shifted by n/2) is full-width value v/2 + i. B's hi start is
    row n/2 of the stage (128-byte K-major rows), k blocks 32 bytes apart."""
    from cutemma.mma.traits import tv_table
    from cutemma.tiled import make_tiled_mma

    full = tv_table(make_tiled_mma(f"SM90_64x{n}x32_F32E4M3E4M3_SS_TN").tv_layout_C_tiled)
    half = tv_table(make_tiled_mma(f"SM90_64x{n // 2}x32_F32E4M3E4M3_SS_TN").tv_layout_C_tiled)
    v = len(full[0])
    for t in range(128):
        for i in range(v // 2):
            m, c = half[t][i] % 64, half[t][i] // 64  # (m, n) of the half tile, col-major
            assert full[t][i] == m + 64 * c
            assert full[t][v // 2 + i] == m + 64 * (c + n // 2)
    plan = Sm90Plan(Sm90Config(128, n, promote="split"), "e4m3", "K", "K", "bf16")
    ops, offs = plan.split_halves
    assert [op.c.count for op in ops] == [v // 2, v // 2]
    assert offs == {(h, kb): h * (n // 2) * 128 + 32 * kb for h in (0, 1) for kb in range(4)}


@pytest.mark.parametrize("n", [200, 136, 24])
def test_uneven_split_parts_are_the_accumulators_first_and_last_values(n):
    """Token tiles an odd multiple of 8 wide split into a part 8 columns wider than the
    other (config.split_widths): the lo atom's value i is full-width value i, the hi atom's
    (B rows shifted by lo) is full-width value lo / 2 + i, by the catalog's C layouts; B's
    hi start is row lo of the stage; the kernel text declares and adds each part's count."""
    from cutemma.kernels.sm90.config import split_widths
    from cutemma.kernels.sm90.source import gemm_sm90_source
    from cutemma.kernels.space import mid_swapped_kernel
    from cutemma.mma.traits import tv_table
    from cutemma.tiled import make_tiled_mma

    lo, hi = split_widths(n)
    assert lo + hi == n and lo - hi == 8 and lo % 8 == hi % 8 == 0
    full = tv_table(make_tiled_mma(f"SM90_64x{n}x32_F32E4M3E4M3_SS_TN").tv_layout_C_tiled)
    parts = [tv_table(make_tiled_mma(f"SM90_64x{w}x32_F32E4M3E4M3_SS_TN").tv_layout_C_tiled)
             for w in (lo, hi)]  # fmt: skip
    for t in range(128):
        for h, (part, start) in enumerate(zip(parts, (0, lo))):
            for i, coord in enumerate(part[t]):
                m, c = coord % 64, coord // 64
                assert full[t][h * (lo // 2) + i] == m + 64 * (c + start)
    cfg = replace(mid_swapped_kernel(n, "e4m3", False), swap_ab=False)
    plan = Sm90Plan(cfg, "e4m3", "K", "K", "bf16")
    ops, offs = plan.split_halves
    assert [op.c.count for op in ops] == [lo // 2, hi // 2]
    assert offs == {(h, kb): h * lo * 128 + 32 * kb for h in (0, 1) for kb in range(4)}
    text = gemm_sm90_source(cfg, "e4m3", "K", "K", "bf16")
    assert f"float accL[{lo // 2}], accH[{hi // 2}], accf[{n // 2}];" in text
    assert f"accf[{lo // 2} + i] += accH[i];" in text
    assert text.count(f"m64n{lo}k32") > 0 and text.count(f"m64n{hi}k32") > 0


TMA2_CASES = [
    (Sm90Config(128, 192, promote="split", epilogue="tma2"), "e4m3"),  # 96-column halves
    (Sm90Config(128, 256, epilogue="tma2"), "bf16"),  # 128-column halves
    (Sm90Config(128, 128, schedule="pingpong", epilogue="tma2"), "bf16"),
]


@pytest.mark.parametrize("config,dtype", TMA2_CASES, ids=str)
def test_tma2_passes_store_every_element_once(config, dtype):
    """epilogue="tma2": a staging tile of half the columns, stored in two passes; each
    accumulator is written in its column's pass at swizzle(thread part + constant), where
    the pass's TMA boxes (n offset pass x half) read C(m, n) of the block; no element is
    stored twice or missed, and a warp's 32-bit stores of one value hit 32 banks. The
    ring gets the freed shared memory."""
    plan = Sm90Plan(config, dtype, "K", "K", "bf16")
    full = Sm90Plan(replace(config, epilogue="tma"), dtype, "K", "K", "bf16")
    w = config.block_n // 2
    assert plan.d_passes == 2 and plan.d_width == w and plan.bytes_D * 2 == full.bytes_D
    assert plan.stages >= full.stages
    bits = {"SW128": 3, "SW64": 2, "SW32": 1}[plan.tma_D.swizzle]
    base = 1024 * 48
    thr, consts = plan.epilogue_smem
    sw = plan.smem_D.outer
    b0, b1 = plan.tma_D.box
    where = {}
    for h in range(2):
        for dc, do, off in plan.tma_D.copies:
            for j in range(b1):
                for i in range(b0):
                    addr = int(byte_swizzle(np.array(base + (off + i + b0 * j) * 2), bits))
                    assert (do + j, h * w + dc + i) not in where
                    where[do + j, h * w + dc + i] = (h, addr)
    assert len(where) == config.block_m * config.block_n
    per_wg = plan.acc_per_thread
    for t in range(plan.consumer_threads):
        for v in range(per_wg):
            im, vv = divmod(v, per_wg // plan.mma_m)
            m, n = wgmma_c_coords(t % 128, vv)
            m += 64 * (t // 128) + im * 64 * plan.tile_wgs
            got = (plan.epilogue_passes[v], base + 2 * sw(thr(t) + consts[v]))
            assert got == where[m, n], (t, v, m, n)
    assert_32_banks(plan)


def test_wgmma_widths_are_one_config_however_written():
    """wgmma_n as a list (JSON, the tuned store), numpy ints, or equal widths: the same
    config, hash and kernel name as the canonical spelling; the tile's own N is None."""
    import json
    from dataclasses import asdict

    from cutemma.kernels.space import WIDE_16

    again = Sm90Config(**json.loads(json.dumps(asdict(WIDE_16))))
    assert again == WIDE_16 and hash(again) == hash(WIDE_16) and again.wgmma_n == (256, 64)
    assert Sm90Config(128, 320, wgmma_n=[np.int64(64)] * 5) == Sm90Config(128, 320, wgmma_n=64)
    assert Sm90Config(128, 128, wgmma_n=(128,)) == Sm90Config(128, 128)
    assert WIDE_16.wgmma_columns == ((0, 256), (256, 64))
    assert Sm90Config(128, 320, wgmma_n=64).wgmma_columns[-1] == (256, 64)
