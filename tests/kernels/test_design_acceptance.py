"""bench/design_acceptance.py: the random design generator covers every runnable atom family,
its classification of a draw is right, and on a fixed seed the design layer accepts at least
90% of the draws within the hardware limits (issue 32, acceptance 3)."""

import importlib.util
import random
import sys
from pathlib import Path

import pytest

from cutemma.kernels.design import RULES, SM80_ATOMS
from cutemma.kernels.sm90.config import SCHEDULES

ROOT = Path(__file__).parents[2]
spec = importlib.util.spec_from_file_location(
    "design_acceptance", ROOT / "bench" / "design_acceptance.py"
)
acc = importlib.util.module_from_spec(spec)
sys.modules["design_acceptance"] = acc
spec.loader.exec_module(acc)

SEED, DRAWS = 32, 300


@pytest.fixture(scope="module")
def report() -> dict:
    return acc.measure(DRAWS, SEED)


def test_draws_span_every_family_and_field():
    """3000 draws (parameters only) reach every sm80 atom, GMMA SS and RS of every kind, every
    N from 8 to 256, MN majors, every schedule, 1-8 warps, 1-3 warpgroups, each multiple
    1-8 and stages 2-6: the space of the issue, not a hand-picked part of it."""
    rng = random.Random(1)
    draws = [acc.draw_params(rng) for _ in range(3000)]
    sm80 = [p for p in draws if p["family"] == "sm80"]
    sm90 = [p for p in draws if p["family"] == "sm90"]
    assert {p["atom"] for p in sm80} == set(SM80_ATOMS)
    kinds = {(p["label"]) for p in sm90}
    want = {f"sm90/SS/{k}" for k in ("bf16", "f16", "f16acc", "tf32", "e4m3", "e5m2")}
    want |= {f"sm90/RS/{k}" for k in ("bf16", "f16", "f16acc", "tf32")}
    assert kinds == want
    assert {int(p["atom"].split("x")[1]) for p in sm90} == set(range(8, 257, 8))
    assert {p["schedule"] for p in sm90} == set(SCHEDULES)
    assert {p["layout"][0] * p["layout"][1] for p in sm90} == {1, 2, 3}
    warps = {p["layout"][0] * p["layout"][1] for p in sm80 if not p["atom"].startswith("SM70")}
    assert warps == set(range(1, 9))
    assert {tuple(p["layout"]) for p in sm80 if p["layout"][0] * p["layout"][1] == 6} == {
        (1, 6), (2, 3), (3, 2), (6, 1)
    }  # fmt: skip
    assert {m for p in draws for m in p["mult"]} == set(range(1, 9))
    assert {p["stages"] for p in draws} == set(range(2, 7))
    assert any("<MN,MN>" in p["atom"] for p in sm90) and any("<K,MN>" in p["atom"] for p in sm90)
    assert not any("_RS<MN" in p["atom"] for p in sm90)  # CuTe: RS reads A K-major
    assert {tuple(p["majors"]) for p in sm80 if "F16" in p["atom"]} == {
        ("K", "K"), ("K", "N"), ("M", "K"), ("M", "N")
    }  # fmt: skip


def test_classify_known_draws():
    """A draw past the registers is a limit; one breaking atom_pairs is refused by it; one
    that breaks nothing is accepted. The expectations are counted by hand: a 16x8x16 atom
    on one warp holds 4 f32 accumulators per atom, so a 128x64 tile (8 x 8 atoms) needs 256
    registers for them alone (> 255); 3 N tiles of 8 columns are 6 B registers, which an
    asked ldmatrix.x4 (4 at a time) does not tile, and the x2 the design picks when none is
    asked does."""
    base = {"family": "sm80", "label": "sm80/16-bit", "atom": "SM80_16x8x16_F32F16F16F32_TN",
            "layout": [1, 1], "order": "M", "perm": False, "stages": 2, "majors": ["K", "K"],
            "smem": [None, None], "copy": [None, None]}  # fmt: skip
    big = acc.classify(base | {"mult": [8, 8, 2]})
    assert (big["status"], big["rule"]) == ("limit", "registers")
    odd = acc.classify(base | {"mult": [1, 3, 2], "copy": [None, "SM75_U32x4_LDSM_N"]})
    assert (odd["status"], odd["rule"]) == ("refused", "atom_pairs")
    assert "rule atom_pairs:" in odd["message"]
    assert acc.classify(base | {"mult": [1, 3, 2]})["status"] == "accepted"
    ok = acc.classify(base | {"mult": [4, 8, 2], "layout": [2, 2]})
    assert ok["status"] == "accepted", ok


def test_no_bare_exception_and_refusals_name_rules(report):
    assert report["draws"] == DRAWS
    assert report["counts"].get("bare", 0) == 0, report["bare_exceptions"]
    names = {r.name for r in RULES}
    assert set(report["refused_by_rule"]) <= names, report["refused_by_rule"].keys()
    assert set(report["limit_by_rule"]) <= set(acc.LIMIT_RULES)
    for rule, row in report["refused_by_rule"].items():
        assert f"rule {rule}:" in row["example"]["message"]


def test_accepted_designs_rebuild_and_cases(report):
    """Each accepted design rebuilds from its draw parameters (same name), and its GPU cases
    (--dry) keep the design's majors, align contiguous modes to 16 bytes on sm90 (TMA),
    and the first case has a partial tile in M, N and K wherever alignment allows one."""
    assert report["accepted"], "no accepted design to check"
    for i, p in enumerate(report["accepted"]):
        d = acc.build(p)
        assert d.name == p["name"]
        first, second = acc.cases(p, i, SEED)
        assert first["partial"] and not second["partial"]
        for c in (first, second):
            for which, want in zip("AB", c["majors"]):
                assert d.major(which) in (None, want)
        m, n, k = first["shape"]
        bm, bn, bk = d.tile
        align = 16 // acc.ELEM_BYTES[acc._dtypes(d.atom_name)[0]]
        if d.family == "sm90":
            assert k % align == 0
            assert k % bk or align % bk == 0
        else:
            assert k % bk or bk == 1
        assert m % bm or bm == 1 or (first["majors"][0] == "M" and align % bm == 0)


def test_accepted_share_at_least_90_percent(report):
    assert report["accepted_share"] >= 0.90, (report["accepted_share"], report["counts"])


def test_rule_of_reads_a_config_rule_name():
    """A config rule's name has a dot (sm90_config.<rule>): the refusal's rule is all of it."""
    message = "Sm90Config b64x128_c1_sauto_alt: rule sm90_config.alternate_consumers: need ..."
    assert acc._rule_of(message) == "sm90_config.alternate_consumers"
    assert acc._rule_of("rule stages: stages 1; need stages >= 2") == "stages"
