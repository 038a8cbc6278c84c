"""The families' config rules as data (issue 32): every rule of each CONFIG_RULES table has a
config that breaks it alone (refused with that rule's name) and a nearby one that keeps it;
the names are unique; a design whose config breaks a rule fails by the rule's name."""

from __future__ import annotations

import pickle
import re

import pytest

from cutemma.errors import ConfigRuleError, DesignError, TiledMmaError
from cutemma.kernels.common.config_rules import ConfigRule, apply_rules, rule_names
from cutemma.kernels.common.scheduler import GROUP_M_MAX
from cutemma.kernels.design import GemmDesign, check, failed_rules
from cutemma.kernels.sm80 import config as sm80
from cutemma.kernels.sm90 import config as sm90
from cutemma.tiled import make_tiled_mma

# rule -> [(breaking fields, nearby fields that keep it)], over Sm90Config(128, 128)'s defaults;
# each breaking config was reasoned to break that rule and no other
SM90_CASES: dict[str, list[tuple[dict, dict]]] = {
    "epilogue": [({"epilogue": "smem"}, {"epilogue": "regs"})],
    "cluster": [
        ({"cluster": 3}, {"cluster": 2}),
        ({"cluster": 8}, {"cluster": 4, "multicast": "AB"}),
    ],
    "multicast": [
        ({"multicast": "A"}, {"multicast": "A", "cluster": 2}),
        ({"cluster": 4}, {"cluster": 4, "multicast": "AB"}),
        ({"multicast": "AB", "cluster": 2}, {"multicast": "AB", "cluster": 4}),
    ],
    "consumers": [({"block_m": 256, "consumers": 4}, {"block_m": 256, "consumers": 2})],
    "a_regs_bool": [({"a_regs": "yes"}, {"a_regs": True})],
    "acc_f16_bool": [({"acc_f16": 1}, {"acc_f16": True})],
    "schedule": [({"schedule": "turns"}, {"schedule": "alternate"})],
    "stream_k_bool": [({"stream_k": 1}, {"stream_k": True})],
    "swap_ab_bool": [({"swap_ab": 1}, {"swap_ab": True})],
    "split": [({"split": 4}, {"split": 4, "stream_k": True})],
    "evict_first": [({"evict_first": "C"}, {"evict_first": "B"})],
    "pdl_bool": [({"pdl": 1}, {"pdl": True})],
    "pdl_cluster": [({"pdl": True, "cluster": 2}, {"pdl": True})],
    "evict_first_cluster": [({"evict_first": "A", "cluster": 2}, {"evict_first": "A"})],
    "stream_k_shape": [({"stream_k": True, "cluster": 2}, {"stream_k": True})],
    "kcluster": [({"kcluster": 3}, {"kcluster": 8})],
    "kcluster_shape": [
        ({"kcluster": 2, "stream_k": True}, {"kcluster": 2}),
        ({"kcluster": 2, "schedule": "pingpong"}, {"kcluster": 2, "block_m": 128}),
    ],
    "promote": [({"promote": "always"}, {"promote": "overlap"})],
    "promote_cooperative": [
        ({"promote": "overlap", "block_m": 64, "schedule": "pingpong"}, {"promote": "overlap"})
    ],
    # 8 columns: one wgmma N step, not two parts of one (200 splits as 104 + 96)
    "split_columns": [
        ({"promote": "split", "block_n": 8}, {"promote": "split", "block_n": 200}),
        ({"promote": "split", "cluster": 2}, {"promote": "split"}),
    ],
    "split_rows": [({"promote": "split", "block_m": 256}, {"promote": "split"})],
    "pingpong_shape": [
        (
            {"schedule": "pingpong", "block_m": 64, "consumers": 3},
            {"schedule": "pingpong", "block_m": 64},
        )
    ],  # fmt: skip
    "alternate_consumers": [
        ({"schedule": "alternate", "block_m": 64, "consumers": 1}, {"schedule": "alternate"})
    ],
    "block_m_slices": [({"block_m": 96}, {"block_m": 64, "consumers": 1})],
    "wgmma_n_range": [({"block_n": 264}, {"block_n": 264, "wgmma_n": (256, 8)})],
    "wgmma_n_cover": [
        ({"block_n": 192, "wgmma_n": 128}, {"block_n": 192, "wgmma_n": 64}),
        ({"block_n": 320, "wgmma_n": (256, 32)}, {"block_n": 320, "wgmma_n": (256, 64)}),
    ],
    "wgmma_n_aligned": [
        ({"block_n": 320, "wgmma_n": (64, 256)}, {"block_n": 320, "wgmma_n": (256, 64)})
    ],
    "split_one_wgmma": [
        ({"promote": "split", "block_n": 256, "wgmma_n": 128}, {"promote": "split", "block_n": 256})
    ],
    "stages": [({"stages": 1}, {"stages": 2})],
    "tma2_columns": [({"epilogue": "tma2", "block_n": 200}, {"epilogue": "tma2", "block_n": 192})],
    "tmat_cooperative": [
        ({"epilogue": "tmat", "schedule": "pingpong"}, {"epilogue": "tma", "schedule": "pingpong"}),
    ],
    # passes of a multiple of 32 columns (row-major D) or 8 (column-major), two at least
    "buffered_store": [
        ({"epilogue": "tmab", "block_n": 112}, {"epilogue": "tmab", "block_n": 96}),
        ({"epilogue": "tmatb", "block_n": 8}, {"epilogue": "tmatb", "block_n": 16}),
        ({"epilogue": "tmab", "stream_k": True}, {"epilogue": "tmab"}),
    ],
    # warpgroups side by side along N: each one wgmma of half the columns, cooperative
    "consumers_n": [
        ({"consumers_n": 2, "schedule": "pingpong"}, {"consumers_n": 2}),
        ({"consumers_n": 2, "epilogue": "tma2"}, {"consumers_n": 2, "epilogue": "regs"}),
        ({"consumers_n": 2, "wgmma_n": 32}, {"consumers_n": 2, "wgmma_n": 64}),
        ({"consumers_n": 2, "a_regs": True}, {"consumers_n": 2}),
        ({"consumers_n": 2, "kcluster": 2}, {"consumers_n": 2}),
    ],
    "three_consumers_width": [
        (
            {"block_m": 192, "consumers": 3, "block_n": 256},
            {"block_m": 192, "consumers": 3, "block_n": 128},
        )
    ],  # fmt: skip
}

# the same over GemmConfig(64, 64, 32)'s defaults (warps 2x2, 4 stages)
SM80_CASES: dict[str, list[tuple[dict, dict]]] = {
    "block_m_warps": [({"block_m": 72}, {"block_m": 80})],
    "block_n_warps": [({"block_n": 60}, {"block_n": 48})],
    "block_k": [({"block_k": 30}, {"block_k": 28})],
    "stages": [({"stages": 1}, {"stages": 2})],
    "swizzle_bytes": [({"swizzle_bytes": 48}, {"swizzle_bytes": 64})],
    # 64 warps = 2048 threads, past any block's 1024; 4x8 = 32 warps is 1024
    "warps": [
        (
            {"block_m": 128, "block_n": 128, "warps": (8, 8)},
            {"block_m": 128, "block_n": 128, "warps": (4, 8)},
        )
    ],  # fmt: skip
    "group_m": [({"group_m": GROUP_M_MAX + 1}, {"group_m": GROUP_M_MAX})],
    # 4 x (256 + 256) x 128 = 256 KiB even at a byte an element; 3 stages are 192 KiB
    "smem": [
        (
            {"block_m": 256, "block_n": 256, "block_k": 128},
            {"block_m": 256, "block_n": 256, "block_k": 128, "stages": 3},
        )
    ],  # fmt: skip
}

FAMILIES = {
    "sm90": (sm90, lambda kw: sm90.Sm90Config(**({"block_m": 128, "block_n": 128} | kw))),
    "sm80": (sm80, lambda kw: sm80.GemmConfig(**({"block_m": 64, "block_n": 64} | kw))),
}
CASES = {"sm90": SM90_CASES, "sm80": SM80_CASES}


def _rows():
    for family, cases in CASES.items():
        for name, pairs in cases.items():
            for i, (bad, good) in enumerate(pairs):
                yield pytest.param(family, name, bad, good, id=f"{family}-{name}-{i}")


@pytest.mark.parametrize(("family", "name", "bad", "good"), list(_rows()))
def test_each_rule_refuses_alone_and_a_neighbour_passes(family, name, bad, good):
    module, make = FAMILIES[family]
    qualified = f"{module.RULE_SCOPE}.{name}"
    with pytest.raises(TiledMmaError) as info:
        make(bad)
    exc = info.value
    assert isinstance(exc, ConfigRuleError)
    assert [n for n, _ in exc.broken] == [qualified]
    assert f"rule {qualified}: need " in str(exc)
    make(good)  # constructs


@pytest.mark.parametrize("family", CASES)
def test_every_rule_has_a_case_and_the_names_are_unique(family):
    module, _ = FAMILIES[family]
    names = [r.name for r in module.CONFIG_RULES]
    assert len(names) == len(set(names))
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", n) for n in names), names
    assert set(names) == set(CASES[family]), "a rule without a case, or a case without a rule"


def test_qualified_names_unique_across_families():
    qualified = [n for m, _ in FAMILIES.values() for n in rule_names(m.CONFIG_RULES, m.RULE_SCOPE)]
    assert len(qualified) == len(set(qualified))
    assert {m.RULE_SCOPE for m, _ in FAMILIES.values()} == {"sm80_config", "sm90_config"}


def test_every_broken_rule_is_named_at_once():
    """Two rules broken together are both named, each with what would satisfy it."""
    with pytest.raises(ConfigRuleError) as info:
        sm90.Sm90Config(128, 128, epilogue="smem", stages=1)
    assert [n for n, _ in info.value.broken] == ["sm90_config.epilogue", "sm90_config.stages"]
    assert "stages 1 >= 2" in str(info.value)


def test_types_and_ranges_come_first():
    """A field of the wrong type or range is refused before the rules read it (they compare
    and divide by it): the plain TiledMmaError, naming the field."""
    for kw, field in (({"block_m": 0}, "block_m=0 >= 1"), ({"consumers": "2"}, "consumers an int")):
        with pytest.raises(TiledMmaError, match=field) as info:
            sm90.Sm90Config(**kw)
        assert not isinstance(info.value, ConfigRuleError)
    with pytest.raises(TiledMmaError, match="positive whole number") as info:
        sm80.GemmConfig(64, 64, 0)
    assert not isinstance(info.value, ConfigRuleError)


def test_the_error_pickles_with_its_rules():
    with pytest.raises(ConfigRuleError) as info:
        sm90.Sm90Config(cluster=4)
    back = pickle.loads(pickle.dumps(info.value))
    assert (back.subject, back.broken, str(back)) == (
        info.value.subject, info.value.broken, str(info.value)
    )  # fmt: skip


def test_apply_rules_on_any_table():
    table = (ConfigRule("small", lambda n: n < 10, lambda n: f"{n} below 10"),)
    apply_rules(3, table, "toy", "3")
    with pytest.raises(ConfigRuleError, match=r"^12: rule toy.small: need 12 below 10$"):
        apply_rules(12, table, "toy", "12")


def _gmma(n: int, warpgroups: int) -> object:
    return make_tiled_mma(f"SM90_64x{n}x16_F32BF16BF16_SS<K,K>", (warpgroups, 1, 1))


@pytest.mark.parametrize(
    ("design", "rule", "fix"),
    [
        # alternate turns between warpgroups: a TiledMMA of one has none to take turns with
        (lambda: GemmDesign(_gmma(128, 1), (64, 128, 64), schedule="alternate"),
         "sm90_config.alternate_consumers", "alternate with 2 or 3"),
        # three warpgroups of a 256-column wgmma: 512 threads' registers cannot hold it
        (lambda: GemmDesign(_gmma(256, 3), (192, 256, 64)),
         "sm90_config.three_consumers_width", "<= 128 with 3 consumers"),
        # two warpgroups along N, each repeating a 64-wide wgmma: one wgmma each is built
        (lambda: GemmDesign(make_tiled_mma("SM90_64x64x16_F32BF16BF16_SS<K,K>", (1, 2, 1)),
                            (128, 256, 64)),
         "sm90_config.consumers_n", "no wgmma_n"),
    ],
)  # fmt: skip
def test_a_design_fails_by_its_config_rule(design, rule, fix):
    """The design's table names the config's rule, and the rules that read the config (shared
    memory, registers, plan) do not repeat it."""
    d = design()
    assert failed_rules(d) == [rule]
    with pytest.raises(DesignError, match=re.escape(f"rule {rule}: ")) as info:
        check(d)
    assert fix in str(info.value)
    with pytest.raises(DesignError, match=re.escape(rule)):
        d.config  # noqa: B018 - the property names it too


def test_an_sm80_design_names_its_config_rule_beside_the_limits():
    """An sm80 design's limits do not read its config: they still say how far past it is."""
    d = GemmDesign("SM80_16x8x16_F32BF16BF16F32_TN", (128, 128, 32), stages=40)
    names = failed_rules(d)
    assert names[0] == "sm80_config.smem" and "smem_limit" in names
    with pytest.raises(DesignError, match=r"rule sm80_config\.smem: GemmConfig.* breaks it; need"):
        check(d)
