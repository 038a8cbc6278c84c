"""Sm90Config.evict_first: the streamed operand's TMA loads carry an L2 evict-first cache
policy (PTX ISA createpolicy + .L2::cache_hint), and the picks that set it."""

from __future__ import annotations

import re

import pytest

from cutemma.errors import TiledMmaError
from cutemma.kernels.sm90.config import ATOMS_SM90, Sm90Config
from cutemma.kernels.sm90.plan import Sm90Plan


def hinted_loads(sass_text: str) -> tuple[int, int]:
    """(TMA loads with a cache-policy operand, plain TMA loads) in a kernel's SASS: a hinted
    UTMALDG names its policy register (``desc[URn]``)."""
    loads = [ln for ln in sass_text.splitlines() if re.search(r"\bUTMALDG\.", ln)]
    hinted = sum("desc[" in ln for ln in loads)
    return hinted, len(loads) - hinted


@pytest.mark.parametrize(
    ("cfg", "dtype", "a", "b", "batched"),
    [
        (Sm90Config(128, 128, evict_first="B"), "bf16", "K", "N", False),
        (Sm90Config(128, 128, evict_first="A"), "bf16", "M", "N", False),
        (Sm90Config(128, 256, evict_first="B"), "bf16", "K", "N", True),
        (Sm90Config(64, 16, 256, consumers=1, epilogue="regs", stream_k=True, evict_first="A"),
         "e4m3", "K", "K", False),
    ],
)  # fmt: skip
def test_only_the_named_operand_s_loads_carry_the_policy(cfg, dtype, a, b, batched):
    """Every TMA load of the named operand, and none of the other's, carries the policy; the
    same kernel without evict_first has no hinted load and no createpolicy."""
    from dataclasses import replace

    from cutemma.cuda import compile, sass
    from cutemma.kernels.sm90.source import gemm_sm90_source

    plan = Sm90Plan(cfg, dtype, a, b, "bf16")
    # a batched kernel loads each operand through its rank-3 map or, shared by the batch,
    # its rank-2 one (cutemma.kernels.sm90.batched.tma_lines_batched): both are hinted
    copies = {w: len(plan.tma[w].copies) * (2 if batched else 1) for w in "AB"}
    src = gemm_sm90_source(cfg, dtype, a, b, "bf16", "bf16", batched=batched)
    assert src.count("createpolicy.fractional.L2::evict_first") == 1
    assert len(re.findall(r"tma_load_[23]d_hint\([ab]_dst", src)) == copies[cfg.evict_first]
    assert (
        re.findall(r"tma_load_[23]d_hint\(([ab])_dst", src)
        == [cfg.evict_first.lower()] * (copies[cfg.evict_first])
    )
    hinted, plain = hinted_loads(sass(compile(src, "sm_90a")))
    assert hinted == copies[cfg.evict_first] and hinted > 0
    assert plain >= copies["B" if cfg.evict_first == "A" else "A"]
    bare = gemm_sm90_source(
        replace(cfg, evict_first=""), dtype, a, b, "bf16", "bf16", batched=batched
    )
    assert "l2_first" not in bare.split('extern "C"')[1]
    assert hinted_loads(sass(compile(bare, "sm_90a")))[0] == 0


@pytest.mark.parametrize(
    ("kw", "why"),
    [
        ({"evict_first": "C"}, "evict_first 'C': 'A' or 'B'"),
        ({"evict_first": "a"}, "evict_first 'a': 'A' or 'B'"),
        ({"evict_first": True}, "evict_first a str"),
        ({"evict_first": "B", "cluster": 2}, "evict_first with cluster=1"),
    ],
)
def test_bad_evict_first_is_refused_by_name(kw, why):
    with pytest.raises(TiledMmaError, match=why):
        Sm90Config(128, 128, **kw)


def test_the_name_says_which_operand():
    assert Sm90Config(128, 128).name == "b128x128_c2_sauto"
    assert Sm90Config(128, 128, evict_first="B").name == "b128x128_c2_sauto_efb"
    cfg = Sm90Config(64, 16, consumers=1, stream_k=True, evict_first="A")
    assert cfg.name == "b64x16_c1_sauto_efa_sk"


def test_swapped_kernels_hint_the_weights_up_to_the_bound():
    """A swapped kernel hints its A (the weights B^T) exactly when B's bytes are at most
    space.EVICT_FIRST_MAX_BYTES."""
    from cutemma.kernels.space import EVICT_FIRST_MAX_BYTES, swapped_kernel

    for dtype in ("bf16", "f16", "e4m3"):
        for n, k in [(10240, 8192), (8192, 8192), (8192, 28672), (57344, 8192), (4096, 4096)]:
            for m in (1, 16, 64, 200):
                for whole in (False, True):
                    try:
                        cfg = swapped_kernel(m, n, k, dtype, 132, whole)
                    except TiledMmaError:  # wide fp8 token tiles: the ring outgrows smem
                        continue
                    small = n * k * ATOMS_SM90[dtype][1] <= EVICT_FIRST_MAX_BYTES
                    assert cfg.evict_first == ("A" if small else ""), (dtype, m, n, k, cfg.name)


def test_the_space_hints_b_read_by_few_tile_rows():
    """Each unswapped kernel of the space hints B for one 2-D call whose B is read by at most
    space.EVICT_FIRST_ROWS of its tile rows and is at most EVICT_FIRST_MAX_BYTES, K >= LONG_K;
    never for a batch, a short K, more tile rows or a bigger B."""
    from cutemma.kernels.space import EVICT_FIRST_MAX_BYTES, EVICT_FIRST_ROWS, LONG_K, candidates

    for dtype in ("bf16", "e4m3"):
        for m in (1, 64, 128, 256, 257, 512, 1024, 1025, 2048, 4096):
            for n, k in [(10240, 8192), (8192, 8192), (8192, 28672), (57344, 8192), (8192, 2048)]:
                for batch in (1, 2):
                    for cfg in candidates(m, n, k, dtype, batch, swap=False):
                        few = -(-m // cfg.block_m) <= EVICT_FIRST_ROWS
                        small = n * k * ATOMS_SM90[dtype][1] <= EVICT_FIRST_MAX_BYTES
                        want = batch == 1 and k >= LONG_K and few and small
                        assert cfg.evict_first == ("B" if want else ""), (m, n, k, cfg.name)
