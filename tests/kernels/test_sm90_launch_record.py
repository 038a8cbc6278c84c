"""The sm90 index's launch record by arithmetic (:func:`cutemma.kernels.sm90.index.launch_record`)
is the record the kernel's plan derives (``Sm90Launch.of(Sm90Plan(...))``), field for field,
for every kernel the family builds: the kernel space's tiles (whole and stream-K), the built-in
picks and the swapped kernels, every major the dtype takes and each output type. The cached
first call checks an index entry against the arithmetic record (issue 34), so a difference
here would make it refuse a right entry or accept a wrong one."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from cutemma.errors import TiledMmaError
from cutemma.kernels import pick
from cutemma.kernels.sm90.config import ATOMS_SM90, Sm90Config
from cutemma.kernels.sm90.index import launch_record
from cutemma.kernels.sm90.plan import Sm90Plan
from cutemma.kernels.sm90.tma_maps import Sm90Launch
from cutemma.kernels.space import WIDE_16, _tiles, candidates


def _configs() -> dict[str, set[Sm90Config]]:
    """dtype -> the configs to compare (a set: the picks repeat the space's tiles)."""
    out: dict[str, set[Sm90Config]] = {dt: set() for dt in ATOMS_SM90}
    for dt in ATOMS_SM90:
        for cfg in _tiles(dt):
            out[dt] |= {replace(cfg, stream_k=False), replace(cfg, stream_k=True)}
        for m, n, k in ((16, 768, 1024), (64, 4096, 4096), (200, 8192, 2048), (4096, 4096, 512)):
            out[dt] |= {replace(c, evict_first="") for c in candidates(m, n, k, dt)}
            out[dt].add(pick.builtin_sm90_config(m, n, k, dt, swap=True))
    extra = (
        pick.DEFAULT_SM90, pick.SMALL_SM90, WIDE_16, pick.NARROW_16,
        Sm90Config(cluster=2, multicast="A"), Sm90Config(cluster=2, multicast="B"),
        Sm90Config(64, 128, schedule="pingpong"), Sm90Config(128, 128, stages=3),
        Sm90Config(128, 192, epilogue="tma2"), Sm90Config(128, 128, block_k=32),
        # a design's own stage layouts: each swizzle mode, one operand or both, a cluster
        Sm90Config(128, 128, swizzle=("SW64", "SW32")), Sm90Config(128, 256, swizzle=(None, "SW64")),
        Sm90Config(128, 256, cluster=2, swizzle=("SW32", "SW64")),
        # warpgroups side by side along N: B's and the staging tile's swizzle start an atom
        # at each warpgroup's columns (SW64 at 96, SW32 at 80, none at 72)
        *(Sm90Config(192, bn, consumers_n=2, **x) for bn in (128, 144, 160, 192)
          for x in ({}, {"stream_k": True}, {"epilogue": "regs"})),
        Sm90Config(192, 192, consumers_n=2, swizzle=(None, "SW128")),
        # the TMA store in passes through two buffers: the passes and the ring from the
        # stage's bytes (config.store_passes), row-major D and swapped column-major D
        *(Sm90Config(bm, bn, epilogue="tmab") for bm, bn in ((128, 256), (256, 128), (128, 224))),
        *(Sm90Config(256, bn, epilogue="tmatb", swap_ab=True) for bn in (120, 136, 200)),
    )  # fmt: skip
    for dt in ("bf16", "f16"):
        out[dt] |= set(extra)
    for dt in ("e4m3", "e5m2"):
        out[dt] |= {
            Sm90Config(128, bn, promote=p)
            for bn, p in ((192, "split"), (160, "split"), (128, "overlap"), (64, "overlap"))
        }
        out[dt].add(Sm90Config(128, 128, promote="overlap", swizzle=("SW32", "SW64")))
        out[dt] |= {Sm90Config(192, 128, consumers_n=2), Sm90Config(128, 112, promote="overlap")}
    return out


CASES = [
    (cfg, dt, a, b, out)
    for dt, cfgs in _configs().items()
    for cfg in sorted(cfgs, key=lambda c: c.name)
    for a, b in ((("K", "K"), ("M", "N"), ("K", "N"), ("M", "K")) if ATOMS_SM90[dt][2] else (("K", "K"),))
    for out in (("bf16", "f32", "f16") if (a, b) == ("K", "K") else ("bf16", "f32"))
]  # fmt: skip


def test_the_cases_cover_the_space_both_majors_and_the_outputs():
    kinds = {(dt, a, b, out) for _, dt, a, b, out in CASES}
    assert {
        ("bf16", "M", "N", "f32"),
        ("e4m3", "K", "K", "f16"),
        ("tf32", "K", "K", "bf16"),
    } <= kinds
    assert any(c.stream_k for c, *_ in CASES) and any(c.wgmma_n for c, *_ in CASES)
    assert any(c.cluster == 2 for c, *_ in CASES) and len(CASES) > 300


def test_the_arithmetic_record_is_the_plans_for_every_kernel():
    wrong, compared = [], 0
    for cfg, dt, a, b, out in CASES:
        try:
            want = json.loads(Sm90Launch.of(Sm90Plan(cfg, dt, a, b, out)).to_json())
        except TiledMmaError:  # a kernel the family does not build: so does the record
            with pytest.raises(TiledMmaError):
                launch_record(cfg, dt, a, b, out)
            continue
        compared += 1
        if launch_record(cfg, dt, a, b, out) != want:
            wrong.append(f"{cfg.name} {dt} {a}{b} {out}")
    assert compared > 300 and wrong == []


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("x", "bf16", "K", "K", "bf16"), "an Sm90Config"),
        ((Sm90Config(), "s4", "K", "K", "bf16"), "an Sm90Config and a dtype"),
        ((Sm90Config(), "bf16", "N", "K", "bf16"), "A 'K' or 'M'"),
        ((Sm90Config(), "bf16", "K", "K", "f64"), "out one of"),
        ((Sm90Config(128, 256, stages=4), "bf16", "K", "K", "bf16"), "do not fit"),
    ],
)
def test_what_the_plan_refuses_the_record_refuses(args, fragment):
    with pytest.raises(TiledMmaError, match=fragment):
        launch_record(*args)
    with pytest.raises(TiledMmaError):
        Sm90Plan(*args[:4], out=args[4])
