"""The policy's decode picks: decode-sized sm90 calls (M <= 64 tokens) swap A and B, and
(mostly) share K by stream-K.

With a few tokens a GEMM is a stream of B. Swapped, D^T = B^T A^T: the large N of B fills
wgmma's 64-row M (the kernel's A is B^T, a view), the tokens sit in wgmma's N of 16..64
(the kernel's B is A^T), and the kernel writes D^T, a transposed view of D. Stream-K
(:mod:`.streamk`) then shares the k iterations of those N/64 (or N/128) tiles equally over
every SM, so each SM streams its part of B to the end. Nothing is copied: the swap is
three views, and the kernel is the sm90 kernel of a stream-K config.

The configs (bench/results/raw/streamk-explore-run2.json, H100, against cuBLAS in the same
process; before: split-K or 128x128 tiles at 0.75-0.95x):

- 64-row tiles of one consumer warpgroup, shared by stream-K: fp8 with K tiles of 256
  bytes (block_k 256: each TMA row of the K-major B^T is 256 contiguous bytes), 0.96-1.06x;
  16-bit with 128-byte K rows, 0.96-1.01x.
- Except where N/64 tiles fall between one and two waves of the SMs ((N, K) = (10240,
  8192): 160 tiles; the CTAs' shares start at scattered k of neighbouring tiles, and 16-bit
  ran 0.78x). There both families take 128-row tiles of two warpgroups, whole, under one
  wave. 16-bit: 0.99-1.00x at 16-32 tokens, 0.93x at 64, against 0.97-0.98x and 0.91x with
  the 80 tiles shared over all SMs (raw/decode-configs-run9.json). fp8 (N = 10240, 12288,
  14336; 16-64 tokens; raw/fp8-between-waves-run2.json): 1.02-1.14x, against 0.91-1.12x for
  64-row stream-K below 33 tokens and the plain 128x128 kernel above. Two rows were faster
  the old way, within the spread between runs: 16 tokens at N = 10240, 1.10 against 1.07x,
  and 64 at N = 14336, 1.04 against 1.02x.

Weights of at most pick.EVICT_FIRST_MAX_BYTES stream in under an L2 evict-first policy
(``evict_first="A"``, the kernel's A being B^T: ``_efa`` in the names below).

The ring is as deep as keeps about :data:`IN_FLIGHT_BYTES` of weights requested over the
grid (:func:`stream_stages`): fp8's 64-row tiles on 132 SMs get 4 stages (``_s4``), 16-bit
128-row tiles on 80 CTAs 6; where that is the plan's most (16-bit 64-row tiles), the name
keeps ``sauto``.

A programmatic dependent launch (``replace(config, pdl=True)``) is left to the caller. In a
CUDA graph of fp8 decode calls, each kernel warms L2 with its first k tiles while the one
before it ends, and that was 0-8% faster per call. Timed with L2 flushed before every call,
which is how the inference table times, it was 0-4% slower. 16-bit's were 2.5% faster in
the graph and 1-2% slower flushed (raw/decode-pdl-run13.json, -run14.json,
inference-run16-fp8-pdl.json).

>>> decode_config(16, 8192, 8192, "bf16").name, decode_config(1, 10240, 8192, "bf16").name
('b64x16_c1_sauto_eregs_efa_sk_swap', 'b128x16_c2_s6_eregs_efa_swap')
>>> decode_config(64, 8192, 8192, "e4m3").name, decode_config(65, 8192, 8192, "bf16")
('b64x64x256_c1_s4_eregs_efa_sk_swap', None)
>>> decode_config(32, 8192, 8192, "e4m3").name, decode_config(33, 10240, 8192, "e4m3").name
('b64x32x256_c1_s4_eregs_efa_sk_swap', 'b128x40x256_c2_s3_eregs_efa_swap')
>>> decode_config(16, 57344, 8192, "bf16").name  # 940 MB of weights: no hint
'b64x16_c1_sauto_eregs_sk_swap'
"""

from __future__ import annotations

from cutemma.kernels.pick import EVICT_FIRST_MAX_BYTES
from cutemma.kernels.sm90.config import (
    ATOMS_SM90,
    FP8,
    MAX_STAGES,
    SWIZZLE_ROW_BYTES,
    Sm90Config,
)

SWAP_MAX_M = 64  # the tokens fit one wgmma N (<= 64 here: one 64 x 64 accumulator tile)
ROWS = 64  # a swapped tile's rows of B^T: one wgmma M (128: two warpgroups' rows)
TOKENS_MIN = 16  # the narrowest token tile (8 was no faster, run 2)
FP8_BLOCK_K = 256  # fp8: 256-byte K rows per TMA box row
# Weights requested and not yet landed, all CTAs together: about DRAM's bandwidth times its
# latency (3 TB/s x ~2.5 us). The plan's 8 stages put 10-17 MB in flight on (10240, 8192);
# a k tile's median wait from issue to use rose to 6 us in the stream's first 15 us (NOTES,
# session 9), and 4 stages of fp8's 64-row tiles, 6 of 16-bit's 80 128-row tiles, ran 2-7%
# faster at 1-64 tokens; other shapes moved within 1-2% (raw/decode-stages-run6.json)
IN_FLIGHT_BYTES = 8 << 20


def decode_config(m: int, n: int, k: int, dtype: str, sms: int = 132) -> Sm90Config | None:
    """The swapped config for an (m, n, k) call of ``dtype`` (the kernel's dtype name,
    'bf16', 'e4m3', ...): 64-row tiles shared by stream-K, or 128-row tiles run whole where
    64-row ones would fall between one and two waves of the ``sms`` SMs. None when the call
    is not decode-sized (m > 64) or the type has no swap here (tf32). The config
    (``swap_ab``) is its kernel's for the swapped problem (n, m, k)."""
    if m > SWAP_MAX_M or m < 1 or dtype == "tf32" or dtype not in ATOMS_SM90:
        return None
    between_waves = sms < -(-n // ROWS) < 2 * sms  # ROWS-row tiles: one wave and a part
    # 128-row tiles under a wave, whole, between waves (module docstring)
    return _swapped(m, n, k, dtype, sms, whole=between_waves)


def decode_alternatives(m: int, n: int, k: int, dtype: str, sms: int = 132) -> list[Sm90Config]:
    """:func:`decode_config`'s config, then the other tiling: 128-row tiles whole where it
    shares 64-row tiles by stream-K, and the reverse, for :func:`cutemma.tune` to time
    both (they were within a few percent of each other on many rows:
    raw/fp8-between-waves-run2.json, decode-rows-run4.json); empty where the call is not
    decode-sized.

    >>> [c.name for c in decode_alternatives(16, 10240, 8192, "e4m3")]
    ['b128x16x256_c2_s3_eregs_efa_swap', 'b64x16x256_c1_s4_eregs_efa_sk_swap']
    """
    first = decode_config(m, n, k, dtype, sms)
    if first is None:
        return []
    return [first, _swapped(m, n, k, dtype, sms, whole=first.stream_k)]


def _swapped(m: int, n: int, k: int, dtype: str, sms: int, whole: bool) -> Sm90Config:
    """The swapped config: 128-row tiles run whole (``whole``), else 64-row tiles of one
    warpgroup shared by stream-K; the ring from :func:`stream_stages`."""
    tokens = swap_tokens(m)
    # D^T is column-major (its M, B's N, is D's contiguous dim): no TMA store; the register
    # epilogue needs no staging tile (of any token width: 128 x 24 has no swizzled atom)
    kw = {"stream_k": not whole, "epilogue": "regs", "swap_ab": True}
    if n * k * ATOMS_SM90[dtype][1] <= EVICT_FIRST_MAX_BYTES:
        kw["evict_first"] = "A"  # the kernel's A is B^T: the weights (pick.EVICT_FIRST_MAX_BYTES)
    # fp8: 256-byte K rows; 16-bit: the plan's one 128-byte row (block_k None)
    block_k, k_bytes = (FP8_BLOCK_K, FP8_BLOCK_K) if dtype in FP8 else (None, SWIZZLE_ROW_BYTES)
    if whole:
        stages = stream_stages(2 * ROWS, k_bytes, min(-(-n // (2 * ROWS)), sms))
        return Sm90Config(2 * ROWS, tokens, block_k=block_k, stages=stages, **kw)
    stages = stream_stages(ROWS, k_bytes, sms)
    return Sm90Config(ROWS, tokens, block_k=block_k, consumers=1, stages=stages, **kw)


def swap_tokens(m: int) -> int:
    """A swapped kernel's columns for ``m`` rows of the call: m rounded up to a multiple of
    8 (wgmma's N step), at least :data:`TOKENS_MIN`.

    >>> swap_tokens(1), swap_tokens(17)
    (16, 24)
    """
    return max(TOKENS_MIN, -(-m // 8) * 8)


def stream_stages(rows: int, k_bytes: int, ctas: int) -> int | None:
    """The ring depth that keeps about :data:`IN_FLIGHT_BYTES` of weights in flight when
    ``ctas`` CTAs each stream tiles of ``rows`` rows by ``k_bytes`` bytes of K; None (the
    plan's depth, as many as fit up to MAX_STAGES) where that would be as deep or deeper.

    >>> stream_stages(64, 256, 132), stream_stages(128, 128, 80), stream_stages(64, 128, 132)
    (4, 6, None)
    """
    stages = max(2, round(IN_FLIGHT_BYTES / (ctas * rows * k_bytes)))
    return None if stages >= MAX_STAGES else stages
